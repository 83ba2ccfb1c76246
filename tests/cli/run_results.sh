#!/usr/bin/env bash
# What `lossless run` reports (issue 16): unfinished flows, resolved
# parameters, per-flow completion times, no wall-clock figures by default.
# Usage: bash tests/cli/run_results.sh <path-to-lossless>   (from the repo root)
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN=${1:?usage: run_results.sh <lossless binary>}
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

# jcheck NAME FILE PYTHON-EXPR: the JSON in FILE (as `j`) makes EXPR true.
jcheck() {
  if python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3"; then
    echo "ok   $1"
  else
    echo "FAIL $1: $3"; head -c 600 "$2"; echo; fail=1
  fi
}

# Item 8: E6 ends at its time limit (100 ms) before either flow finishes.
# FCTs are null (they were 0.0), the text says so, and the flows left are
# counted.
expect no-flow-finished 0 '^fct        no flow finished$' -- \
  "$BIN" run scenarios/experiments/E6-dcqcn-two-flow.yaml --json "$tmp/e6.json"
cp "$tmp/out" "$tmp/e6.txt"
expect no-flow-finished-count 0 '^unfinished 2 flows, [0-9]+ bytes not delivered$' -- cat "$tmp/e6.txt"
jcheck no-flow-finished-json "$tmp/e6.json" 'j["fct_us"] is None and j["flows"]["done"] == 0 and j["flows"]["unfinished"] == 2 and j["flows"]["bytes_left"] > 0'
expect all-finished 0 '' -- "$BIN" run scenarios/roce-incast.yaml --json "$tmp/incast.json"
jcheck all-finished-json "$tmp/incast.json" 'j["fct_us"]["max"] > 0 and j["flows"]["unfinished"] == 0 and j["flows"]["bytes_left"] == 0'
if grep -q 'no flow finished\|^unfinished' "$tmp/out"; then echo "FAIL all-finished: unfinished lines"; fail=1; fi

exit $fail
