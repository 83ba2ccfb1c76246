#include "scenario/scenario.hpp"

#include <fstream>
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
      "cut_through, buffer, alpha, routing, data_class, pcie_rate, ecn, pfc, nic, cc)");
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

TEST(Scenario, DocsScenariosMdMatchesTheRegistry) {
  std::ifstream f(std::string(LOSSLESS_SOURCE_DIR) + "/docs/scenarios.md");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), ParamsMarkdown())
      << "refresh with: build/lossless params --markdown > docs/scenarios.md";
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
