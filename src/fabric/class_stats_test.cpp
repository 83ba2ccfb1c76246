// Per-class (PFC priority / IB VL) port counters (PortStats::classes): a PAUSE
// on one priority shows only on that priority, a starved VL only on that VL,
// and the per-port totals equal the per-class sums.
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"

namespace lossless::fabric {
namespace {

// Sum identities: for every port, the totals of ecn_marks, cnp_tx, drops,
// lossless_drops, wd_drops, fcp_tx, fcp_rx, paused_ps and credit_starved_ps
// are the sums over classes; PAUSE frames
// count once per enabled class, so their class sums are at least the totals.
void ExpectTotalsAreClassSums(const Network& net) {
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const PortStats st = net.port_stats(p);
    ClassStats sum;
    int64_t paused_now = 0;
    for (int c = 0; c < kMaxClasses; ++c) {
      const ClassStats& cs = st.classes[static_cast<size_t>(c)];
      sum.pause_tx += cs.pause_tx;
      sum.pause_rx += cs.pause_rx;
      sum.paused_ps += cs.paused_ps;
      sum.credit_starved_ps += cs.credit_starved_ps;
      sum.ecn_marks += cs.ecn_marks;
      sum.cnp_tx += cs.cnp_tx;
      sum.drops += cs.drops;
      sum.lossless_drops += cs.lossless_drops;
      sum.wd_drops += cs.wd_drops;
      sum.fcp_tx += cs.fcp_tx;
      sum.fcp_rx += cs.fcp_rx;
      paused_now += net.PausedPsUntilNow(p, c);
    }
    EXPECT_EQ(sum.ecn_marks, st.ecn_marks) << net.PortName(p);
    EXPECT_EQ(sum.cnp_tx, st.cnp_tx) << net.PortName(p);
    EXPECT_EQ(sum.drops, st.drops) << net.PortName(p);
    EXPECT_EQ(sum.lossless_drops, st.lossless_drops) << net.PortName(p);
    EXPECT_EQ(sum.wd_drops, st.wd_drops) << net.PortName(p);
    EXPECT_EQ(sum.fcp_tx, st.fcp_tx) << net.PortName(p);
    EXPECT_EQ(sum.fcp_rx, st.fcp_rx) << net.PortName(p);
    EXPECT_EQ(sum.paused_ps, st.paused_ps) << net.PortName(p);
    EXPECT_EQ(paused_now, net.PausedPsUntilNow(p)) << net.PortName(p);
    EXPECT_EQ(sum.credit_starved_ps, st.credit_starved_ps) << net.PortName(p);
    EXPECT_GE(sum.pause_tx, st.pause_tx) << net.PortName(p);
    EXPECT_GE(sum.pause_rx, st.pause_rx) << net.PortName(p);
  }
}

// E1 setup (pfc_test.cpp): host A sends priority 3 backlogged and priority 0
// at 80 Gb/s, 400G, through one switch; both priorities are lossless here.
// A's own traffic never exceeds its link, so only the PFC frames the test
// delivers pause A.
TEST(ClassStats, PauseOnOnePriorityCountsOnlyThere) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(50));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.pfc.enabled = true;
  cfg.pfc.priorities = (1u << 0) | (1u << 3);
  cfg.stop_when_flows_done = false;
  Network net(sim, topo, cfg);
  const uint32_t a = net.HostPort(0);
  net.AddFlow(FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 3));
  FlowSpec low = FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 0);
  low.rate = units::Rate::Gbps(80);
  net.AddFlow(low);

  constexpr int64_t kTmax3 = 83'884'800;  // 65,535 quanta x 512 bit times at 400G
  constexpr int64_t kT0 = 12'800'000;     // 10,000 quanta at 400G
  sim.Run(Time::Us(10));
  net.ReceivePause(a, 1u << 3, 0xFFFF);
  sim.Run(Time::Us(11));  // 1 us into the pause
  EXPECT_EQ(net.PausedPsUntilNow(a, 3), 1'000'000);
  EXPECT_EQ(net.PausedPsUntilNow(a, 0), 0);
  EXPECT_EQ(net.port_stats(a).classes[3].paused_ps, kTmax3);  // in force up to its expiry
  sim.Run(Time::Us(120));
  net.ReceivePause(a, 1u << 0, 10'000);
  sim.Run(Time::Us(150));
  net.ReceivePause(a, (1u << 0) | (1u << 3), 0);  // one XON frame for both (nothing paused)
  sim.Run(Time::Us(200));

  const PortStats st = net.port_stats(a);
  EXPECT_EQ(st.pause_rx, 3u);  // frames
  EXPECT_EQ(st.classes[3].pause_rx, 2u);
  EXPECT_EQ(st.classes[0].pause_rx, 2u);
  EXPECT_EQ(st.classes[3].paused_ps, kTmax3);
  EXPECT_EQ(st.classes[0].paused_ps, kT0);
  EXPECT_EQ(net.PausedPsUntilNow(a, 3), kTmax3);
  EXPECT_EQ(net.PausedPsUntilNow(a, 0), kT0);
  EXPECT_EQ(st.paused_ps, kTmax3 + kT0);
  for (int c : {1, 2, 4, 5, 6, 7}) {
    EXPECT_EQ(st.classes[static_cast<size_t>(c)].pause_rx, 0u) << c;
    EXPECT_EQ(st.classes[static_cast<size_t>(c)].paused_ps, 0) << c;
  }
  ExpectTotalsAreClassSums(net);
}

