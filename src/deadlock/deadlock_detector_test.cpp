// Online PFC deadlock detector: silent on fabrics whose minimal routing has
// no cyclic buffer dependency (leaf-spine, fat tree), even under heavy incast
// with PFC pausing everywhere. The positive case is RefE9 (pfc_deadlock_e9_test);
// here also its global-pause (802.3x) variants.
#include "deadlock/deadlock_detector.hpp"

#include <gtest/gtest.h>

#include "deadlock/buffer_graph.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"
#include "testing/e9_harness.hpp"
#include "topology/topology.hpp"

namespace lossless::deadlock {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace detector {

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
// With global pause every flow sends on `tclass`.
IncastResult Incast(const topology::Topology& topo, bool global = false, int tclass = -1) {
  sim::Simulator sim(7);
  fabric::NetworkConfig cfg;
  cfg.framing = fabric::Framing::RoceV2(4096);
  cfg.nic.ect = false;
  cfg.pfc.enabled = true;
  cfg.pfc.global = global;
  cfg.pfc.xoff = units::Bytes(100'000);
  cfg.pfc.headroom =
      units::Bytes(3 * cfg.framing.WireBytes(4096) + 84 +
                   units::BytesInTime(Time::Us(2) + cfg.sw.latency, Rate::Gbps(400)).count());
  fabric::Network net(sim, topo, cfg);
  DeadlockDetector det(sim, net, Time::Ms(1), /*stop_run=*/true);
  const uint32_t n = net.num_hosts();
  for (uint32_t h = 2; h < n; ++h)
    net.AddFlow(fabric::FlowSpec::Of(h, h % 2, 1 << 20, Time::Zero(), tclass));
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

// Under global pause (fabric.pfc.mode: global) the fat-tree incast on
// priority 0 -- not fabric.pfc.priority -- pauses ports and the detector
// sees their waits, but up/down routing closes no cycle of ports.
TEST(DeadlockDetector, SilentOnFatTreeIncastUnderGlobalPause) {
  auto r = Incast(topology::BuildFatTree(Clos(64, 8), {}), /*global=*/true, /*tclass=*/0);
  EXPECT_GT(r.pause_frames, 0u);
  EXPECT_GT(r.waits, 0u);
  EXPECT_FALSE(r.deadlock);
  EXPECT_EQ(r.flows_done, r.flows);
  EXPECT_EQ(r.drops, 0u);
}

// The E9 bounce routes under global pause, with flows C and D on priority 3
// and A and B on priority 0. Each cycle buffer holds one flow of each pair
// (T1's from L0 holds A, L1's from T1 holds D, ...), so no per-priority
// cycle exists; but an 802.3x PAUSE is decided on and stops the whole port,
// so the four ports form a cycle of waits and freeze. The detector reports
// the cycle of the four ports ("all" priorities), once, within 1 ms of the
// cycle links going idle.
TEST(DeadlockDetector, ReportsCycleOfPortsHeldByGlobalPause) {
  e9::E9Run e;
  e.global = true;
  e.cd_class = 3;
  e.ab_class = 0;
  e.horizon = Time::Ms(30);
  e.Run();
  ASSERT_GE(e.t_f, 0) << "the cycle links never went idle for 1 ms";
  EXPECT_LE(e.last_cycle_start, e.t_f);
  EXPECT_EQ(e.drops, 0u);
  ASSERT_TRUE(e.verdict.has_value());
  EXPECT_EQ(e.deadlocks, 1u);
  const std::vector<std::string> want = {"leaf1:spine0:all", "spine1:leaf1:all", "leaf0:spine1:all",
                                         "spine0:leaf0:all"};
  EXPECT_EQ(e9::Rotated(e.verdict->labels, want.front()), want)
      << DeadlockDetector::CycleText(*e.verdict);
  EXPECT_LE(e.verdict->formed.ps(), e.t_f + e9::kMs);
  EXPECT_EQ(e.verdict->detected, e.verdict->formed + Time::Ms(1));
}

// The E9 up/down control under global pause, same classes: no cycle, no
// report, and traffic keeps moving on every link.
TEST(DeadlockDetector, SilentOnUpDownRoutesUnderGlobalPause) {
  e9::E9Run e;
  e.global = true;
  e.cd_class = 3;
  e.ab_class = 0;
  e.routes = e9::Routes::kUpDown;
  e.horizon = Time::Ms(20);
  e.Run();
  EXPECT_FALSE(e.verdict.has_value());
  EXPECT_EQ(e.deadlocks, 0u);
  EXPECT_LT(e.t_f, 0);
  for (int f = 0; f < 4; ++f) EXPECT_GT(e.last_delivery[f], 19 * e9::kMs) << "flow " << f;
}

}  // namespace detector
}  // namespace
}  // namespace lossless::deadlock
