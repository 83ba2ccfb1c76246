#!/usr/bin/env bash
# `lossless run` under real MPI (docs/parallel.md): mpirun -np 1/2/3/4 gives
# the serial run's text and JSON byte for byte (cmp), as do the series CSV
# and the E9 deadlock ring's report at -np 2 (and -np 2 with waiting ranks
# spinning instead of yielding), links going down at -np 2, other tenants
# with the pcapng and the timeline at -np 2, a QP out of retries at -np 2
# (exit 1 on both), and a report line on
# standard error with cross-rank events and same-time ties above zero; bad
# input is reported once, by rank 0, exit 2, and no rank hangs.
# Usage: run_mpi.sh PATH/TO/lossless
# Registered only in a build with MPI (CMake LOSSLESS_MPI); without mpirun
# it skips (exit 77), under CI=true it fails.
set -u
BIN="$1"
. "$(dirname "$0")/lib/require.sh"
. "$(dirname "$0")/lib/mpi.sh"
fail=0
S=scenarios/roce-incast.yaml
SETS=(--set fabric.cc=dcqcn-paper --set traffic.0.bytes=256KiB --set traffic.1.bytes=128KiB
      --set traffic.1.start=2us)
"$BIN" run $S "${SETS[@]}" --json "$tmp/serial.json" --digest > "$tmp/serial.txt" 2> "$tmp/serial.err" ||
  { cat "$tmp/serial.err"; exit 1; }
for np in 1 2 3 4; do
  if ! timeout 300 "${MPIRUN[@]}" -np "$np" "$BIN" run $S "${SETS[@]}" --json "$tmp/np.json" --digest \
      > "$tmp/np.txt" 2> "$tmp/np.err"; then
    echo "FAIL: -np $np exited non-zero"; cat "$tmp/np.err"; fail=1; continue
  fi
  cmp -s "$tmp/serial.txt" "$tmp/np.txt" || { echo "FAIL: -np $np: text differs"; fail=1; }
  cmp -s "$tmp/serial.json" "$tmp/np.json" || { echo "FAIL: -np $np: JSON differs"; fail=1; }
  line=$(grep "^distributed:" "$tmp/np.err")
  echo "-np $np: $line"
  if [ "$np" -gt 1 ] && ! echo "$line" | grep -Eq ' [1-9][0-9]* cross-rank events \([0-9]+ batch bytes\), [1-9][0-9]* same-time'; then
    echo "FAIL: -np $np: no cross-rank event or no same-time tie"; fail=1
  fi
done
# Waiting ranks yield their core by default (Open MPI's mpi_yield_when_idle,
# set unless the user set it); spinning, the user's choice, gives the same
# bytes, and the report line says the time outside the engine.
if OMPI_MCA_mpi_yield_when_idle=0 timeout 300 "${MPIRUN[@]}" -x OMPI_MCA_mpi_yield_when_idle -np 2 \
    "$BIN" run $S "${SETS[@]}" --json "$tmp/np.json" --digest > "$tmp/np.txt" 2> "$tmp/np.err"; then
  cmp -s "$tmp/serial.txt" "$tmp/np.txt" || { echo "FAIL: -np 2 spinning: text differs"; fail=1; }
  cmp -s "$tmp/serial.json" "$tmp/np.json" || { echo "FAIL: -np 2 spinning: JSON differs"; fail=1; }
  grep -Eq '^distributed: .*; outside the engine [0-9.]+ s before, [0-9.]+ s after' "$tmp/np.err" ||
    { echo "FAIL: -np 2: no time outside the engine in the report line"; fail=1; }
else
  echo "FAIL: -np 2 spinning exited non-zero"; cat "$tmp/np.err"; fail=1
fi
# Series (outputs.series_csv) and the deadlock detector at -np 2: the CSV,
# the JSON and the text (the DEADLOCK line, exit 1) are the serial run's.
SER=(--set outputs.series.interval=2us --set stop_time=1ms --set outputs.series.flows=all)
"$BIN" run $S "${SETS[@]}" "${SER[@]}" --set "outputs.series_csv=$tmp/serial.csv" \
  --json "$tmp/serial-s.json" > /dev/null 2>&1 || { echo "FAIL: serial series run"; fail=1; }
