#pragma once
// Test harness of reference experiment E9 (shared/reference/experiments.md):
// the 2-tier Clos with bounce routes, traced so the tests can measure t_f
// (start of the first >= 1 ms interval without a priority-3 byte on the four
// cycle links), watchdog actions, deliveries and idle gaps. Shared by the
// fast tests (scaled watchdog timers) and the slow ones (real timers).
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "flowctl/deadlock_detector.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::flowctl::e9 {

using fabric::FlowSpec;
using fabric::Network;
using fabric::NetworkConfig;
using fabric::Packet;
using fabric::PacketKind;
using fabric::RouteHop;
using units::Rate;
using units::Time;

inline constexpr int64_t kMs = 1'000'000'000;

enum class Routes { kBounce, kUpDown, kTagger };

// E9 setup: ToRs T0-T3 are leaf0-3, leaves L0/L1 are spine0/1; host Hi on Ti.
// 100G, 500 ns, switch latency 300 ns; 12 MB per switch, alpha 1/8; PFC on
// priority 3 (and 4 for Tagger); 4096-B payload; no ECN, no CC; every flow
// offered at line rate from t = 0, unlimited.
struct E9Run {
  Routes routes = Routes::kBounce;
  uint64_t seed = 1;
  Time horizon = Time::Ms(60);
  bool watchdog = false;
  Time wd_poll = Time::Ms(1);  // 1/100 of Juniper's 100 ms
  Time wd_restore = Time::Ms(2);
  bool wd_stagger = true;
  // Run 5: offered rate per flow (0 = line rate) and start times jittered
  // uniformly in [0, start_jitter] from the seed.
  Rate offered;
  Time start_jitter;
  Time step = Time::Us(100);  // sampling of counters
  // Global 802.3x pause instead of PFC (fabric.pfc.priority stays 3), and
  // the classes flows C, D and A, B send on. Every class of these two is
  // traced as "priority 3" is in E9 (t_f, cycle_busy).
  bool global = false;
  int cd_class = 3, ab_class = 3;

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
  struct Sample {
    int64_t t;
    uint64_t drops;
    int64_t cycle_paused_ps;
    uint64_t lossless_drops = 0;  // all ports
  };
  std::vector<Sample> samples;
  int64_t t_w = -1;        // first watchdog action anywhere
  int64_t t_w_cycle = -1;  // first watchdog action on one of the four cycle queues
  uint64_t wd_actions = 0, wd_drops = 0, drops = 0, lossless_drops = 0;
  std::optional<DeadlockVerdict> verdict;
  uint64_t deadlocks = 0;
  uint64_t waits_seen = 0;  // wait edges the detector was told about
  // Busy intervals of the cycle links for priority 3 (overlapping
  // transmissions merged).
  std::vector<std::pair<int64_t, int64_t>> cycle_busy;
  Network* net = nullptr;

