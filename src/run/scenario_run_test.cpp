// Whole scenario runs: determinism, the PFC watchdog, explicit paths, the
// online deadlock detector and the stalled-NIC fault.
#include "run/runner.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenario/scenario.hpp"
#include "scenario/scenario_test_util.hpp"

namespace lossless::run {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace scenario_run {

using report::RunResult;
using scenario::LoadScenarioText;
using scenario::Scenario;
using scenario::testing::ErrorOf;
using scenario::testing::kGood;

TEST(Runner, SameSeedSameResultsTwoRunsInOneProcess) {
  // Lossy (PFC off): ECMP collisions decide drops and completion times.
  Scenario s = LoadScenarioText(
      kGood, "s.yaml",
      {"fabric.pfc.enabled=false", "traffic.1.pattern=incast", "traffic.1.bytes=256KiB"});
  RunResult a = RunScenario(s);
  RunResult b = RunScenario(s);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.packet_hops, b.packet_hops);
  EXPECT_EQ(a.fct.max, b.fct.max);
  EXPECT_EQ(a.drops, b.drops);
  EXPECT_GT(a.flows_done, 0u);
  Scenario other = LoadScenarioText(
      kGood, "s.yaml",
      {"fabric.pfc.enabled=false", "seed=4", "traffic.1.pattern=incast", "traffic.1.bytes=256KiB"});
  RunResult c = RunScenario(other);
  EXPECT_EQ(c.packets, a.packets);  // same work...
  EXPECT_NE(c.fct.max, a.fct.max);  // ...different ECMP salt, different collisions
}

// The E9 shape (docs/model/pfc.md#deadlock,
// docs/model/experiments.md#e9-pfc-deadlock-and-watchdog-recovery) as a scenario: ToRs leaf0-3,
// leaves spine0/1, host i on leaf i.
constexpr const char* kE9 = R"(name: e9
fabric:
  link_rate: 100Gbps
  link_delay: 500ns
  buffer: 12MB
  pfc:
    enabled: true
deadlock:
  detect: true
topology:
  kind: ls-ring
  gpus: 4
  hosts_per_leaf: 1
  spines: 2
traffic:
  - {pattern: flow, src: 0, dst: 1, bytes: 1TB, path: [leaf0, spine0, leaf1]}
  - {pattern: flow, src: 1, dst: 0, bytes: 1TB, path: [leaf1, spine1, leaf0]}
  - {pattern: flow, src: 2, dst: 3, bytes: 1TB, path: [leaf2, spine0, leaf1, spine1, leaf3]}
  - {pattern: flow, src: 3, dst: 2, bytes: 1TB, path: [leaf3, spine1, leaf0, spine0, leaf2]}
stop_time: 20ms
)";

std::string RunErrorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    RunScenario(LoadScenarioText(text, "s.yaml", sets));
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

// Issue 16: roce-incast at 25 Gbps stopped at 5 us printed 107 % link
// utilization (125 % at 200 ns): the frame still on the wire at the end was
// counted whole. Busy time is clipped at the end of the run; a host link
// sending from t = 0 to the end is busy exactly the whole run.
// Running in slices (the progress and interrupt hook) changes nothing; a
// hook that says stop ends the run there, marked interrupted.
TEST(Runner, SlicesChangeNothingAndStoppingIsAnInterrupt) {
  Scenario s =
      LoadScenarioText(kGood, "s.yaml", {"fabric.pfc.enabled=false", "traffic.0.bytes=8MiB"});
  const RunResult plain = RunScenario(s);
  int slices = 0;
  RunHooks count;
  count.between_slices = [&](const RunStatus& st) {
    EXPECT_LE(st.flows_done, st.flows);
    ++slices;
    return true;
  };
  const RunResult sliced = RunScenario(s, count);
  ASSERT_GT(slices, 0);  // the run is longer than one slice
  EXPECT_EQ(sliced.events, plain.events);
  EXPECT_EQ(sliced.fct.max, plain.fct.max);
  EXPECT_EQ(sliced.sim_time, plain.sim_time);
  EXPECT_EQ(sliced.stop_reason, plain.stop_reason);
  EXPECT_FALSE(sliced.interrupted);
  RunHooks stop;
  stop.between_slices = [](const RunStatus&) { return false; };
  const RunResult cut = RunScenario(s, stop);
  EXPECT_TRUE(cut.interrupted);
  EXPECT_EQ(cut.stop_reason, "interrupted");
  EXPECT_EQ(cut.events, kEventsPerSlice);
  EXPECT_LT(cut.flows_done, cut.flows);
}

TEST(Runner, LinkUtilizationIsClippedAtTheEndOfTheRun) {
  for (const char* stop : {"stop_time=5us", "stop_time=200ns"}) {
    Scenario s = LoadScenarioText(kGood, "s.yaml", {"fabric.link_rate=25Gbps", stop});
    RunResult r = RunScenario(s);
    EXPECT_LE(r.max_link_utilization, 1.0) << stop;
    EXPECT_GT(r.max_link_utilization, 0.95) << stop;
  }
}