if timeout 300 "${MPIRUN[@]}" -np 2 "$BIN" run $S "${SETS[@]}" "${SER[@]}" \
    --set "outputs.series_csv=$tmp/np.csv" --json "$tmp/np-s.json" > /dev/null 2> "$tmp/np.err"; then
  cmp -s "$tmp/serial.csv" "$tmp/np.csv" || { echo "FAIL: -np 2: series CSV differs"; fail=1; }
  cmp -s "$tmp/serial-s.json" "$tmp/np-s.json" || { echo "FAIL: -np 2: series JSON differs"; fail=1; }
  [ -s "$tmp/np.csv" ] || { echo "FAIL: -np 2: no series CSV"; fail=1; }
  echo "-np 2 series: $(wc -l < "$tmp/np.csv") CSV lines, $(grep "^distributed:" "$tmp/np.err")"
else
  echo "FAIL: -np 2 series exited non-zero"; cat "$tmp/np.err"; fail=1
fi
E9=scenarios/experiments/E9-pfc-deadlock.yaml
"$BIN" run $E9 --json "$tmp/e9.json" > "$tmp/e9.txt" 2> /dev/null; rc_serial=$?
timeout 300 "${MPIRUN[@]}" -np 2 "$BIN" run $E9 --json "$tmp/e9-np.json" > "$tmp/e9-np.txt" \
  2> "$tmp/np.err"; rc_np=$?
if [ "$rc_serial" = 1 ] && [ "$rc_np" = 1 ] && grep -q '^DEADLOCK' "$tmp/e9-np.txt" &&
    cmp -s "$tmp/e9.txt" "$tmp/e9-np.txt" && cmp -s "$tmp/e9.json" "$tmp/e9-np.json"; then
  echo "-np 2 E9: $(grep '^DEADLOCK' "$tmp/e9-np.txt" | cut -c1-80)..."
else
  echo "FAIL: -np 2 E9 deadlock: exit $rc_np (serial $rc_serial) or output differs"
  cat "$tmp/np.err"; fail=1
fi
# Links going down (faults.link_down) at -np 2: leaf0-spine1#0 is cut at 2
# ranks (leaf0 on rank 0, spine1 on rank 1) and goes down at 3 us with
# frames on it, back at 9 us; leaf0-spine3#0 (cut too) goes down for 100 ns,
# less than a window. Reroutes 2 us after each change. Text (--digest) and
# JSON are the serial run's; the serial run lost frames. With DCQCN: the
# flows that lost frames run on while the others' reaction points end on
# their sources' own view (docs/parallel.md, "A reaction point ends on its
# source's own view").
DOWN=(--set fabric.cc=dcqcn-paper --set traffic.0.bytes=256KiB --set traffic.1.bytes=128KiB --set traffic.1.start=2us
      --set faults.reroute.ethernet=2us
      --set 'faults.link_down.0.link=leaf0-spine1#0' --set faults.link_down.0.at=3us
      --set faults.link_down.0.up_at=9us
      --set 'faults.link_down.1.link=leaf0-spine3#0' --set faults.link_down.1.at=4us
      --set faults.link_down.1.up_at=4100ns)
"$BIN" run $S "${DOWN[@]}" --json "$tmp/down.json" --digest > "$tmp/down.txt" \
  2> /dev/null || { echo "FAIL: serial link-down run"; fail=1; }
grep -Eq '^drops +[1-9]' "$tmp/down.txt" || { echo "FAIL: the serial link-down run dropped nothing"; fail=1; }
if timeout 300 "${MPIRUN[@]}" -np 2 "$BIN" run $S "${DOWN[@]}" --json "$tmp/down-np.json" \
    --digest > "$tmp/down-np.txt" 2> "$tmp/np.err"; then
  cmp -s "$tmp/down.txt" "$tmp/down-np.txt" || { echo "FAIL: -np 2 link down: text differs"; fail=1; }
  cmp -s "$tmp/down.json" "$tmp/down-np.json" || { echo "FAIL: -np 2 link down: JSON differs"; fail=1; }
  echo "-np 2 link down: $(grep '^drops' "$tmp/down-np.txt" | cut -c1-60); $(grep "^distributed:" "$tmp/np.err" | cut -c1-120)..."
else
  echo "FAIL: -np 2 link down exited non-zero"; cat "$tmp/np.err"; fail=1
fi
# Other tenants and the capture files (outputs.pcap, outputs.trace) at -np 2:
# the text with digests, the JSON, the pcapng and the timeline are the serial
# ones.
CAP=(--set fabric.cc=dcqcn-paper --set traffic.0.bytes=64KiB --set traffic.1.bytes=64KiB
     --set traffic.1.start=1us --set tenants.load=0.2 --set tenants.burst=16KiB
     --set outputs.pcap_snaplen=96)
