#!/usr/bin/env bash
# `lossless run` under real MPI (docs/parallel.md): mpirun -np 1/2/3/4 gives
# the serial run's text and JSON byte for byte (cmp), and a report line on
# standard error with cross-rank events and same-time ties above zero; bad
# input is reported once, by rank 0, exit 2, and no rank hangs.
# Usage: run_mpi.sh PATH/TO/lossless
# Registered only in a build with MPI (CMake LOSSLESS_MPI); without mpirun
# it skips (exit 77), under CI=true it fails.
set -u
BIN="$1"
. "$(dirname "$0")/lib/require.sh"
require mpirun
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIRUN=(mpirun --oversubscribe --allow-run-as-root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
  if [ "$np" -gt 1 ] && ! echo "$line" | grep -Eq ' [1-9][0-9]* cross-rank events, [1-9][0-9]* same-time'; then
    echo "FAIL: -np $np: no cross-rank event or no same-time tie"; fail=1
  fi
done
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
bad mpi-run-series '^error: .*outputs.series.interval: expected it off in a distributed run' \
  $S --set outputs.series.interval=10us
bad mpi-run-bad-value '^error: <--set>: fabric.link_rate' $S --set fabric.link_rate=fast
bad mpi-run-too-many-ranks '^error: <cli>: mpirun -np: expected at most 1 ranks' \
  $S --set topology.gpus=16
[ "$fail" = 0 ] && echo "run_mpi: every rank count gives the serial bytes"
exit "$fail"
