// PFC watchdog (docs/model/pfc.md#watchdog), stalled-NIC pause storms and NIC
// PFC stall prevention (docs/model/pfc.md#pause-storms-and-stalled-nics), explicit routes.
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"

namespace lossless::fabric {
namespace {

constexpr int64_t kUs = 1'000'000, kMs = 1'000'000'000;

NetworkConfig PfcConfigFor(Time delay) {
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.sw.latency = Time::Ns(300);
  cfg.nic.ect = false;
  cfg.pfc.enabled = true;
  // Enough headroom for what is in flight after XOFF at 400G (docs/model/pfc.md#headroom terms).
  cfg.pfc.headroom =
      units::Bytes(3 * cfg.framing.WireBytes(4096) + 84 +
                   units::BytesInTime(delay * 2 + cfg.sw.latency, Rate::Gbps(400)).count());
  cfg.stop_when_flows_done = false;
  return cfg;
}

// PfcConfigFor plus the watchdog scaled down 100x from Juniper's defaults:
// poll 1 ms on one grid (polls at 1, 2, 3 ... ms), 2 stalled polls, 2 ms restore.
NetworkConfig WatchdogConfigFor(Time delay) {
  NetworkConfig cfg = PfcConfigFor(delay);
  cfg.pfc.watchdog.enabled = true;
  cfg.pfc.watchdog.poll = Time::Ms(1);
  cfg.pfc.watchdog.detect_polls = 2;
  cfg.pfc.watchdog.restore = Time::Ms(2);
  cfg.pfc.watchdog.stagger = false;
  return cfg;
}

// Data packets a port starts, with their start times.
struct Starts {
  uint32_t port = 0;
  std::vector<int64_t> at;
  static void Fn(void* ctx, uint32_t p, const Packet& pk, Time start) {
    auto* s = static_cast<Starts*>(ctx);
    if (p == s->port && pk.kind == PacketKind::kData) s->at.push_back(start.ps());
  }
  bool AnyIn(int64_t lo, int64_t hi) const {  // [lo, hi)
    for (int64_t t : at)
      if (t >= lo && t < hi) return true;
    return false;
  }
};

// A lossless queue that holds packets and sends none because a strict class
// takes the whole link is starved, not stalled by PFC: the watchdog's rule
// asks for the queue to have been paused for 99 % of the interval, so it must
// leave it alone. Host 0 sends on lossless class 3 into leaf0 -> host1 while
// hosts 2 and 3 send on the strict class 6 at twice the egress rate (the
// class-6 queue is never empty).
TEST(PfcWatchdog, StarvedButNotPausedQueueIsLeftAlone) {
  sim::Simulator sim(1);
  const Time delay = Time::Ns(500);
  auto topo = testing::LsRing(4, 4, 1, Rate::Gbps(400), delay);  // one leaf, four hosts
  NetworkConfig cfg = WatchdogConfigFor(delay);
  Network net(sim, topo, cfg);
  const uint32_t egress = net.PortPeer(net.HostPort(1));  // leaf0 -> host1
  Starts st{egress, {}};
  net.set_tx_trace(&Starts::Fn, &st);
  net.AddFlow(FlowSpec::Of(2, 1, int64_t{1} << 40, Time::Zero(), 6));
  net.AddFlow(FlowSpec::Of(3, 1, int64_t{1} << 40, Time::Zero(), 6));
  net.AddFlow(FlowSpec::Of(0, 1, int64_t{1} << 40, Time::Us(10), 3));
  sim.Run(Time::Ms(6));
  const PortStats s = net.port_stats(egress);
  // The class-3 queue really is starved: packets queued, none sent, never paused.
  EXPECT_GT(s.classes[6].drops, 0u);  // class 6 is offered twice the link
  EXPECT_EQ(s.classes[3].paused_ps, 0);
  EXPECT_EQ(s.pause_rx, 0u);
  EXPECT_EQ(net.flows()[2].recv_bytes, 0);
  EXPECT_GT(net.flows()[2].sent_bytes, 0);
  EXPECT_EQ(s.wd_actions, 0u);
  EXPECT_EQ(s.wd_drops, 0u);
}

// One egress queue (leaf0 -> host1) held paused by PAUSE frames from t = 0.5 ms
// on, refreshed every 40 us (65,535 quanta last 83.9 us at 400G). Poll 1 ms, 2
// polls, restore 2 ms: the intervals [1, 2] and [2, 3] ms are stalled, so the
// watchdog acts at exactly 3 ms; nothing leaves the queue during the restore
// period (it drops its arrivals); from 5 ms PAUSE is honoured again, so the
// next refresh holds the queue, it stalls again over [6, 7] and [7, 8] and the
// watchdog acts a second time at 8 ms (the restore end at 5 ms leaves no full
// interval before 6 ms).
TEST(PfcWatchdog, DetectsAfterTwoStalledPollsAndRestoresOnTime) {
  sim::Simulator sim(1);
  const Time delay = Time::Ns(500);
  auto topo = testing::LsRing(2, 2, 1, Rate::Gbps(400), delay);
  NetworkConfig cfg = WatchdogConfigFor(delay);  // polls at 1, 2, 3 ... ms
  Network net(sim, topo, cfg);
  const uint32_t egress = net.PortPeer(net.HostPort(1));  // leaf0 -> host1
  Starts st{egress, {}};
  net.set_tx_trace(&Starts::Fn, &st);
  net.AddFlow(FlowSpec::Of(0, 1, int64_t{1} << 40, Time::Zero(), 3));
  std::vector<std::pair<int64_t, PortStats>> snap;
  for (int64_t t = kMs / 2; t <= 9 * kMs; t += 40 * kUs) {
    sim.Run(Time::Ps(t));
    net.ReceivePause(egress, 1u << 3, 0xFFFF);
    snap.emplace_back(t, net.port_stats(egress));
  }
  const PortStats& s = net.port_stats(egress);
  EXPECT_EQ(s.wd_first_action_ps, 3 * kMs);
  EXPECT_EQ(s.wd_actions, 2u);
  EXPECT_EQ(s.lossless_drops, 0u);
  EXPECT_GT(s.wd_drops, 0u);
  EXPECT_EQ(s.drops, s.wd_drops);
  EXPECT_EQ(s.classes[3].wd_drops, s.wd_drops);  // the queue's class
  auto at = [&](int64_t t) {                     // stats at the last snapshot at or before t
    PortStats out;
    for (const auto& [ts, ps] : snap)
      if (ts <= t) out = ps;
    return out;
  };
  EXPECT_EQ(at(3 * kMs - 1).wd_actions, 0u);
  EXPECT_EQ(at(8 * kMs - 1).wd_actions, 1u);
  EXPECT_EQ(at(8 * kMs + 40 * kUs).wd_actions, 2u);
  // Paused from 0.5 ms (after a frame in progress); the flushed queue sends
  // nothing while restoring. At 5 ms PFC is honoured again: the PAUSE
  // ignored last is not in force, so what arrived since goes out until the
  // next PAUSE (at most 40 us later), which holds the queue again.
  EXPECT_TRUE(st.AnyIn(0, kMs / 2));
  EXPECT_FALSE(st.AnyIn(kMs / 2 + kUs, 5 * kMs));
  EXPECT_TRUE(st.AnyIn(5 * kMs, 5 * kMs + 40 * kUs));
  EXPECT_FALSE(st.AnyIn(5 * kMs + 40 * kUs + kUs, 9 * kMs));
  // Arrivals were dropped during the restore period (drops grew in 3-5 ms).
  EXPECT_GT(at(5 * kMs - 40 * kUs).wd_drops, at(3 * kMs).wd_drops);
  // After the restore period the queue holds packets again without drops.
  EXPECT_EQ(at(8 * kMs - 1).wd_drops, at(5 * kMs + 40 * kUs).wd_drops);
}

// Global 802.3x pause: the same schedule for a queue of priority 0, which is
// not fabric.pfc.priority (3) but is held all the same by PAUSE frames that
// stop every class. The watchdog polls every class under global pause, so it
// flushes that queue at 3 ms and ignores PAUSE on it for the restore period;
// its drops are watchdog drops on class 0.
TEST(PfcWatchdog, GlobalPauseStallOfAnyClassIsDetectedAndFlushed) {
  sim::Simulator sim(1);
  const Time delay = Time::Ns(500);
  auto topo = testing::LsRing(2, 2, 1, Rate::Gbps(400), delay);
  NetworkConfig cfg = PfcConfigFor(delay);
  cfg.pfc.global = true;
  cfg.pfc.watchdog.enabled = true;
  cfg.pfc.watchdog.poll = Time::Ms(1);
  cfg.pfc.watchdog.detect_polls = 2;
  cfg.pfc.watchdog.restore = Time::Ms(2);
  cfg.pfc.watchdog.stagger = false;
  Network net(sim, topo, cfg);
  const uint32_t egress = net.PortPeer(net.HostPort(1));  // leaf0 -> host1
  Starts st{egress, {}};
  net.set_tx_trace(&Starts::Fn, &st);
  net.AddFlow(FlowSpec::Of(0, 1, int64_t{1} << 40, Time::Zero(), 0));
  for (int64_t t = kMs / 2; t <= 4 * kMs; t += 40 * kUs) {
    sim.Run(Time::Ps(t));
    net.ReceivePause(egress, 0xFF, 0xFFFF);
  }
  const PortStats& s = net.port_stats(egress);
  EXPECT_EQ(s.wd_first_action_ps, 3 * kMs);
  EXPECT_EQ(s.wd_actions, 1u);
  EXPECT_EQ(s.lossless_drops, 0u);
  EXPECT_GT(s.wd_drops, 0u);
  EXPECT_EQ(s.drops, s.wd_drops);
  EXPECT_EQ(s.classes[0].drops, s.drops);
  EXPECT_EQ(s.classes[0].wd_drops, s.wd_drops);
  // Held from 0.5 ms; nothing leaves during the restore period either.
  EXPECT_TRUE(st.AnyIn(0, kMs / 2));
  EXPECT_FALSE(st.AnyIn(kMs / 2 + kUs, 4 * kMs));
  // Priority 0 was paused from 0.5 ms to the action, then PAUSE was ignored.
  EXPECT_GE(s.classes[0].paused_ps, 5 * kMs / 2 - 2 * kUs);
  EXPECT_LE(s.classes[0].paused_ps, 5 * kMs / 2);
}

// A queue that is paused but still gets frames out (PAUSE refreshed only
// after it expires, leaving short gaps) is never stalled: it transmits.
TEST(PfcWatchdog, QueueThatStillSendsIsNotStalled) {
  sim::Simulator sim(1);
  const Time delay = Time::Ns(500);
  auto topo = testing::LsRing(2, 2, 1, Rate::Gbps(400), delay);
  NetworkConfig cfg = PfcConfigFor(delay);
  cfg.pfc.watchdog.enabled = true;
  cfg.pfc.watchdog.poll = Time::Ms(1);
  cfg.pfc.watchdog.restore = Time::Ms(2);
  Network net(sim, topo, cfg);
  const uint32_t egress = net.PortPeer(net.HostPort(1));
  net.AddFlow(FlowSpec::Of(0, 1, int64_t{1} << 40, Time::Zero(), 3));
  for (int64_t t = kMs / 2; t <= 6 * kMs; t += 85 * kUs) {  // pause lasts 83.9 us
    sim.Run(Time::Ps(t));
    net.ReceivePause(egress, 1u << 3, 0xFFFF);
  }
  EXPECT_EQ(net.port_stats(egress).wd_actions, 0u);
  EXPECT_EQ(net.drops(), 0u);
}

// The watchdog is off by default: a queue paused for good stays paused.
TEST(PfcWatchdog, OffByDefault) {
  sim::Simulator sim(1);
  const Time delay = Time::Ns(500);
  auto topo = testing::LsRing(2, 2, 1, Rate::Gbps(400), delay);
  Network net(sim, topo, PfcConfigFor(delay));
  const uint32_t egress = net.PortPeer(net.HostPort(1));
  net.AddFlow(FlowSpec::Of(0, 1, int64_t{1} << 40, Time::Zero(), 3));
  for (int64_t t = kMs / 2; t <= 5 * kMs; t += 40 * kUs) {
    sim.Run(Time::Ps(t));
    net.ReceivePause(egress, 1u << 3, 0xFFFF);
  }
  EXPECT_EQ(net.port_stats(egress).wd_actions, 0u);
  EXPECT_EQ(net.drops(), 0u);
}

// Stalled NIC (docs/model/pfc.md#pause-storms-and-stalled-nics): host0's receive pipeline stops at
// 100 us. Hosts 1 (same leaf) and 2 (other leaf, through the spine) send to it.
struct Storm {
  Time timeout = Time::Ms(1);
  Time until = Time::Max();
  Time horizon = Time::Ms(4);
  bool watchdog = false;  // switch watchdog, poll 1 ms, restore 2 ms, aligned timers
  std::vector<std::pair<int64_t, std::vector<PortStats>>> snap;
  std::vector<FlowStats> flows;
  uint64_t drops = 0;
  uint32_t host0 = 0, host2 = 0, leaf0_up = 0, spine_to_leaf1 = 0, leaf0_down = 0;