// The single-class pause alone: class 3 carries everything, class 0 nothing.
TEST(ClassStats, PriorityThreeAloneLeavesPriorityZeroClean) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(50));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.pfc.enabled = true;
  cfg.pfc.priorities = (1u << 0) | (1u << 3);
  cfg.stop_when_flows_done = false;
  Network net(sim, topo, cfg);
  const uint32_t a = net.HostPort(0);
  net.AddFlow(FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 3));
  net.AddFlow(FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 0));
  sim.Run(Time::Us(10));
  net.ReceivePause(a, 1u << 3, 0xFFFF);
  sim.Run(Time::Us(200));
  const PortStats st = net.port_stats(a);
  EXPECT_EQ(st.classes[3].pause_rx, 1u);
  EXPECT_EQ(st.classes[3].paused_ps, 83'884'800);
  EXPECT_EQ(st.classes[0].pause_rx, 0u);
  EXPECT_EQ(st.classes[0].paused_ps, 0);
  ExpectTotalsAreClassSums(net);
}

// PFC incast with ECN and DCQCN: real XOFF/XON, marks, CNPs and the CNP class
// all at once; the sum identities hold on every port, and the switch sends
// PAUSE only on the lossless priority 3.
TEST(ClassStats, IncastTotalsAreClassSums) {
  sim::Simulator sim(3);
  auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(500));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.pfc.enabled = true;
  cfg.sw.ecn[3].enabled = true;
  cfg.dcqcn = true;
  Network net(sim, topo, cfg);
  for (uint32_t h = 1; h < 8; ++h) net.AddFlow(FlowSpec::Of(h, 0, 2'000'000, Time::Zero(), 3));
  sim.Run(Time::Ms(5));
  uint64_t pause_3 = 0, pause_other = 0, marks = 0, cnps_6 = 0;
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const PortStats st = net.port_stats(p);
    for (int c = 0; c < kMaxClasses; ++c) {
      (c == 3 ? pause_3 : pause_other) += st.classes[static_cast<size_t>(c)].pause_tx;
      if (c == 6) cnps_6 += st.classes[6].cnp_tx;
    }
    marks += st.classes[3].ecn_marks;
  }
  EXPECT_GT(pause_3, 0u);
  EXPECT_EQ(pause_other, 0u);
  EXPECT_GT(marks, 0u);
  EXPECT_GT(cnps_6, 0u);  // CNPs go on cnp_class 6
  ExpectTotalsAreClassSums(net);
}

// Lossy incast (no PFC) into a 1 MB buffer: the leaf port facing the target
// tail-drops, and the drops show on the flows' class only.
TEST(ClassStats, DropsCountOnTheDroppedClass) {
  sim::Simulator sim(5);
  auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(500));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.sw.buffer = units::Bytes(1 << 20);
  Network net(sim, topo, cfg);
  for (uint32_t h = 1; h < 8; ++h) net.AddFlow(FlowSpec::Of(h, 0, 1'000'000, Time::Zero(), 2));
  sim.Run(Time::Us(200));
  const PortStats st = net.port_stats(net.PortPeer(net.HostPort(0)));
  EXPECT_GT(st.drops, 0u);
  EXPECT_EQ(st.classes[2].drops, st.drops);
  ExpectTotalsAreClassSums(net);
}

