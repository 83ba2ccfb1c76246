#include "run/perf_run.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <variant>

#include <fmt/format.h>

#include "collective/model/alpha_beta.hpp"
#include "collective/model/orders.hpp"
#include "collective/model/tuning.hpp"
#include "collective/p2p_engine.hpp"
#include "collective/protocol.hpp"
#include "collective/ring_engine.hpp"
#include "collective/tree_engine.hpp"
#include "fabric/network.hpp"
#include "fault/fault.hpp"
#include "lossless/version.hpp"
#include "run/captures.hpp"
#include "run/nccl_ring.hpp"
#include "run/runner.hpp"
#include "sim/simulator.hpp"
#include "workload/tenants.hpp"

namespace lossless::run {
namespace {

const units::Time kStuck = units::Time::Sec(60);

// NCCL's architecture row of a compute capability (x 10).
collective::GpuArch ArchOf(int sm) {
  return sm >= 100 ? collective::GpuArch::kBlackwell
         : sm >= 90 ? collective::GpuArch::kHopper
         : sm >= 80 ? collective::GpuArch::kAmpere
                    : collective::GpuArch::kVolta;
}

// Payload GB/s of one NIC after framing (what the alpha-beta model calls nic_gbs).
double NicPayloadGbs(const fabric::NetworkConfig& net, units::Rate rate) {
  const double mtu = net.framing.mtu_payload;
  return static_cast<double>(rate.bps()) / 8e9 * mtu / static_cast<double>(net.framing.WireBytes(net.framing.mtu_payload));
}

bool IsP2p(collective::Collective c) {
  return c == collective::Collective::kAllToAll || c == collective::Collective::kSendRecv;
}

collective::RingPlan PlanOf(collective::Collective c) {
  switch (c) {
    case collective::Collective::kReduceScatter:
      return collective::RingPlan::kReduceScatter;
    case collective::Collective::kAllGather:
      return collective::RingPlan::kAllGather;
    case collective::Collective::kBroadcast:
      return collective::RingPlan::kBroadcast;
    case collective::Collective::kReduce:
      return collective::RingPlan::kReduce;
    default:
      return collective::RingPlan::kAllReduce;
  }
}

// The engine of one collective: a ring or tree engine per (protocol,
// channel count), or the point-to-point engine; their queue pairs live for
// the run.
class Engines {
 public:
  // `steps` (null: none) hears the ring engines' steps (outputs.trace).
  Engines(sim::Simulator& sim, fabric::Network& net, const perf::PerfOptions& o,
          const PerfModel& model, const node::NodeConfig& node,
          const std::vector<node::RailPath>& rails, collective::StepObserver* steps)
      : sim_(sim), net_(net), o_(o), model_(model), node_(node), rails_(rails), steps_(steps) {}
  // Starts the collective of `bytes` rooted at `root` (-1: none) with the
  // algorithm, protocol and channel count of `choice`; done(), start() and
  // finish() then describe it.
  void Begin(const collective::AlgoChoice& choice, int64_t bytes, int64_t root) {
    const int channels = std::max(1, choice.channels);
    const collective::Protocol p = choice.protocol;
    ring_ = nullptr;
    tree_ = nullptr;
    if (IsP2p(o_.collective)) {
      Prepare(choice);
      p2p_->Begin(bytes, sim_.Now());
      return;
    }
    if (choice.algorithm == collective::Algorithm::kTree) {
      tree_ = std::get<collective::TreeEngine*>(Prepare(choice));
      // Simple and LL128: NCCL's smaller tree chunks for small messages (each
      // its own rule); LL: one step of the protocol.
      const int64_t chunk =
          p == collective::Protocol::kSimple
              ? collective::NcclTreeChunkBytes(
                    bytes, channels,
                    collective::TreeDepth(static_cast<int>(o_.nodes),
                                          static_cast<int>(o_.GpusPerNode())),
                    o_.buffsize / 8)
          : p == collective::Protocol::kLL128
              ? collective::NcclTreeLl128ChunkBytes(bytes, channels, static_cast<int>(o_.nodes),
                                                    static_cast<int>(o_.Ranks()))
              : 0;
      tree_->Begin(bytes, sim_.Now(), chunk);
      return;
    }
    ring_ = std::get<collective::RingEngine*>(Prepare(choice));
    if (launch_order_ != nullptr) {
      // A distributed timeline merges the launch's steps in its order.
      std::vector<std::vector<uint32_t>> rings;
      for (const collective::Ring& ring : ring_->spec().rings) rings.push_back(ring.ranks);
      launch_order_->SetLaunchOrder(rings);
    }
    ring_->Begin(bytes, sim_.Now(), static_cast<uint32_t>(std::max<int64_t>(root, 0)));
  }
  // The engine of `choice`, built on its first use (its GPU entities and
  // queue pairs then take the next ids, so the sweep builds them in the
  // order it first uses them, before it simulates anything, and a
  // distributed run's processes have them all before the fabric is placed).
  std::variant<collective::RingEngine*, collective::TreeEngine*, collective::P2pEngine*> Prepare(
      const collective::AlgoChoice& choice) {
    const int channels = std::max(1, choice.channels);
    const collective::Protocol p = choice.protocol;
    const int key = channels * 3 + static_cast<int>(p);
    if (IsP2p(o_.collective)) {
      if (!p2p_) {
        p2p_ = std::make_unique<collective::P2pEngine>(sim_, net_, P2pSpecFor());
        p2p_->set_ownership(own_);
      }
      return p2p_.get();
    }
    if (choice.algorithm == collective::Algorithm::kTree) {
      auto& t = trees_[key];
      if (!t) {
        t = std::make_unique<collective::TreeEngine>(sim_, net_, TreeSpecFor(channels, p));
        t->set_ownership(own_);
      }
      return t.get();
    }
    auto& e = rings_[key];
    if (!e) {
      e = std::make_unique<collective::RingEngine>(sim_, net_, RingSpecFor(channels, p));
      e->set_step_observer(steps_);
      e->set_ownership(own_);
    }
    return e.get();
  }
  // The GPUs this process runs (a distributed run), for every engine built so far and later.
  // A distributed timeline (Captures::SetLaunchOrder) hears each ring's order.
  void set_launch_order(Captures* c) { launch_order_ = c; }
  void SetOwnership(const collective::GpuOwnership& own) {
    own_ = own;
    for (auto& [key, e] : rings_) e->set_ownership(own_);
    for (auto& [key, t] : trees_) t->set_ownership(own_);
    if (p2p_) p2p_->set_ownership(own_);
  }
  bool done() const {
    return ring_ != nullptr ? ring_->done() : tree_ != nullptr ? tree_->done() : p2p_->done();
  }
  units::Time finish() const {
    return ring_ != nullptr ? ring_->finish() : tree_ != nullptr ? tree_->finish() : p2p_->finish();
  }
  void AddBytesStillToArrive(std::vector<int64_t>& by_host) const {
    if (ring_ != nullptr) {
      ring_->AddBytesStillToArrive(by_host);
    } else if (tree_ != nullptr) {
      tree_->AddBytesStillToArrive(by_host);
    } else {
      p2p_->AddBytesStillToArrive(by_host);
    }
  }
  units::Time start() const {
    return ring_ != nullptr ? ring_->start() : tree_ != nullptr ? tree_->start() : p2p_->start();
  }