  void Run() {
    sim::Simulator sim(1);
    const Time delay = Time::Ns(500);
    auto topo = testing::LsRing(4, 2, 1, Rate::Gbps(400), delay);
    NetworkConfig cfg = PfcConfigFor(delay);
    cfg.nic.pause_storm_timeout = timeout;
    cfg.pfc.watchdog.enabled = watchdog;
    cfg.pfc.watchdog.poll = Time::Ms(1);
    cfg.pfc.watchdog.restore = Time::Ms(2);
    cfg.pfc.watchdog.stagger = false;
    Network net(sim, topo, cfg);
    host0 = net.HostPort(0);
    host2 = net.HostPort(2);
    leaf0_down = net.PortPeer(host0);  // leaf0 -> host0
    for (uint32_t p = 0; p < net.num_ports(); ++p) {
      if (net.PortName(p) == "leaf0->spine0") leaf0_up = p;
      if (net.PortName(p) == "spine0->leaf1") spine_to_leaf1 = p;
    }
    net.AddFlow(FlowSpec::Of(1, 0, int64_t{1} << 40, Time::Zero(), 3));
    net.AddFlow(FlowSpec::Of(2, 0, int64_t{1} << 40, Time::Zero(), 3));
    net.StallNicReceive(0, Time::Us(100), until);
    for (int64_t t = 10 * kUs; t <= horizon.ps(); t += 10 * kUs) {
      sim.Run(Time::Ps(t));
      std::vector<PortStats> all;
      for (uint32_t p = 0; p < net.num_ports(); ++p) all.push_back(net.port_stats(p));
      snap.emplace_back(t, std::move(all));
    }
    flows = net.flows();
    drops = net.drops();
  }
  const std::vector<PortStats>& At(int64_t t) const {  // last snapshot at or before t
    const std::vector<PortStats>* out = &snap.front().second;
    for (const auto& [ts, all] : snap)
      if (ts <= t) out = &all;
    return *out;
  }
};

// Without prevention the storm spreads switch by switch: the NIC pauses
// leaf0, leaf0 pauses the spine, the spine pauses leaf1, and leaf1 pauses
// host2, which sends nothing to the stalled host for good. Nothing is dropped.
TEST(NicPauseStorm, StalledNicPauseSpreadsHopByHop) {
  Storm s;
  s.timeout = Time::Zero();  // prevention off
  s.Run();
  const auto& end = s.At(s.horizon.ps());
  const auto& early = s.At(100 * kUs);
  EXPECT_EQ(early[s.host0].pause_tx, 0u);
  EXPECT_GT(end[s.host0].pause_tx, 1u);           // XOFF and refreshes from the NIC
  EXPECT_GT(end[s.leaf0_up].pause_tx, 0u);        // leaf0 pauses the spine (hop 1)
  EXPECT_GT(end[s.spine_to_leaf1].pause_tx, 0u);  // the spine pauses leaf1 (hop 2)
  EXPECT_GT(end[s.host2].pause_rx, 0u);           // leaf1 pauses host2 (hop 3)
  EXPECT_EQ(end[s.host0].pause_storm_errors, 0u);
  EXPECT_EQ(s.drops, 0u);
  // Frozen: host2's flow sent nothing in the last millisecond.
  EXPECT_EQ(s.At(s.horizon.ps())[s.host2].tx_packets,
            s.At(s.horizon.ps() - kMs)[s.host2].tx_packets);
  // Still paused in the end: the NIC keeps refreshing its XOFF.
  EXPECT_GT(end[s.host0].pause_tx, s.At(s.horizon.ps() - kMs)[s.host0].pause_tx);
}

// With prevention (timeout 1 ms) the NIC warns at 85 % of the timeout, stops
// sending PAUSE once stuck for the timeout (its first held packet arrives
// within one frame time, 84 ns at 400G, of the stall), the upstream pause
// expires, packets for the stalled NIC are dropped at the NIC and the rest of
// the fabric flows again.
TEST(NicPauseStorm, StallPreventionStopsPauseAfterTimeout) {
  Storm s;
  s.Run();
  const int64_t stall = 100 * kUs, timeout = kMs;
  EXPECT_EQ(s.At(stall + timeout * 85 / 100 - 10 * kUs)[s.host0].pause_storm_warnings, 0u);
  EXPECT_EQ(s.At(stall + timeout * 85 / 100 + 10 * kUs)[s.host0].pause_storm_warnings, 1u);
  EXPECT_EQ(s.At(stall + timeout - 10 * kUs)[s.host0].pause_storm_errors, 0u);
  EXPECT_EQ(s.At(stall + timeout + 10 * kUs)[s.host0].pause_storm_errors, 1u);
  EXPECT_GT(s.At(stall + timeout - 10 * kUs)[s.leaf0_up].pause_tx, 0u);  // it had spread
  // No PAUSE from the NIC after the timeout.
  const uint64_t at_stop = s.At(stall + timeout + 10 * kUs)[s.host0].pause_tx;
  EXPECT_EQ(s.At(s.horizon.ps())[s.host0].pause_tx, at_stop);
  // Once the last XOFF's 83.9 us run out, leaf0 sends to the NIC, which drops.
  const int64_t clear = stall + timeout + 84 * kUs + 10 * kUs;
  EXPECT_GT(s.At(s.horizon.ps())[s.leaf0_down].tx_packets, s.At(clear)[s.leaf0_down].tx_packets);
  EXPECT_GT(s.At(s.horizon.ps())[s.host0].rx_stall_drops, 0u);
  // And host2 sends again.
  EXPECT_GT(s.At(s.horizon.ps())[s.host2].tx_packets, s.At(clear + kMs)[s.host2].tx_packets);
  EXPECT_EQ(s.At(s.horizon.ps())[s.host0].pause_storm_errors, 1u);
}

// A stall that ends before the timeout: held packets are consumed, XON is
// sent and nothing is lost.
TEST(NicPauseStorm, StallThatEndsReleasesEverything) {
  Storm s;
  s.until = Time::Us(600);
  s.Run();
  EXPECT_EQ(s.drops, 0u);
  EXPECT_EQ(s.At(s.horizon.ps())[s.host0].pause_storm_errors, 0u);
  EXPECT_GT(s.At(600 * kUs)[s.host0].pause_tx, 0u);
  // Both flows deliver after the stall.
  for (const auto& f : s.flows) EXPECT_GT(f.recv_bytes, 0);
  EXPECT_GT(s.At(s.horizon.ps())[s.host2].tx_packets, s.At(kMs)[s.host2].tx_packets);
}

// The switch watchdog is the other half of Guo et al.'s fix
// (docs/model/pfc.md#pause-storms-and-stalled-nics): with NIC prevention off, the leaf queue toward
// the stalled NIC (held by its PAUSE from ~0.1 ms) is stalled over [1, 2] and [2, 3] ms, so the
// leaf flushes it at 3 ms; its drops free the leaf's buffers and the storm recedes.
TEST(NicPauseStorm, SwitchWatchdogFlushesQueueTowardStalledNic) {
  Storm s;
  s.timeout = Time::Zero();
  s.watchdog = true;
  s.Run();
  const auto& end = s.At(s.horizon.ps());
  EXPECT_EQ(end[s.leaf0_down].wd_first_action_ps, 3 * kMs);
  EXPECT_GT(end[s.leaf0_down].wd_drops, 0u);
  EXPECT_EQ(end[s.leaf0_down].lossless_drops, 0u);
  // Host2's flow moves again after the action (its packets to host0 are then
  // dropped at leaf0 during the restore period).
  EXPECT_EQ(s.At(3 * kMs - 10 * kUs)[s.host2].tx_packets, s.At(2 * kMs)[s.host2].tx_packets);
  EXPECT_GT(s.At(4 * kMs)[s.host2].tx_packets, s.At(3 * kMs + 10 * kUs)[s.host2].tx_packets);
}

// Explicit routes are checked when the flow is added.
TEST(SourceRoute, RejectsRoutesThatDoNotConnect) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(4, 1, 2);  // host i on leaf i; leaves 4-7, spines 8-9 (nodes)
  Network net(sim, topo, NetworkConfig{});
  auto node = [&](const char* name) {
    for (uint32_t i = 0; i < topo.nodes.size(); ++i)
      if (topo.nodes[i].name == name) return i;
    return 0u;
  };
  FlowSpec f = FlowSpec::Of(0, 1, 4096);
  f.route = {{node("leaf1")}, {node("spine0")}, {node("leaf0")}};  // wrong start
  EXPECT_THROW(net.AddFlow(f), std::invalid_argument);
  f.route = {{node("leaf0")}, {node("leaf1")}};  // not linked
  EXPECT_THROW(net.AddFlow(f), std::invalid_argument);
  f.route = {{node("leaf0")}, {node("spine0")}, {node("leaf2")}};  // wrong end
  EXPECT_THROW(net.AddFlow(f), std::invalid_argument);
  f.route = {{node("leaf0")},
             {node("spine0")},
             {node("leaf0")},
             {node("spine1")},
             {node("leaf1")}};  // back over the leaf0 - spine0 link
  EXPECT_THROW(net.AddFlow(f), std::invalid_argument);
  EXPECT_EQ(net.flows().size(), 0u);
  f.route = {{node("leaf0")}, {node("spine1")}, {node("leaf2")}, {node("spine0")}, {node("leaf1")}};
  EXPECT_EQ(net.AddFlow(f), 0u);
}

// A routed flow takes exactly its hops (a non-minimal bounce here) and
// arrives; a class rewrite moves it to the new class from that switch on.
TEST(SourceRoute, FollowsHopsAndRewritesClass) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(4, 1, 2);
  Network net(sim, topo, NetworkConfig{});
  auto node = [&](const char* name) {
    for (uint32_t i = 0; i < topo.nodes.size(); ++i)
      if (topo.nodes[i].name == name) return i;
    return 0u;
  };
  struct Hop {
    std::string port;
    int tclass;
  };
  std::vector<Hop> hops;
  struct Ctx {
    Network* net;
    std::vector<Hop>* hops;
  } ctx{&net, &hops};
  net.set_tx_trace(
      [](void* c, uint32_t p, const Packet& pk, Time) {
        auto* x = static_cast<Ctx*>(c);
        if (pk.seq == 0 && pk.kind == PacketKind::kData)
          x->hops->push_back({x->net->PortName(p), pk.tclass});
      },
      &ctx);
  FlowSpec f = FlowSpec::Of(0, 1, 4096, Time::Zero(), 3);
  f.route = {
      {node("leaf0")}, {node("spine1")}, {node("leaf2"), 4}, {node("spine0")}, {node("leaf1")}};
  net.AddFlow(f);
  sim.Run(Time::Ms(1));
  ASSERT_TRUE(net.flows()[0].done());
  std::vector<std::string> ports;
  std::vector<int> classes;
  for (const auto& h : hops) {
    ports.push_back(h.port);
    classes.push_back(h.tclass);
  }
  EXPECT_EQ(ports, (std::vector<std::string>{"host0->leaf0", "leaf0->spine1", "spine1->leaf2",
                                             "leaf2->spine0", "spine0->leaf1", "leaf1->host1"}));
  EXPECT_EQ(classes, (std::vector<int>{3, 3, 3, 4, 4, 4}));
}

}  // namespace
}  // namespace lossless::fabric
