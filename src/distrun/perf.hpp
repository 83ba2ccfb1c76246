#pragma once
// `mpirun -np K lossless perf <collective> ...` (docs/perf.md, "Over MPI
// ranks"; docs/parallel.md): the packet-level nccl-tests sweep of
// run::RunPerf with the fabric partitioned over K ranks on the window engine
// (distrun/fabric_ranks.hpp), giving the serial sweep's PerfResult, and so
// its text and JSON, byte for byte.
//
// Every rank builds the whole sweep alike (network, collective engines,
// their queue pairs and GPU entities) and runs the GPUs of the nodes it
// owns (collective/ownership.hpp): a node is never split, so a GPU's NVLink
// and NICs are on its rank, and everything between nodes crosses as frames.
// RunPerf's sweep runs each collective to global completion, then begins
// the next at that instant: distributed, each rank's engine stops at the
// event that finishes its own GPUs, the window engine's StopRule agrees on
// the serial stop point (the latest (time, key) of those events) and every
// rank stands exactly there, delivers what its last window sent, and begins
// the next collective. Each collective's time is its latest GPU's finish,
// an integer maximum over the ranks. The kernel launch is one event on the
// launching GPU's entity that starts every GPU: its key is drawn by that
// GPU's owner and agreed, and every rank queues it under that key. Results
// (port counters, queue pairs' timeouts and NAKs, events, packet-hops) are
// gathered on rank 0 as `run`'s are.
//
// Links going down (faults.link_down) run as in `run` (docs/parallel.md, "A
// cut link going down"); other tenants and --pcap / --trace as in `run`
// (distrun/distributed.hpp); the timeline's steps that the launch posts (on
// every rank, each for its own GPUs) are merged in the ring's launch order.
// A queue pair that exhausts its retries ends the sweep with an error on
// every rank.
#include <string>

#include "distrun/distributed.hpp"
#include "parallel/comm.hpp"
#include "perf/options.hpp"
#include "perf/result.hpp"
#include "scenario/scenario.hpp"
#include "sim/simulator.hpp"

namespace lossless::distrun {

// The kernel launch's key (collective::GpuOwnership::launch_key): the rank
// that owns the launching GPU (`mine`) draws `entity`'s next key, as the
// serial run's Schedule would; every rank gets it (one integer reduction).
// Collective.
uint64_t AgreedLaunchKey(parallel::Comm& comm, sim::Simulator& sim, bool mine, uint32_t entity);

// Runs the sweep of run::RunPerf over comm's ranks. Collective. Rank 0 gets
// the result (the other ranks a result they should not print), `*failure`
// as RunPerf sets it. `count_ties`: count same-time ties (Stats::ties; a
// per-event probe, as `run --digest` does).
perf::PerfResult RunPerf(const perf::PerfOptions& o, const scenario::Scenario& s,
                         const std::string& fabric_name, std::string* failure, parallel::Comm& comm,
                         const Options& opt = {}, Stats* stats = nullptr, bool count_ties = false);

}  // namespace lossless::distrun
