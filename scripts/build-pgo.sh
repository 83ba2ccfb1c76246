#!/usr/bin/env bash
# A profile-guided (PGO) Release build of the lossless binary, GCC only, in two
# steps in one build directory (CMake option LOSSLESS_PGO, docs/benchmarks.md,
# "Where issue 10's 60 s stands"):
#   1. LOSSLESS_PGO=generate: the per-event modules instrumented; a training
#      run of small `perf` rows (IB Tree and Ring, RoCE) and `bench ls-ring`
#      writes their profiles;
#   2. LOSSLESS_PGO=use: the same modules rebuilt with those profiles.
# PGO changes the machine code, never a result: the binary prints the same
# bytes as a plain build. Opt-in, not part of CI's build.
#
#   scripts/build-pgo.sh [BUILD_DIR]     (default build-pgo; -j2 unless JOBS is set)
set -euo pipefail
dir=${1:-build-pgo}
jobs=${JOBS:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
common=(-S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOSSLESS_LTO=ON)

cmake "${common[@]}" -DLOSSLESS_PGO=generate >/dev/null
cmake --build "$dir" -j"$jobs" --target lossless
profile=$(cmake -L -N "$dir" | sed -n 's/^LOSSLESS_PGO_DIR:PATH=//p')
rm -rf "$profile"
bin="$dir/lossless"
train() {
  echo "training: lossless $*" >&2
  "$bin" "$@" >/dev/null
}
# What `perf` spends its events on: the IB preset's Tree (LL128, Simple) and
# Ring rows at 16 nodes, RoCE with PFC/ECN/DCQCN, and the raw packet path.
train perf all_reduce -b 8M -e 128M -f 4 -g 8 --nodes 16 -n 1 -w 0
train perf all_reduce -b 128M -e 128M -g 8 --nodes 16 -n 1 -w 0 --algo ring --proto simple
train perf all_reduce -b 1M -e 64M -f 8 -g 8 --nodes 4 -n 1 -w 0 --fabric roce-400g
train perf alltoall -b 1M -e 4M -f 4 -g 8 --nodes 4 -n 1 -w 0
train bench ls-ring --hosts 64 --bytes 16MiB
train bench ls-ring --hosts 64 --bytes 4MiB --lossless ib
train bench ls-ring --hosts 64 --bytes 4MiB --lossless roce

cmake "${common[@]}" -DLOSSLESS_PGO=use >/dev/null
cmake --build "$dir" -j"$jobs" --target lossless
echo "PGO build: $bin"
