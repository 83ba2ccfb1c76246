#include "run/perf_run.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "collective/model/alpha_beta.hpp"
#include "collective/model/orders.hpp"
#include "collective/model/tuning.hpp"
#include "collective/ring_allreduce.hpp"
#include "fabric/network.hpp"
#include "lossless/version.hpp"
#include "run/runner.hpp"
#include "sim/simulator.hpp"
#include "workload/tenants.hpp"

namespace lossless::run {
namespace {

const Location kCli{"<cli>", 0, "collective"};
const units::Time kStuck = units::Time::Sec(60);

// Payload GB/s of one NIC after framing (what the alpha-beta model calls nic_gbs).
double NicPayloadGbs(const fabric::NetworkConfig& net, units::Rate rate) {
  const double mtu = net.framing.mtu_payload;
  return static_cast<double>(rate.bps()) / 8e9 * mtu / static_cast<double>(net.framing.WireBytes(net.framing.mtu_payload));
}

}  // namespace

PerfModel PerfModelFor(const perf::PerfOptions& o, const fabric::NetworkConfig& net,
                       units::Rate rate) {
  collective::CommShape shape;
  shape.nodes = static_cast<int>(o.nodes);
  shape.gpus_per_node = static_cast<int>(o.GpusPerNode());
  collective::NodeHardware hw;
  hw.gpus = hw.nics = shape.gpus_per_node;
  hw.nic_gbs = static_cast<double>(rate.bps()) / 8e9;
  collective::AlphaBetaParams ab;
  ab.nodes = shape.nodes;
  ab.gpus_per_node = ab.nics_per_node = shape.gpus_per_node;
  ab.nic_gbs = NicPayloadGbs(net, rate);
  return {collective::TuningModel(shape, collective::DeriveSearchGraph(hw, shape.nodes)), ab};
}

perf::PerfResult RunPerf(const perf::PerfOptions& o, const scenario::Scenario& s,
                         const std::string& fabric_name, std::string* failure,
                         const std::function<void(const PerfProgress&)>& progress) {
  if (o.collective != collective::Collective::kAllReduce) {
    throw InputError(kCli, fmt::format("expected all_reduce: it is the only collective simulated "
                                       "at packet level so far ({} is not; `perf {} --model` "
                                       "prints NCCL's analytic model of it)",
                                       collective::CollectiveName(o.collective),
                                       collective::CollectiveName(o.collective)));
  }
  const int nodes = static_cast<int>(o.nodes);
  const int g = static_cast<int>(o.GpusPerNode());
  const topology::Topology topo = scenario::BuildTopology(s);
  if (static_cast<int64_t>(topo.hosts.size()) != o.Ranks()) {
    throw InputError({"<cli>", 0, "--nodes"},
                     fmt::format("expected a topology of {} NICs ({} nodes x {} GPUs, one NIC "
                                 "each), the fabric has {}",
                                 o.Ranks(), nodes, g, topo.hosts.size()));
  }
  const units::Rate rate = topo.links.empty() ? units::Rate::Gbps(400) : topo.links[0].rate;
  // NCCL's view: channels and its own choice per size.
  const PerfModel model = PerfModelFor(o, s.net, rate);
  const collective::TuningModel& tuning = model.tuning;
  const collective::AlphaBetaParams& ab = model.ab;

  sim::Simulator sim(s.seed);
  fabric::NetworkConfig net_cfg = s.net;
  net_cfg.stop_when_flows_done = false;
  fabric::Network net(sim, topo, net_cfg);
  ApplyLinkLoss(s, topo, net);
  ApplyNicStall(s, topo, net);
  // Other tenants share the NICs and queues for the whole sweep (nothing
  // when tenants.load is 0); virtualization.* is in net_cfg.virt.
  workload::TenantTraffic tenants(sim, net, {s.shared.tenant_load, s.shared.tenant_burst});
  // One engine per channel count (its queue pairs live for the run).
  std::map<int, std::unique_ptr<collective::RingAllReduce>> engines;
  auto engine = [&](int channels) -> collective::RingAllReduce& {
    auto& e = engines[channels];
    if (!e) {
      collective::RingAllReduceSpec spec;
      spec.gpus_per_node = g;
      spec.nics_per_node = g;
      // NCCL's Ring/Simple software latencies, as the alpha-beta model uses them.
      const collective::TuningConstants& k = tuning.constants();
      constexpr int kRing = 1, kSimple = 2, kNvlink = 0, kNet = 2;
      auto us = [](double v) { return units::Time::Ps(static_cast<int64_t>(v * 1e6 + 0.5)); };
      spec.launch_latency = us(k.base_lat_us[kRing][kSimple]);
      spec.net_hop_latency = us(k.hw_lat_us[kNet][g == 1 ? 0 : kRing][kSimple]);
      spec.nvlink_hop_latency =
          us(std::max(k.hw_lat_us[kNvlink][kRing][kSimple], nodes > 1 ? 3 * ab.net_overhead_us : 0.0));
      for (const collective::RingOrder& r : collective::RingOrders(nodes, g, g, channels)) {
        collective::Ring ring;
        ring.nic = static_cast<uint32_t>(r.nic);
        for (int rank : r.ranks) ring.ranks.push_back(static_cast<uint32_t>(rank));
        spec.rings.push_back(ring);
      }
      e = std::make_unique<collective::RingAllReduce>(sim, net, spec);
    }
    return *e;
  };

  perf::PerfResult r;
  r.options = o;
  r.simulated = true;
  r.fabric = fabric_name;
  r.nccl_version = tuning.constants().nccl_version;
  r.tenant_load = s.shared.tenant_load;
  r.tenant_burst = s.shared.tenant_load > 0 ? s.shared.tenant_burst : 0;
  r.virt_latency_us = static_cast<double>(s.net.virt.latency.ps()) / 1e6;
  r.virt_jitter_us = static_cast<double>(s.net.virt.jitter.ps()) / 1e6;
  const std::vector<int64_t> sizes = perf::SizeSequence(o);
  const int64_t rows = o.run_cycles * static_cast<int64_t>(o.types.size() * o.ops.size() *
                                                           o.Roots().size() * sizes.size());
  PerfProgress pg;
  pg.rows = rows;
  pg.iterations = 2 * (o.warmup_iters + o.iters * o.agg_iters);
  bool failed = false;
  for (int64_t cycle = 0; cycle < o.run_cycles; ++cycle) {
    for (collective::DataType type : o.types) {
      for (collective::RedOp op : o.ops) {
        for (int64_t root : o.Roots()) {
          for (int64_t requested : sizes) {
            perf::SizeResult row;
            row.requested_bytes = requested;
            row.counts = collective::CountsFor(o.collective, requested, type, o.Ranks());
            row.type = type;
            row.op = op;
            row.root = root;
            const collective::AlgoChoice nccl = tuning.Choose(o.collective, row.counts.size_bytes);
            row.choice = nccl;
            row.choice.algorithm = collective::Algorithm::kRing;  // what is simulated
            row.choice.protocol = collective::Protocol::kSimple;
            row.model_us = collective::AlphaBeta(o.collective, collective::Algorithm::kRing,
                                                 collective::Protocol::kSimple,
                                                 row.counts.size_bytes, ab)
                               .TotalUs();
            const int64_t bytes = row.counts.size_bytes;
            pg.bytes = bytes;
            pg.iteration = 0;
            for (perf::HalfResult* half : {&row.out_of_place, &row.in_place}) {
              if (half == &row.in_place && !o.in_place) break;
              half->wrong = o.check ? std::optional<int64_t>(0) : std::nullopt;
              for (int64_t it = 0; it < o.warmup_iters + o.iters && !failed; ++it) {
                double total_us = 0;
                for (int64_t a = 0; a < o.agg_iters && !failed; ++a) {
                  if (bytes == 0) break;  // nothing to move: nccl-tests times an empty launch
                  collective::RingAllReduce& e = engine(std::max(1, nccl.channels));
                  e.Begin(bytes, sim.Now());
                  // A collective that has not ended after a simulated minute
                  // is stuck (a PFC deadlock keeps refreshing pauses forever).
                  sim.Run(sim.Now() + kStuck);
                  if (!e.done()) {
                    failed = true;
                    *failure = net.qp_failure() != nullptr
                                   ? net.qp_failure()->what
                                   : fmt::format("the all-reduce of {} B did not complete within "
                                                 "{} of simulated time",
                                                 bytes, units::FormatTime(kStuck));
                    half->wrong = row.counts.count;  // none of it verified
                    break;
                  }
                  total_us += static_cast<double>((e.finish() - e.start()).ps()) / 1e6;
                }
                if (it >= o.warmup_iters)
                  half->samples_us.push_back(total_us / static_cast<double>(o.agg_iters));
                ++pg.iteration;
                if (progress) progress(pg);
              }
            }
            r.sizes.push_back(std::move(row));
            ++pg.row;
            r.tenant_bytes = tenants.bytes_posted();
            if (failed) return r;
          }
        }
      }
    }
  }
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
  return r;
}

std::vector<std::string> PerfNotes(const perf::PerfResult& r) {
  std::vector<std::string> notes;
  notes.push_back(fmt::format(
      "lossless {}: packet-level simulation of NCCL {}'s ring all-reduce (Simple protocol) on {}",
      kVersion, r.nccl_version, r.fabric.empty() ? "the given scenario" : r.fabric));
  notes.push_back(
      "lossless: every size runs Ring/Simple with NCCL's channel count; where NCCL would pick Tree, "
      "LL or LL128 (small sizes) the times are Ring/Simple's, not NCCL's (not simulated yet)");
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
  notes.push_back("lossless: host names, PIDs and PCI addresses below are modelled");
  return notes;
}

}  // namespace lossless::run
