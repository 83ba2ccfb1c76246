#!/usr/bin/env bash
# End-to-end checks of lossless sweep (docs/sweep.md) and lossless partition
# (docs/parallel.md): the table is the same bytes for -j 1, 2 and 3 local
# workers; bad input is one error line and exit 2.
set -u
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
check() {  # check NAME EXPECTED_RC OUTPUT_PATTERN -- command...
  local name="$1" want="$2" pat="$3"; shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL $name: exit $rc, want $want"; cat "$tmp/out" "$tmp/err"; fail=1; return; fi
  if [ -n "$pat" ] && ! grep -qE -- "$pat" "$tmp/err" "$tmp/out"; then
    echo "FAIL $name: output lacks /$pat/"; cat "$tmp/err" "$tmp/out"; fail=1; return; fi
  if [ "$want" = 2 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then echo "FAIL $name: want one error line"; cat "$tmp/err"; fail=1; return; fi
  echo "ok   $name"
}
S=scenarios/roce-incast.yaml
SMALL=(--set traffic.0.bytes=256KiB --set traffic.1.bytes=128KiB)
VARY=(--vary fabric.ecn.kmin=50KB,150KB,400KB --vary fabric.cc=none,dcqcn-paper)

check help 0 "cross product" -- "$BIN" sweep --help
check help-says-mpi 0 "This build: (MPI support \(.+\)|no MPI support)" -- "$BIN" sweep --help
check stdout-csv 0 "^case,fabric.ecn.kmin,fabric.cc,result,sim_time_ps," -- "$BIN" sweep $S "${VARY[@]}" "${SMALL[@]}"
# Six cases, first --vary slowest, DCQCN cases send CNPs.
if [ "$(wc -l <"$tmp/out")" = 7 ] && grep -q "^5,400KB,dcqcn-paper,completed," "$tmp/out"; then echo "ok   six-rows"
else echo "FAIL six-rows"; cat "$tmp/out"; fail=1; fi
for j in 1 2 3; do
  check "files-j$j" 0 "^sweep: 6 of 6 cases -> $tmp/j$j/sweep.csv, $tmp/j$j/sweep.json$" \
    -- "$BIN" sweep $S "${VARY[@]}" "${SMALL[@]}" -o "$tmp/j$j" -j $j
done
for j in 2 3; do
  if cmp -s "$tmp/j1/sweep.csv" "$tmp/j$j/sweep.csv" && cmp -s "$tmp/j1/sweep.json" "$tmp/j$j/sweep.json"; then
    echo "ok   same-bytes-j$j"
  else echo "FAIL same-bytes-j$j"; diff "$tmp/j1/sweep.csv" "$tmp/j$j/sweep.csv" | head; fail=1; fi
done
check json-schema 0 '"schema": "lossless.sweep/1"' -- cat "$tmp/j1/sweep.json"
# The sweep's row of a case is what lossless run reports for it.
"$BIN" run $S "${SMALL[@]}" --set fabric.ecn.kmin=150KB --set fabric.cc=dcqcn-paper --json "$tmp/run.json" >/dev/null
p99=$(python3 -c "import json;print(json.load(open('$tmp/run.json'))['fct_us']['p99'])")
row=$(python3 -c "import json;r=json.load(open('$tmp/j1/sweep.json'))['rows'][3];print(r['fct_p99_us'], r['fabric.ecn.kmin'], r['fabric.cc'])")
if [ "$row" = "$p99 150KB dcqcn-paper" ]; then echo "ok   row-is-run"; else echo "FAIL row-is-run: $row vs $p99"; fail=1; fi

# A finding (a confirmed PFC deadlock: lossless run exits 1) is a row, not a failure.
check finding-is-a-row 0 "^0,1,deadlock,[0-9]+,.*,1,,0,[0-9]+$" \
  -- "$BIN" sweep scenarios/experiments/E9-pfc-deadlock.yaml --vary seed=1,2

# Bad input: one line, exit 2, before anything runs.
check bad-value 2 '^error: <--vary>: fabric.ecn.kmin: expected a size with a unit such as 9KiB or 4096B, got "50"$' \
  -- "$BIN" sweep $S --vary fabric.ecn.kmin=50KB,50
check unknown-key 2 "^error: <--vary>: fabric.ecn.kmn: unknown field; did you mean 'fabric.ecn.kmin'\?$" \
  -- "$BIN" sweep $S --vary fabric.ecn.kmn=1KB
check empty-list 2 "^error: <--vary>: fabric.cc: expected a list of values after '=', got none$" \
  -- "$BIN" sweep $S --vary fabric.cc=
check no-equals 2 '^error: <--vary>: expected key=value1,value2,..., got "fabric.cc"$' -- "$BIN" sweep $S --vary fabric.cc
check no-vary 2 "^error: <cli>: --vary is required" -- "$BIN" sweep $S
check set-and-vary 2 "expected a key given by --vary or by --set, not both" \
  -- "$BIN" sweep $S --vary fabric.cc=none --set fabric.cc=none
check bad-jobs 2 "^error: <cli>: -j: expected at least 1, got \"0\"$" -- "$BIN" sweep $S --vary fabric.cc=none -j 0
check missing-file 2 "^error: nope.yaml" -- "$BIN" sweep nope.yaml --vary fabric.cc=none
# A case that fails while running (a fault on a host the check does not see)
# names the case, with workers too.
for j in 1 2; do
  check "run-error-j$j" 2 "^error: <--vary>: case 1 \(faults.nic_stall.host=999\): " \
    -- "$BIN" sweep $S "${SMALL[@]}" --vary faults.nic_stall.host=1,999 -j $j
done

# On a terminal a progress line names the running case; piped, nothing.
long=(sweep $S --vary fabric.cc=none --set traffic.0.bytes=64MiB)
if command -v script >/dev/null; then
  script -qec "$BIN ${long[*]}" /dev/null >"$tmp/tty.out" 2>&1
  if grep -qE $'\rsweep: case 1 of 1: simulated [0-9.]+[pnum]?s of 10s \([0-9]+%\); 0 cases done here\033\[K' "$tmp/tty.out"; then
    echo "ok   progress-on-tty"
  else echo "FAIL progress-on-tty"; head -c 400 "$tmp/tty.out" | cat -v; echo; fail=1; fi
else
  echo "skip progress-on-tty: no script(1)"
fi
# Ctrl-C: the cases finished so far (none here), marked interrupted, exit 130;
# with -j the parent passes it on to its workers.
for j in 1 2; do
  "$BIN" sweep $S --vary fabric.cc=none,dcqcn-paper --set traffic.0.bytes=1GiB -j $j -o "$tmp/int$j" \
    >"$tmp/int.out" 2>"$tmp/int.err" &
  pid=$!
  sleep 2
  kill -INT $pid
  wait $pid
  rc=$?
  if [ $rc = 130 ] && grep -q '"interrupted": true' "$tmp/int$j/sweep.json" &&
     grep -q '"cases_done": 0' "$tmp/int$j/sweep.json" && [ "$(wc -l <"$tmp/int$j/sweep.csv")" = 1 ]; then
    echo "ok   interrupt-j$j"
  else echo "FAIL interrupt-j$j: exit $rc"; cat "$tmp/int.out" "$tmp/int.err"; fail=1; fi
done

# lossless partition on the scenarios' fabrics.
check partition-leaf-spine 0 "^cut links: 88 of 128 switch-to-switch links \(68.8%\); host links are never cut$" \
  -- "$BIN" partition $S --ranks 3
check partition-lookahead 0 "^lookahead: 150ns \(the smallest delay of a cut link" -- "$BIN" partition $S --ranks 2
check partition-fat-tree 0 "2 groups \(pod or scalable unit\) each whole on one rank" \
  -- "$BIN" partition scenarios/ib-fat-tree.json --ranks 2
check partition-rail 0 "^partition: 2 ranks, 10 partition units \(2 with hosts, 8 switches alone\)" \
  -- "$BIN" partition $S --set topology.kind=rail-optimized --set topology.gpus=128 --set topology.radix=16 --ranks 2
check partition-too-many 2 "^error: <cli>: --ranks: expected at most 12 ranks: the fabric has 12 partition units" \
  -- "$BIN" partition $S --ranks 13
exit $fail
