#!/usr/bin/env bash
# `lossless compare` end to end: a small comparison writes results.json (its
# schema), results.csv (its header, one line per row and profile) and prints
# the matrix; bad input (unknown profile, bad size, unwritable folder) exits 2
# with one line naming the option and leaves no result behind.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

source "$(dirname "$0")/lib/expect.sh"

small=(compare --profiles ib-ndr,roce-tuned --nodes 2 --sizes 8M --iterations 1
       --jitter-iterations 2 --latency-samples 20 --quiet)
expect "compare prints the matrix" 0 '^All-reduce bus bandwidth +ib-ndr +roce-tuned' -- \
  "$BIN" "${small[@]}" -o "$tmp/r"
expect "compare names its files" 0 "wrote $tmp/r/report.html" -- "$BIN" "${small[@]}" -o "$tmp/r"
python3 - "$tmp/r" <<'PY' || { echo "FAIL compare: results.json / results.csv"; fail=1; }
import csv, json, sys
d = sys.argv[1]
j = json.load(open(d + "/results.json"))
assert j["schema"] == "lossless.compare/1", j["schema"]
assert [p["name"] for p in j["profiles"]] == ["ib-ndr", "roce-tuned"]
rows = list(csv.DictReader(open(d + "/results.csv")))
assert list(rows[0].keys()) == ["section", "key", "label", "unit", "profile", "value", "note"]
assert len(rows) == 2 * len(j["rows"]), (len(rows), len(j["rows"]))
ib = {r["key"]: r["value"] for r in rows if r["profile"] == "ib-ndr"}
assert ib["pause_frames"] == "0", ib["pause_frames"]
assert float(ib["peak_busbw_gbs"]) > 0
PY
[ $fail -eq 0 ] && echo "ok   compare: results.json and results.csv"
# --timing in a log (no terminal): a line as each stage starts, then the
# seconds per stage at the end.
expect "compare --timing logs each stage as it starts" 0 \
  '^timing [0-9.]+s ib-ndr: all-reduce sweep starts \([0-9]+% of its work done\)$' -- \
  "$BIN" "${small[@]}" --timing -o "$tmp/t"
grep -qE '^timing [0-9.]+s roce-tuned: done$' "$tmp/err" && grep -qE '^timing ib-ndr [0-9.]+s: ' "$tmp/err" \
  || { echo "FAIL compare --timing: no done line or no stage summary"; head -40 "$tmp/err"; fail=1; }

expect "unknown profile" 2 '--profiles.*roce-tuned' -- "$BIN" compare --profiles ib-ndr,roce-tunned -o "$tmp/x"
expect "bad size" 2 '--sizes' -- "$BIN" compare --sizes 8Q -o "$tmp/x"
expect "bad rate" 2 '--rate' -- "$BIN" compare --rate 100g -o "$tmp/x"
mkdir -p "$tmp/ro" && chmod a-w "$tmp/ro"
if [ "$(id -u)" -ne 0 ]; then
  expect "unwritable folder" 2 'not writable|cannot create' -- "$BIN" "${small[@]}" -o "$tmp/ro/sub"
fi
expect "folder is a file" 2 'cannot create the output folder' -- \
  bash -c "touch \"$tmp/file\" && \"$BIN\" ${small[*]} -o \"$tmp/file\""
if [ -e "$tmp/x/results.json" ]; then echo "FAIL compare: bad input left a result"; fail=1; fi
# Issue 16 item 24: Ctrl-C ends the comparison early: what finished is
# written, the rest is null and marked "not run", no conclusion is drawn,
# exit 130. (The default comparison takes most of a minute: interrupted
# after a few seconds, its sweeps cannot all have finished.)
"$BIN" compare --jobs 1 -o "$tmp/int" >"$tmp/int.txt" 2>&1 &
pid=$!
sleep 5
kill -INT $pid
wait $pid
rc=$?
if [ $rc = 130 ]; then echo "ok   compare: Ctrl-C exits 130"
else echo "FAIL compare: Ctrl-C exit $rc"; tail -5 "$tmp/int.txt"; fail=1; fi
python3 - "$tmp/int" <<'PY' || { echo "FAIL compare: interrupted results.json"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1] + "/results.json"))
assert j["interrupted"] is True
assert len(j["summary"]) == 1 and j["summary"][0].startswith("Interrupted (Ctrl-C)"), j["summary"]
notrun = [r for r in j["rows"] for p, n in r.get("notes", {}).items() if n.startswith("not run")]
assert notrun, "no row marked not run"
for r in notrun:
    for p, n in r["notes"].items():
        if n.startswith("not run"):
            assert r["values"][p] is None, (r["key"], p)
PY
[ -s "$tmp/int/report.html" ] && echo "ok   compare: interrupted report written" || { echo "FAIL compare: no report after Ctrl-C"; fail=1; }
exit $fail