 private:
  // NCCL's software latencies of the algorithm and protocol (baseLat, hwLat),
  // as the alpha-beta model uses them.
  NcclLatencies LatenciesFor(collective::Algorithm a, collective::Protocol p) const {
    // NCCL's per-step network overhead raises the intra-node hop latency of
    // multi-node all_reduce, all_gather and reduce_scatter (tuning.cc).
    const bool overhead = o_.nodes > 1 && !IsP2p(o_.collective) &&
                          !collective::HasRoot(o_.collective);
    return NcclLatenciesFor(model_.tuning.constants(), a, p, static_cast<int>(o_.GpusPerNode()),
                            overhead, model_.ab.net_overhead_us);
  }
  units::Rate GpuRate(collective::Algorithm a, collective::Protocol p) const {
    return units::Rate::Bps(static_cast<int64_t>(model_.tuning.ProtocolCapGbs(a, p) * 8e9));
  }
  collective::RingSpec RingSpecFor(int channels, collective::Protocol p) const {
    NcclRingGroup group;
    group.nodes = static_cast<int>(o_.nodes);
    group.gpus_per_node = static_cast<int>(o_.GpusPerNode());
    group.nics_per_node = group.order_nics = static_cast<int>(rails_.size());
    group.channels = channels;
    group.nvlink_latency = node_.nvlink_latency;
    collective::RingSpec spec =
        NcclRingSpec(PlanOf(o_.collective), p, GpuRate(collective::Algorithm::kRing, p),
                     o_.buffsize, LatenciesFor(collective::Algorithm::kRing, p), node_.nvlink_rate,
                     group);
    spec.rail_paths = RailPaths();
    spec.qps_per_connection = net_.config().rc.qps_per_connection;
    spec.split_data_on_qps = net_.config().rc.split_data_on_qps;
    return spec;
  }
  collective::TreeSpec TreeSpecFor(int channels, collective::Protocol p) const {
    const int nodes = static_cast<int>(o_.nodes);
    const int g = static_cast<int>(o_.GpusPerNode());
    // NCCL's connect.cc doubles the search channels: [0, C) on tree 0, [C, 2C)
    // on tree 1, C = half the communicator's channels.
    const int base = std::max(1, model_.tuning.CommChannels() / 2);
    const int nics = static_cast<int>(rails_.size());
    collective::TreeSpec spec;
    spec.gpus_per_node = g;
    spec.nics_per_node = nics;
    spec.nvlink_rate = node_.nvlink_rate;
    spec.nvlink_latency = node_.nvlink_latency;
    spec.rail_paths = RailPaths();
    spec.trees = collective::TreeChannels(nodes, g, nics, channels, base);
    for (int c = 0; c < channels; ++c)
      spec.nics.push_back(static_cast<uint32_t>(c % base % nics));
    const NcclLatencies l = LatenciesFor(collective::Algorithm::kTree, p);
    spec.launch_latency = l.launch;
    spec.net_hop_latency = l.net_hop;
    spec.nvlink_hop_latency = NvlinkHopExtra(l.nvlink_hop, spec.nvlink_latency);
    spec.wire = collective::WireOf(p, GpuRate(collective::Algorithm::kTree, p));
    spec.qps_per_connection = net_.config().rc.qps_per_connection;
    spec.split_data_on_qps = net_.config().rc.split_data_on_qps;
    spec.chunk_bytes = p == collective::Protocol::kSimple
                           ? o_.buffsize / 8
                           : collective::ChunkBytes(collective::Collective::kAllReduce,
                                                    collective::Algorithm::kTree, p);
    return spec;
  }
  std::vector<collective::RailPath> RailPaths() const {
    std::vector<collective::RailPath> paths;
    for (const node::RailPath& r : rails_)
      paths.push_back({r.stage_rate, r.stage_latency, r.latency});
    return paths;
  }
  collective::P2pSpec P2pSpecFor() const {
    collective::P2pSpec spec;
    spec.pattern = o_.collective == collective::Collective::kAllToAll
                       ? collective::P2pPattern::kAllToAll
                       : collective::P2pPattern::kSendRecv;
    spec.ranks = static_cast<uint32_t>(o_.Ranks());
    spec.channels_per_peer =
        collective::P2pChannelsPerPeer(model_.tuning.CommChannels(), static_cast<int>(o_.Ranks()));
    spec.gpus_per_node = static_cast<int>(o_.GpusPerNode());
    spec.nics_per_node = static_cast<int>(rails_.size());
    spec.nvlink_rate = node_.nvlink_rate;
    spec.nvlink_latency = node_.nvlink_latency;
    const NcclLatencies l = LatenciesFor(collective::Algorithm::kRing, collective::Protocol::kSimple);
    spec.launch_latency = l.launch;
    spec.net_hop_latency = l.net_hop;
    spec.nvlink_hop_latency = NvlinkHopExtra(l.nvlink_hop, spec.nvlink_latency);
    spec.qps_per_connection = net_.config().rc.qps_per_connection;
    spec.split_data_on_qps = net_.config().rc.split_data_on_qps;
    return spec;
  }