"$BIN" run $S "${CAP[@]}" --set "outputs.pcap=$tmp/serial.pcapng" \
  --set "outputs.trace=$tmp/serial-trace.json" --json "$tmp/serial-c.json" --digest \
  > "$tmp/serial-c.txt" 2> /dev/null || { echo "FAIL: serial capture run"; fail=1; }
if timeout 300 "${MPIRUN[@]}" -np 2 "$BIN" run $S "${CAP[@]}" --set "outputs.pcap=$tmp/np.pcapng" \
    --set "outputs.trace=$tmp/np-trace.json" --json "$tmp/np-c.json" --digest \
    > "$tmp/np-c.txt" 2> "$tmp/np.err"; then
  cmp -s "$tmp/serial-c.txt" "$tmp/np-c.txt" || { echo "FAIL: -np 2 captures: text differs"; fail=1; }
  cmp -s "$tmp/serial-c.json" "$tmp/np-c.json" || { echo "FAIL: -np 2 captures: JSON differs"; fail=1; }
  cmp -s "$tmp/serial.pcapng" "$tmp/np.pcapng" || { echo "FAIL: -np 2: pcapng differs"; fail=1; }
  cmp -s "$tmp/serial-trace.json" "$tmp/np-trace.json" || { echo "FAIL: -np 2: trace differs"; fail=1; }
  [ -s "$tmp/np.pcapng" ] && [ -s "$tmp/np-trace.json" ] || { echo "FAIL: -np 2: no capture"; fail=1; }
  echo "-np 2 tenants and captures: $(wc -c < "$tmp/np.pcapng") pcapng bytes, $(wc -c < "$tmp/np-trace.json") trace bytes"
else
  echo "FAIL: -np 2 tenants and captures exited non-zero"; cat "$tmp/np.err"; fail=1
fi
# A QP out of retries at -np 2 (RC, retry_cnt 0, every third frame lost on
# leaf5->spine1#0, a link out of rank 1's leaves): the serial run stops at
# the failing event, exit 1; distributed, a first pass finds it and the run
# is re-run to exactly it (docs/parallel.md, "A QP failure"): text with
# digests and JSON are the serial run's, exit 1, and the report line says so.
QPF=(--set traffic.0.bytes=256KiB --set traffic.1.bytes=128KiB --set traffic.1.start=2us
     --set transport.kind=rc --set transport.retry_cnt=0
     --set 'faults.link_loss.0.link=leaf5->spine1#0' --set faults.link_loss.0.every=3)
"$BIN" run $S "${QPF[@]}" --json "$tmp/qp.json" --digest > "$tmp/qp.txt" 2> /dev/null; rc_serial=$?
timeout 300 "${MPIRUN[@]}" -np 2 "$BIN" run $S "${QPF[@]}" --json "$tmp/qp-np.json" --digest \
  > "$tmp/qp-np.txt" 2> "$tmp/np.err"; rc_np=$?
if [ "$rc_serial" = 1 ] && [ "$rc_np" = 1 ] && grep -q '^QP FAILED' "$tmp/qp-np.txt" &&
    cmp -s "$tmp/qp.txt" "$tmp/qp-np.txt" && cmp -s "$tmp/qp.json" "$tmp/qp-np.json" &&
    grep -q '^distributed: .*re-run from the start to the QP failure at' "$tmp/np.err"; then
  echo "-np 2 QP failure: $(grep '^QP FAILED' "$tmp/qp-np.txt" | cut -c1-90)..."
else
  echo "FAIL: -np 2 QP failure: exit $rc_np (serial $rc_serial) or output differs"
  cat "$tmp/np.err"; fail=1
fi
# Bad input: once, by rank 0, exit 2, every rank ends.
bad() {
  local name="$1" pattern="$2"; shift 2
  timeout 120 "${MPIRUN[@]}" -np 2 "$BIN" run "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
  if [ "$rc" = 2 ] && [ "$(grep -c '^error: ' "$tmp/err")" = 1 ] && grep -Eq "$pattern" "$tmp/err"; then
    echo "ok   $name"
  else
    echo "FAIL $name: exit $rc"; cat "$tmp/out" "$tmp/err"; fail=1
  fi
}
bad mpi-run-bad-value '^error: <--set>: fabric.link_rate' $S --set fabric.link_rate=fast
bad mpi-run-too-many-ranks '^error: <cli>: mpirun -np: expected at most 1 ranks' \
  $S --set topology.gpus=16
[ "$fail" = 0 ] && echo "run_mpi: every rank count gives the serial bytes"
exit "$fail"
