#!/usr/bin/env bash
# The report of a real (small) `lossless compare` run in headless Chromium:
# the same checks as report_test.py on the fixture, on simulator output.
# Usage: compare_report.sh LOSSLESS PYTHON ARTIFACTS_DIR
set -u
BIN="$1" PY="$2" ART="$3"
out="$ART/compare-small"
rm -rf "$out" && mkdir -p "$out"
"$BIN" compare --profiles ib-ndr,roce-untuned --nodes 2 --sizes 8M,32M --iterations 1 \
  --jitter-iterations 3 --jitter-bytes 8M --latency-samples 50 \
  --quiet -o "$out" > "$out/matrix.txt" || { echo "FAIL: lossless compare exited $?"; exit 1; }
exec "$PY" "$(dirname "$0")/report_test.py" --lossless "$BIN" --artifacts "$out" "$out/report.html"
