#!/bin/sh
# Runs every scenario under scenarios/ with two lossless binaries and compares
# their `run --json` outputs byte for byte (a restructuring must not change
# what a run computes; docs/architecture.md "Engine conventions").
#
#   scripts/compare-run-json.sh OLD_BINARY NEW_BINARY [OUT_DIR]
#
# Prints one line per scenario (identical / DIFFERENT, with the differing
# JSON keys when jq is present) and a count; exits 1 if any output differs,
# 2 on bad usage.
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY [OUT_DIR]" >&2
  exit 2
fi
old=$1 new=$2
out=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/old" "$out/new"
same=0 total=0
for s in "$root"/scenarios/*.yaml "$root"/scenarios/*.json "$root"/scenarios/experiments/*.yaml; do
  [ -f "$s" ] || continue
  n=$(basename "$s")
  total=$((total + 1))
  # Exit codes 0 (completed) and 1 (a finding, e.g. a deadlock) both write the JSON.
  "$old" run "$s" --json "$out/old/$n.json" --quiet >/dev/null 2>&1
  rc_old=$?
  "$new" run "$s" --json "$out/new/$n.json" --quiet >/dev/null 2>&1
  rc_new=$?
  if [ "$rc_old" = "$rc_new" ] && cmp -s "$out/old/$n.json" "$out/new/$n.json"; then
    same=$((same + 1))
    echo "identical  $n"
  else
    echo "DIFFERENT  $n (exit $rc_old vs $rc_new)"
    if command -v jq >/dev/null 2>&1; then
      # Leaf paths whose values differ.
      jq -r --slurpfile b "$out/new/$n.json" '
        [paths(scalars) as $p | select(getpath($p) != ($b[0] | getpath($p))) | $p | map(tostring) | join(".")]
        | .[:12][] | "    " + .' "$out/old/$n.json" 2>/dev/null
    fi
  fi
done
echo "$same of $total scenarios identical (outputs in $out)"
[ "$same" = "$total" ]
