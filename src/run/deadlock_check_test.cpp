// The static deadlock check on the routes a scenario's traffic takes
// (docs/deadlock.md): E9's bounce routes close the cycle of experiment E9
// (docs/model/experiments.md#e9-pfc-deadlock-and-watchdog-recovery), its two
// controls do not, and the built-in topologies with their default routing
// have no cyclic buffer dependency.
#include "run/deadlock_check.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "run/runner.hpp"

namespace lossless::run {
namespace {

const std::string kE9 = LOSSLESS_SOURCE_DIR "/scenarios/experiments/E9-pfc-deadlock.yaml";

DeadlockCheck Check(const std::string& file, const std::vector<std::string>& sets,
                    int priority = -1, bool all_pairs = false) {
  scenario::Scenario s = scenario::LoadScenarioFile(file, sets);
  topology::Topology t = scenario::BuildTopology(s);
  return CheckDeadlockStatically(s, t, priority, all_pairs);
}

std::vector<std::string> RotatedTo(std::vector<std::string> v, const std::string& first) {
  auto it = std::find(v.begin(), v.end(), first);
  EXPECT_NE(it, v.end()) << first;
  if (it != v.end()) std::rotate(v.begin(), it, v.end());
  return v;
}

// E9 run 1's cycle: the ingress buffers at L0 (from T0), T1 (from L0), L1
// (from T1) and T0 (from L1) on priority 3. C and D go up-down and A and B
// bounce; each dependency of the cycle is made by exactly one of them: C
// moves L0's buffer into T1's, A bounces T1's into L1's, D moves L1's into
// T0's and B bounces T0's into L0's.
TEST(RefE9_StaticCheck, BounceRoutesCloseTheCycleNamingAAndB) {
  const DeadlockCheck c = Check(kE9, {});
  EXPECT_TRUE(c.traffic_known);
  EXPECT_EQ(c.flows, 4u);
  EXPECT_EQ(c.explicit_routes, 4u);
  EXPECT_EQ(c.classes, std::vector<int>{3});
  ASSERT_EQ(c.labels.size(), 4u);
  EXPECT_EQ(RotatedTo(c.labels, "spine0:leaf0:3"),
            (std::vector<std::string>{"spine0:leaf0:3", "leaf1:spine0:3", "spine1:leaf1:3",
                                      "leaf0:spine1:3"}));
  ASSERT_EQ(c.cycle_flows.size(), 4u);
  std::vector<std::string> by_edge;
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(c.cycle_flows[i].size(), 1u) << c.labels[i];
    by_edge.push_back(c.labels[i] + " " + c.cycle_flows[i][0]);
  }
  std::sort(by_edge.begin(), by_edge.end());
  EXPECT_EQ(by_edge, (std::vector<std::string>{"leaf0:spine1:3 B (host3->host2)",
                                               "leaf1:spine0:3 A (host2->host3)",
                                               "spine0:leaf0:3 C (host0->host1)",
                                               "spine1:leaf1:3 D (host1->host0)"}));
  EXPECT_TRUE(c.lossless);
}

// The same routes under global 802.3x pause: a buffer is a whole port.
TEST(RefE9_StaticCheck, GlobalPauseSeesTheSameCycleOfPorts) {
  const DeadlockCheck c = Check(kE9, {"fabric.pfc.mode=global"});
  ASSERT_EQ(c.labels.size(), 4u);
  EXPECT_EQ(RotatedTo(c.labels, "spine0:leaf0:all").back(), "leaf0:spine1:all");
}

// Run 3's control: A and B go up-down; no cycle.
TEST(RefE9_StaticCheck, UpDownControlHasNoCycle) {
  const DeadlockCheck c = Check(kE9, {"traffic.2.path=leaf2,spine0,leaf3",
                                      "traffic.3.path=leaf3,spine1,leaf2"});
  EXPECT_TRUE(c.traffic_known);
  EXPECT_TRUE(c.cycle.empty()) << c.labels.front();
  EXPECT_GT(c.graph.num_edges(), 0u);
}

// Run 4's control: A moves to class 4 when it leaves T1, B when it leaves
// T0 (Tagger-style). The bounces now lead into class-4 buffers, which only
// A and B use and which drain to hosts, so nothing closes the cycle.
TEST(RefE9_StaticCheck, PriorityChangeControlHasNoCycle) {
  const DeadlockCheck c = Check(kE9, {"traffic.2.path=leaf2,spine0,leaf1/4,spine1,leaf3",
                                      "traffic.3.path=leaf3,spine1,leaf0/4,spine0,leaf2"});
  EXPECT_TRUE(c.cycle.empty()) << c.labels.front();
  EXPECT_EQ(c.classes, (std::vector<int>{3, 4}));
  // The class change is an edge between priorities: A's bounce out of T1's
  // buffer from L0 on 3 into L1's from T1 on 4.
  EXPECT_EQ(c.graph.classes, fabric::kMaxClasses);
  scenario::Scenario s = scenario::LoadScenarioFile(kE9);
  topology::Topology t = scenario::BuildTopology(s);
  const fabric::RoutingTable routes(t);
  uint32_t t1_from_l0 = 0, l1_from_t1 = 0;
  for (uint32_t p = 0; p < routes.num_ports(); ++p) {
    const std::string name = routes.PortName(p);
    if (name == "spine0->leaf1") t1_from_l0 = routes.PortPeer(p);
    if (name == "leaf1->spine1") l1_from_t1 = routes.PortPeer(p);
  }
  auto v = [](uint32_t port, int cls) { return port * fabric::kMaxClasses + cls; };
  EXPECT_TRUE(c.graph.HasEdge(v(t1_from_l0, 3), v(l1_from_t1, 4)));
  EXPECT_FALSE(c.graph.HasEdge(v(t1_from_l0, 3), v(l1_from_t1, 3)));
  // Class 4 is not a PFC priority of the scenario: said, not hidden.
  EXPECT_FALSE(c.lossless);
  EXPECT_EQ(c.lossy_classes, std::vector<int>{4});
  // The bounce alone, without the change, closes it again.
  EXPECT_EQ(Check(kE9, {"traffic.2.path=leaf2,spine0,leaf1,spine1,leaf3"}).labels.size(), 4u);
}

// Without the traffic (--all-pairs) the check sees only the routing's
// minimal routes, which on this Clos are up-down: no cycle. This is what the
// check answered for E9 before it followed the flows' paths.
TEST(RefE9_StaticCheck, AllPairsSeesOnlyTheRouting) {
  const DeadlockCheck c = Check(kE9, {}, -1, /*all_pairs=*/true);
  EXPECT_FALSE(c.traffic_known);
  EXPECT_EQ(c.why, "--all-pairs");
  EXPECT_TRUE(c.cycle.empty());
}

// A scenario without a traffic list is analysed over all host pairs.
TEST(DeadlockCheck, NoTrafficListMeansAllPairs) {
  scenario::Scenario s = scenario::LoadScenarioFile(kE9);
  s.traffic.clear();
  topology::Topology t = scenario::BuildTopology(s);
  const DeadlockCheck c = CheckDeadlockStatically(s, t, -1, false);
  EXPECT_FALSE(c.traffic_known);
  EXPECT_EQ(c.why, "the scenario lists no traffic");
  EXPECT_EQ(c.priority, 3);
  EXPECT_TRUE(c.cycle.empty());
}

// Flows without a path follow every candidate route: on the four-switch
// ring, hosts two hops apart may go either way round, which closes a cycle;
// the witness names the permutation's flows.
TEST(DeadlockCheck, CandidateRoutesOfTheRingCloseACycle) {
  const DeadlockCheck c =
      Check(LOSSLESS_SOURCE_DIR "/scenarios/deadlock-ring4.yaml", {});
  EXPECT_TRUE(c.traffic_known);
  EXPECT_EQ(c.explicit_routes, 0u);
  ASSERT_EQ(c.labels.size(), 4u);
  for (const auto& names : c.cycle_flows) {
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names.front().rfind("traffic.0 (host", 0), 0u) << names.front();
  }
  // RC ACKs go back over routed paths on the data class: flows of their own.
  const DeadlockCheck rc =
      Check(LOSSLESS_SOURCE_DIR "/scenarios/deadlock-ring4.yaml", {"transport.kind=rc"});
  EXPECT_EQ(rc.flows, 4u);
  EXPECT_EQ(rc.return_flows, 4u);
  bool acks = false;
  for (const auto& names : rc.cycle_flows)
    for (const auto& n : names) acks |= n.rfind("ACKs of traffic.0 (host", 0) == 0;
  EXPECT_TRUE(acks);
  // Hosts one hop apart only (stride 1 on four hosts) never transit a switch
  // buffer into another ring buffer: no cycle.
  EXPECT_TRUE(Check(LOSSLESS_SOURCE_DIR "/scenarios/deadlock-ring4.yaml",
                    {"traffic.0.stride=1"})
                  .cycle.empty());
}

