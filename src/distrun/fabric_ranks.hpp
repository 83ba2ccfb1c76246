#pragma once
// The fabric on the window engine, shared by `mpirun -np K lossless run`
// (distrun/distributed.hpp) and `mpirun -np K lossless perf`
// (distrun/perf.hpp); docs/parallel.md.
//
// Every rank has built the whole network alike. FabricRanks places its
// partition units on the ranks, finds the cut links, the neighbour ranks and
// the lookahead; Start hands the cut links to the engine, keeps the queued
// events of this rank's entities (Simulator::Retain), starts the log of
// packets alive that the exact peak is replayed from, and builds the window
// engine; the caller then runs the engine (its own stop rule, boundaries);
// Finish gathers every rank's results, events, digests and engine figures
// on rank 0 and folds them into rank 0's network (Network::ImportResults).
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "distrun/distributed.hpp"
#include "fabric/network.hpp"
#include "parallel/comm.hpp"
#include "parallel/engine.hpp"
#include "scenario/scenario.hpp"
#include "sim/simulator.hpp"

namespace lossless::distrun {

// The stop rules' lower bound (parallel::StopRule::earliest_clear): with
// `missing` payload bytes still to arrive at a host, none of them before
// `ran_before`, in frames of at most `largest` payload bytes one after
// another on the host's link of `bps`, the last arrives at or after
// ran_before + (missing - largest - 64) x 8 / rate: consecutive arrivals are
// at least the first frame's serialization time apart (FrameTimePs rounds
// up), less at most a 64-byte header's time where the receiver cuts through
// on the header (fabric Network::TryTransmit). Rounded down; ran_before
// when nothing is missing.
__extension__ using Int128 = __int128;
int64_t LastArrivalBound(int64_t ran_before, Int128 missing, int64_t largest, int64_t bps);

class FabricRanks {
 public:
  // `rank_of_node` empty: parallel::PartitionFabric's placement. Fills the
  // partition figures of `st` (ranks, cut and switch links, lookahead).
  // Throws InputError for a cut link without delay, std::invalid_argument for
  // a placement that cuts a host link or misses nodes.
  FabricRanks(parallel::Comm& comm, sim::Simulator& sim, fabric::Network& net,
              const scenario::Scenario& s, std::vector<int32_t> rank_of_node, Stats& st);
  ~FabricRanks();
  FabricRanks(const FabricRanks&) = delete;
  FabricRanks& operator=(const FabricRanks&) = delete;

  const std::vector<int32_t>& port_rank() const { return port_rank_; }
  int32_t rank_of_node(uint32_t node) const { return rank_of_node_[node]; }
  const std::vector<int32_t>& entity_rank() const { return entity_rank_; }

  // Cut links to the engine (Network::SetDistributed with `local_flows`, the
  // flows whose destination this rank owns), this rank's events kept, the
  // packets-alive log on (and, with `ties`, the per-event probe that counts
  // same-time ties), and the engine, with windows at most `window` long.
  // Returns the engine; its model lanes carry the packets-alive figures, so
  // a caller adding lanes appends them (model_lanes(), probe_lanes()).
  // Entities whose events every rank runs (another tenant's host: its
  // arrivals draw streams and open queue pairs everywhere, and post on the
  // owner only; workload::TenantTraffic), each with the rank that owns it:
  // Start keeps their events on every rank, and Finish counts their digests
  // from the owner only. Before Start.
  void Replicate(uint32_t entity, int32_t owner);

  parallel::WindowEngine& Start(size_t local_flows, units::Time window, bool ties,
                                size_t peak_log_prune);
  parallel::WindowEngine& engine() { return *engine_; }
  // The packets-alive log's lanes of the window's reduction, for a caller
  // that adds its own after them (lanes [0, probe_lanes())).
  size_t probe_lanes() const;
  void FillProbeLanes(int64_t* lanes);
  void TakeProbeLanes(const int64_t* lanes);

  // After a run that the engine ended at a QP failure (its re-run to the
  // failure, WindowEngine::failure_stop): the failure's record, which only
  // the failing rank (the QP's source) holds, goes to rank 0's network, its
  // last part naming the link of the QP's latest loss over all ranks
  // (docs/parallel.md, "A QP failure"). Collective.
  // Returns, on rank 0, the rank that failed.
  int GatherQpFailure();

  // After the engine's last Run (and anything the caller still runs): ends
  // the packets-alive log, gathers on rank 0 every rank's results, events
  // (less `not_events`, events this rank ran that the serial run does not
  // count), digests and engine figures, merges them into rank 0's network
  // and fills `st`. Collective. Rank 0 gets the events and digests summed
  // over the ranks.
  struct Gathered {
    uint64_t events = 0;
    std::vector<sim::EntityDigest> digests;
  };
  Gathered Finish(Stats& st, std::chrono::steady_clock::time_point run_end,
                  uint64_t not_events = 0);

  // Defined in fabric_ranks.cpp: the cut links' side of this rank, and the
  // packets-alive log (with the same-time ties probe).
  struct Probe;
  class Links;

 private:
  parallel::Comm& comm_;
  sim::Simulator& sim_;
  fabric::Network& net_;
  const scenario::Scenario& s_;
  int me_ = 0;
  std::chrono::steady_clock::time_point t_setup_;
  std::chrono::steady_clock::time_point engine_start_;  // Start made the engine
  std::vector<int32_t> rank_of_node_;
  std::vector<int32_t> port_rank_;
  std::vector<int32_t> entity_rank_;
  std::vector<int32_t> replicated_;  // by entity: its owner, or -1 (not replicated)
  std::vector<uint8_t> cut_;
  std::vector<int> neighbours_;
  bool ties_ = false;
  std::unique_ptr<Probe> probe_;
  std::unique_ptr<Links> links_;
  std::unique_ptr<parallel::WindowEngine> engine_;
};

}  // namespace lossless::distrun
