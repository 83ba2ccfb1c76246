#!/usr/bin/env bash
# Every scenario file in scenarios/ and scenarios/experiments/ passes
# `lossless validate`; each experiment scenario also runs (twice, with
# byte-identical output) unless its header has a line `# ci: validate-only`
# (for experiments too slow for the fast tier). New files are picked up
# automatically. A run exits 0, or 1 exactly when its output has a DEADLOCK
# verdict (E9's expected result); both runs must exit alike. Outputs a file asks for (outputs.json, outputs.series_csv)
# are redirected to a temporary directory.
set -u
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob
all=(scenarios/*.yaml scenarios/*.yml scenarios/*.json)
experiments=(scenarios/experiments/*.yaml scenarios/experiments/*.yml scenarios/experiments/*.json)
if [ ${#experiments[@]} -eq 0 ]; then echo "FAIL no files in scenarios/experiments"; exit 1; fi
for f in "${all[@]}" "${experiments[@]}"; do
  if "$BIN" validate "$f" >"$tmp/out" 2>"$tmp/err"; then
    echo "ok   validate $f"
  else
    echo "FAIL validate $f"; cat "$tmp/err"; fail=1
  fi
done
for f in "${experiments[@]}"; do
  if grep -q '^# ci: validate-only' "$f"; then echo "skip run $f (validate-only)"; continue; fi
  extra=()
  grep -qE '^[[:space:]]+json:' "$f" && extra+=(--json "$tmp/out.json")
  grep -q 'series_csv' "$f" && extra+=(--set "outputs.series_csv=$tmp/series.csv")
  "$BIN" run "$f" --no-timing "${extra[@]}" >"$tmp/a" 2>"$tmp/err"; rc_a=$?
  want=0; grep -q '^DEADLOCK ' "$tmp/a" && want=1
  if [ "$rc_a" != "$want" ]; then
    echo "FAIL run $f: exit $rc_a, want $want"; cat "$tmp/err"; fail=1; continue
  fi
  "$BIN" run "$f" --no-timing "${extra[@]}" >"$tmp/b" 2>/dev/null; rc_b=$?
  if ! cmp -s "$tmp/a" "$tmp/b" || [ "$rc_a" != "$rc_b" ]; then echo "FAIL run $f: two runs differ"; fail=1; continue; fi
  if ! grep -q '^result     completed\|^result     time limit\|^result     deadlock' "$tmp/a"; then
    echo "FAIL run $f: no result line"; cat "$tmp/a"; fail=1; continue
  fi
  echo "ok   run $f (deterministic, exit $rc_a)"
done
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
