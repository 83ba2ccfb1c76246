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
// node with -g GPUs, one NIC per GPU (rail-optimized) unless the node's NIC
// map says otherwise (docs/model/node.md).
#include <functional>
#include <string>

#include "collective/model/alpha_beta.hpp"
#include "collective/model/tuning.hpp"
#include "collective/ownership.hpp"
#include "fabric/network.hpp"
#include "node/node.hpp"
#include "perf/result.hpp"
#include "scenario/scenario.hpp"
#include "sim/simulator.hpp"

namespace lossless::workload {
class TenantTraffic;
}

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
// `node` (default: an H100 node, one NIC per GPU) gives NCCL's view of NVLink
// and the GPU architecture, the alpha-beta model's NVLink rate, NICs per node
// (its rails) and PCIe cap (the slowest rail's).
PerfModel PerfModelFor(const perf::PerfOptions& o, const fabric::NetworkConfig& net,
                       units::Rate rate, const node::NodeConfig& node = {});

// The node a sweep runs on (docs/model/node.md): the scenario's `node:`
// block, then --gpu (the preset's NVLink and PCIe), --topo (nearest-NIC map
// of the matrix), --nic-map, --gdr and --pcie-gen. Throws InputError for an unknown
// preset, a bad map or matrix, and for -g above the node's GPUs ("-g":
// issue 10's bad input).
node::NodeConfig NodeFor(const perf::PerfOptions& o, const scenario::Scenario& s);
// Network hosts (NICs that carry the collective) per node: the node's rails.
int RailsPerNode(const perf::PerfOptions& o, const scenario::Scenario& s);
// Whether `node` differs from the default H100 node (perf then names it in
// its header; a default run's output stays as it was).
bool IsDefaultNode(const node::NodeConfig& node);

// A distributed sweep (`mpirun -np K lossless perf`, src/distrun/perf.hpp)
// runs RunPerf's sweep on every process with these hooks; a serial one leaves
// them empty.
class Captures;
// The sweep's other tenants (tenants.load; idle without) and captures
// (outputs.pcap / outputs.trace; null without either).
struct PerfParts {
  workload::TenantTraffic* tenants = nullptr;
  Captures* captures = nullptr;
};
struct PerfHooks {
  // This process's rank: only rank 0 writes the captures (run/captures.hpp).
  int rank = 0;
  // Once the network is built, its faults applied and every collective
  // engine the sweep uses is built (so its entities and queue pairs exist),
  // before anything is simulated: places the fabric and returns the GPUs
  // this process runs.
  std::function<collective::GpuOwnership(sim::Simulator&, fabric::Network&, const PerfParts&)>
      setup;
  // In place of Simulator::Run: runs the collective begun at Now() to the
  // serial instant its last GPU is done, on every process (true), or until
  // no event is left at or before `until` (false: stuck).
  // `done`: whether this process's GPUs are all done; `to_arrive` adds,
  // per network host, a lower bound on the bytes still to reach it for them
  // (the engines' AddBytesStillToArrive).
  std::function<bool(units::Time until, const std::function<bool()>& done,
                     const std::function<void(std::vector<int64_t>&)>& to_arrive)>
      run_collective;
  // The collective's finish over every process, from this process's.
  std::function<units::Time(units::Time local)> finish;
  // After the sweep: folds every process's results into `net` (rank 0) and
  // returns the events run over all of them.
  std::function<uint64_t(sim::Simulator&, fabric::Network&)> finish_run;
};

// Runs the sweep of `o` on the fabric and topology of `s` (a profile or
// scenario sized to o.nodes nodes of RailsPerNode NICs; its traffic is
// ignored) and on the node NodeFor gives. `progress`, when set, is called
// after each iteration and, while a collective runs, between slices of
// events (the same figures); when it
// returns false the sweep ends there (Ctrl-C): the rows finished so far are
// kept, the unfinished one is dropped and r.interrupted is set. Throws
// InputError (file "<cli>") for fewer than 2 ranks or a topology that does
// not match the ranks. A queue pair that exhausts its retries ends the
// sweep: the row's #wrong counts its elements and *failure says why.
perf::PerfResult RunPerf(const perf::PerfOptions& o, const scenario::Scenario& s,
                         const std::string& fabric_name, std::string* failure,
                         const std::function<bool(const PerfProgress&)>& progress = {},
                         const PerfHooks* hooks = nullptr);

// The header notes of a simulated run (what produced it, what is modelled).
std::vector<std::string> PerfNotes(const perf::PerfResult& r);

}  // namespace lossless::run
