// Sampled time series (outputs.series.*, docs/series.md): sample count and
// times, exact values for a lone flow at line rate, determinism, limits.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/run_report.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace series {

using report::RunResult;
using report::Series;
using scenario::LoadScenarioText;
using scenario::Scenario;

using ::testing::HasSubstr;

// One flow host0 -> host1 through a single switch leaf0, 100G, MTU 1024.
// Outputs start on line 15.
constexpr const char* kLone = R"(name: lone
fabric:
  preset: roce
  link_rate: 100Gbps
  link_delay: 1us
  mtu: 1024
topology:
  kind: leaf-spine
  gpus: 2
traffic:
  - pattern: flow
    src: 0
    dst: 1
    bytes: 4MiB
outputs:
  series:
    interval: 10us
)";

const Series* Find(const RunResult& r, const std::string& kind, const std::string& subject) {
  for (const auto& s : r.series.list)
    if (s.kind == kind && s.subject == subject) return &s;
  return nullptr;
}

std::string ErrorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    RunScenario(LoadScenarioText(text, "s.yaml", sets));
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(Series, SampleCountAndTimesAreExact) {
  // Cut off at 100 us: exactly 10 samples, at 10, 20, ... 100 us.
  RunResult cut = RunScenario(LoadScenarioText(kLone, "s.yaml", {"stop_time=100us"}));
  EXPECT_EQ(cut.stop_reason, "time limit");
  EXPECT_EQ(cut.series.interval, units::Time::Us(10));
  EXPECT_EQ(cut.series.samples, 10);
  for (const auto& s : cut.series.list) EXPECT_EQ(s.values.size(), 10u) << s.kind << s.subject;
  std::string csv = report::SeriesCsv(cut.series);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 11);
  EXPECT_THAT(csv, HasSubstr("\n10000000,"));
  EXPECT_THAT(csv, HasSubstr("\n100000000,"));
  EXPECT_THAT(csv, ::testing::Not(HasSubstr("\n110000000,")));

  // Run to completion: one sample per whole interval before the last delivery.
  RunResult full = RunScenario(LoadScenarioText(kLone, "s.yaml"));
  ASSERT_EQ(full.stop_reason, "completed");
  EXPECT_EQ(full.series.samples, full.sim_time.ps() / units::Time::Us(10).ps());
  // The goodput samples add up to the bytes delivered by the last sample:
  // everything but the tail after it (less than one interval at line rate).
  const Series* g = Find(full, "goodput_gbps", "flow 0 host0->host1");
  ASSERT_NE(g, nullptr);
  double bytes = 0;
  for (double v : g->values) bytes += v * 10'000'000 / 8000;
  const double total = 4 << 20;
  EXPECT_LE(bytes, total);
  EXPECT_GT(bytes, total - 100e9 / 8 * 10e-6);
  EXPECT_EQ(static_cast<int64_t>(bytes) % 1024, 0);
}

TEST(Series, LoneFlowShowsTheWireEfficiencyAdjustedLineRate) {
  RunResult r = RunScenario(LoadScenarioText(kLone, "s.yaml"));
  // A 1024-B payload is 1,106 B of wire time on RoCE v2: one packet every
  // 88,480 ps at 100G, i.e. 100 x 1024/1106 = 92.586 Gb/s of goodput. A
  // 10 us interval holds 113.02 packet times, so every full interval delivers
  // 113 or 114 packets: the rate within one packet of rounding.
  const int64_t packet_ps = 88'480;
  const Series* g = Find(r, "goodput_gbps", "flow 0 host0->host1");
  ASSERT_NE(g, nullptr);
  ASSERT_GE(g->values.size(), 30u);
  double sum = 0;
  size_t n = 0;
  // Sample 1 holds the pipeline fill (first delivery at about 2.5 us); the
  // last sample may hold the flow's end.
  for (size_t k = 1; k + 1 < g->values.size(); ++k) {
    const double packets = g->values[k] * 10'000'000 / 8000 / 1024;
    EXPECT_TRUE(packets == 113 || packets == 114) << "sample " << k + 1 << ": " << packets;
    sum += g->values[k];
    ++n;
  }
  const double line_goodput = 100.0 * 1024 / 1106;
  EXPECT_NEAR(sum / static_cast<double>(n), line_goodput, 0.8192 / static_cast<double>(n) + 1e-9);
  // The switch egress toward host1 is busy back to back and never holds more
  // than the frame it is about to send.
  const Series* u = Find(r, "utilization", "leaf0->host1");
  ASSERT_NE(u, nullptr);
  for (size_t k = 1; k + 1 < u->values.size(); ++k) {
    const double started = u->values[k] * 10'000'000 / static_cast<double>(packet_ps);
    EXPECT_NEAR(started, std::round(started), 1e-6) << "sample " << k + 1;
    EXPECT_TRUE(std::round(started) == 113 || std::round(started) == 114) << started;
  }
  const Series* q = Find(r, "queue_bytes", "leaf0->host1");
  ASSERT_NE(q, nullptr);
  EXPECT_LE(q->max, 1086);
  // Same rates, no congestion: no PAUSE frames; no DCQCN: no CNPs, no rate series.
  EXPECT_EQ(r.pause_frames, 0u);
  EXPECT_EQ(Find(r, "dcqcn_rate_gbps", "flow 0 host0->host1"), nullptr);
}

