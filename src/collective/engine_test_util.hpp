#pragma once
// Shared by the engine tests: the RoCE v2 network they run on, the link
// bound of its 400G host links and the alpha-beta model of the same links
// with NCCL's host latencies set to zero (the engines' tests run without
// them), the independent expectation for large messages.
#include <cstdint>
#include <numeric>
#include <vector>

#include "collective/model/alpha_beta.hpp"
#include "collective/model/orders.hpp"
#include "collective/model/tuning.hpp"
#include "collective/ring_engine.hpp"
#include "fabric/network.hpp"
#include "topology/topology.hpp"

namespace lossless::collective::testing {

inline fabric::NetworkConfig RoceConfig() {
  fabric::NetworkConfig cfg;
  cfg.framing = fabric::Framing::RoceV2(4096);
  cfg.stop_when_flows_done = false;
  return cfg;
}

// The same with PFC on the data class: lossless, for traffic with incast
// (a tree node receives from its children and its parent at once).
inline fabric::NetworkConfig LosslessRoceConfig() {
  fabric::NetworkConfig cfg = RoceConfig();
  cfg.pfc.enabled = true;
  return cfg;
}

// Two nodes of eight GPUs with one NIC per GPU: NCCL's rings for `plan`.
inline RingSpec TwoNodeSpec(RingPlan plan) {
  RingSpec spec;
  spec.plan = plan;
  spec.gpus_per_node = spec.nics_per_node = 8;
  for (const RingOrder& o : RingOrders(2, 8, 8, 8)) {
    Ring ring;
    ring.nic = static_cast<uint32_t>(o.nic);
    for (int k : o.ranks) ring.ranks.push_back(static_cast<uint32_t>(k));
    spec.rings.push_back(ring);
  }
  return spec;
}

inline std::vector<uint32_t> Iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

// Payload GB/s one 400G RoCE v2 host link carries: a 4,096-B payload in a
// 4,178-B frame on the wire, plus the 86-B ACK each data packet draws on the
// same link in the other direction (the peer's ACKs share it).
inline double LinkBoundGbs() { return 400e9 / 8 * 4096.0 / (4178 + 86) / 1e9; }

// 2 nodes x 8 GPUs, one 400G NIC per GPU, rail-optimized.
inline topology::Topology TwoNodesOfEight() {
  topology::ClosParams p;
  p.gpus = 16;
  p.gpus_per_node = 8;
  p.radix = 64;
  return topology::BuildRailOptimized(p, {"<test>", 0, "topology"});
}

// The alpha-beta busbw of `c` (`a`, Simple) on `nodes` x `g` GPUs with one
// NIC of LinkBoundGbs() per GPU and no host latencies.
inline double ModelBusBwGbs(Collective c, int nodes, int g, int64_t bytes,
                            Algorithm a = Algorithm::kRing) {
  AlphaBetaParams p;
  p.nodes = nodes;
  p.gpus_per_node = p.nics_per_node = g;
  p.nic_gbs = LinkBoundGbs();
  p.net_overhead_us = 0;
  TuningConstants k = Nccl2_27Constants();
  for (auto& a : k.base_lat_us)
    for (double& v : a) v = 0;
  for (auto& hw : k.hw_lat_us)
    for (auto& a : hw)
      for (double& v : a) v = 0;
  const double t = AlphaBeta(c, a, Protocol::kSimple, bytes, p, k).TotalUs();
  return BusBwGbs(c, p.Ranks(), bytes, t);
}

}  // namespace lossless::collective::testing
