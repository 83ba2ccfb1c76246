#!/usr/bin/env bash
# `lossless compare --qos CONFIG` (docs/compare.md#your-config-column): a
# your-config column beside the profiles, the profile's fabric with the
# switch config's values (scenario from-qos) at the comparison's link rate;
# its profile file is written into the report folder; bad input exits 2.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

SMALL=(--profiles roce-tuned --sizes 8M --latency-samples 10 --iterations 1 --jitter-iterations 2
       --fault-iterations 1 --train-model none --nodes 2 --quiet)
expect "compare --qos" 0 "^Incast stress +roce-tuned +your-config$" -- \
  "$BIN" compare "${SMALL[@]}" --qos examples/config_db.json -o "$tmp/r"
[ -f "$tmp/r/your-config.yaml" ] && echo "ok   compare --qos: your-config.yaml written" ||
  { echo "FAIL compare --qos: no your-config.yaml"; fail=1; }
grep -qE "^    xoff: 3957916B   # examples/config_db.json:430: " "$tmp/r/your-config.yaml" &&
  echo "ok   compare --qos: the column's profile carries the config's values" ||
  { echo "FAIL compare --qos: your-config.yaml content"; fail=1; }
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
names = [p["name"] for p in j["profiles"]]
assert names == ["roce-tuned", "your-config"], names
row = {r["key"]: r for r in j["rows"]}
# The config sets XOFF 3.96 MB on a 35.6 MB pool against roce-tuned 200 KB on
# 32 MiB: the same incast pauses less under it.
p = row["pause_frames"]["values"]
assert p["your-config"] < p["roce-tuned"], p
assert any("your-config: the profile file" in c for c in j["caveats"]), j["caveats"]
' "$tmp/r/results.json" && echo "ok   compare --qos: results.json column, fewer PAUSE frames, caveat" ||
  { echo "FAIL compare --qos: results.json"; fail=1; }

expect "compare --qos: missing config" 2 "^error: .*nope.json" -- \
  "$BIN" compare "${SMALL[@]}" --qos "$tmp/nope.json" -o "$tmp/r2"
[ ! -e "$tmp/r2" ] && echo "ok   compare --qos: bad input writes no folder" ||
  { echo "FAIL compare --qos: folder created on bad input"; fail=1; }
expect "compare --qos: unknown --qos-profile" 2 '^error: <cli>: --qos-profile: unknown profile "roce-tunned"' -- \
  "$BIN" compare "${SMALL[@]}" --qos examples/config_db.json --qos-profile roce-tunned -o "$tmp/r3"
exit $fail