TEST(ScenarioPfcWatchdog, JuniperDefaultsAndOverrides) {
  Scenario s = LoadScenarioText(kE9, "s.yaml");
  const auto& wd = s.net.pfc.watchdog;
  EXPECT_FALSE(wd.enabled);
  EXPECT_EQ(wd.poll, units::Time::Ms(100));
  EXPECT_EQ(wd.detect_polls, 2);
  EXPECT_EQ(wd.restore, units::Time::Ms(200));
  EXPECT_DOUBLE_EQ(wd.threshold, 0.99);
  EXPECT_EQ(s.net.nic.pause_storm_timeout, units::Time::Sec(8));
  EXPECT_TRUE(s.deadlock.detect);
  EXPECT_TRUE(s.deadlock.stop);  // auto, watchdog off
  Scenario o =
      LoadScenarioText(kE9, "s.yaml",
                       {"fabric.pfc.watchdog.enabled=true", "fabric.pfc.watchdog.poll=1ms",
                        "fabric.pfc.watchdog.restore=2ms", "fabric.pfc.watchdog.threshold=0.8",
                        "fabric.nic.pause_storm_timeout=auto"});
  EXPECT_TRUE(o.net.pfc.watchdog.enabled);
  EXPECT_EQ(o.net.pfc.watchdog.poll, units::Time::Ms(1));
  EXPECT_EQ(o.net.pfc.watchdog.restore, units::Time::Ms(2));
  EXPECT_DOUBLE_EQ(o.net.pfc.watchdog.threshold, 0.8);
  EXPECT_EQ(o.net.nic.pause_storm_timeout, units::Time::Ms(100));
  EXPECT_FALSE(o.deadlock.stop);  // auto, watchdog on: keep running
  EXPECT_EQ(LoadScenarioText(kE9, "s.yaml", {"fabric.nic.pause_storm_timeout=off"})
                .net.nic.pause_storm_timeout,
            units::Time::Zero());
}

TEST(ScenarioPfcWatchdog, BadFieldsNameFileLineAndField) {
  EXPECT_EQ(
      ErrorOf(kE9, {"fabric.pfc.watchdog.threshold=1.5"}),
      "<--set>: fabric.pfc.watchdog.threshold: expected a number from 0.01 to 1, got \"1.5\"");
  EXPECT_EQ(ErrorOf(kE9, {"fabric.pfc.watchdog.poll=0s"}),
            "<--set>: fabric.pfc.watchdog.poll: expected a poll period above zero, got \"0s\"");
  EXPECT_EQ(ErrorOf(kE9, {"fabric.nic.pause_storm_timeout=soon"}),
            "<--set>: fabric.nic.pause_storm_timeout: expected a time such as 100ms, auto or off, "
            "got \"soon\"");
  EXPECT_EQ(ErrorOf(kE9, {"faults.nic_stall.at=1ms"}),
            "<--set>: faults.nic_stall.at: expected faults.nic_stall.host with this field");
  EXPECT_EQ(ErrorOf(kE9, {"faults.nic_stall.host=1", "faults.nic_stall.at=2ms",
                          "faults.nic_stall.until=1ms"}),
            "<--set>: faults.nic_stall.until: expected a time after faults.nic_stall.at (2ms), got "
            "\"1ms\"");
  EXPECT_EQ(RunErrorOf(kE9, {"faults.nic_stall.host=4"}),
            "<--set>: faults.nic_stall.host: expected a host rank below 4, got 4");
  EXPECT_EQ(ErrorOf(kE9, {"deadlock.stop=maybe"}),
            "<--set>: deadlock.stop: expected one of auto, yes, no, got \"maybe\" (did you mean "
            "'auto'?)");
}

TEST(Scenario, PfcModeSelectsGlobalPause) {
  EXPECT_FALSE(LoadScenarioText(kGood, "s.yaml").net.pfc.global);
  EXPECT_TRUE(LoadScenarioText(kGood, "s.yaml", {"fabric.pfc.mode=global"}).net.pfc.global);
  EXPECT_EQ(ErrorOf(kGood, {"fabric.pfc.mode=802.3x"}),
            "<--set>: fabric.pfc.mode: expected one of pfc, global, got \"802.3x\" (did you mean "
            "'pfc'?)");
}

