#!/usr/bin/env bash
# Prints the LINT_FILES regex for `make lint-changed` (docs/testing.md "Lint"):
# the translation units under src/ that changed since BASE, plus, for each
# changed header, the translation unit beside it (foo.hpp -> foo.cpp) or, if
# there is none, every translation unit under src/ that includes it directly.
# clang-tidy checks a project header while linting a unit that includes it, so
# that is how a header's findings are reached. Test sources are compiled as
# unity batches and are not linted (as in `make lint`), so they are left out.
# Prints nothing when no such file changed.
#
#   scripts/lint-changed-files.sh BASE ROOT
#   BASE: a git revision; the diff runs from its merge base with HEAD to the
#         working tree, so uncommitted edits and new (untracked) files count.
#   ROOT: the repository root. Each unit is printed as `/src/dir/name[.]cpp`,
#         which run-clang-tidy matches against compile_commands.json's
#         absolute paths.
set -euo pipefail
base=${1:?usage: lint-changed-files.sh BASE ROOT}
root=${2:?usage: lint-changed-files.sh BASE ROOT}
cd "$root"
if ! mb=$(git merge-base "$base" HEAD 2>/dev/null); then
  echo "lint-changed: BASE=$base is not a git revision" >&2
  exit 2
fi
changed=$( (git diff --name-only --diff-filter=d "$mb" -- 'src/*.cpp' 'src/*.hpp'
            git ls-files --others --exclude-standard -- 'src/*.cpp' 'src/*.hpp') | sort -u)
is_unit() {  # a source that is linted: under src/, not a test (unity-built)
  case "$1" in
    *_test.cpp) return 1 ;;
    *.cpp) return 0 ;;
  esac
  return 1
}
units=()
for f in $changed; do
  case "$f" in
    *.cpp) is_unit "$f" && units+=("$f") ;;
    *.hpp)
      sibling=${f%.hpp}.cpp
      if [ -f "$sibling" ]; then
        units+=("$sibling")
      else
        inc=${f#src/}
        while IFS= read -r u; do
          is_unit "$u" && units+=("$u")
        done < <(grep -rlF --include='*.cpp' "#include \"$inc\"" src/ || true)
      fi
      ;;
  esac
done
[ ${#units[@]} -eq 0 ] && exit 0
printf '%s\n' "${units[@]}" | sort -u | sed -e 's/[.]/[.]/g' -e 's|^|/|' |
  paste -sd '|'
