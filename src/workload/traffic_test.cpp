// Traffic expansion (workload::ExpandTraffic): patterns, repeats, and the
// errors found when expanding against the host count.
#include "workload/traffic.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenario/scenario.hpp"
#include "scenario/scenario_test_util.hpp"

namespace lossless::workload {
namespace {

using scenario::LoadScenarioText;
using scenario::Scenario;
using scenario::testing::ErrorOf;
using scenario::testing::kGood;

TEST(Scenario, JsonIsAccepted) {
  Scenario s = LoadScenarioText(
      R"({"topology": {"kind": "ls-ring", "gpus": 16}, "traffic": [{"pattern": "flow", "src": 0, "dst": 9, "bytes": "1MiB"}]})",
      "s.json");
  auto flows = ExpandTraffic(s, 16);
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].dst, 9u);
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

std::string ExpandError(const Scenario& s, uint32_t hosts) {
  try {
    ExpandTraffic(s, hosts);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Issue 16: {all-to-all, repeat: 1000000, every: 1us} on 64 hosts is 4e9
// flows; the count is refused at the entry's line before any flow is built.
TEST(Scenario, FlowCountIsLimitedBeforeExpanding) {
  std::string text = kGood;
  text.replace(text.find("  - pattern: ring"), std::string::npos,
               "  - pattern: all-to-all\n    bytes: 1KiB\n    repeat: 1000000\n"
               "    every: 1us\n");
  Scenario s = LoadScenarioText(text, "s.yaml");
  EXPECT_EQ(s.max_flows, 4'000'000);
  EXPECT_EQ(CountFlows(s.traffic[0], 64, s.stop_time), 64 * 63 * 1'000'000LL);
  EXPECT_EQ(ExpandError(s, 64),
            "s.yaml:11: traffic.0: expands to 4032000000 flows, above limits.max_flows "
            "(4000000): expected fewer hosts or repeats, an earlier stop_time, or a larger "
            "limits.max_flows");
  // The limit is a field; the entries before count towards it.
  Scenario small = LoadScenarioText(
      kGood, "s.yaml", {"limits.max_flows=40", "traffic.1.pattern=incast", "traffic.1.bytes=1KiB"});
  EXPECT_EQ(ExpandError(small, 32),
            "<--set>: traffic.1: expands to 31 flows, 63 with the entries before it, above "
            "limits.max_flows (40): expected fewer hosts or repeats, an earlier stop_time, or a "
            "larger limits.max_flows");
  EXPECT_EQ(ExpandTraffic(LoadScenarioText(kGood, "s.yaml", {"limits.max_flows=32"}), 32).size(),
            32u);
}

// Repeats that start at or after stop_time are neither built nor counted.
TEST(Scenario, RepeatsAfterStopTimeAreNotBuilt) {
  Scenario s = LoadScenarioText(kGood, "s.yaml",
                                {"stop_time=100us", "traffic.0.repeat=1000000",
                                 "traffic.0.every=1us", "traffic.0.start=10us"});
  EXPECT_EQ(RepeatsBefore(s.traffic[0], s.stop_time), 90);
  EXPECT_EQ(ExpandTraffic(s, 32).size(), 90u * 32u);
  EXPECT_EQ(ExpandTraffic(s, 32).back().start, units::Time::Us(99));
  s.stop_time = units::Time::Us(10);
  EXPECT_EQ(RepeatsBefore(s.traffic[0], s.stop_time), 0);
}

}  // namespace
}  // namespace lossless::workload
