# Sourced by the CLI tests: `require TOOL...` exits 77 (CTest: skipped) when a
# tool is missing, or 1 (failed) under CI=true, where every tool must be there.
require() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 && continue
    if [ "${CI:-}" = true ]; then
      echo "FAIL: $t is missing under CI=true (scripts/install-deps.sh installs it)"
      exit 1
    fi
    echo "SKIP: $t is not installed"
    exit 77
  done
}
