// Online PFC deadlock detector: silent on fabrics whose minimal routing has
// no cyclic buffer dependency (leaf-spine, fat tree), even under heavy incast
// with PFC pausing everywhere. The positive case is RefE9 (pfc_deadlock_e9_test).
#include "flowctl/deadlock_detector.hpp"

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "flowctl/buffer_graph.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::flowctl {
namespace {

using units::Rate;
using units::Time;

struct IncastResult {
  uint64_t pause_frames = 0;
  uint64_t waits = 0;
  bool deadlock = false;
  size_t flows_done = 0, flows = 0;
  uint64_t drops = 0;
};

// Two incasts at once (every other host sends 1 MiB to host 0 or host 1) on
// priority 3 with PFC and ECMP, until every flow completes.
IncastResult Incast(const topology::Topology& topo) {
  sim::Simulator sim(7);
  fabric::NetworkConfig cfg;
  cfg.framing = fabric::Framing::RoceV2(4096);
  cfg.nic.ect = false;
  cfg.pfc.enabled = true;
  cfg.pfc.xoff_bytes = 100'000;
  cfg.pfc.headroom_bytes =
      3 * cfg.framing.WireBytes(4096) + 84 +
      units::BytesInTime(Time::Us(2) + cfg.sw.latency, Rate::Gbps(400)).count();
  fabric::Network net(sim, topo, cfg);
  DeadlockDetector det(sim, net, Time::Ms(1), /*stop_run=*/true);
  const uint32_t n = net.num_hosts();
  for (uint32_t h = 2; h < n; ++h) net.AddFlow(fabric::FlowSpec::Of(h, h % 2, 1 << 20));
  sim.Run(Time::Ms(50));
  IncastResult r;
  for (uint32_t p = 0; p < net.num_ports(); ++p) r.pause_frames += net.port_stats(p).pause_tx;
  r.waits = det.waits_seen();
  r.deadlock = det.first().has_value();
  r.flows = net.flows().size();
  r.flows_done = net.flows_done();
  r.drops = net.drops();
  return r;
}

topology::ClosParams Clos(int64_t gpus, int radix) {
  topology::ClosParams p;
  p.gpus = gpus;
  p.radix = radix;
  p.link_rate = Rate::Gbps(400);
  p.link_delay = Time::Us(1);
  return p;
}

TEST(DeadlockDetector, SilentOnLeafSpineIncast) {
  auto r = Incast(topology::BuildLeafSpine(Clos(32, 8), {}));
  EXPECT_GT(r.pause_frames, 0u);  // PFC really held traffic
  EXPECT_GT(r.waits, 0u);         // and the detector saw wait edges
  EXPECT_FALSE(r.deadlock);
  EXPECT_EQ(r.flows_done, r.flows);
  EXPECT_EQ(r.drops, 0u);
}

TEST(DeadlockDetector, SilentOnFatTreeIncast) {
  auto r = Incast(topology::BuildFatTree(Clos(64, 8), {}));
  EXPECT_GT(r.pause_frames, 0u);
  EXPECT_GT(r.waits, 0u);
  EXPECT_FALSE(r.deadlock);
  EXPECT_EQ(r.flows_done, r.flows);
  EXPECT_EQ(r.drops, 0u);
}

}  // namespace
}  // namespace lossless::flowctl
