#!/usr/bin/env bash
# `lossless report RESULTS.json -o FILE` end to end: the hand-made sample
# renders, twice to the same bytes, with every chart; unreadable input, bad
# JSON, a missing field and an unwritable output exit 2 with one line naming
# the path or field, and leave an existing report as it was (no half-written
# file, no temporary file left behind).
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "$0")/lib/expect.sh"

sample=tests/fixtures/compare/sample-results.json
expect "report renders the sample" 0 "^wrote $tmp/a.html$" -- "$BIN" report "$sample" -o "$tmp/a.html"
for c in busbw latency_cdf iterations incast train-step tco; do
  grep -q "<svg data-chart=\"$c\"" "$tmp/a.html" || { echo "FAIL report: no $c chart"; fail=1; }
done
grep -q "<script" "$tmp/a.html" && { echo "FAIL report: the page holds a script"; fail=1; }
expect "report again" 0 "" -- "$BIN" report "$sample" -o "$tmp/b.html"
cmp -s "$tmp/a.html" "$tmp/b.html" || { echo "FAIL report: two renders differ"; fail=1; }
bin_abs="$(realpath "$BIN")"
sample_abs="$(realpath "$sample")"
(cd "$tmp" && "$bin_abs" report "$sample_abs" >/dev/null)
[ -f "$tmp/report.html" ] || { echo "FAIL report: no report.html by default"; fail=1; }

cp "$tmp/a.html" "$tmp/keep.html"
expect "missing input" 2 "^error: $tmp/nope.json: cannot open: No such file or directory" -- \
  "$BIN" report "$tmp/nope.json" -o "$tmp/keep.html"
printf '{"schema": "lossless.compare/1",\n  oops}' >"$tmp/bad.json"
expect "bad JSON" 2 "^error: $tmp/bad.json:2: expected JSON \\(a results.json written by lossless compare\\), column 3: syntax error" -- \
  "$BIN" report "$tmp/bad.json" -o "$tmp/keep.html"
: >"$tmp/empty.json"
expect "empty JSON" 2 "^error: $tmp/empty.json:1: expected a results.json written by lossless compare, got an empty file$" -- \
  "$BIN" report "$tmp/empty.json" -o "$tmp/keep.html"
python3 - "$sample" "$tmp/norows.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["rows"][2]["unit"]
json.dump(d, open(sys.argv[2], "w"))
PY
expect "missing field" 2 "^error: $tmp/norows.json: rows\[2\]\.unit: missing field$" -- \
  "$BIN" report "$tmp/norows.json" -o "$tmp/keep.html"
cmp -s "$tmp/a.html" "$tmp/keep.html" || { echo "FAIL report: a failed render changed the existing report"; fail=1; }
expect "unwritable output" 2 "^error: $tmp/no/such/dir/r.html: -o: cannot write the file" -- \
  "$BIN" report "$sample" -o "$tmp/no/such/dir/r.html"
expect "output is a folder" 2 "^error: $tmp: -o: cannot write the file" -- \
  "$BIN" report "$sample" -o "$tmp"
left="$(find "$tmp" -name '.*.XXXXXX' -o -name '.*html.*' | head -1)"
[ -z "$left" ] || { echo "FAIL report: temporary file left behind: $left"; fail=1; }
exit $fail
