#include "train/fabric_comm.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.hpp"
#include "collective/model/alpha_beta.hpp"
#include "fault/fault.hpp"
#include "run/nccl_ring.hpp"
#include "run/runner.hpp"

namespace lossless::train {
namespace {

const units::Time kStuck = units::Time::Sec(60);

collective::Collective CollectiveOf(CommKind k) {
  switch (k) {
    case CommKind::kAllGather:
      return collective::Collective::kAllGather;
    case CommKind::kReduceScatter:
      return collective::Collective::kReduceScatter;
    default:
      return collective::Collective::kAllReduce;
  }
}

collective::RingPlan PlanOf(CommKind k) {
  switch (k) {
    case CommKind::kAllGather:
      return collective::RingPlan::kAllGather;
    case CommKind::kReduceScatter:
      return collective::RingPlan::kReduceScatter;
    default:
      return collective::RingPlan::kAllReduce;
  }
}

}  // namespace

FabricCounters FabricCounters::operator-(const FabricCounters& o) const {
  FabricCounters d;
  d.pause_frames = pause_frames - o.pause_frames;
  d.paused_us = paused_us - o.paused_us;
  d.ecn_marks = ecn_marks - o.ecn_marks;
  d.cnps = cnps - o.cnps;
  d.retransmissions = retransmissions - o.retransmissions;
  d.drops = drops - o.drops;
  d.credit_starved_us = credit_starved_us - o.credit_starved_us;
  return d;
}

FabricComm::FabricComm(const scenario::Scenario& s, const TrainConfig& c, bool exact)
    : c_(c), exact_(exact), dp_per_node_(c.gpus_per_node / c.tp), sim_(s.seed) {
  topo_ = scenario::BuildTopology(s);
  const int64_t hosts = static_cast<int64_t>(c.nodes) * c.gpus_per_node;
  if (static_cast<int64_t>(topo_.hosts.size()) != hosts)
    throw InputError({"<cli>", 0, "--nodes"},
                     fmt::format("expected a topology of {} NICs ({} nodes x {} GPUs, one NIC "
                                 "each), the fabric has {}",
                                 hosts, c.nodes, c.gpus_per_node, topo_.hosts.size()));
  fabric::NetworkConfig cfg = s.net;
  cfg.stop_when_flows_done = false;
  net_ = std::make_unique<fabric::Network>(sim_, topo_, cfg);
  const fault::Plan faults = fault::LinkAndNicFaults(s, topo_);
  fault::Apply(faults, *net_);
  // What each port loses without the faults of this run (restored after a
  // degraded link's last step): the scenario's fabric.ber and link_loss, as
  // the plan sets them (a later entry for a port wins).
  base_loss_.resize(net_->num_ports());
  for (fabric::LinkLossConfig& l : base_loss_) l.ber = s.ber;
  for (const fault::LinkLoss& l : faults.link_loss) base_loss_[l.port] = l.loss;
  tenants_ = std::make_unique<workload::TenantTraffic>(
      sim_, *net_, workload::TenantConfig{s.shared.tenant_load, s.shared.tenant_burst});
  entity_ = sim_.AddEntity();
  rate_ = topo_.links.empty() ? units::Rate::Gbps(400) : topo_.links[0].rate;
}

std::pair<int, int> FabricComm::Shape(CommGroup group) const {
  switch (group) {
    case CommGroup::kNode:
      return {1, dp_per_node_};
    case CommGroup::kAcross:
      return {c_.nodes, 1};
    default:
      return {c_.NodesPerStage(), dp_per_node_};
  }
}

const collective::TuningModel& FabricComm::Tuning(CommGroup group) {
  auto& t = tuning_[static_cast<int>(group)];
  if (!t) {
    const auto [nodes, g] = Shape(group);
    collective::CommShape shape;
    shape.nodes = nodes;
    shape.gpus_per_node = g;
    collective::NodeHardware hw;
    hw.gpus = hw.nics = g;
    hw.nic_gbs = static_cast<double>(rate_.bps()) / 8e9;
    t = std::make_unique<collective::TuningModel>(
        shape, collective::DeriveSearchGraph(hw, shape.nodes), collective::TuningOverrides{});
  }
  return *t;
}

int FabricComm::Channels(CommKind kind, CommGroup group, int64_t bytes) {
  return std::max(1, Tuning(group).Choose(CollectiveOf(kind), bytes).channels);
}

collective::RingEngine& FabricComm::EngineFor(CommKind kind, CommGroup group, int channels) {
  auto& e = engines_[{static_cast<int>(kind), static_cast<int>(group), channels}];
  if (e) return *e;
  // As `perf` builds it (run/nccl_ring.hpp): NCCL's Ring/Simple steps, GPU
  // write cap and software latencies, NCCL's ring orders over the group's
  // GPUs on the group's rails.
  const auto [nodes, g] = Shape(group);
  const collective::TuningModel& tuning = Tuning(group);
  const collective::Protocol simple = collective::Protocol::kSimple;
  run::NcclRingGroup ring_group;
  ring_group.nodes = nodes;
  ring_group.gpus_per_node = g;
  ring_group.nics_per_node = c_.gpus_per_node;
  ring_group.rail_stride = c_.tp;
  ring_group.channels = channels;
  collective::RingSpec spec = run::NcclRingSpec(
      PlanOf(kind), simple,
      units::Rate::Bps(
          static_cast<int64_t>(tuning.ProtocolCapGbs(collective::Algorithm::kRing, simple) * 8e9)),
      int64_t{1} << 22,
      run::NcclLatenciesFor(tuning.constants(), collective::Algorithm::kRing, simple, g, nodes > 1,
                            collective::AlphaBetaParams{}.net_overhead_us),
      c_.gpu.nvlink_rate, ring_group);
  // The scenario's transport.qps_per_connection / split_data_on_qps, as perf
  // takes them (NCCL_IB_QPS_PER_CONNECTION, NCCL_IB_SPLIT_DATA_ON_QPS).
  spec.qps_per_connection = net_->config().rc.qps_per_connection;
  spec.split_data_on_qps = net_->config().rc.split_data_on_qps;
  e = std::make_unique<collective::RingEngine>(sim_, *net_, spec);
  return *e;
}

void FabricComm::OnEvent(uint32_t /*kind*/, uint64_t /*arg*/) {
  sim_.Stop();
}

CommCost FabricComm::Run(CommKind kind, CommGroup group, int64_t bytes, units::Time start) {
  CommCost cost;
  if (bytes <= 0 || GroupRanks(c_, group) < 2) return cost;
  const std::tuple<int, int, int64_t> key{static_cast<int>(kind), static_cast<int>(group), bytes};
  // In a faulted step, or inside a stall's window, nothing is reused or kept
  // for reuse.
  const bool reusable = Reusable(start);
  if (reusable) {
    if (auto it = measured_.find(key); it != measured_.end()) {
      cost = it->second;
      cost.reused = true;
      return cost;
    }
  }
  Advance(start);
  collective::RingEngine& e = EngineFor(kind, group, Channels(kind, group, bytes));
  e.Begin(bytes, sim_.Now());
  sim_.Run(sim_.Now() + kStuck);
  if (!e.done()) {
    throw TrainFailure(net_->qp_failure() != nullptr
                           ? net_->qp_failure()->what
                           : fmt::format("the {} of {} B did not complete within {} of simulated "
                                         "time",
                                         CommKindName(kind), bytes, units::FormatTime(kStuck)));
  }
  cost.time = e.finish() - e.start();
  cost.bytes_sent = e.BytesSent(0);
  ++simulated_;
  if (reusable) measured_[key] = cost;
  return cost;
}

bool FabricComm::Reusable(units::Time start) const {
  return !exact_ && !step_exact_ && start - offset_ >= stall_end_;
}

void FabricComm::Advance(units::Time start) {
  // Bring the clock to the start (other tenants' traffic runs meanwhile).
  units::Time at = start - offset_;
  if (at < sim_.Now()) {
    offset_ = start - sim_.Now();
    at = sim_.Now();
  }
  if (at - sim_.Now() > max_idle_) {
    const units::Time skip = at - sim_.Now() - max_idle_;
    skipped_ = skipped_ + skip;
    offset_ = offset_ + skip;
    at = sim_.Now() + max_idle_;
  }
  if (at > sim_.Now()) {
    sim_.Schedule(at, entity_, this, 0, 0);
    sim_.Run();
  }
  for (const NicStall* st : stalls_pending_) {
    // The fault component's NIC stall: events of the NIC's port from now.
    fault::Plan plan;
    plan.nic_stall = fault::NicStall{static_cast<uint32_t>(SimulatedNic(st->host)), sim_.Now(),
                                     sim_.Now() + st->duration};
    fault::Apply(plan, *net_);
    stall_end_ = std::max(stall_end_, sim_.Now() + st->duration);
  }
  stalls_pending_.clear();
}

CommCost FabricComm::Send(int from, int to, int64_t bytes, units::Time start) {
  CommCost cost;
  if (bytes <= 0 || from == to) return cost;
  const std::tuple<int, int, int64_t> key{from, to, bytes};
  const bool reusable = Reusable(start);
  if (reusable) {
    if (auto it = measured_sends_.find(key); it != measured_sends_.end()) {
      cost = it->second;
      cost.reused = true;
      return cost;
    }
  }
  Advance(start);
  auto& e = sends_[{from, to}];
  if (!e) {
    // NCCL's p2p over the network (NVIDIA/nccl src/transport/net.cc): its
    // channels per peer for the pipeline group of pp ranks, the Simple
    // protocol's software latencies of a network hop (the pipeline group
    // has one GPU per node).
    const collective::TuningModel& tuning = Tuning(CommGroup::kData);
    const run::NcclLatencies l = run::NcclLatenciesFor(
        tuning.constants(), collective::Algorithm::kRing, collective::Protocol::kSimple, 1, true,
        collective::AlphaBetaParams{}.net_overhead_us);
    collective::P2pSpec spec;
    spec.pattern = collective::P2pPattern::kSend;
    spec.gpus_per_node = spec.nics_per_node = c_.gpus_per_node;
    spec.ranks = static_cast<uint32_t>(c_.nodes * c_.gpus_per_node);
    const uint32_t gpus = static_cast<uint32_t>(c_.NodesPerStage() * c_.gpus_per_node);
    spec.send_from = static_cast<uint32_t>(from) * gpus;
    spec.send_to = static_cast<uint32_t>(to) * gpus;
    spec.channels_per_peer = collective::P2pChannelsPerPeer(tuning.CommChannels(), c_.pp);
    spec.nvlink_rate = c_.gpu.nvlink_rate;
    spec.launch_latency = l.launch;
    spec.net_hop_latency = l.net_hop;
    e = std::make_unique<collective::P2pEngine>(sim_, *net_, spec);
  }
  e->Begin(bytes, sim_.Now());
  sim_.Run(sim_.Now() + kStuck);
  if (!e->done()) {
    throw TrainFailure(net_->qp_failure() != nullptr
                           ? net_->qp_failure()->what
                           : fmt::format("the pipeline send of {} B from stage {} to {} did not "
                                         "complete within {} of simulated time",
                                         bytes, from, to, units::FormatTime(kStuck)));
  }
  cost.time = e->finish() - e->start();
  const uint32_t stage_gpus = static_cast<uint32_t>(c_.NodesPerStage() * c_.gpus_per_node);
  cost.bytes_sent = e->BytesSent(static_cast<uint32_t>(from) * stage_gpus);
  ++simulated_;
  if (reusable) measured_sends_[key] = cost;
  return cost;
}

void FabricComm::SetFaults(const Faults& f) {
  faults_ = f;
  degrade_ports_.clear();
  for (const LinkDegrade& d : faults_.degraded) {
    scenario::LinkLossFault l;
    // One name gives both directions: "a<->b" as given, "a->b" as one direction.
    l.link = d.link;
    l.where = {"<cli>", 0, "--degrade"};
    degrade_ports_.push_back(scenario::LinkLossPorts(l, topo_));
  }
}

void FabricComm::BeginStep(int step) {
  step_exact_ = faults_.ActiveAt(step);
  stalls_pending_.clear();
  for (const NicStall& st : faults_.stalls)
    if (st.step == step) stalls_pending_.push_back(&st);
  // Lift degradations that ended, then apply those in force (a later fault
  // on the same port wins).
  // Both as one fault::Plan, applied through the fault components' seams.
  fault::Plan plan;
  for (size_t i = 0; i < faults_.degraded.size(); ++i)
    if (faults_.degraded[i].last + 1 == step)
      for (uint32_t p : degrade_ports_[i]) plan.link_loss.push_back({p, base_loss_[p]});
  for (size_t i = 0; i < faults_.degraded.size(); ++i) {
    const LinkDegrade& d = faults_.degraded[i];
    if (d.first != step) continue;
    for (uint32_t p : degrade_ports_[i]) {
      fabric::LinkLossConfig l = base_loss_[p];
      l.ber = d.ber;
      plan.link_loss.push_back({p, l});
    }
  }
  fault::Apply(plan, *net_);
}

int64_t FabricComm::SimulatedNic(int64_t host) const {
  const int64_t g = c_.gpus_per_node;
  const int64_t node = host / g, rail = host % g;
  if (c_.strategy == Strategy::kHsdp) return node * g;  // the replica group on rail 0
  return node * g + rail - rail % c_.tp;
}

uint64_t FabricComm::DegradedLinkPackets() const {
  uint64_t n = 0;
  for (const std::vector<uint32_t>& ports : degrade_ports_)
    for (uint32_t p : ports) n += net_->port_stats(p).tx_packets;
  return n;
}

FabricCounters FabricComm::Counters() const {
  FabricCounters f;
  for (uint32_t p = 0; p < net_->num_ports(); ++p) {
    const fabric::PortStats st = net_->port_stats(p);
    f.pause_frames += static_cast<int64_t>(st.pause_tx);
    f.paused_us += static_cast<double>(st.paused_ps) / 1e6;
    f.ecn_marks += static_cast<int64_t>(st.ecn_marks);
    f.cnps += static_cast<int64_t>(st.cnp_tx);
    f.retransmissions += static_cast<int64_t>(st.retx_packets);
    f.drops += static_cast<int64_t>(st.drops + st.link_losses);
    f.credit_starved_us += static_cast<double>(st.credit_starved_ps) / 1e6;
  }
  return f;
}

}  // namespace lossless::train
