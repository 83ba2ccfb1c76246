#!/usr/bin/env bash
# Every scenario file under scenarios/ (and scenarios/experiments/) passes
# `lossless validate`, and runs twice in two processes with byte-identical
# full output (once in the sanitizer build, see below): the text report, the exit status, the JSON (--json) and the
# series CSV. A file whose header has a line `# ci: validate-only` is only
# validated (for runs too slow for the fast tier). A scenario without series
# of its own is sampled at 1/50 of its simulated length (read from a first
# run; at least stop_time / 1e6), so every comparison includes a CSV. A run exits 0, or 1
# exactly when its output has a DEADLOCK verdict (E9's expected result).
# New files are picked up automatically.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob
files=(scenarios/*.yaml scenarios/*.yml scenarios/*.json)
experiments=(scenarios/experiments/*.yaml scenarios/experiments/*.yml scenarios/experiments/*.json)
if [ ${#experiments[@]} -eq 0 ] || [ ${#files[@]} -eq 0 ]; then echo "FAIL no scenario files"; exit 1; fi
files+=("${experiments[@]}")
for f in "${files[@]}"; do
  if "$BIN" validate "$f" >"$tmp/out" 2>"$tmp/err"; then
    echo "ok   validate $f"
  else
    echo "FAIL validate $f"; cat "$tmp/err"; fail=1
  fi
done
ran=0
# Under ASan + UBSan (LOSSLESS_SANITIZED=1, set by CMakeLists.txt for make sanitize) each
# scenario runs once with its series (after the first run of a scenario without series of
# its own): the sanitizers see every code path of the run, and the second process only
# feeds the byte comparison, which make test's tier makes on the same sources. Under ASan
# that second run was the longest part of that tier's longest test (docs/testing.md#ci-time).
runs=(a b)
[ "${LOSSLESS_SANITIZED:-0}" = 1 ] && runs=(a)
for f in "${files[@]}"; do
  if grep -q '^# ci: validate-only' "$f"; then echo "skip run $f (validate-only)"; continue; fi
  series=()
  if ! "$BIN" validate "$f" --show 2>/dev/null | grep -qE '^  outputs\.series\.interval = [0-9]'; then
    "$BIN" run "$f" --no-timing >"$tmp/first" 2>"$tmp/err"
    "$BIN" validate "$f" --show >"$tmp/show" 2>>"$tmp/err"
    # "result     completed: ..., simulated 1.35659596ms" -> a 50th of it, in ps,
    # but no less than stop_time / 1e6 (the sampler's limit).
    iv=$(python3 - "$tmp/first" "$tmp/show" <<'PY'
import re, sys
scale = {"ps": 1, "ns": 1e3, "us": 1e6, "ms": 1e9, "s": 1e12}
run = re.search(r"simulated ([0-9.]+)(ps|ns|us|ms|s)\b", open(sys.argv[1]).read())
stop = re.search(r"^  stop_time = ([0-9.]+)(ps|ns|us|ms|s)$", open(sys.argv[2]).read(), re.M)
if run and stop:
    ps = max(float(run.group(1)) * scale[run.group(2)] / 50, float(stop.group(1)) * scale[stop.group(2)] / 1e6)
    print(f"{max(1, -int(-ps // 1))}ps")
PY
)
    if [ -z "$iv" ]; then echo "FAIL run $f: no simulated time in its result line"; cat "$tmp/first" "$tmp/err"; fail=1; continue; fi
    series=(--set "outputs.series.interval=$iv")
  fi
  for k in "${runs[@]}"; do
    "$BIN" run "$f" --no-timing --json "$tmp/$k.json" --set "outputs.series_csv=$tmp/$k.csv" "${series[@]}" \
      >"$tmp/$k.txt" 2>"$tmp/$k.err"
    echo $? >"$tmp/$k.rc"
  done
  rc=$(cat "$tmp/a.rc")
  want=0; grep -q '^DEADLOCK ' "$tmp/a.txt" && want=1
  if [ "$rc" != "$want" ]; then
    echo "FAIL run $f: exit $rc, want $want"; cat "$tmp/a.err"; fail=1; continue
  fi
  if ! grep -q '^result     \(completed\|time limit\|deadlock\|flows incomplete\)' "$tmp/a.txt"; then
    echo "FAIL run $f: no result line"; cat "$tmp/a.txt"; fail=1; continue
  fi
  same=1
  if [ ${#runs[@]} = 2 ]; then
    for part in rc txt json csv; do
      cmp -s "$tmp/a.$part" "$tmp/b.$part" || { echo "FAIL run $f: the two runs' $part differ"; same=0; }
    done
  fi
  # The comparison must have compared something: a JSON report with flows and
  # a CSV with a header and samples.
  if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("flows") else 1)' "$tmp/a.json"; then
    echo "FAIL run $f: JSON without flows"; same=0
  fi
  if [ "$(wc -l <"$tmp/a.csv")" -lt 3 ]; then echo "FAIL run $f: series CSV has fewer than 2 samples"; same=0; fi
  if [ $same = 0 ]; then fail=1; continue; fi
  ran=$((ran + 1))
  if [ ${#runs[@]} = 2 ]; then
    echo "ok   run $f (text, exit $rc, JSON $(wc -c <"$tmp/a.json") B and CSV $(wc -l <"$tmp/a.csv") lines identical in two processes)"
  else
    echo "ok   run $f (exit $rc, JSON $(wc -c <"$tmp/a.json") B, CSV $(wc -l <"$tmp/a.csv") lines; one run: sanitizer build)"
  fi
done
if [ $ran -lt 10 ]; then echo "FAIL only $ran scenarios compared (expected every non-validate-only file)"; fail=1; fi
# validate checks series port names against the topology (exit 2, one line).
"$BIN" validate scenarios/experiments/E6-dcqcn-two-flow.yaml --set 'outputs.series.ports=leaf0->nope' \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q 'outputs.series.ports: expected busy, all, none' "$tmp/err"; then
  echo "ok   validate checks series port names"
else
  echo "FAIL validate with a bad series port: exit $rc"; cat "$tmp/err"; fail=1
fi
exit $fail
