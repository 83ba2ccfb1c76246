#!/usr/bin/env bash
# lossless tune under real MPI (docs/tune.md#ranks): mpirun -np 2 gives the
# serial tune.json and snippets byte for byte, rank 0 alone prints; bad input
# is reported once and every rank exits (no hung mpirun). Registered only in a
# build with MPI (CMake LOSSLESS_MPI); without mpirun it skips (exit 77), under
# CI=true it fails.
set -u
BIN="$1"
. "$(dirname "$0")/lib/require.sh"
. "$(dirname "$0")/lib/mpi.sh"
fail=0
# The small case of tests/cli/tune.sh: 4 runs, so both ranks run points in
# every batch but the baseline's.
T=(tune --fabric roce-untuned --nodes 2 --levels 1 --budget 4 --allreduce-bytes 8M -n 1 --seed 1 --quiet)

"$BIN" "${T[@]}" -o "$tmp/serial" >"$tmp/serial.txt" || { echo "FAIL serial tune"; exit 1; }
if ! timeout 120 "${MPIRUN[@]}" -np 2 "$BIN" "${T[@]}" -o "$tmp/np2" >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL np2: mpirun failed"; cat "$tmp/out" "$tmp/err"; fail=1
else
  if [ "$(grep -c '^verdict: ' "$tmp/out")" != 1 ]; then echo "FAIL np2: want one verdict line"; cat "$tmp/out"; fail=1; fi
  same=1
  for f in tune.json sonic-config_db.json cumulus-nvue.txt arista-eos.txt cisco-nxos.txt junos.txt nic-dcqcn.txt nic-profile.yaml; do
    cmp -s "$tmp/serial/$f" "$tmp/np2/$f" || { echo "FAIL np2: $f differs from the serial run's"; same=0; fail=1; }
  done
  sed "s|$tmp/np2|DIR|" "$tmp/out" >"$tmp/out.n"; sed "s|$tmp/serial|DIR|" "$tmp/serial.txt" >"$tmp/serial.n"
  cmp -s "$tmp/out.n" "$tmp/serial.n" || { echo "FAIL np2: standard output differs from the serial run's"; same=0; fail=1; }
  [ $same = 1 ] && echo "ok   np2-same-bytes"
fi

# Bad input under 2 ranks: exit 2, the error printed once, no hang.
timeout 120 "${MPIRUN[@]}" -np 2 "$BIN" tune --fabric roce-untuned --budget 10 -o "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 124 ]; then echo "FAIL mpi-budget: mpirun hung"; fail=1
elif [ "$rc" != 2 ]; then echo "FAIL mpi-budget: exit $rc, want 2"; cat "$tmp/err"; fail=1
elif [ "$(grep -c '^error: <cli>: --budget: expected at least 25 runs' "$tmp/err")" != 1 ]; then
  echo "FAIL mpi-budget: want one error line"; cat "$tmp/err"; fail=1
else echo "ok   mpi-budget"; fi
exit $fail
