#!/usr/bin/env bash
# lossless sweep under real MPI (docs/sweep.md): mpirun -np 1, 2 and 3 give
# the serial table byte for byte; bad input is reported once, by rank 0, and
# every rank exits (no hung mpirun). Registered only in a build with MPI
# (CMake LOSSLESS_MPI); without mpirun it skips (exit 77), under CI=true it
# fails.
set -u
BIN="$1"
. "$(dirname "$0")/lib/require.sh"
. "$(dirname "$0")/lib/mpi.sh"
fail=0
S=scenarios/roce-incast.yaml
ARGS=(--vary fabric.ecn.kmin=50KB,150KB,400KB --vary fabric.cc=none,dcqcn-paper
      --set traffic.0.bytes=256KiB --set traffic.1.bytes=128KiB --quiet)

"$BIN" sweep $S "${ARGS[@]}" -o "$tmp/serial" >/dev/null || { echo "FAIL serial sweep"; exit 1; }
for n in 1 2 3; do
  if ! timeout 120 "${MPIRUN[@]}" -np $n "$BIN" sweep $S "${ARGS[@]}" -o "$tmp/np$n" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL np$n: mpirun failed"; cat "$tmp/out" "$tmp/err"; fail=1; continue
  fi
  # One summary line: rank 0 alone writes.
  if [ "$(grep -c '^sweep: 6 of 6 cases' "$tmp/out")" != 1 ]; then echo "FAIL np$n: want one summary line"; cat "$tmp/out"; fail=1; fi
  if cmp "$tmp/serial/sweep.csv" "$tmp/np$n/sweep.csv" && cmp "$tmp/serial/sweep.json" "$tmp/np$n/sweep.json"; then
    echo "ok   np$n-same-bytes"
  else
    echo "FAIL np$n: table differs from the serial one"; fail=1
  fi
done

# Bad input under 3 ranks: exit 2, the error printed once (by rank 0), no hang.
bad() {  # bad NAME PATTERN -- sweep args...
  local name="$1" pat="$2"; shift 3
  timeout 120 "${MPIRUN[@]}" -np 3 "$BIN" sweep "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" = 124 ]; then echo "FAIL $name: mpirun hung"; fail=1; return; fi
  if [ "$rc" != 2 ]; then echo "FAIL $name: exit $rc, want 2"; cat "$tmp/err"; fail=1; return; fi
  if [ "$(grep -c '^error: ' "$tmp/err")" != 1 ] || ! grep -qE -- "$pat" "$tmp/err"; then
    echo "FAIL $name: want one error line /$pat/"; cat "$tmp/err"; fail=1; return; fi
  echo "ok   $name"
}
bad mpi-bad-value '^error: <--vary>: fabric.ecn.kmin: expected a size with a unit' -- $S --vary fabric.ecn.kmin=50
bad mpi-unknown-key "^error: <--vary>: fabric.ecn.kmn: unknown field" -- $S --vary fabric.ecn.kmn=1KB,2KB
bad mpi-empty-list "^error: <--vary>: fabric.cc: expected a list of values" -- $S --vary fabric.cc=
bad mpi-jobs '^error: <cli>: -j: expected 1 under mpirun' -- $S --vary fabric.cc=none -j 2
# A case failing at run time on rank 1 (case 1): every rank ends.
bad mpi-run-error '^error: <--vary>: case 1 \(faults.nic_stall.host=999\)' \
  -- $S --set traffic.0.bytes=64KiB --set traffic.1.bytes=64KiB --vary faults.nic_stall.host=1,999
# Commands other than sweep and run do not run distributed: refused once, by rank 0, exit 2.
timeout 120 "${MPIRUN[@]}" -np 2 "$BIN" validate $S >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" = 2 ] && [ "$(grep -c '^error: ' "$tmp/err")" = 1 ] &&
   grep -q '^error: <cli>: mpirun: expected `lossless sweep`, `lossless run`, `lossless perf` or `lossless tune` under an MPI launcher with 2 processes, got `lossless validate`' "$tmp/err" &&
   ! [ -s "$tmp/out" ]; then
  echo "ok   mpi-validate-refused"
else
  echo "FAIL mpi-validate-refused: exit $rc"; cat "$tmp/out" "$tmp/err"; fail=1
fi
exit $fail