// Every built-in profile's default topology (rail-optimized fat trees for
// ib-* and roce-*, the oversubscribed leaf-spine of cloud-shared), at its own
// size and at 16 nodes, with its default routing: no cyclic buffer
// dependency for any host pair.
TEST(DeadlockCheck, BuiltInTopologiesHaveNoCycle) {
  for (const char* name : {"cloud-shared", "ib-hdr", "ib-ndr", "ib-xdr", "roce-100g", "roce-200g",
                           "roce-400g", "roce-800g", "roce-tuned", "roce-untuned"}) {
    for (const char* nodes : {"", "topology.nodes=16"}) {
      std::vector<std::string> sets;
      if (*nodes) sets.emplace_back(nodes);
      scenario::Scenario s = scenario::LoadFabricFile(
          std::string(LOSSLESS_SOURCE_DIR "/profiles/") + name + ".yaml", sets);
      topology::Topology t = scenario::BuildTopology(s);
      const DeadlockCheck c = CheckDeadlockStatically(s, t, -1, /*all_pairs=*/true);
      EXPECT_TRUE(c.cycle.empty()) << name << " " << nodes << ": " << c.labels.front();
      // At 16 nodes traffic crosses switch-to-switch links (at its default
      // 2 nodes cloud-shared fits one leaf).
      if (*nodes) {
        EXPECT_GT(c.graph.num_edges(), 0u) << name << " " << nodes;
      }
    }
  }
}

