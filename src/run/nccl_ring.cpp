#include "run/nccl_ring.hpp"

#include <algorithm>
#include <cmath>

#include "collective/model/orders.hpp"

namespace lossless::run {
namespace {

units::Time Us(double v) {
  return units::Time::Ps(static_cast<int64_t>(std::llround(v * 1e6)));
}

}  // namespace

NcclLatencies NcclLatenciesFor(const collective::TuningConstants& k, collective::Algorithm a,
                               collective::Protocol p, int gpus_per_node, bool net_overhead,
                               double net_overhead_us) {
  constexpr int kTree = 0, kRing = 1, kNvlink = 0, kNet = 2;
  const int pi = static_cast<int>(p);
  if (a == collective::Algorithm::kTree) {
    return {Us(k.base_lat_us[kTree][pi]), Us(k.hw_lat_us[kNet][kTree][pi]),
            Us(k.hw_lat_us[kNvlink][kTree][pi])};
  }
  const double overhead = net_overhead_us * (p == collective::Protocol::kSimple ? 3 : 1);
  return {Us(k.base_lat_us[kRing][pi]),
          Us(k.hw_lat_us[kNet][gpus_per_node == 1 ? kTree : kRing][pi]),
          Us(std::max(k.hw_lat_us[kNvlink][kRing][pi], net_overhead ? overhead : 0.0))};
}

units::Time NvlinkHopExtra(units::Time hw_lat, units::Time link_latency) {
  return std::max(units::Time::Zero(), hw_lat - link_latency);
}

collective::RingSpec NcclRingSpec(collective::RingPlan plan, collective::Protocol p,
                                  units::Rate gpu_rate, int64_t buffsize, const NcclLatencies& l,
                                  units::Rate nvlink_rate, const NcclRingGroup& g) {
  collective::RingSpec spec;
  spec.plan = plan;
  collective::SetNcclSteps(spec, p, gpu_rate, buffsize);
  spec.gpus_per_node = g.gpus_per_node;
  spec.nics_per_node = g.nics_per_node;
  if (nvlink_rate.bps() > 0) spec.nvlink_rate = nvlink_rate;
  if (g.nvlink_latency > units::Time::Zero()) spec.nvlink_latency = g.nvlink_latency;
  spec.launch_latency = l.launch;
  spec.net_hop_latency = l.net_hop;
  spec.nvlink_hop_latency = NvlinkHopExtra(l.nvlink_hop, spec.nvlink_latency);
  for (const collective::RingOrder& r :
       collective::RingOrders(g.nodes, g.gpus_per_node,
                              g.order_nics > 0 ? g.order_nics : g.gpus_per_node, g.channels)) {
    collective::Ring ring;
    ring.nic = static_cast<uint32_t>(r.nic * g.rail_stride);
    for (int rank : r.ranks) ring.ranks.push_back(static_cast<uint32_t>(rank));
    spec.rings.push_back(ring);
  }
  return spec;
}

}  // namespace lossless::run