  sim::Simulator& sim_;
  fabric::Network& net_;
  const perf::PerfOptions& o_;
  const PerfModel& model_;
  const node::NodeConfig& node_;
  const std::vector<node::RailPath>& rails_;
  collective::StepObserver* steps_;
  Captures* launch_order_ = nullptr;
  std::map<int, std::unique_ptr<collective::RingEngine>> rings_;
  std::map<int, std::unique_ptr<collective::TreeEngine>> trees_;
  std::unique_ptr<collective::P2pEngine> p2p_;
  collective::RingEngine* ring_ = nullptr;
  collective::TreeEngine* tree_ = nullptr;
  collective::GpuOwnership own_;
};

}  // namespace

PerfModel PerfModelFor(const perf::PerfOptions& o, const fabric::NetworkConfig& net,
                       units::Rate rate, const node::NodeConfig& node) {
  collective::CommShape shape;
  shape.nodes = static_cast<int>(o.nodes);
  shape.gpus_per_node = static_cast<int>(o.GpusPerNode());
  shape.arch = ArchOf(node.sm);
  const std::vector<node::RailPath> rails = node::Rails(node, shape.gpus_per_node);
  // The slowest rail's GPU-to-NIC path (PCIe, host bounce, socket link).
  double path_gbs = 0;
  for (const node::RailPath& r : rails) {
    const double gbs = static_cast<double>(r.nic_rate.bps()) / 8e9;
    if (gbs > 0) path_gbs = path_gbs > 0 ? std::min(path_gbs, gbs) : gbs;
  }
  collective::NodeHardware hw;
  hw.gpus = shape.gpus_per_node;
  hw.nics = static_cast<int>(rails.size());
  hw.nic_gbs = static_cast<double>(rate.bps()) / 8e9;
  if (path_gbs > 0) hw.nic_gbs = std::min(hw.nic_gbs, path_gbs);
  hw.nvlink_gbs = node.nccl_nvlink_gbs;
  hw.arch = shape.arch;
  collective::AlphaBetaParams ab;
  ab.nodes = shape.nodes;
  ab.gpus_per_node = shape.gpus_per_node;
  ab.nics_per_node = hw.nics;
  ab.nic_gbs = NicPayloadGbs(net, rate);
  ab.pcie_gbs = path_gbs;
  ab.nvlink_gbs = static_cast<double>(node.nvlink_rate.bps()) / 8e9;
  // --algo and --proto as NCCL_ALGO and NCCL_PROTO, and NCCL's other knobs.
  collective::TuningOverrides overrides;
  if (o.algo == "tree") overrides.algo = "Tree";
  if (o.algo == "ring") overrides.algo = "Ring";
  overrides.proto = o.proto;
  overrides.min_channels = static_cast<int>(o.min_channels);
  overrides.max_channels = static_cast<int>(o.max_channels);
  overrides.buffsize = o.buffsize;
  return {collective::TuningModel(shape, collective::DeriveSearchGraph(hw, shape.nodes), overrides),
          ab};
}

node::NodeConfig NodeFor(const perf::PerfOptions& o, const scenario::Scenario& s) {
  node::NodeConfig cfg = s.node;
  if (!o.gpu.empty()) {
    cfg.ApplyPreset(node::FindNodePreset(o.gpu, {"<cli>", 0, "--gpu"}));
    if (!cfg.nic_of_gpu.empty()) cfg.gpus_per_node = static_cast<int>(cfg.nic_of_gpu.size());
  }
  if (!o.topo.empty()) node::MapFromTopoFile(o.topo, cfg);
  if (!o.nic_map.empty()) node::SetNicMap(o.nic_map, cfg, {"<cli>", 0, "--nic-map"});
  if (o.gdr >= 0) cfg.gdr = o.gdr == 1;
  if (o.pcie_gen > 0) cfg.pcie_gen = static_cast<int>(o.pcie_gen);
  if (o.GpusPerNode() > cfg.gpus_per_node) {
    throw InputError(
        {"<cli>", 0, "-g"},
        fmt::format("expected at most {} GPUs per node (-g x -t), got {}: {}", cfg.gpus_per_node,
                    o.GpusPerNode(),
                    cfg.topo_file.empty()
                        ? fmt::format("the {} preset's node has {}", cfg.preset, cfg.gpus_per_node)
                        : fmt::format("{} has {} GPUs", cfg.topo_file, cfg.gpus_per_node)));
  }
  return cfg;
}

int RailsPerNode(const perf::PerfOptions& o, const scenario::Scenario& s) {
  return static_cast<int>(node::Rails(NodeFor(o, s), static_cast<int>(o.GpusPerNode())).size());
}

bool IsDefaultNode(const node::NodeConfig& n) {
  const node::NodeConfig d;
  return n.preset == d.preset && n.gpus_per_node == d.gpus_per_node &&
         n.nvlink_rate == d.nvlink_rate && n.nvlink_latency == d.nvlink_latency &&
         n.pcie_gen == d.pcie_gen && n.pcie_lanes == d.pcie_lanes && n.gdr == d.gdr &&
         n.gdr_level == d.gdr_level && n.nic_of_gpu.empty();
}

perf::PerfResult RunPerf(const perf::PerfOptions& o, const scenario::Scenario& s,
                         const std::string& fabric_name, std::string* failure,
                         const std::function<bool(const PerfProgress&)>& progress,
                         const PerfHooks* hooks) {
  const int nodes = static_cast<int>(o.nodes);
  const int g = static_cast<int>(o.GpusPerNode());
  if (o.Ranks() < 2) {
    throw InputError({"<cli>", 0, "-g"},
                     "expected 2 or more ranks (-g GPUs per node x --nodes): one rank moves "
                     "nothing over the fabric");
  }
  const node::NodeConfig node_cfg = NodeFor(o, s);
  const std::vector<node::RailPath> rails = node::Rails(node_cfg, g);
  const int nics = static_cast<int>(rails.size());
  const topology::Topology topo = scenario::BuildTopology(s);
  if (static_cast<int64_t>(topo.hosts.size()) != int64_t{nodes} * nics) {
    throw InputError({"<cli>", 0, "--nodes"},
                     nics == g ? fmt::format("expected a topology of {} NICs ({} nodes x {} GPUs, "
                                             "one NIC each), the fabric has {}",
                                             o.Ranks(), nodes, g, topo.hosts.size())
                               : fmt::format("expected a topology of {} NICs ({} nodes x {} NICs "
                                             "of the node's NIC map), the fabric has {}",
                                             int64_t{nodes} * nics, nodes, nics,
                                             topo.hosts.size()));
  }
  const units::Rate rate = topo.links.empty() ? units::Rate::Gbps(400) : topo.links[0].rate;
  // NCCL's view: channels and its own choice per size.
  const PerfModel model = PerfModelFor(o, s.net, rate, node_cfg);
  const collective::TuningModel& tuning = model.tuning;
  const collective::AlphaBetaParams& ab = model.ab;

  sim::Simulator sim(s.seed);
  fabric::NetworkConfig net_cfg = s.net;
  net_cfg.stop_when_flows_done = false;
  // NCCL_IB_QPS_PER_CONNECTION and NCCL_IB_SPLIT_DATA_ON_QPS over the
  // scenario's transport.qps_per_connection and transport.split_data_on_qps.
  if (o.qps_per_connection > 0) net_cfg.rc.qps_per_connection = static_cast<int>(o.qps_per_connection);
  if (o.split_data_on_qps >= 0) net_cfg.rc.split_data_on_qps = o.split_data_on_qps == 1;
  fabric::Network net(sim, topo, net_cfg);
  // Each rail's GPU-to-NIC path caps what its NIC injects (PCIe, the host
  // bounce without GPUDirect RDMA, the socket link).
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < nics; ++k)
      if (rails[static_cast<size_t>(k)].nic_rate.bps() > 0)
        net.SetNicPcieRate(static_cast<uint32_t>(n * nics + k),
                           rails[static_cast<size_t>(k)].nic_rate);
  fault::Apply(fault::LinkAndNicFaults(s, topo), net);
  // Other tenants share the NICs and queues for the whole sweep (nothing
  // when tenants.load is 0); virtualization.* is in net_cfg.virt.
  workload::TenantTraffic tenants(sim, net, {s.shared.tenant_load, s.shared.tenant_burst});
  // outputs.pcap / outputs.trace (--pcap, --trace, or the scenario's):
  // nothing installed without them.
  std::unique_ptr<Captures> captures;
  if (!s.capture.pcap.empty() || !s.capture.trace.empty())
    captures = std::make_unique<Captures>(s, topo, net, false, hooks != nullptr ? hooks->rank : -1);
  Engines engines(sim, net, o, model, node_cfg, rails,
                  captures && captures->tracing() ? captures.get() : nullptr);
  const std::string collective_name(collective::CollectiveName(o.collective));

