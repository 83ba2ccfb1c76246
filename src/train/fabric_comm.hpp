#pragma once
// The data-parallel collectives of a training step at packet level: NCCL's
// ring (Simple protocol, NCCL's channel count for the size) through the
// collective engine (collective::RingEngine) over the network a profile or
// scenario describes, one collective at a time (docs/train.md).
//
// With tensor parallelism of degree t the data-parallel group of TP rank 0
// runs at packet level: its g/t GPUs per node on their own NICs (rails
// 0, t, 2t, ...). The other t - 1 groups move the same bytes at the same
// time on their own rails and are taken to need the same time; on a rail-
// optimized fabric they share no link below the spines, so spine contention
// between groups is what this leaves out. HSDP's groups: the shard group
// is a node's g/t data-parallel GPUs (node 0's, NVLink only; every node runs
// the same at once on its own NVLink); the replica group is one GPU per node
// across the nodes, the one on rail 0 at packet level, the others taken to
// need the same time on their rails.
//
// Reuse (issue 12): a collective of the same kind and size as one
// already simulated takes that one's measured time and bytes instead of
// being simulated again (the group and algorithm are fixed for a run, and
// collectives never overlap on the one stream); `exact` turns it off.
//
// Pipeline parallelism (docs/train.md): every stage's data-parallel group
// has the shape of stage 0's (its nodes / pp nodes) and runs on stage 0's
// nodes; pipeline sends run between the stages' first nodes. Operations
// that overlap in step time (sends of different stages, a stage's all-reduce
// during another's backward) are simulated one after another, each alone on
// the network: contention between them is left out.
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "collective/model/tuning.hpp"
#include "collective/p2p_engine.hpp"
#include "collective/ring_engine.hpp"
#include "fabric/network.hpp"
#include "scenario/scenario.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"
#include "train/faults.hpp"
#include "train/schedule.hpp"
#include "workload/tenants.hpp"

namespace lossless::train {

// A collective that did not complete (a queue pair out of retries, or no end
// within a simulated minute): the run failed (exit 1), not bad input.
class TrainFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Fabric counters summed over every link direction.
struct FabricCounters {
  int64_t pause_frames = 0;
  double paused_us = 0;
  int64_t ecn_marks = 0;
  int64_t cnps = 0;
  int64_t retransmissions = 0;
  int64_t drops = 0;
  double credit_starved_us = 0;
  FabricCounters operator-(const FabricCounters& o) const;
};

class FabricComm final : public CommBackend, public sim::EventHandler {
 public:
  // Builds the topology and network of `s` (sized to c.nodes nodes of
  // c.gpus_per_node GPUs, one NIC each). Throws InputError ("<cli>",
  // "--nodes") when the topology has another host count.
  FabricComm(const scenario::Scenario& s, const TrainConfig& c, bool exact);
  CommCost Run(CommKind kind, CommGroup group, int64_t bytes, units::Time start) override;
  // A pipeline send at packet level (collective::P2pEngine, one
  // ncclSend/ncclRecv pair): GPU 0 of stage `from`'s first node to GPU 0 of
  // stage `to`'s first node, on rail 0 (the pipeline of DP rank 0 and TP rank
  // 0; the others move the same bytes on their own NICs at the same time and
  // are taken to need the same time). Reused as Run is, keyed on the two
  // stages and the size.
  CommCost Send(int from, int to, int64_t bytes, units::Time start) override;
  void OnEvent(uint32_t kind, uint64_t arg) override;  // the clock reached a start

