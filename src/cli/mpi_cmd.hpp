#pragma once
// A command under an MPI launcher with several processes (run_cmd_mpi.cpp):
// `lossless run` and `lossless perf` partitioned over the ranks
// (docs/parallel.md). Shared so that both end alike: bad input once, from
// rank 0, and every rank's exit.
#include <functional>

#include "parallel/comm.hpp"

namespace lossless::cli {

// Opens MPI's world and runs `check` on every rank, agreed
// (parallel::RunAgreed): bad input found by any rank is printed once, by
// rank 0, and every rank returns 2. Then `run` on every rank: an InputError
// from it (found by every rank at the same point) is printed by rank 0 and
// every rank returns 2; any other exception (found by one rank, while others
// may wait in a collective) is printed by that rank, which ends the job
// (exit 2). Then, on rank 0 only, `write_out` (printing and writing the
// outputs; its errors are rank 0's own) and its exit status; the other
// ranks return 0. Without MPI support in the build: rank 0 says so (exit
// 2), the other ranks end quietly.
int UnderMpi(const std::function<void(parallel::Comm&)>& check,
             const std::function<void(parallel::Comm&)>& run,
             const std::function<int()>& write_out);

}  // namespace lossless::cli