  perf::PerfResult r;
  r.options = o;
  r.simulated = true;
  r.fabric = fabric_name;
  r.nccl_version = tuning.constants().nccl_version;
  r.tenant_load = s.shared.tenant_load;
  r.tenant_burst = s.shared.tenant_load > 0 ? s.shared.tenant_burst : 0;
  r.virt_latency_us = static_cast<double>(s.net.virt.latency.ps()) / 1e6;
  r.virt_jitter_us = static_cast<double>(s.net.virt.jitter.ps()) / 1e6;
  r.gpu_name = node_cfg.device_name;
  if (!IsDefaultNode(node_cfg)) {
    r.node_notes.push_back("lossless: " + node::Describe(node_cfg, g));
    std::string paths;
    for (const node::RailPath& rail : rails) {
      const std::string nic = static_cast<size_t>(rail.nic) < node_cfg.nics.size()
                                  ? node_cfg.nics[static_cast<size_t>(rail.nic)]
                                  : fmt::format("NIC{}", rail.nic);
      paths += fmt::format("{}GPU{}->{} {} {} {:.1f} GB/s", paths.empty() ? "" : ", ", rail.gpu,
                           nic, node::PcieHopName(rail.hop), rail.gdr ? "GDR" : "host-bounce",
                           static_cast<double>(rail.nic_rate.bps()) / 8e9);
    }
    const std::string from = !o.nic_map.empty() || (o.topo.empty() && !s.node.nic_of_gpu.empty() &&
                                                    s.node.topo_file.empty())
                                 ? " (the given NIC map" +
                                       (node_cfg.topo_file.empty()
                                            ? std::string(")")
                                            : ", paths of " + node_cfg.topo_file + ")")
                             : node_cfg.topo_file.empty()
                                 ? std::string()
                                 : " (nearest NICs of " + node_cfg.topo_file + ")";
    r.node_notes.push_back(fmt::format("lossless: rails{}: {}", from, paths));
  }
  {
    perf::PerfNode pn;
    pn.preset = node_cfg.preset;
    pn.gpus_per_node = node_cfg.gpus_per_node;
    pn.nvlink_gbs = static_cast<double>(node_cfg.nvlink_rate.bps()) / 8e9;
    pn.pcie_gen = node_cfg.pcie_gen;
    pn.pcie_lanes = node_cfg.pcie_lanes;
    pn.gdr = node_cfg.gdr;
    pn.nic_of_gpu = node_cfg.nic_of_gpu;
    for (const node::RailPath& rail : rails) {
      perf::PerfRail pr;
      pr.gpu = rail.gpu;
      pr.nic = static_cast<size_t>(rail.nic) < node_cfg.nics.size() &&
                       !node_cfg.nics[static_cast<size_t>(rail.nic)].empty()
                   ? node_cfg.nics[static_cast<size_t>(rail.nic)]
                   : fmt::format("NIC{}", rail.nic);
      pr.hop = std::string(node::PcieHopName(rail.hop));
      pr.gdr = rail.gdr;
      pr.nic_gbs = static_cast<double>(rail.nic_rate.bps()) / 8e9;
      pn.rails.push_back(std::move(pr));
    }
    pn.qps_per_connection = net_cfg.rc.qps_per_connection;
    pn.split_data_on_qps = net_cfg.rc.split_data_on_qps;
    r.node = std::move(pn);
  }
  if (net_cfg.rc.qps_per_connection > 1) {
    r.node_notes.push_back(fmt::format(
        "lossless: {} queue pairs per network connection (NCCL_IB_QPS_PER_CONNECTION), each "
        "data message {} (NCCL_IB_SPLIT_DATA_ON_QPS={})",
        net_cfg.rc.qps_per_connection,
        net_cfg.rc.split_data_on_qps ? "split over all of them" : "on the next one in turn",
        net_cfg.rc.split_data_on_qps ? 1 : 0));
  }
  const std::vector<int64_t> sizes = perf::SizeSequence(o);
  // Every engine the sweep uses, in the order it first uses them (Prepare).
  for (collective::DataType type : o.types)
    for (int64_t requested : sizes) {
      const int64_t bytes = collective::CountsFor(o.collective, requested, type, o.Ranks()).size_bytes;
      if (bytes > 0) engines.Prepare(tuning.Choose(o.collective, bytes));
    }
  if (hooks != nullptr) {
    engines.SetOwnership(hooks->setup(sim, net, PerfParts{&tenants, captures.get()}));
    if (captures && captures->tracing()) engines.set_launch_order(captures.get());
  }
  const int64_t rows = o.run_cycles * static_cast<int64_t>(o.types.size() * o.ops.size() *
                                                           o.Roots().size() * sizes.size());
  PerfProgress pg;
  pg.rows = rows;
  pg.iterations = (o.in_place ? 2 : 1) * (o.warmup_iters + o.iters);
  bool stop = false;  // a failure or Ctrl-C ends the sweep
  // Runs the current collective to its end, in slices of events so that
  // `progress` can stop it (Run resumes exactly where a slice ended, so the
  // result does not depend on the slicing). False when it was stopped.
  // `done`: whether every GPU finished (false: stuck). Distributed, the
  // hook runs it on every process to the serial instant it ends.
  auto run_collective = [&](bool& done) {
    const units::Time until = sim.Now() + kStuck;
    if (hooks != nullptr) {
      done = hooks->run_collective(
          until, [&engines] { return engines.done(); },
          [&engines](std::vector<int64_t>& by_host) { engines.AddBytesStillToArrive(by_host); });
      return true;
    }
    while (sim.Run(until, kEventsPerSlice) == sim::StopReason::kEventLimit) {
      if (progress && !progress(pg)) return false;
    }
    done = engines.done();
    return true;
  };
  for (int64_t cycle = 0; cycle < o.run_cycles && !stop; ++cycle) {
    for (collective::DataType type : o.types) {
      for (collective::RedOp op : o.ops) {
        for (int64_t root : o.Roots()) {
          for (int64_t requested : sizes) {
            if (stop) break;
            perf::SizeResult row;
            row.requested_bytes = requested;
            row.counts = collective::CountsFor(o.collective, requested, type, o.Ranks());
            row.type = type;
            row.op = op;
            row.root = root;
            // NCCL's choice for the size (under NCCL_ALGO, NCCL_PROTO, ...)
            // is what is simulated; point-to-point runs Simple.
            const collective::AlgoChoice nccl = tuning.Choose(o.collective, row.counts.size_bytes);
            row.choice = nccl;
            collective::AlphaBetaParams row_ab = ab;
            row_ab.gpu_write_gbs = tuning.ProtocolCapGbs(nccl.algorithm, nccl.protocol);
            row.model_us = collective::AlphaBeta(o.collective, nccl.algorithm, nccl.protocol,
                                                 row.counts.size_bytes, row_ab)
                               .TotalUs();
            const int64_t bytes = row.counts.size_bytes;
            pg.bytes = bytes;
            pg.iteration = 0;
            for (perf::HalfResult* half : {&row.out_of_place, &row.in_place}) {
              if (half == &row.in_place && !o.in_place) break;
              // nccl-tests checks neither alltoall's nor sendrecv's in-place half.
              const bool checked =
                  o.check && (half == &row.out_of_place || collective::ChecksInPlace(o.collective));
              half->wrong = checked ? std::optional<int64_t>(0) : std::nullopt;
              for (int64_t it = 0; it < o.warmup_iters + o.iters && !stop; ++it) {
                double total_us = 0;
                for (int64_t a = 0; a < o.agg_iters && !stop; ++a) {
                  if (bytes == 0) break;  // nothing to move: nccl-tests times an empty launch
                  if (captures) captures->CollectiveBegin(collective_name, bytes, sim.Now());
                  engines.Begin(nccl, bytes, root);
                  bool done = false;
                  if (!run_collective(done)) {
                    r.interrupted = stop = true;
                    break;
                  }
                  // A collective that has not ended after a simulated minute
                  // is stuck (a PFC deadlock keeps refreshing pauses forever).
                  if (!done) {
                    stop = true;
                    *failure = net.qp_failure() != nullptr
                                   ? net.qp_failure()->what
                                   : fmt::format("the {} of {} B did not complete within "
                                                 "{} of simulated time",
                                                 o.collective == collective::Collective::kAllReduce
                                                     ? std::string("all-reduce")
                                                     : std::string(collective::CollectiveName(
                                                           o.collective)),
                                                 bytes, units::FormatTime(kStuck));
                    half->wrong = row.counts.count;  // none of it verified
                    break;
                  }
                  const units::Time finish =
                      hooks != nullptr ? hooks->finish(engines.finish()) : engines.finish();
                  if (captures) captures->CollectiveEnd(finish);
                  total_us += static_cast<double>((finish - engines.start()).ps()) / 1e6;
                }
                if (stop) break;
                if (it >= o.warmup_iters)
                  half->samples_us.push_back(total_us / static_cast<double>(o.agg_iters));
                ++pg.iteration;
                if (progress && !progress(pg)) r.interrupted = stop = true;
              }
            }
            // An interrupted row is incomplete: dropped. A failed one is kept
            // (its #wrong says what was not verified).
            if (!r.interrupted) r.sizes.push_back(std::move(row));
            ++pg.row;
            r.tenant_bytes = tenants.bytes_posted();
          }
        }
      }
    }
  }
  // Distributed: every process's results folded into rank 0's network.
  const uint64_t events = hooks != nullptr ? hooks->finish_run(sim, net) : sim.events_executed();
  // Distributed: finish_run merged the tenants' counters (each rank posted
  // its own hosts' bursts); the serial sweep read them after its last row.
  if (hooks != nullptr && pg.row > 0) r.tenant_bytes = tenants.bytes_posted();
  for (uint32_t q = 0; q < net.flows().size(); ++q) {
    if (tenants.Owns(q)) continue;  // the collective's queue pairs only
    r.ack_timeouts += static_cast<int64_t>(net.flows()[q].timeouts);
    r.naks += static_cast<int64_t>(net.flows()[q].naks);
  }
  // Per-link counters of the whole run (links with any flow-control,
  // marking, drop or retransmission activity).
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const fabric::PortStats st = net.port_stats(p);
    if (st.pause_tx + st.ecn_marks + st.cnp_tx + st.drops + st.link_losses + st.retx_packets +
            static_cast<uint64_t>(st.paused_ps) + static_cast<uint64_t>(st.credit_starved_ps) ==
        0)
      continue;
    perf::LinkCounters lc;
    lc.link = net.PortName(p);
    lc.pause_frames = static_cast<int64_t>(st.pause_tx);
    lc.paused_us = static_cast<double>(st.paused_ps) / 1e6;
    lc.ecn_marks = static_cast<int64_t>(st.ecn_marks);
    lc.cnps = static_cast<int64_t>(st.cnp_tx);
    lc.drops = static_cast<int64_t>(st.drops + st.link_losses);
    lc.retransmissions = static_cast<int64_t>(st.retx_packets);
    lc.credit_starved_us = static_cast<double>(st.credit_starved_ps) / 1e6;
    r.links.push_back(lc);
  }
  if (captures) r.warnings = captures->Finish(sim.Now());
  r.events = events;
  r.packet_hops = net.packet_hops();
  return r;
}

