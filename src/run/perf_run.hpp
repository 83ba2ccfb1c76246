#pragma once
// `lossless perf` at packet level: an nccl-tests sweep whose rows are NCCL's
// collectives run as RC messages over the modelled fabric, on the topology
// and fabric of a profile or a scenario (docs/perf.md).
//
// Simulated: all_reduce, reduce_scatter, all_gather, broadcast and reduce
// with Ring (collective::RingEngine) or Tree (collective::TreeEngine) and the
// protocols Simple, LL and LL128, as NCCL's tuning model picks them per size
// (or as --algo/--proto and NCCL_* ask); alltoall and sendrecv as
// point-to-point sends (collective::P2pEngine) with Simple. One process per
// node with -g GPUs, one NIC per GPU (rail-optimized).
#include <functional>
#include <string>

#include "collective/model/alpha_beta.hpp"
#include "collective/model/tuning.hpp"
#include "fabric/network.hpp"
#include "perf/result.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {

struct PerfProgress {
  int64_t row = 0, rows = 0;          // size row (both halves count as one)
  int64_t iteration = 0, iterations = 0;
  int64_t bytes = 0;
};

// NCCL's tuning model and the alpha-beta parameters of `o`'s nodes on links
// of `rate` with `net`'s framing (one NIC per GPU): what the engine takes its
// channel counts and latencies from, and what `perf --model` prints.
struct PerfModel {
  collective::TuningModel tuning;
  collective::AlphaBetaParams ab;
};
PerfModel PerfModelFor(const perf::PerfOptions& o, const fabric::NetworkConfig& net,
                       units::Rate rate);

// Runs the sweep of `o` on the fabric and topology of `s` (a profile or
// scenario sized to o.nodes nodes of o.GpusPerNode() GPUs; its traffic is
// ignored). `progress`, when set, is called after each iteration and, while a
// collective runs, between slices of events (the same figures); when it
// returns false the sweep ends there (Ctrl-C): the rows finished so far are
// kept, the unfinished one is dropped and r.interrupted is set. Throws
// InputError (file "<cli>") for fewer than 2 ranks or a topology that does
// not match the ranks. A queue pair that exhausts its retries ends the
// sweep: the row's #wrong counts its elements and *failure says why.
perf::PerfResult RunPerf(const perf::PerfOptions& o, const scenario::Scenario& s,
                         const std::string& fabric_name, std::string* failure,
                         const std::function<bool(const PerfProgress&)>& progress = {});

// The header notes of a simulated run (what produced it, what is modelled).
std::vector<std::string> PerfNotes(const perf::PerfResult& r);

}  // namespace lossless::run
