#include "scenario/scenario.hpp"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "scenario/params.hpp"
#include "scenario/runner.hpp"

namespace lossless::scenario {
namespace {

constexpr const char* kGood = R"(name: t
seed: 3
fabric:
  preset: roce
  link_rate: 400Gbps
topology:
  kind: leaf-spine
  gpus: 32
  radix: 16
traffic:
  - pattern: ring
    bytes: 64KiB
)";

std::string ErrorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    Scenario s = LoadScenarioText(text, "s.yaml", sets);
    BuildTopology(s);
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(Scenario, LoadsPresetDefaultsAndOverrides) {
  Scenario s = LoadScenarioText(kGood, "s.yaml");
  EXPECT_EQ(s.seed, 3u);
  EXPECT_EQ(s.net.framing.WireBytes(4096), 4178);
  EXPECT_EQ(s.net.sw.latency, units::Time::Ns(300));
  EXPECT_EQ(s.net.routing, fabric::RoutingMode::kEcmp);
  Scenario ib = LoadScenarioText(kGood, "s.yaml",
                                 {"fabric.preset=infiniband", "fabric.switch_latency=150ns"});
  EXPECT_EQ(ib.net.framing.WireBytes(4096), 4122);
  EXPECT_EQ(ib.net.sw.latency, units::Time::Ns(150));  // --set beats the preset
  EXPECT_EQ(ib.net.routing, fabric::RoutingMode::kAdaptive);
  EXPECT_EQ(ib.clos.link_delay, units::Time::Ns(50));  // 10 m default cable at 5 ns/m
}

TEST(Scenario, JsonIsAccepted) {
  Scenario s = LoadScenarioText(
      R"({"topology": {"kind": "ls-ring", "gpus": 16}, "traffic": [{"pattern": "flow", "src": 0, "dst": 9, "bytes": "1MiB"}]})",
      "s.json");
  auto flows = ExpandTraffic(s, 16);
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].dst, 9u);
}

TEST(Scenario, UnknownKeyNamesLineAndNearestField) {
  std::string text = kGood;
  text.replace(text.find("link_rate"), 9, "link_rat");
  EXPECT_EQ(
      ErrorOf(text),
      "s.yaml:5: fabric.link_rat: unknown field; did you mean 'link_rate'? (valid here: preset, "
      "link_rate, link_delay, cable_length, mtu, frame_overhead, vlan_tag, switch_latency, "
      "cut_through, buffer, alpha, routing, data_class, pcie_rate, ib, ecn, pfc, nic, cc, "
      "dcqcn, ibcc)");
}

TEST(Scenario, MalformedUnitsZeroRatesAndZeroLatency) {
  EXPECT_EQ(ErrorOf(kGood, {"fabric.link_rate=400"}),
            "no error");  // bare number = bit/s is legal...
  std::string t = kGood;
  t.replace(t.find("400Gbps"), 7, "fast");
  EXPECT_EQ(ErrorOf(t),
            "s.yaml:5: fabric.link_rate: expected a rate such as 400Gbps, got \"fast\"");
  t = kGood;
  t.replace(t.find("400Gbps"), 7, "0Gbps");
  EXPECT_EQ(ErrorOf(t), "s.yaml:5: fabric.link_rate: expected a rate above zero, got \"0Gbps\"");
  EXPECT_EQ(
      ErrorOf(kGood, {"fabric.link_rate=-5Gbps"}),
      "<--set>: fabric.link_rate: expected a rate such as 400Gbps (not negative), got \"-5Gbps\"");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.link_delay=0ns"}),
            "<--set>: fabric.link_delay: expected a delay above zero (components talk only through "
            "links with "
            "latency), got \"0ns\"");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.link_delay=1.5"}),
            "<--set>: fabric.link_delay: expected a time such as 1.5us (a unit is required), got "
            "\"1.5\"");
}

TEST(Scenario, UnknownPresetAndEnums) {
  EXPECT_EQ(ErrorOf(kGood, {"fabric.preset=infiniban"}),
            "<--set>: fabric.preset: expected one of infiniband, roce, raw, got \"infiniban\" (did "
            "you mean "
            "'infiniband'?)");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.nonsense=1"}),
            "<--set>: fabric.nonsense: unknown field; did you mean 'fabric.preset'?");
}

TEST(Scenario, RadixLimitIsNamed) {
  std::string t = kGood;
  t.replace(t.find("gpus: 32"), 8, "gpus: 200");
  std::string e = ErrorOf(t, {"topology.tiers=2"});
  EXPECT_EQ(e.rfind("s.yaml:8: topology.", 0), 0u) << e;
  EXPECT_NE(e.find("at most 128"), std::string::npos) << e;
  EXPECT_NE(e.find("got 200"), std::string::npos) << e;
}