std::vector<std::string> PerfNotes(const perf::PerfResult& r) {
  std::vector<std::string> notes;
  const collective::Collective c = r.options.collective;
  const std::string on = r.fabric.empty() ? "the given scenario" : r.fabric;
  const std::string forced =
      r.options.algo.empty() && r.options.proto.empty()
          ? std::string()
          : fmt::format(" (forced:{}{})",
                        r.options.algo.empty() ? "" : " NCCL_ALGO=" + r.options.algo,
                        r.options.proto.empty() ? "" : " NCCL_PROTO=" + r.options.proto);
  if (IsP2p(c)) {
    notes.push_back(fmt::format(
        "lossless {}: packet-level simulation of NCCL {}'s {} as point-to-point sends (Simple "
        "protocol, PXN on the destination's rail) on {}",
        kVersion, r.nccl_version, collective::CollectiveName(c), on));
    notes.emplace_back(
        "lossless: every size runs Simple; where NCCL would send small messages with LL the "
        "times are Simple's");
  } else {
    notes.push_back(fmt::format(
        "lossless {}: packet-level simulation of NCCL {}'s {} on {}; per size the algorithm "
        "(Ring{}), protocol (LL, LL128, Simple) and channels NCCL's tuning model picks{}",
        kVersion, r.nccl_version, collective::CollectiveName(c), on,
        c == collective::Collective::kAllReduce ? ", Tree" : "", forced));
    notes.emplace_back(
        "lossless: the choice per size is listed after the footer; PAT, NVLS, NVLSTree and "
        "CollNet are not modelled");
  }
  if (r.tenant_load > 0) {
    notes.push_back(fmt::format(
        "lossless: other tenants' Poisson bursts (mean {}) offer {:g} of every NIC's link on the "
        "job's queues (docs/model/shared-cloud.md)",
        units::FormatBytes(units::Bytes(r.tenant_burst)), r.tenant_load));
  }
  if (r.virt_latency_us > 0 || r.virt_jitter_us > 0) {
    notes.push_back(fmt::format(
        "lossless: every RDMA message waits {:g} us + Exp(mean {:g} us) in the virtualization "
        "layer before its NIC sees it",
        r.virt_latency_us, r.virt_jitter_us));
  }
  for (const std::string& n : r.node_notes) notes.push_back(n);
  notes.emplace_back("lossless: host names, PIDs and PCI addresses below are modelled");
  return notes;
}

}  // namespace lossless::run
