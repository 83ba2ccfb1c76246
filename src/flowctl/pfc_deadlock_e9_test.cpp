// Reference experiment E9 (shared/reference/experiments.md): PFC deadlock on
// a cyclic buffer dependency, PFC watchdog recovery, and the two controls
// (up-down routing, Tagger-style priority change at the bounce). Fast tier:
// watchdog times scaled by 1/100 as E9 allows. Also checks the online
// deadlock detector on the same runs.
#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "flowctl/deadlock_detector.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::flowctl {
namespace {

using fabric::FlowSpec;
using fabric::Network;
using fabric::NetworkConfig;
using fabric::Packet;
using fabric::PacketKind;
using fabric::RouteHop;
using units::Rate;
using units::Time;

constexpr int64_t kMs = 1'000'000'000;

enum class Routes { kBounce, kUpDown, kTagger };

// E9 setup: ToRs T0-T3 are leaf0-3, leaves L0/L1 are spine0/1; host Hi on Ti.
// 100G, 500 ns, switch latency 300 ns; 12 MB per switch, alpha 1/8; PFC on
// priority 3 (and 4 for Tagger); 4096-B payload; no ECN, no CC; every flow
// offered at line rate from t = 0, unlimited.
struct E9 {
  Routes routes = Routes::kBounce;
  uint64_t seed = 1;
  Time horizon = Time::Ms(60);
  bool watchdog = false;
  Time wd_poll = Time::Ms(1);  // 1/100 of Juniper's 100 ms
  Time wd_restore = Time::Ms(2);
  Time step = Time::Us(100);  // sampling of counters

  // Results.
  std::map<std::string, uint32_t> port;  // "leaf0->spine0" -> port id
  std::vector<uint32_t> cycle;           // T0->L0, L0->T1, T1->L1, L1->T0
  int64_t t_f = -1;                      // start of the first >= 1 ms idle interval
  int64_t last_cycle_start = -1;         // last priority-3 transmission start on the cycle
  int64_t max_end = 0;
  // Per (port, class): last data transmission end, and the longest idle gap
  // between the first transmission and the end of the run.
  std::map<std::pair<uint32_t, int>, int64_t> last_end;
  std::map<std::pair<uint32_t, int>, int64_t> max_gap;
  std::array<int64_t, 4> last_delivery{-1, -1, -1, -1};  // per flow, arrival at the host
  std::array<std::vector<int64_t>, 4> delivered;         // per flow, payload per 1 ms bin
  std::vector<int64_t> first_tx_after;                   // helper for watchdog checks
  struct Sample {
    int64_t t;
    uint64_t drops;
    int64_t cycle_paused_ps;
  };
  std::vector<Sample> samples;
  int64_t t_w = -1;
  uint64_t wd_actions = 0, wd_drops = 0, drops = 0, lossless_drops = 0;
  std::optional<DeadlockVerdict> verdict;
  uint64_t deadlocks = 0;
  std::vector<std::pair<int64_t, int64_t>> cycle_tx;  // (start, end) after t_w candidates
  Network* net = nullptr;

  static void Trace(void* ctx, uint32_t p, const Packet& pk, Time start) {
    auto& e = *static_cast<E9*>(ctx);
    if (pk.kind != PacketKind::kData) return;
    const int64_t s = start.ps();
    const int64_t end = s + static_cast<int64_t>(pk.wire) * 80;  // 100 Gb/s: 80 ps per byte
    auto key = std::make_pair(p, static_cast<int>(pk.tclass));
    auto it = e.last_end.find(key);
    if (it != e.last_end.end()) {
      e.max_gap[key] = std::max(e.max_gap[key], s - it->second);
      it->second = std::max(it->second, end);
    } else {
      e.last_end[key] = end;
      e.max_gap[key] = 0;
    }
    if (pk.tclass == 3 && std::find(e.cycle.begin(), e.cycle.end(), p) != e.cycle.end()) {
      if (e.t_f < 0 && e.max_end > 0 && s - e.max_end >= kMs) e.t_f = e.max_end;
      e.max_end = std::max(e.max_end, end);
      e.last_cycle_start = s;
      e.cycle_tx.emplace_back(s, end);
    }
    // Deliveries: a ToR's port toward its host.
    const uint32_t peer_node = e.net->PortNode(e.net->PortPeer(p));
    if (e.net->topology().nodes[peer_node].kind == topology::NodeKind::kHost) {
      const int64_t arrival = end + 500'000;
      e.last_delivery[pk.flow] = std::max(e.last_delivery[pk.flow], arrival);
      auto& bins = e.delivered[pk.flow];
      const size_t bin = static_cast<size_t>(arrival / kMs);
      if (bins.size() <= bin) bins.resize(bin + 1, 0);
      bins[bin] += pk.payload;
    }
  }