  static void Trace(void* ctx, uint32_t p, const Packet& pk, Time start) {
    auto& e = *static_cast<E9Run*>(ctx);
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
    const bool traced = pk.tclass == e.cd_class || pk.tclass == e.ab_class;
    if (traced && std::find(e.cycle.begin(), e.cycle.end(), p) != e.cycle.end()) {
      if (e.t_f < 0 && e.max_end > 0 && s - e.max_end >= kMs) e.t_f = e.max_end;
      e.max_end = std::max(e.max_end, end);
      e.last_cycle_start = s;
      if (!e.cycle_busy.empty() && s <= e.cycle_busy.back().second) {
        e.cycle_busy.back().second = std::max(e.cycle_busy.back().second, end);
      } else {
        e.cycle_busy.emplace_back(s, end);
      }
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
    cfg.pfc.global = global;
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
    cfg.pfc.watchdog.stagger = wd_stagger;
    cfg.stop_when_flows_done = false;
    Network n(sim, topo, cfg);
    net = &n;
    for (uint32_t p = 0; p < n.num_ports(); ++p) port[n.PortName(p)] = p;
    cycle = {port.at("leaf0->spine0"), port.at("spine0->leaf1"), port.at("leaf1->spine1"),
             port.at("spine1->leaf0")};
    DeadlockDetector detector(sim, n, Time::Ms(1), /*stop_run=*/false);
    n.set_tx_trace(&E9Run::Trace, this);
    auto node = [&](const std::string& name) {
      for (uint32_t i = 0; i < topo.nodes.size(); ++i)
        if (topo.nodes[i].name == name) return i;
      ADD_FAILURE() << name;
      return 0u;
    };
    auto flow = [&](uint32_t src, uint32_t dst, std::vector<std::pair<std::string, int>> hops) {
      const int tclass = src < 2 ? cd_class : ab_class;
      Time start;
      if (start_jitter.ps() > 0) {
        start = Time::Ps(static_cast<int64_t>(sim::Mix(seed, src, 0xE905) %
                                              static_cast<uint64_t>(start_jitter.ps() + 1)));
      }
      FlowSpec f = FlowSpec::Of(src, dst, int64_t{1} << 50, start, tclass);
      f.rate = offered;
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
      for (uint32_t p = 0; p < n.num_ports(); ++p)
        s.lossless_drops += n.port_stats(p).lossless_drops;
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
      const bool on_cycle = std::find(cycle.begin(), cycle.end(), p) != cycle.end();
      if (on_cycle && st.wd_first_action_ps >= 0 &&
          (t_w_cycle < 0 || st.wd_first_action_ps < t_w_cycle))
        t_w_cycle = st.wd_first_action_ps;
    }
    verdict = detector.first();
    deadlocks = detector.count();
    waits_seen = detector.waits_seen();
    net = nullptr;
  }
};

inline std::vector<std::string> Rotated(std::vector<std::string> v, const std::string& first) {
  auto it = std::find(v.begin(), v.end(), first);
  if (it != v.end()) std::rotate(v.begin(), it, v.end());
  return v;
}

// Start of the first busy interval of the cycle links that overlaps [lo, hi),
// or -1.
inline int64_t CycleBusyIn(const E9Run& e, int64_t lo, int64_t hi) {
  for (auto [a, b] : e.cycle_busy)
    if (b > lo && a < hi) return std::max(a, lo);
  return -1;
}

// E9 run 2 checks, for whatever poll P and restore R the run used: the first
// action t_w in [t_f + 2P, t_f + 3P]; no drops before t_w (every drop is a
// watchdog drop, none is a lossless drop), drops after; the cycle links carry
// priority-3 bytes again within [t, t + 10 ms]; PFC honoured again after
// t_w + R (the cycle ports are paused again later).
//
// t is t_w as E9 states it when `recovery_from_first_action`; otherwise t is
// the first action on a cycle queue, itself checked to lie in [t_f + 2P,
// t_f + 3P]. Why the second form exists: switches poll on their own phases,
// and the first queue to act can be off the cycle (T2->L0 or T3->L1, held
// behind it), whose flush does not free the cycle; and with aligned timers
// all four cycle queues are flushed at once and drop their arrivals for R,
// so the cycle links stay idle for R. With R = 200 ms (Juniper) neither case
// gives bytes within 10 ms of t_w, so E9's 10 ms bound only follows from its
// own watchdog rules when measured from the action that frees the cycle.
inline void ExpectWatchdogRecovery(const E9Run& e, bool recovery_from_first_action) {
  const int64_t p = e.wd_poll.ps(), r = e.wd_restore.ps();
  ASSERT_GE(e.t_f, 0) << "seed " << e.seed;
  ASSERT_GE(e.t_w, 0) << "watchdog never acted, seed " << e.seed;
  EXPECT_GE(e.t_w, e.t_f + 2 * p) << "seed " << e.seed;
  EXPECT_LE(e.t_w, e.t_f + 3 * p) << "seed " << e.seed;
  EXPECT_EQ(e.lossless_drops, 0u);
  EXPECT_EQ(e.drops, e.wd_drops);
  EXPECT_GT(e.wd_drops, 0u);
  for (const auto& s : e.samples) {
    if (s.t < e.t_w) {
      EXPECT_EQ(s.drops, 0u) << s.t;
    }
  }
  int64_t t = e.t_w;
  if (!recovery_from_first_action) {
    t = e.t_w_cycle;
    ASSERT_GE(t, 0) << "no watchdog action on the cycle, seed " << e.seed;
    EXPECT_GE(t, e.t_f + 2 * p) << "seed " << e.seed;
    EXPECT_LE(t, e.t_f + 3 * p) << "seed " << e.seed;
  }
  EXPECT_GE(CycleBusyIn(e, t, t + 10 * kMs), 0)
      << "cycle links idle for 10 ms after the watchdog acted, seed " << e.seed;
  int64_t at_restore = -1;
  for (const auto& s : e.samples)
    if (s.t >= e.t_w + r && at_restore < 0) at_restore = s.cycle_paused_ps;
  ASSERT_GE(at_restore, 0);
  EXPECT_GT(e.samples.back().cycle_paused_ps, at_restore) << "seed " << e.seed;
}

}  // namespace lossless::flowctl::e9
