#!/usr/bin/env bash
# The window engine under real MPI (docs/parallel.md): the synthetic token
# model under mpirun -np 1/2/3/4, contiguous and random placements, gives
# the serial run's bytes (per-entity state and event digests), and every
# run moved events between ranks with same-time ties.
# Usage: engine_mpi.sh PATH/TO/engine_mpi
# Registered only in a build with MPI (CMake LOSSLESS_MPI); without mpirun
# it skips (exit 77), under CI=true it fails.
set -u
bin="$1"
. "$(dirname "$0")/lib/require.sh"
. "$(dirname "$0")/lib/mpi.sh"
fail=0
"$bin" --serial > "$tmp/serial.txt" 2> "$tmp/serial.err" || { cat "$tmp/serial.err"; exit 1; }
for np in 1 2 3 4; do
  for placement in "" "--random 5"; do
    # shellcheck disable=SC2086
    if ! timeout 120 mpirun --oversubscribe --allow-run-as-root -np "$np" "$bin" $placement \
        > "$tmp/np.txt" 2> "$tmp/np.err"; then
      echo "FAIL: -np $np $placement exited non-zero"; cat "$tmp/np.err"; fail=1; continue
    fi
    if ! cmp -s "$tmp/serial.txt" "$tmp/np.txt"; then
      echo "FAIL: -np $np $placement differs from the serial run"; fail=1
    fi
    line=$(grep "ranks:" "$tmp/np.err")
    echo "-np $np $placement: $line"
    if [ "$np" -gt 1 ] && ! echo "$line" | grep -Eq ' [1-9][0-9]* cross-rank events, [1-9][0-9]* same-time'; then
      echo "FAIL: -np $np $placement: no cross-rank event or no same-time tie"; fail=1
    fi
  done
done
# Bad input: every rank exits, no hang.
if timeout 60 mpirun --oversubscribe --allow-run-as-root -np 2 "$bin" --tokens x > "$tmp/bad.out" 2>&1; then
  echo "FAIL: a bad argument was accepted"; fail=1
fi
grep -q "expected a positive integer" "$tmp/bad.out" || { echo "FAIL: no message for a bad argument"; fail=1; }
[ "$fail" = 0 ] && echo "engine_mpi: all rank counts give the serial bytes"
exit "$fail"
