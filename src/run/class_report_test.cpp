// Per-class port counters in the run output: the `classes` array of each
// JSON ports[] entry and the capped "per class" text block.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/run_report.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {

using report::RunResult;
using scenario::LoadScenarioText;

using ::testing::HasSubstr;
using ::testing::Not;

// A 4:1 incast at line rate through one leaf with PFC on priority 3 (the
// data class of the roce preset): the leaf pauses the senders on priority 3.
constexpr const char* kIncast = R"(name: incast
fabric:
  preset: roce
  link_rate: 100Gbps
  link_delay: 1us
  pfc:
    enabled: true
    priority: 3
topology:
  kind: leaf-spine
  gpus: 8
traffic:
  - pattern: incast
    target: 0
    senders: 4
    bytes: 2MiB
)";

TEST(ClassReport, JsonClassesListActiveClassesAndSumToPortTotals) {
  const RunResult r = RunScenario(LoadScenarioText(kIncast, "s.yaml"));
  const auto j = report::RunJson(r, false);
  ASSERT_TRUE(j["ports"].is_array());
  uint64_t class3_pause_tx = 0, class3_pause_rx = 0;
  double class3_paused = 0;
  for (const auto& p : j["ports"]) {
    ASSERT_TRUE(p["classes"].is_array()) << p["link"];
    uint64_t pause_tx = 0, pause_rx = 0, drops = 0, marks = 0, cnps = 0;
    double paused = 0;
    int last = -1;
    for (const auto& c : p["classes"]) {
      const int cls = c["class"].get<int>();
      EXPECT_GT(cls, last);  // ascending, each class once
      last = cls;
      const bool any = c["pause_tx"].get<uint64_t>() + c["pause_rx"].get<uint64_t>() +
                               c["ecn_marks"].get<uint64_t>() + c["cnps"].get<uint64_t>() +
                               c["drops"].get<uint64_t>() >
                           0 ||
                       c["paused_fraction"].get<double>() != 0 ||
                       c["credit_starved_fraction"].get<double>() != 0;
      EXPECT_TRUE(any) << p["link"] << " class " << cls;
      if (cls != 3) {  // only priority 3 is lossless: nothing else pauses
        EXPECT_EQ(c["pause_tx"].get<uint64_t>(), 0u);
        EXPECT_EQ(c["pause_rx"].get<uint64_t>(), 0u);
        EXPECT_EQ(c["paused_fraction"].get<double>(), 0);
      } else {
        class3_pause_tx += c["pause_tx"].get<uint64_t>();
        class3_pause_rx += c["pause_rx"].get<uint64_t>();
        class3_paused += c["paused_fraction"].get<double>();
      }
      pause_tx += c["pause_tx"].get<uint64_t>();
      pause_rx += c["pause_rx"].get<uint64_t>();
      drops += c["drops"].get<uint64_t>();
      marks += c["ecn_marks"].get<uint64_t>();
      cnps += c["cnps"].get<uint64_t>();
      paused += c["paused_fraction"].get<double>();
    }
    // The switch sends single-class frames here, so the sums are exact.
    EXPECT_EQ(pause_tx, p["pause_tx"].get<uint64_t>()) << p["link"];
    EXPECT_EQ(pause_rx, p["pause_rx"].get<uint64_t>()) << p["link"];
    EXPECT_EQ(drops, p["drops"].get<uint64_t>()) << p["link"];
    EXPECT_EQ(marks, p["ecn_marks"].get<uint64_t>()) << p["link"];
    EXPECT_EQ(cnps, p["cnps"].get<uint64_t>()) << p["link"];
    EXPECT_NEAR(paused, p["paused_fraction"].get<double>(), 1e-12) << p["link"];
  }
  EXPECT_GT(class3_pause_tx, 0u);
  EXPECT_EQ(class3_pause_rx, class3_pause_tx);  // every frame sent is received
  EXPECT_GT(class3_paused, 0);
  EXPECT_EQ(r.pause_frames, class3_pause_tx);
  EXPECT_THAT(report::RunText(r, false), HasSubstr("per class  class  pause tx/rx"));
}

// The same incast on InfiniBand, and with PFC headroom far too small: the
// per-class FCP counts (per VL) and lossless drops in JSON sum to the port
// totals, and the text block has their columns.
constexpr const char* kIbIncast = R"(name: ib-incast
fabric:
  preset: infiniband
  link_rate: 100Gbps
  link_delay: 1us
topology:
  kind: leaf-spine
  gpus: 8
traffic:
  - pattern: incast
    target: 0
    senders: 4
    bytes: 1MiB
)";

void ExpectNewClassCountersSum(const nlohmann::ordered_json& j, const char* key,
                               const char* port_key, uint64_t& total) {
  for (const auto& p : j["ports"]) {
    uint64_t sum = 0;
    for (const auto& c : p["classes"]) sum += c[key].get<uint64_t>();
    EXPECT_EQ(sum, p[port_key].get<uint64_t>()) << p["link"] << " " << key;
    total += sum;
  }
}

TEST(ClassReport, FcpsAndLosslessDropsPerClassSumToPortTotals) {
  const RunResult ib = RunScenario(LoadScenarioText(kIbIncast, "ib.yaml"));
  const auto j = report::RunJson(ib, false);
  uint64_t fcp_tx = 0, fcp_rx = 0;
  ExpectNewClassCountersSum(j, "fcp_tx", "fcp_tx", fcp_tx);
  ExpectNewClassCountersSum(j, "fcp_rx", "fcp_rx", fcp_rx);
  EXPECT_GT(fcp_tx, 0u);
  EXPECT_GT(fcp_rx, 0u);
  EXPECT_EQ(fcp_tx, ib.fcp_frames);
  const std::string text = report::RunText(ib, false);
  EXPECT_THAT(text, HasSubstr("drops  lossless  watchdog  FCPs tx/rx\n"));

  const RunResult tight =
      RunScenario(LoadScenarioText(kIncast, "s.yaml", {"fabric.pfc.headroom=5KB"}));
  const auto jt = report::RunJson(tight, false);
  uint64_t lossless = 0, wd = 0;
  ExpectNewClassCountersSum(jt, "lossless_drops", "lossless_drops", lossless);
  ExpectNewClassCountersSum(jt, "watchdog_drops", "watchdog_drops", wd);
  EXPECT_GT(lossless, 0u);
  EXPECT_EQ(lossless, tight.lossless_drops);
  EXPECT_EQ(wd, 0u);
}

}  // namespace
}  // namespace lossless::run