TEST(Scenario, DisconnectedTopologyNamesAPair) {
  const std::string topo_path = ::testing::TempDir() + "/split.topo";
  {
    std::ofstream f(topo_path);
    f << "defaults rate=400Gbps delay=1us\nswitch a\nswitch b\nhost h0\nhost h1\nlink h0 a\nlink "
         "h1 b\n";
  }
  std::string e =
      ErrorOf(std::string(kGood) + "", {"topology.kind=file", "topology.file=" + topo_path});
  EXPECT_NE(e.find("h0"), std::string::npos) << e;
  EXPECT_NE(e.find("h1"), std::string::npos) << e;
}

TEST(Scenario, TrafficErrors) {
  std::string t = kGood;
  t.replace(t.find("pattern: ring"), 13, "pattern: rnig");
  EXPECT_EQ(
      ErrorOf(t),
      "s.yaml:11: traffic.0.pattern: expected one of ring, permutation, incast, all-to-all, flow, "
      "got \"rnig\" (did you mean 'ring'?)");
  t = kGood;
  t.replace(t.find("bytes: 64KiB"), 12, "bytes: 0");
  EXPECT_EQ(ErrorOf(t), "s.yaml:12: traffic.0.bytes: expected a size above zero, got \"0\"");
  t = std::string(kGood) + "    colour: red\n";
  EXPECT_NE(ErrorOf(t).find("s.yaml:13: traffic.0.colour: unknown traffic field"),
            std::string::npos)
      << ErrorOf(t);
  Scenario s = LoadScenarioText(
      kGood, "s.yaml",
      {"traffic.1.pattern=flow", "traffic.1.src=0", "traffic.1.dst=99", "traffic.1.bytes=1KiB"});
  try {
    ExpandTraffic(s, 32);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "<--set>: traffic.1: expected two different host ranks below 32, got src 0 dst 99");
  }
}

TEST(Scenario, GarbageIsOneClearError) {
  EXPECT_EQ(ErrorOf(""), "s.yaml:1: expected a scenario, got an empty file");
  EXPECT_EQ(ErrorOf("- just\n- a list\n"),
            "s.yaml:1: expected a mapping of scenario fields at the top level");
  EXPECT_NE(ErrorOf("a: [1, 2\n").find("s.yaml:"), std::string::npos);
  EXPECT_EQ(ErrorOf(std::string(100, '[')), "s.yaml:1: expected at most 32 levels of nesting");
  EXPECT_NE(ErrorOf(std::string("\x00\x01\xff\xfe", 4)).find("s.yaml"), std::string::npos);
}

TEST(Scenario, ExpandsPatterns) {
  Scenario s =
      LoadScenarioText(kGood, "s.yaml",
                       {"traffic.1.pattern=incast", "traffic.1.senders=3", "traffic.1.target=5",
                        "traffic.1.bytes=1KiB", "traffic.2.pattern=all-to-all", "traffic.2.hosts=4",
                        "traffic.2.bytes=1KiB"});
  auto flows = ExpandTraffic(s, 32);
  ASSERT_EQ(flows.size(), 32u + 3u + 12u);
  EXPECT_EQ(flows[31].src, 31u);
  EXPECT_EQ(flows[31].dst, 0u);
  EXPECT_EQ(flows[32].src, 6u);
  EXPECT_EQ(flows[32].dst, 5u);
  EXPECT_EQ(flows[34].src, 8u);
}

TEST(Scenario, RepeatedTrafficEntries) {
  Scenario s = LoadScenarioText(
      kGood, "s.yaml",
      {"traffic.1.pattern=flow", "traffic.1.src=16", "traffic.1.dst=17", "traffic.1.bytes=4KiB",
       "traffic.1.start=5us", "traffic.1.repeat=150", "traffic.1.every=20us"});
  auto flows = ExpandTraffic(s, 32);
  ASSERT_EQ(flows.size(), 32u + 150u);
  EXPECT_EQ(flows[32].start, units::Time::Us(5));
  EXPECT_EQ(flows[33].start, units::Time::Us(25));
  EXPECT_EQ(flows[181].start, units::Time::Us(5 + 149 * 20));
  EXPECT_EQ(flows[181].src, 16u);
  EXPECT_EQ(ErrorOf(kGood, {"traffic.0.repeat=3"}),
            "<--set>: traffic.0.repeat: expected 'every' (time between repeats) with repeat");
  EXPECT_EQ(ErrorOf(kGood, {"traffic.0.repeat=3", "traffic.0.every=0us"}),
            "<--set>: traffic.0.every: expected a time above zero, got \"0us\"");
  EXPECT_EQ(ErrorOf(kGood, {"traffic.0.repeat=0"}),
            "<--set>: traffic.0.repeat: expected an integer from 1 to 1e+09, got \"0\"");
  EXPECT_EQ(ErrorOf(kGood, {"traffic.0.repeat=2000000", "traffic.0.every=1us"}),
            "<--set>: traffic.0.repeat: expected at most 1000000 repeats, got \"2000000\"");
}