TEST(Series, DcqcnRateSeriesFollowsTheReactionPoint) {
  RunResult r = RunScenario(
      LoadScenarioText(kLone, "s.yaml", {"fabric.cc=dcqcn-paper", "fabric.ecn.enabled=true"}));
  const Series* rate = Find(r, "dcqcn_rate_gbps", "flow 0 host0->host1");
  ASSERT_NE(rate, nullptr);
  // Alone on the path the flow is never marked: it stays at line rate.
  EXPECT_EQ(rate->min, 100);
  EXPECT_EQ(rate->max, 100);
}

TEST(Series, SameScenarioSameBytes) {
  const std::vector<std::string> sets = {"fabric.cc=dcqcn-paper", "fabric.ecn.enabled=true",
                                         "fabric.ecn.kmin=5KB", "fabric.ecn.kmax=50KB",
                                         "topology.gpus=4"};
  // Three senders into host1.
  std::string incast = kLone;
  incast.replace(incast.find("traffic:"), incast.find("outputs:") - incast.find("traffic:"),
                 "traffic:\n  - pattern: incast\n    target: 1\n    bytes: 1MiB\n");
  RunResult a = RunScenario(LoadScenarioText(incast, "s.yaml", sets));
  RunResult b = RunScenario(LoadScenarioText(incast, "s.yaml", sets));
  EXPECT_GT(a.ecn_marks, 0u);
  EXPECT_EQ(report::RunJson(a, false).dump(), report::RunJson(b, false).dump());
  EXPECT_EQ(report::SeriesCsv(a.series), report::SeriesCsv(b.series));
  EXPECT_THAT(report::RunText(a, false), HasSubstr("series     "));
}

TEST(Series, PortSelection) {
  RunResult r = RunScenario(LoadScenarioText(
      kLone, "s.yaml", {"outputs.series.ports=leaf0->host1", "outputs.series.flows=none"}));
  ASSERT_EQ(r.series.list.size(), 4u);  // queue, utilization, PAUSE frames, CNPs
  for (const auto& s : r.series.list) EXPECT_EQ(s.subject, "leaf0->host1");
  RunResult all = RunScenario(LoadScenarioText(kLone, "s.yaml", {"outputs.series.ports=all"}));
  EXPECT_EQ(all.series.list.size(), 4u * 4 + 1);  // 4 ports, 1 flow
  // busy: host1 only sends back nothing (no ACKs modelled, no CNPs): its port is left out.
  RunResult busy = RunScenario(LoadScenarioText(kLone, "s.yaml"));
  EXPECT_EQ(busy.series.quiet_ports, 2u);
  EXPECT_EQ(busy.series.list.size(), 2u * 4 + 1);
}

TEST(Series, ErrorsNameTheFieldAndTheLimit) {
  EXPECT_EQ(ErrorOf(kLone, {"outputs.series.interval=1us"}),
            "<--set>: outputs.series.interval: expected an interval of at least 10us (stop_time "
            "10s allows at most 1000000 samples per series), got \"1us\"");
  EXPECT_EQ(ErrorOf(kLone, {"outputs.series.interval=0us"}),
            "<--set>: outputs.series.interval: expected an interval above zero, got \"0us\"");
  EXPECT_THAT(ErrorOf(kLone, {"outputs.series.ports=leaf0->host9"}),
              HasSubstr("outputs.series.ports: expected busy, all, none or comma-separated link "
                        "directions of this topology such as "));
  std::string no_interval = kLone;
  const std::string block = "  series:\n    interval: 10us\n";
  no_interval.replace(no_interval.find(block), block.size(), "  series_csv: out.csv\n");
  EXPECT_EQ(ErrorOf(no_interval),
            "s.yaml:16: outputs.series_csv: expected outputs.series.interval along with "
            "outputs.series_csv, got \"none\"");
  // Bounded memory: the run ends with an error once the series would hold
  // more than max_values (10,000,000 in RunScenario; lowered here so the test
  // stays short). 17 series x 5 samples = 85 > 80.
  Scenario sc = LoadScenarioText(kLone, "s.yaml");
  sc.series.max_values = 80;
  try {
    RunScenario(sc);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "s.yaml:17: outputs.series.interval: expected at most 80 series values in "
                 "memory (series x samples), got 17 series x 5 samples by 50us: raise the "
                 "interval, lower stop_time, or select fewer with outputs.series.ports / "
                 "outputs.series.flows");
  }
}

}  // namespace series
}  // namespace
}  // namespace lossless::run
