#pragma once
// Test harness of reference experiment E9 (docs/deadlock.md, docs/fabric-model.md):
// the 2-tier Clos with bounce routes, traced so the tests can measure t_f
// (start of the first >= 1 ms interval without a priority-3 byte on the four
// cycle links), watchdog actions, deliveries and idle gaps. Shared by the
// fast tests (scaled watchdog timers) and the slow ones (real timers).
#include <algorithm>
#include <array>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "deadlock/deadlock_detector.hpp"
#include "deadlock/wait_for_graph.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::deadlock::e9 {

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
  bool wd_pause_memory = false;
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
  // Called for every frame a port starts sending (data, control and PAUSE
  // frames: PacketKind::kPause with the quanta in `payload`), before the
  // harness's own tracing.
  std::function<void(uint32_t port, const Packet& pk, int64_t start)> on_tx;
  // Called after each sampling step (every `step`) with the network.
  std::function<void(const Network& net, int64_t t)> on_sample;

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
    uint64_t lossless_after_restore = 0;  // of them, after a watchdog restore (all ports)
  };
  std::vector<Sample> samples;
  int64_t t_w = -1;        // first watchdog action anywhere
  int64_t t_w_cycle = -1;  // first watchdog action on one of the four cycle queues
  uint64_t wd_actions = 0, wd_drops = 0, drops = 0, lossless_drops = 0;
  uint64_t lossless_after_restore = 0;
  std::optional<DeadlockVerdict> verdict;
  uint64_t deadlocks = 0;
  uint64_t waits_seen = 0;  // wait edges the detector was told about
  // Busy intervals of the cycle links for priority 3 (overlapping
  // transmissions merged).
  std::vector<std::pair<int64_t, int64_t>> cycle_busy;
  // The four cycle ingress queues (at L0 from T0, T1 from L0, L1 from T1, T0
  // from L1: the peers of `cycle`), the XON frames each sent, and its XON
  // threshold.
  std::vector<uint32_t> cycle_in;
  std::array<std::vector<int64_t>, 4> xon_at;
  int64_t xon_bytes = 0;
  // Per port: watchdog actions and the time of the first (-1 if none).
  std::vector<uint64_t> port_wd_actions;
  std::vector<int64_t> port_wd_first;
  // Whether the wait-for graph the deadlock detector is fed holds a cycle:
  // (time, holds) at every change, from a copy of the graph kept beside the
  // detector's (WaitTee).
  std::vector<std::pair<int64_t, bool>> cycle_standing;
  Network* net = nullptr;

  // Passes the network's facts on to the detector and keeps its own copy of
  // the wait-for graph (joined the same way), to see when the cycle stands.
  struct WaitTee final : fabric::PfcWaitObserver, deadlock::WaitSink {
    WaitTee(const Network& n, E9Run* r, DeadlockDetector* d) : run(r), detector(d), join(n, *this) {}
    E9Run* run = nullptr;
    DeadlockDetector* detector = nullptr;
    deadlock::WaitJoin join;
    WaitForGraph graph;
    void OnHold(uint32_t ingress, int in_class, uint32_t egress, int out_class, bool holding,
                Time at) override {
      detector->OnHold(ingress, in_class, egress, out_class, holding, at);
      join.OnHold(ingress, in_class, egress, out_class, holding, at);
    }
    void OnXoff(uint32_t port, int tclass, bool asserted, Time at) override {
      detector->OnXoff(port, tclass, asserted, at);
      join.OnXoff(port, tclass, asserted, at);
    }
    void OnWait(uint32_t from, int from_prio, uint32_t to, int to_prio, bool waiting,
                Time at) override {
      graph.SetWait(from, from_prio, to, to_prio, waiting, at);
      const bool standing = graph.FindCycle().has_value();
      auto& v = run->cycle_standing;
      if (v.empty() ? standing : v.back().second != standing) v.emplace_back(at.ps(), standing);
    }
  };

  static void Trace(void* ctx, uint32_t p, const Packet& pk, Time start) {
    auto& e = *static_cast<E9Run*>(ctx);
    if (e.on_tx) e.on_tx(p, pk, start.ps());
    if (pk.kind == PacketKind::kPause && pk.payload == 0) {
      for (size_t i = 0; i < e.cycle_in.size(); ++i)
        if (e.cycle_in[i] == p) e.xon_at[i].push_back(start.ps());
      return;
    }
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
    cfg.sw.buffer = units::Bytes(12'000'000);
    cfg.sw.alpha = 1.0 / 8;
    cfg.nic.ect = false;
    cfg.pfc.enabled = true;
    cfg.pfc.priorities = routes == Routes::kTagger ? (1u << 3 | 1u << 4) : 1u << 3;
    cfg.pfc.global = global;
    // 802.3 response bound at 100GbE: 201,728 bit times (docs/model/pfc.md#response-time).
    cfg.pfc.response = Time::Ps(201'728 * 10);
    // Headroom per docs/model/pfc.md#headroom as the scenario loader sizes it (two frames
    // + the one crossing XOFF, the PAUSE frame, cable both ways, response,
    // switch pipeline).
    const int64_t wire = cfg.framing.WireBytes(4096);
    cfg.pfc.headroom = units::Bytes(
        3 * wire + 84 +
        units::BytesInTime(Time::Ns(1000) + cfg.pfc.response + cfg.sw.latency, Rate::Gbps(100))
            .count());
    cfg.pfc.watchdog.enabled = watchdog;
    cfg.pfc.watchdog.poll = wd_poll;
    cfg.pfc.watchdog.restore = wd_restore;
    cfg.pfc.watchdog.stagger = wd_stagger;
    cfg.pfc.watchdog.pause_memory = wd_pause_memory;
    cfg.stop_when_flows_done = false;
    Network n(sim, topo, cfg);
    net = &n;
    for (uint32_t p = 0; p < n.num_ports(); ++p) port[n.PortName(p)] = p;
    cycle = {port.at("leaf0->spine0"), port.at("spine0->leaf1"), port.at("leaf1->spine1"),
             port.at("spine1->leaf0")};
    for (uint32_t p : cycle) cycle_in.push_back(n.PortPeer(p));
    // The default XON threshold: XOFF minus one frame (docs/model/presets.md).
    xon_bytes = cfg.pfc.xoff.count() - cfg.framing.FrameBytes(4096);
    DeadlockDetector detector(sim, n, Time::Ms(1), /*stop_run=*/false);
    WaitTee tee(n, this, &detector);
    n.set_wait_observer(&tee);
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
      for (uint32_t p = 0; p < n.num_ports(); ++p) {
        const auto st = n.port_stats(p);
        s.lossless_drops += st.lossless_drops;
        s.lossless_after_restore += st.lossless_drops_after_restore;
      }
      samples.push_back(s);
      if (on_sample) on_sample(n, t.ps());
    }
    if (t_f < 0 && max_end > 0 && horizon.ps() - max_end >= kMs) t_f = max_end;
    for (auto& [key, end] : last_end) max_gap[key] = std::max(max_gap[key], horizon.ps() - end);
    drops = n.drops();
    port_wd_actions.assign(n.num_ports(), 0);
    port_wd_first.assign(n.num_ports(), -1);
    for (uint32_t p = 0; p < n.num_ports(); ++p) {
      const auto& st = n.port_stats(p);
      port_wd_actions[p] = st.wd_actions;
      port_wd_first[p] = st.wd_first_action_ps;
      wd_actions += st.wd_actions;
      wd_drops += st.wd_drops;
      lossless_drops += st.lossless_drops;
      lossless_after_restore += st.lossless_drops_after_restore;
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
    n.set_wait_observer(&detector);
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

// "leaf0->spine0" style name of a port of the run.
inline std::string NameOf(const E9Run& e, uint32_t port) {
  for (const auto& [name, p] : e.port)
    if (p == port) return name;
  return std::to_string(port);
}

// Whether the wait-for graph held no cycle at some instant of [lo, hi].
inline bool CycleBrokenIn(const E9Run& e, int64_t lo, int64_t hi) {
  bool standing = false;  // state at lo
  for (auto [t, s] : e.cycle_standing) {
    if (t > lo) {
      if (t > hi) break;
      if (!s) return true;
    } else {
      standing = s;
    }
  }
  return !standing;
}

// E9 run 2 checks (as amended after measurement), for whatever poll P and
// restore R the run used, with the windows W (10 ms with the real timers,
// 1 ms with the 1/100 ones). t_w is the first watchdog action on one of the
// four cycle egress queues (with switches polling on their own phases the
// first action anywhere can hit a queue off the cycle, T2->L0 or T3->L1,
// held behind it, whose flush does not free the cycle):
// - t_w in [t_f + 2P, t_f + 3P];
// - no drop before the first watchdog action anywhere, drops after, every
//   drop a watchdog drop (none lossless);
// - the pause chain breaks: within [t_w, t_w + W] every cycle ingress queue
//   falls to or below its XON threshold at least once (seen as the XON frame
//   it sends: all four are above XOFF in the deadlock, and an ingress above
//   XOFF sends XON exactly when it falls to the threshold, which
//   Pfc.XonGoesOutWhenTheIngressFallsToXoffMinusOneFrame pins), and the
//   wait-for graph the online detector reads holds no cycle at some instant;
// - traffic returns: if some cycle egress queue is not in its restore period
//   at t_w + W, a cycle link carries priority-3 bytes within [t_w, t_w + W];
//   in every case the cycle links carry bytes again within W after the last
//   restore period of this first round of actions ends (a queue in its
//   restore period drops what it would send, so while all four are in it, as
//   when all switches poll on one grid, the cycle is silent by design);
// - PFC is honoured again after t_w + R (the cycle ports are paused again
//   later).
inline void ExpectWatchdogRecovery(const E9Run& e, int64_t window) {
  const int64_t p = e.wd_poll.ps(), r = e.wd_restore.ps();
  const std::string tag = std::string("seed ") + std::to_string(e.seed) +
                          (e.wd_stagger ? " (own poll phases)" : " (one poll grid)");
  ASSERT_GE(e.t_f, 0) << tag;
  ASSERT_GE(e.t_w, 0) << "watchdog never acted, " << tag;
  const int64_t t_w = e.t_w_cycle;
  ASSERT_GE(t_w, 0) << "no watchdog action on the cycle, " << tag;
  EXPECT_GE(t_w, e.t_f + 2 * p) << tag;
  EXPECT_LE(t_w, e.t_f + 3 * p) << tag;
  EXPECT_EQ(e.lossless_drops, 0u) << tag;
  EXPECT_EQ(e.drops, e.wd_drops) << tag;
  EXPECT_GT(e.wd_drops, 0u) << tag;
  for (const auto& s : e.samples) {
    if (s.t < e.t_w) {
      EXPECT_EQ(s.drops, 0u) << s.t << " " << tag;
    }
  }
  // The pause chain breaks.
  for (size_t i = 0; i < e.cycle_in.size(); ++i) {
    bool fell = false;
    for (int64_t t : e.xon_at[i]) fell |= t >= t_w && t <= t_w + window;
    EXPECT_TRUE(fell) << "cycle ingress " << NameOf(e, e.cycle_in[i])
                      << " sent no XON within the window after t_w, " << tag;
  }
  EXPECT_TRUE(CycleBrokenIn(e, t_w, t_w + window))
      << "the wait-for cycle stood through [t_w, t_w + W], " << tag;
  // Traffic returns.
  bool one_not_restoring = false;
  int64_t last_restore_end = -1;
  for (uint32_t q : e.cycle) {
    const int64_t a = e.port_wd_first[q];
    if (a < 0 || a > t_w + window) {
      one_not_restoring = true;
    }
    if (a >= t_w && a < t_w + r) last_restore_end = std::max(last_restore_end, a + r);
  }
  if (one_not_restoring) {
    EXPECT_GE(CycleBusyIn(e, t_w, t_w + window), 0)
        << "a cycle queue is not restoring at t_w + W but the cycle stayed idle, " << tag;
  }
  ASSERT_GE(last_restore_end, 0) << tag;
  EXPECT_GE(CycleBusyIn(e, last_restore_end, last_restore_end + window), 0)
      << "cycle links idle for W after the last restore period ended, " << tag;
  // PFC honoured again after the restore period.
  int64_t at_restore = -1;
  for (const auto& s : e.samples)
    if (s.t >= e.t_w + r && at_restore < 0) at_restore = s.cycle_paused_ps;
  ASSERT_GE(at_restore, 0);
  EXPECT_GT(e.samples.back().cycle_paused_ps, at_restore) << tag;
}

// One summary line of a run-2 (watchdog) experiment: t_f, the first action,
// t_w, the number of actions and of deadlocks (re)formed.
inline void PrintRun2Summary(const E9Run& e, const char* timers, bool stagger, uint64_t seed) {
  std::cout << "E9 run 2 (" << timers << ", " << (stagger ? "own poll phases" : "one poll grid")
            << "), seed " << seed << ": t_f = " << static_cast<double>(e.t_f) / kMs
            << " ms, first action = " << static_cast<double>(e.t_w) / kMs
            << " ms, t_w (first on the cycle) = " << static_cast<double>(e.t_w_cycle) / kMs
            << " ms, watchdog actions = " << e.wd_actions
            << ", deadlocks (re)formed = " << e.deadlocks << "\n";
}

// Prints every watchdog action (per port: count and first time).
inline void PrintWatchdogActions(const E9Run& e) {
  for (const auto& [name, port] : e.port) {
    if (e.port_wd_actions[port] == 0) continue;
    std::cout << "  watchdog " << name << ": " << e.port_wd_actions[port] << " action(s), first at "
              << static_cast<double>(e.port_wd_first[port]) / kMs << " ms\n";
  }
}

}  // namespace lossless::deadlock::e9
