// Global IEEE 802.3x PAUSE (PfcConfig::global) against PFC: one congested
// lossless priority through an ingress port also stops the other priority.
#include <array>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"

namespace lossless::fabric {
namespace {

// One switch, 400G, 50 ns links. Host 0 sends priority 3 to host 1 and
// priority 0 to host 2, both backlogged (4096-B payloads; the NIC alternates
// them, about 200 Gb/s each). At 20 us the switch port facing host 1 receives
// a PAUSE on priority 3 for 65,535 quanta (83.9 us): priority-3 bytes from
// host 0 pile up in the switch until its ingress passes XOFF (200 KB, about
// 8 us later) and stay there until the pause ends at 103.9 us. Priority 0's
// path (switch -> host 2) is never congested.
struct TwoPriorities {
  bool global = false;
  int64_t class0_window_bytes = 0;  // priority-0 payload host 2 received in [kFrom, kTo)
  int64_t class0_before_bytes = 0;  // ... in [0, 20 us)
  uint64_t lossless_drops = 0;
  PortStats host0;
  int64_t host0_paused_now = 0;  // PausedPsUntilNow(host 0's port) at kTo
  std::array<int64_t, kMaxClasses> host0_class_paused_now{};
  int64_t wire_bytes = 0;  // of one 4096-B payload packet

  static constexpr int64_t kFrom = 40'000'000, kTo = 100'000'000;

  void Run() {
    sim::Simulator sim(1);
    auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(50));
    NetworkConfig cfg;
    cfg.framing = Framing::RoceV2(4096);
    cfg.pfc.enabled = true;
    cfg.pfc.global = global;
    cfg.stop_when_flows_done = false;
    wire_bytes = cfg.framing.WireBytes(4096);
    Network net(sim, topo, cfg);
    net.AddFlow(FlowSpec::Of(0, 1, int64_t{1} << 40, Time::Zero(), 3));
    net.AddFlow(FlowSpec::Of(0, 2, int64_t{1} << 40, Time::Zero(), 0));
    sim.Run(Time::Us(20));
    class0_before_bytes = net.flows()[1].recv_bytes;
    net.ReceivePause(net.PortPeer(net.HostPort(1)), 1u << 3, 0xFFFF);
    sim.Run(Time::Ps(kFrom));
    const int64_t at_from = net.flows()[1].recv_bytes;
    sim.Run(Time::Ps(kTo));
    class0_window_bytes = net.flows()[1].recv_bytes - at_from;
    for (uint32_t p = 0; p < net.num_ports(); ++p)
      lossless_drops += net.port_stats(p).lossless_drops;
    host0 = net.port_stats(net.HostPort(0));
    host0_paused_now = net.PausedPsUntilNow(net.HostPort(0));
    for (int c = 0; c < kMaxClasses; ++c)
      host0_class_paused_now[static_cast<size_t>(c)] = net.PausedPsUntilNow(net.HostPort(0), c);
  }
};

TEST(GlobalPause, CongestedPriorityStopsTheOtherOnlyWithGlobalPause) {
  TwoPriorities pfc;
  pfc.Run();
  TwoPriorities global;
  global.global = true;
  global.Run();
  // Line rate in payload bytes over the window: 400 Gb/s x 60 us x 4096 / wire.
  const double line = 400e9 / 8 * 60e-6 * 4096 / static_cast<double>(pfc.wire_bytes);
  // Before the pause both modes share host 0's link evenly: about half each.
  for (const TwoPriorities* r : {&pfc, &global}) {
    EXPECT_GT(static_cast<double>(r->class0_before_bytes), 0.4 * line / 3);  // 20 us of 60
    EXPECT_EQ(r->lossless_drops, 0u);
  }
  // PFC: priority 3 of host 0 is paused, priority 0 takes the whole link.
  EXPECT_GE(static_cast<double>(pfc.class0_window_bytes), line - 2 * 4096);
  EXPECT_LE(static_cast<double>(pfc.class0_window_bytes), line + 2 * 4096);
  // Global pause: host 0 is stopped altogether while priority 3 waits.
  EXPECT_EQ(global.class0_window_bytes, 0);
  // The frames host 0 received enable priority 3 only (PFC) or every class,
  // the CNP class 6 included (802.3x).
  EXPECT_GT(pfc.host0.classes[3].pause_rx, 0u);
  EXPECT_EQ(pfc.host0.classes[0].pause_rx, 0u);
  EXPECT_EQ(pfc.host0.classes[6].pause_rx, 0u);
  EXPECT_GT(global.host0.pause_rx, 0u);
  for (int c = 0; c < kMaxClasses; ++c)
    EXPECT_EQ(global.host0.classes[static_cast<size_t>(c)].pause_rx, global.host0.pause_rx) << c;
}

// Paused time under global pause is counted on every class the PAUSE holds,
// not only on fabric.pfc.priority (3 here): host 0's priority-0 traffic is
// stopped as long as its priority 3, and the port total counts the held time
// once (it is not the sum over the eight classes). Under PFC only priority 3
// is paused.
TEST(GlobalPause, PausedTimeCountedOnEveryHeldClassAndOnceForThePort) {
  TwoPriorities pfc;
  pfc.Run();
  TwoPriorities global;
  global.global = true;
  global.Run();
  const auto& g = global.host0.classes;
  ASSERT_GT(g[3].paused_ps, 0);
  // Host 0 was held for most of the 80 us from the first XOFF (~28 us) to kTo.
  EXPECT_GT(global.host0_paused_now, 40'000'000);
  EXPECT_LE(global.host0_paused_now, TwoPriorities::kTo);
  for (size_t c = 0; c < kMaxClasses; ++c) {
    EXPECT_EQ(g[c].paused_ps, g[3].paused_ps) << c;  // every class held alike
    EXPECT_EQ(global.host0_class_paused_now[c], global.host0_paused_now) << c;
  }
  EXPECT_EQ(global.host0.paused_ps, g[3].paused_ps);
  // PFC: priority 3 alone, and the port total is its time.
  EXPECT_GT(pfc.host0.classes[3].paused_ps, 0);
  EXPECT_EQ(pfc.host0.classes[0].paused_ps, 0);
  EXPECT_EQ(pfc.host0_class_paused_now[0], 0);
  EXPECT_EQ(pfc.host0.paused_ps, pfc.host0.classes[3].paused_ps);
}

}  // namespace
}  // namespace lossless::fabric