// PFC incast with headroom far too small (one frame): the leaf port facing
// the target drops lossless priority-3 packets, counted on class 3 only, and
// there every drop is a lossless drop.
TEST(ClassStats, LosslessDropsCountOnTheDroppedClass) {
  sim::Simulator sim(5);
  auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(500));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.pfc.enabled = true;
  cfg.pfc.xoff = units::Bytes(20'000);
  cfg.pfc.headroom = units::Bytes(cfg.framing.WireBytes(4096));
  cfg.nic.ect = false;
  Network net(sim, topo, cfg);
  for (uint32_t h = 1; h < 8; ++h) net.AddFlow(FlowSpec::Of(h, 0, 1'000'000, Time::Zero(), 3));
  sim.Run(Time::Us(200));
  uint64_t lossless = 0;
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const PortStats st = net.port_stats(p);
    lossless += st.lossless_drops;
    EXPECT_EQ(st.classes[3].lossless_drops, st.lossless_drops) << net.PortName(p);
    EXPECT_EQ(st.classes[3].lossless_drops, st.drops) << net.PortName(p);
  }
  EXPECT_GT(lossless, 0u);
  ExpectTotalsAreClassSums(net);
}

NetworkConfig IbConfig() {
  NetworkConfig cfg;
  cfg.framing = Framing::InfiniBand(4096);
  cfg.nic.data_class = 0;
  cfg.ib.enabled = true;
  cfg.stop_when_flows_done = false;
  return cfg;
}

// IB: hosts 0 and 1 send to host 2 on VL 0 and VL 1. Host 2 grants VL 1 only
// 65 blocks (one 4096-B packet), so the switch port facing it waits for
// credits on VL 1 after every packet (a credit round trip is about 0.5 us,
// one packet time 82 ns); VL 0 keeps the full 2,048 blocks (131 KB, far
// above the 25 KB a 0.5 us round trip holds at 400G) and never waits there.
TEST(ClassStats, StarvedVlCountsOnlyOnThatVl) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(3, 3, 1, units::Rate::Gbps(400), Time::Ns(100));
  Network net(sim, topo, IbConfig());
  net.SetVlCredits(net.HostPort(2), 1, 65);
  net.AddFlow(FlowSpec::Of(0, 2, int64_t{1} << 40, Time::Zero(), 0));
  net.AddFlow(FlowSpec::Of(1, 2, int64_t{1} << 40, Time::Zero(), 1));
  sim.Run(Time::Us(50));
  const uint32_t out = net.PortPeer(net.HostPort(2));
  const PortStats st = net.port_stats(out);
  EXPECT_GT(st.classes[1].credit_starved_ps, Time::Us(25).ps());  // most of the 50 us
  for (int v : {0, 2, 3, 4, 5, 6, 7})
    EXPECT_EQ(st.classes[static_cast<size_t>(v)].credit_starved_ps, 0) << v;
  EXPECT_EQ(st.credit_starved_ps, st.classes[1].credit_starved_ps);
  ExpectTotalsAreClassSums(net);
}

// IB: traffic on VL 1 only (host 0 -> host 2). The credits host 2 returns to
// the switch, and the switch to host 0, travel in FCPs of VL 1: they count
// on VL 1 only, sent at the receiver's port and received at the sender's.
TEST(ClassStats, FcpsCountOnTheirVl) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(3, 3, 1, units::Rate::Gbps(400), Time::Ns(100));
  Network net(sim, topo, IbConfig());
  net.AddFlow(FlowSpec::Of(0, 2, int64_t{1} << 40, Time::Zero(), 1));
  sim.Run(Time::Us(20));
  const PortStats h2 = net.port_stats(net.HostPort(2));  // returns credits to the switch
  const PortStats out = net.port_stats(net.PortPeer(net.HostPort(2)));
  const PortStats in = net.port_stats(net.PortPeer(net.HostPort(0)));  // returns credits to host 0
  const PortStats h0 = net.port_stats(net.HostPort(0));
  EXPECT_GT(h2.fcp_tx, 10u);
  EXPECT_GT(in.fcp_tx, 10u);
  EXPECT_EQ(h2.classes[1].fcp_tx, h2.fcp_tx);
  EXPECT_EQ(in.classes[1].fcp_tx, in.fcp_tx);
  EXPECT_GT(out.classes[1].fcp_rx, 0u);
  EXPECT_EQ(out.classes[1].fcp_rx, out.fcp_rx);
  EXPECT_GT(h0.classes[1].fcp_rx, 0u);
  EXPECT_EQ(h0.classes[1].fcp_rx, h0.fcp_rx);
  for (const PortStats* st : {&h2, &out, &in, &h0})
    for (int v : {0, 2, 3, 4, 5, 6, 7}) {
      EXPECT_EQ(st->classes[static_cast<size_t>(v)].fcp_tx, 0u) << v;
      EXPECT_EQ(st->classes[static_cast<size_t>(v)].fcp_rx, 0u) << v;
    }
  ExpectTotalsAreClassSums(net);
}

}  // namespace
}  // namespace lossless::fabric