TEST(ScenarioPaths, BadPathsNameTheTrafficEntry) {
  std::string t = kE9;
  t.replace(t.find("[leaf0, spine0, leaf1]"), 22, "[leaf0, spine7, leaf1]");
  EXPECT_EQ(RunErrorOf(t),
            "s.yaml:16: traffic.0.path: expected switch names of the topology, got \"spine7\"");
  EXPECT_EQ(RunErrorOf(kE9, {"traffic.1.path=leaf1,leaf0"}),
            "<--set>: traffic.1.path: expected consecutive switches to be linked, but leaf1 and "
            "leaf0 are not");
  EXPECT_EQ(RunErrorOf(kE9, {"traffic.1.path=leaf0,spine1,leaf1"}),
            "<--set>: traffic.1.path: expected the path to start at the switch of host 1 (host1), "
            "got leaf0");
  EXPECT_EQ(RunErrorOf(kE9, {"traffic.1.path=leaf1,spine1,leaf1,spine0,leaf0"}),
            "<--set>: traffic.1.path: expected no hop straight back to the previous switch, but "
            "leaf1 -> spine1 -> leaf1 sends back over the link it came in on");
  EXPECT_EQ(RunErrorOf(kE9, {"traffic.1.path=leaf1,spine1,leaf2"}),
            "<--set>: traffic.1.path: expected the path to end at the switch of host 0 (host0), "
            "got leaf2");
  EXPECT_EQ(ErrorOf(kE9, {"traffic.1.path=leaf1,spine1/8,leaf0"}),
            "<--set>: traffic.1.path: expected switch or switch/class with a class from 0 to 7, "
            "got \"spine1/8\"");
  EXPECT_EQ(ErrorOf(kE9, {"traffic.4.pattern=ring", "traffic.4.bytes=1MB",
                          "traffic.4.path=leaf0,spine0,leaf1"}),
            "<--set>: traffic.4.path: expected 'path' only on a pattern: flow entry");
}

// E9 run 1 through the scenario runner: the run ends with a deadlock
// verdict naming the four cycle buffers, long before stop_time.
TEST(ScenarioDeadlock, E9EndsWithDeadlockVerdict) {
  RunResult r = RunScenario(LoadScenarioText(kE9, "s.yaml"));
  EXPECT_EQ(r.stop_reason, "deadlock");
  ASSERT_EQ(r.deadlock.cycle.size(), 4u);
  std::vector<std::string> got = r.deadlock.cycle;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"leaf0:spine1:3", "leaf1:spine0:3", "spine0:leaf0:3",
                                           "spine1:leaf1:3"}));
  EXPECT_EQ(r.deadlock.detected, r.deadlock.formed + units::Time::Ms(1));
  EXPECT_LT(r.sim_time, units::Time::Ms(20));
  EXPECT_EQ(r.drops, 0u);
}

// Up-down routes instead of the bounces: no cycle, the run goes to stop_time.
TEST(ScenarioDeadlock, UpDownRoutesRunToTheEnd) {
  RunResult r = RunScenario(LoadScenarioText(
      kE9, "s.yaml",
      {"traffic.2.path=leaf2,spine0,leaf3", "traffic.3.path=leaf3,spine1,leaf2", "stop_time=5ms"}));
  EXPECT_EQ(r.stop_reason, "time limit");
  EXPECT_TRUE(r.deadlock.enabled);
  EXPECT_TRUE(r.deadlock.cycle.empty());
}

// With the watchdog on, detection reports but the run goes on and the
// watchdog breaks the cycle (1/100 timers as in E9's fast tier).
TEST(ScenarioDeadlock, WatchdogOnKeepsRunningAndActs) {
  RunResult r = RunScenario(
      LoadScenarioText(kE9, "s.yaml",
                       {"fabric.pfc.watchdog.enabled=true", "fabric.pfc.watchdog.poll=1ms",
                        "fabric.pfc.watchdog.restore=2ms", "stop_time=10ms"}));
  EXPECT_EQ(r.stop_reason, "time limit");
  EXPECT_FALSE(r.deadlock.cycle.empty());
  EXPECT_GT(r.watchdog_actions, 0u);
  EXPECT_EQ(r.drops, r.watchdog_drops);
  EXPECT_EQ(r.lossless_drops, 0u);
}

// Stalled-NIC fault from the scenario: the NIC pauses its leaf, and its
// stall prevention (auto = 100 ms) gives up after 100 ms of being stuck.
TEST(ScenarioNicStall, FaultStormsAndPreventionGivesUp) {
  RunResult r = RunScenario(LoadScenarioText(
      R"(name: stall
fabric:
  pfc: {enabled: true}
  nic: {pause_storm_timeout: auto}
faults:
  nic_stall: {host: 0, at: 10us}
topology: {kind: ls-ring, gpus: 4, hosts_per_leaf: 2, spines: 1}
traffic:
  - {pattern: incast, target: 0, bytes: 1TB}
stop_time: 150ms
)",
      "s.yaml"));
  EXPECT_EQ(r.pause_storm_errors, 1u);
  EXPECT_GT(r.rx_stall_drops, 0u);
  EXPECT_EQ(r.lossless_drops, 0u);
  bool leaf_paused_spine = false;
  for (const auto& p : r.ports) {
    if (p.name == "host0->leaf0") {
      EXPECT_GT(p.stats.pause_tx, 0u);
      EXPECT_EQ(p.stats.pause_storm_warnings, 1u);
      EXPECT_EQ(p.stats.pause_storm_errors, 1u);
    }
    if (p.name == "leaf0->spine0" && p.stats.pause_tx > 0) leaf_paused_spine = true;
  }
  EXPECT_TRUE(leaf_paused_spine);  // the storm spread a hop
}

}  // namespace scenario_run
}  // namespace
}  // namespace lossless::run