// The run report counts lossless drops after a watchdog restore
// (docs/deadlock.md#the-watchdog-restore-hazard): E9's scenario under global
// pause with A and B on class 0 and the 1/100 watchdog timers has them, and
// they are all its lossless drops; under PFC it has none.
TEST(RunReport, CountsLosslessDropsAfterAWatchdogRestore) {
  const std::vector<std::string> wd = {"fabric.pfc.watchdog.enabled=true",
                                       "fabric.pfc.watchdog.poll=1ms",
                                       "fabric.pfc.watchdog.restore=2ms", "stop_time=10ms"};
  std::vector<std::string> global = wd;
  for (const char* x : {"fabric.pfc.mode=global", "traffic.2.class=0", "traffic.3.class=0"})
    global.emplace_back(x);
  const report::RunResult g = RunScenario(scenario::LoadScenarioFile(kE9, global));
  EXPECT_EQ(g.lossless_drops_after_restore, 363u);
  EXPECT_EQ(g.lossless_drops, g.lossless_drops_after_restore);
  const report::RunResult p = RunScenario(scenario::LoadScenarioFile(kE9, wd));
  EXPECT_GT(p.watchdog_actions, 0u);
  EXPECT_EQ(p.lossless_drops, 0u);
  EXPECT_EQ(p.lossless_drops_after_restore, 0u);
}

}  // namespace
}  // namespace lossless::run