TEST(Scenario, DocsScenariosMdMatchesTheRegistry) {
  std::ifstream f(std::string(LOSSLESS_SOURCE_DIR) + "/docs/scenarios.md");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), ParamsMarkdown())
      << "refresh with: build/lossless params --markdown > docs/scenarios.md";
}

// Splits a Markdown table row on unescaped '|' and trims each cell.
std::vector<std::string> TableCells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      const size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += row[i];
    }
  }
  return cells;
}

std::string StripTicks(const std::string& s) {
  return s.size() >= 2 && s.front() == '`' && s.back() == '`' ? s.substr(1, s.size() - 2) : s;
}

TEST(Scenario, DocsDefaultsMatchTheIndependentList) {
  // tests/golden/scenario_defaults.tsv is written by hand from the sources it
  // names; docs/scenarios.md is generated from the registry. Every field of
  // the main table must be in the list with the same default, and no more.
  std::map<std::string, std::string> listed;
  std::ifstream golden(std::string(LOSSLESS_SOURCE_DIR) + "/tests/golden/scenario_defaults.tsv");
  ASSERT_TRUE(golden);
  for (std::string line; std::getline(golden, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    ASSERT_NE(t2, std::string::npos) << "three tab-separated columns: " << line;
    ASSERT_TRUE(listed.emplace(line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1)).second)
        << "listed twice: " << line;
  }
  std::ifstream docs(std::string(LOSSLESS_SOURCE_DIR) + "/docs/scenarios.md");
  std::set<std::string> seen;
  for (std::string line; std::getline(docs, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> cells = TableCells(line);
    ASSERT_GE(cells.size(), 3u) << line;
    const std::string field = StripTicks(cells[0]);
    seen.insert(field);
    auto it = listed.find(field);
    if (it == listed.end()) {
      ADD_FAILURE() << field << " is not in tests/golden/scenario_defaults.tsv";
    } else {
      EXPECT_EQ(StripTicks(cells[2]), it->second) << field;
    }
    if (field == "stop_time") break;  // the end of the main table
  }
  EXPECT_GE(seen.size(), 90u);
  for (const auto& [field, def] : listed)
    EXPECT_TRUE(seen.count(field)) << field << " listed but not documented";
}

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

}  // namespace
}  // namespace lossless::scenario

namespace lossless::scenario {
namespace {

// The E9 shape (fabric.md 2.8, experiments.md E9) as a scenario: ToRs
// leaf0-3, leaves spine0/1, host i on leaf i.
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
      EXPECT_GT(p.pause_tx, 0u);
      EXPECT_EQ(p.pause_storm_warnings, 1u);
      EXPECT_EQ(p.pause_storm_errors, 1u);
    }
    if (p.name == "leaf0->spine0" && p.pause_tx > 0) leaf_paused_spine = true;
  }
  EXPECT_TRUE(leaf_paused_spine);  // the storm spread a hop
}

}  // namespace
}  // namespace lossless::scenario

namespace lossless::scenario {
namespace {

// Misconfigurations a user may want to study run, with a loud warning
// (issue 3's bad-input rule): ECN above the PFC trigger, too little headroom.
TEST(Scenario, EcnAbovePfcTriggerAndShortHeadroomWarnButLoad) {
  Scenario ok = LoadScenarioText(kGood, "s.yaml");
  EXPECT_TRUE(ok.warnings.empty());
  Scenario ecn =
      LoadScenarioText(kGood, "s.yaml",
                       {"fabric.cc=dcqcn-paper", "fabric.ecn.enabled=true", "fabric.ecn.kmin=300KB",
                        "fabric.ecn.kmax=600KB", "fabric.pfc.xoff=200KB"});
  ASSERT_EQ(ecn.warnings.size(), 1u);
  EXPECT_NE(ecn.warnings[0].find("fabric.ecn.kmin: ECN starts marking an egress queue at 300000 B, "
                                 "at or above the PFC trigger of one ingress queue (200000 B)"),
            std::string::npos)
      << ecn.warnings[0];
  Scenario room = LoadScenarioText(kGood, "s.yaml", {"fabric.pfc.headroom=20KB"});
  ASSERT_EQ(room.warnings.size(), 1u);
  EXPECT_NE(room.warnings[0].find("fabric.pfc.headroom: 20000 B is below the"), std::string::npos)
      << room.warnings[0];
}

}  // namespace
}  // namespace lossless::scenario
