#pragma once
// An in-process Comm: K ranks that are K threads of this process, sharing
// one hub (mutex and condition variable). Same contract as MPI
// (comm.hpp), so SPMD code written for mpirun runs in a unit test with
// 1, 2, 3 ... ranks and its output can be compared with the serial run.
//
// If one rank's function throws, the ranks waiting in a collective or an
// Exchange are woken and throw too (no hung test); RunLoopback rethrows
// the exception of the lowest rank that threw first.
#include <functional>
#include <memory>

#include "parallel/comm.hpp"

namespace lossless::parallel {

struct LoopbackOptions {
  // Non-zero: before each call, a rank yields a pseudo-random number of
  // times (from this seed and its rank), so ranks arrive at collectives and
  // batches land in mailboxes in varying orders. Results must not change.
  uint64_t jitter_seed = 0;
};

// Runs fn(comm) on `ranks` threads, one Comm each, and waits for all.
void RunLoopback(int ranks, const std::function<void(Comm&)>& fn,
                 const LoopbackOptions& options = {});

}  // namespace lossless::parallel