  void Run() {
    sim::Simulator sim(seed);
    auto topo =
        topology::BuildLsRing(4, 1, 2, Rate::Gbps(100), Time::Ns(500), {"<E9>", 0, "topology"});
    NetworkConfig cfg;
    cfg.framing = fabric::Framing::RoceV2(4096);
    cfg.sw.latency = Time::Ns(300);
    cfg.sw.buffer_bytes = 12'000'000;
    cfg.sw.alpha = 1.0 / 8;
    cfg.nic.ect = false;
    cfg.pfc.enabled = true;
    cfg.pfc.priorities = routes == Routes::kTagger ? (1u << 3 | 1u << 4) : 1u << 3;
    // 802.3 response bound at 100GbE: 201,728 bit times (fabric.md §2.2).
    cfg.pfc.response = Time::Ps(201'728 * 10);
    // Headroom per fabric.md §2.4 as the scenario loader sizes it (two frames
    // + the one crossing XOFF, the PAUSE frame, cable both ways, response,
    // switch pipeline).
    const int64_t wire = cfg.framing.WireBytes(4096);
    cfg.pfc.headroom_bytes =
        3 * wire + 84 +
        units::BytesInTime(Time::Ns(1000) + cfg.pfc.response + cfg.sw.latency, Rate::Gbps(100))
            .count();
    cfg.pfc.watchdog.enabled = watchdog;
    cfg.pfc.watchdog.poll = wd_poll;
    cfg.pfc.watchdog.restore = wd_restore;
    cfg.stop_when_flows_done = false;
    Network n(sim, topo, cfg);
    net = &n;
    for (uint32_t p = 0; p < n.num_ports(); ++p) port[n.PortName(p)] = p;
    cycle = {port.at("leaf0->spine0"), port.at("spine0->leaf1"), port.at("leaf1->spine1"),
             port.at("spine1->leaf0")};
    DeadlockDetector detector(sim, n, Time::Ms(1), /*stop_run=*/false);
    n.set_tx_trace(&E9::Trace, this);
    auto node = [&](const std::string& name) {
      for (uint32_t i = 0; i < topo.nodes.size(); ++i)
        if (topo.nodes[i].name == name) return i;
      ADD_FAILURE() << name;
      return 0u;
    };
    auto flow = [&](uint32_t src, uint32_t dst, std::vector<std::pair<std::string, int>> hops) {
      FlowSpec f = FlowSpec::Of(src, dst, int64_t{1} << 50, Time::Zero(), 3);
      for (auto& [name, cls] : hops) f.route.push_back(RouteHop{node(name), cls});
      n.AddFlow(f);
    };
    const int tag = routes == Routes::kTagger ? 4 : -1;
    flow(0, 1, {{"leaf0", -1}, {"spine0", -1}, {"leaf1", -1}});  // C
    flow(1, 0, {{"leaf1", -1}, {"spine1", -1}, {"leaf0", -1}});  // D
    if (routes == Routes::kUpDown) {
      flow(2, 3, {{"leaf2", -1}, {"spine0", -1}, {"leaf3", -1}});  // A
      flow(3, 2, {{"leaf3", -1}, {"spine1", -1}, {"leaf2", -1}});  // B
    } else {
      flow(2, 3, {{"leaf2", -1}, {"spine0", -1}, {"leaf1", tag}, {"spine1", -1}, {"leaf3", -1}});
      flow(3, 2, {{"leaf3", -1}, {"spine1", -1}, {"leaf0", tag}, {"spine0", -1}, {"leaf2", -1}});
    }
    for (Time t = step; t <= horizon; t += step) {
      sim.Run(t);
      Sample s{t.ps(), n.drops(), 0};
      for (uint32_t p : cycle) s.cycle_paused_ps += n.port_stats(p).paused_ps;
      samples.push_back(s);
    }
    if (t_f < 0 && max_end > 0 && horizon.ps() - max_end >= kMs) t_f = max_end;
    for (auto& [key, end] : last_end) max_gap[key] = std::max(max_gap[key], horizon.ps() - end);
    drops = n.drops();
    for (uint32_t p = 0; p < n.num_ports(); ++p) {
      const auto& st = n.port_stats(p);
      wd_actions += st.wd_actions;
      wd_drops += st.wd_drops;
      lossless_drops += st.lossless_drops;
      if (st.wd_first_action_ps >= 0 && (t_w < 0 || st.wd_first_action_ps < t_w))
        t_w = st.wd_first_action_ps;
    }
    verdict = detector.first();
    deadlocks = detector.count();
    net = nullptr;
  }
};

std::vector<std::string> Rotated(std::vector<std::string> v, const std::string& first) {
  auto it = std::find(v.begin(), v.end(), first);
  if (it != v.end()) std::rotate(v.begin(), it, v.end());
  return v;
}

// Run 1: no watchdog, 60 ms. The cycle freezes for good within 10 ms: no
// priority-3 byte on the four cycle links after t_f, no drops, no delivery
// after t_f + 1 ms. The online detector reports the cycle of the four
// cycle-link buffers (at L0, T1, L1, T0) once, within 1 ms of persistence.
TEST(RefE9_PfcDeadlockWatchdog, Run1_NoWatchdogDeadlocksForGood) {
  E9 e;
  e.Run();
  ASSERT_GE(e.t_f, 0) << "no 1 ms interval without priority-3 bytes on the cycle";
  std::cout << "E9 run 1: t_f = " << static_cast<double>(e.t_f) / kMs << " ms\n";
  EXPECT_LE(e.t_f, 10 * kMs);
  EXPECT_LE(e.last_cycle_start, e.t_f);  // nothing on the cycle links from t_f to the end
  EXPECT_EQ(e.drops, 0u);
  for (int f = 0; f < 4; ++f) EXPECT_LE(e.last_delivery[f], e.t_f + kMs) << "flow " << f;

  ASSERT_TRUE(e.verdict.has_value());
  EXPECT_EQ(e.deadlocks, 1u);
  // Buffers in wait order: T1's from L0 holds A for T1->L1, whose peer L1's
  // buffer from T1 holds D for L1->T0, and so on round the cycle.
  const std::vector<std::string> want = {"leaf1:spine0:3", "spine1:leaf1:3", "leaf0:spine1:3",
                                         "spine0:leaf0:3"};
  EXPECT_EQ(Rotated(e.verdict->labels, want.front()), want)
      << DeadlockDetector::CycleText(*e.verdict);
  // The cycle links are idle from t_f on only because every cycle buffer is
  // held above XOFF, so the cycle is closed by t_f + 1 ms and confirmed 1 ms later.
  EXPECT_LE(e.verdict->formed.ps(), e.t_f + kMs);
  EXPECT_EQ(e.verdict->detected, e.verdict->formed + Time::Ms(1));
}

// Run 2, fast tier: watchdog with poll 1 ms, 2 stalled polls, restore 2 ms.
// t_w in [t_f + 2 ms, t_f + 3 ms]; no drops before t_w (every drop is a
// watchdog drop), drops after; the cycle links carry priority-3 bytes again
// within 10 ms of t_w; PFC is honoured again after the restore period.
TEST(RefE9_PfcDeadlockWatchdog, Run2_WatchdogBreaksDeadlockOnSchedule) {
  E9 e;
  e.watchdog = true;
  e.horizon = Time::Ms(30);
  e.Run();
  ASSERT_GE(e.t_f, 0);
  ASSERT_GE(e.t_w, 0) << "watchdog never acted";
  std::cout << "E9 run 2 (1/100 timers): t_f = " << static_cast<double>(e.t_f) / kMs
            << " ms, t_w = " << static_cast<double>(e.t_w) / kMs
            << " ms, watchdog actions = " << e.wd_actions
            << ", deadlocks detected = " << e.deadlocks << "\n";
  EXPECT_GE(e.t_w, e.t_f + 2 * kMs);
  EXPECT_LE(e.t_w, e.t_f + 3 * kMs);
  EXPECT_EQ(e.lossless_drops, 0u);
  EXPECT_EQ(e.drops, e.wd_drops);  // so none before t_w
  EXPECT_GT(e.wd_drops, 0u);
  for (const auto& s : e.samples) {
    if (s.t < e.t_w) {
      EXPECT_EQ(s.drops, 0u) << s.t;
    }
  }
  int64_t again = -1;
  for (auto [s, end] : e.cycle_tx) {
    if (s >= e.t_w) {
      again = s;
      break;
    }
  }
  ASSERT_GE(again, 0) << "cycle links never carried priority 3 again";
  EXPECT_LE(again, e.t_w + 10 * kMs);
  // Honoured again: the cycle ports accumulate paused time after t_w + restore.
  int64_t at_restore = -1, at_end = e.samples.back().cycle_paused_ps;
  for (const auto& s : e.samples)
    if (s.t >= e.t_w + 2 * kMs && at_restore < 0) at_restore = s.cycle_paused_ps;
  EXPECT_GT(at_end, at_restore);
}

void ExpectNoStall(const E9& e) {
  // Every (link, class) that carried traffic (all flows are unlimited, so
  // traffic stays queued for it) never idles 1 ms or more.
  for (const auto& [key, gap] : e.max_gap) {
    EXPECT_LT(gap, kMs) << "port " << key.first << " class " << key.second << " seed " << e.seed;
  }
  // Every flow delivers in every 1 ms bin after the first millisecond.
  for (int f = 0; f < 4; ++f) {
    const auto& bins = e.delivered[f];
    ASSERT_GE(bins.size(), static_cast<size_t>(e.horizon.ps() / kMs)) << "flow " << f;
    for (size_t b = 1; b < static_cast<size_t>(e.horizon.ps() / kMs); ++b)
      EXPECT_GT(bins[b], 0) << "flow " << f << " bin " << b << " seed " << e.seed;
  }
  EXPECT_EQ(e.drops, 0u);
  EXPECT_FALSE(e.verdict.has_value()) << DeadlockDetector::CycleText(*e.verdict);
}

// Run 3: control, up-down routes (A via T2->L0->T3, B via T3->L1->T2).
TEST(RefE9_PfcDeadlockWatchdog, Run3_UpDownRoutingNeverStalls) {
  for (uint64_t seed : {1, 2, 3}) {
    E9 e;
    e.routes = Routes::kUpDown;
    e.seed = seed;
    e.horizon = Time::Ms(50);
    e.Run();
    ExpectNoStall(e);
  }
}

// Run 4: control, bounce routes but A moves to lossless priority 4 leaving
// T1 towards L1, B leaving T0 towards L0 (Tagger-style).
TEST(RefE9_PfcDeadlockWatchdog, Run4_PriorityChangeAtBounceNeverStalls) {
  for (uint64_t seed : {1, 2, 3}) {
    E9 e;
    e.routes = Routes::kTagger;
    e.seed = seed;
    e.horizon = Time::Ms(50);
    e.Run();
    ExpectNoStall(e);
    // A and B really travel on priority 4 after their bounce.
    EXPECT_TRUE(e.last_end.count({e.port.at("leaf1->spine1"), 4}));
    EXPECT_TRUE(e.last_end.count({e.port.at("leaf0->spine0"), 4}));
  }
}

}  // namespace
}  // namespace lossless::flowctl