  // Faults during training (train/faults.hpp; issue 12). A degraded link
  // loses frames from the first step of its range to the last; a stalled NIC
  // stops receiving from the start of the first collective of its step. A
  // fault on a NIC or rail the simulated groups do not use (a TP rank other
  // than 0, HSDP's replica groups other than rail 0's) is applied to the
  // same node's NIC of the simulated group (SimulatedNic): the groups are
  // symmetric and every rank waits for the slowest. Throws InputError
  // ("<cli>", "--degrade") for a link the topology does not have.
  void SetFaults(const Faults& f);
  // Called before each step: applies and lifts link degradation, arms the
  // step's stalls, and makes the step exact (nothing reused, nothing kept for
  // reuse) when a fault is active in it.
  void BeginStep(int step);
  // The NIC of the simulated group that stands for NIC `host`.
  int64_t SimulatedNic(int64_t host) const;
  // Packets sent on the degraded links' ports so far (both directions).
  uint64_t DegradedLinkPackets() const;

  // At most `t` of the idle time before a simulated collective runs on the
  // network (other tenants' traffic, congestion control timers); the rest of
  // the gap is skipped: the network's clock falls behind the step's by the
  // time skipped, and the collectives' times are unaffected by it otherwise.
  // Default: no limit (the network runs through every gap).
  void set_max_idle(units::Time t) { max_idle_ = t; }
  units::Time skipped() const { return skipped_; }

  FabricCounters Counters() const;
  // What NIC `host` has put on its link so far (frames with their headers).
  uint64_t HostTxWireBytes(uint32_t host) const {
    return net_->port_stats(net_->HostPort(host)).tx_wire_bytes;
  }
  units::Time Now() const { return sim_.Now(); }
  // Queue pairs opened on the network so far (the engines' and tenants').
  size_t queue_pairs() const { return net_->flows().size(); }
  uint64_t events() const { return sim_.events_executed(); }
  int simulated() const { return simulated_; }
  // The ring engine's channel count for a collective of `bytes` on `group`.
  int Channels(CommKind kind, CommGroup group, int64_t bytes);

 private:
  // A group's shape: nodes, and GPUs per node that take part.
  std::pair<int, int> Shape(CommGroup group) const;
  const collective::TuningModel& Tuning(CommGroup group);
  // Brings the network's clock to step time `start` (other tenants' traffic
  // runs meanwhile; at most max_idle_ of idle time) and arms pending stalls.
  // A start before the network's clock (pipeline operations that overlap in
  // step time run one after another on the network) begins at its clock.
  void Advance(units::Time start);
  // A collective or send starting at step time `start` may reuse a measured
  // time and be kept for reuse: not --exact, not in a faulted step, not
  // inside a stall's window.
  bool Reusable(units::Time start) const;
  collective::RingEngine& EngineFor(CommKind kind, CommGroup group, int channels);

  TrainConfig c_;
  bool exact_;
  int dp_per_node_;  // data-parallel GPUs per node
  sim::Simulator sim_;
  topology::Topology topo_;
  std::unique_ptr<fabric::Network> net_;
  std::unique_ptr<workload::TenantTraffic> tenants_;
  units::Rate rate_;
  std::map<int, std::unique_ptr<collective::TuningModel>> tuning_;  // per group
  uint32_t entity_ = 0;
  // Keyed on (kind, group, channels) and (kind, group, bytes).
  std::map<std::tuple<int, int, int>, std::unique_ptr<collective::RingEngine>> engines_;
  std::map<std::tuple<int, int, int64_t>, CommCost> measured_;
  std::map<std::pair<int, int>, std::unique_ptr<collective::P2pEngine>> sends_;  // (from, to)
  std::map<std::tuple<int, int, int64_t>, CommCost> measured_sends_;
  int simulated_ = 0;
  Faults faults_;
  std::vector<std::vector<uint32_t>> degrade_ports_;  // per faults_.degraded
  std::vector<fabric::LinkLossConfig> base_loss_;     // per port: the scenario's
  std::vector<const NicStall*> stalls_pending_;       // this step's, not yet started
  bool step_exact_ = false;
  units::Time stall_end_;  // network clock
  units::Time max_idle_ = units::Time::Max();
  units::Time skipped_;  // idle network time skipped
  units::Time offset_;   // step clock - network clock (skipped idle time, less overlaps)
};

}  // namespace lossless::train
