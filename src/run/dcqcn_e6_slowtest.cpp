// RefE6_DcqcnTwoFlowConvergence: reference experiment E6, run from
// scenarios/experiments/E6-dcqcn-two-flow.yaml through the scenario runner
// and its sampled series (docs/series.md).
//
// Target kind: published (loose). The tolerances are docs/model/experiments.md's, which
// it states are the project's own. Windows are in samples: with a 1 us
// interval, sample k covers ((k-1) us, k us], so [a, b] ms is k in
// (1000a, 1000b].
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cc/dcqcn_params.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {

using report::RunResult;
using report::Series;
using scenario::LoadScenarioFile;
using scenario::Scenario;

const char* kFile = LOSSLESS_SOURCE_DIR "/scenarios/experiments/E6-dcqcn-two-flow.yaml";

struct E6 {
  RunResult run;
  double line_gbps = 0;    // link rate
  double goodput_cap = 0;  // C: line rate x 1024/1106
  int64_t kmax = 0;
  // Measured figures.
  double flow1_min_bin_1_10 = 0;  // smallest 1 ms goodput bin of flow 1 in [1, 10] ms
  double cnps_1_10 = 0, cnps_0_10 = 0;
  double util_15_100 = 0, util_35_100 = 0;
  // Reported, not asserted (E6 check 2): time after flow 2's start (10 ms)
  // from which every 1 ms utilisation bin up to 100 ms is >= 90 %; -1 if
  // the last bin is below.
  double settle_90_ms = -1;
  double rate1_50_100 = 0, rate2_50_100 = 0, jain_50_100 = 0;
  double pauses_20_100 = 0, pauses_total = 0;
  double queue_le_kmax_20_100 = 0;  // fraction of samples
  double queue_max_20_100 = 0;
};

const Series& Get(const RunResult& r, const std::string& kind, const std::string& subject) {
  for (const auto& s : r.series.list)
    if (s.kind == kind && s.subject == subject) return s;
  ADD_FAILURE() << "no series " << kind << " " << subject;
  static const Series kEmpty;
  return kEmpty;
}

// Samples k in (from_ms, to_ms] (1 us interval), as vector indices k - 1.
double Sum(const Series& s, int from_ms, int to_ms) {
  double sum = 0;
  for (size_t i = static_cast<size_t>(from_ms) * 1000; i < static_cast<size_t>(to_ms) * 1000; ++i)
    sum += i < s.values.size() ? s.values[i] : 0;
  return sum;
}
double Mean(const Series& s, int from_ms, int to_ms) {
  return Sum(s, from_ms, to_ms) / (1000.0 * (to_ms - from_ms));
}

E6 RunE6(const std::vector<std::string>& sets, double line_gbps, int64_t kmax) {
  E6 e;
  Scenario sc = LoadScenarioFile(kFile, sets);
  e.run = RunScenario(sc);
  e.line_gbps = line_gbps;
  e.goodput_cap = line_gbps * 1024 / 1106;
  e.kmax = kmax;
  const RunResult& r = e.run;
  EXPECT_EQ(r.series.interval, units::Time::Us(1));
  EXPECT_EQ(r.series.samples, 100'000);
  const Series& g1 = Get(r, "goodput_gbps", "flow 0 host0->host2");
  const Series& g2 = Get(r, "goodput_gbps", "flow 1 host1->host2");
  e.flow1_min_bin_1_10 = 1e9;
  for (int ms = 1; ms < 10; ++ms)
    e.flow1_min_bin_1_10 = std::min(e.flow1_min_bin_1_10, Mean(g1, ms, ms + 1));
  // Checks 1 and 4 sum CNPs and PFC frames over every port: the file samples all 6.
  int cnp_series = 0, pause_series = 0;
  for (const auto& s : r.series.list) {
    cnp_series += s.kind == "cnps";
    pause_series += s.kind == "pause_frames";
  }
  EXPECT_EQ(cnp_series, 6);
  EXPECT_EQ(pause_series, 6);
  for (const auto& s : r.series.list) {
    if (s.kind == "cnps") {
      e.cnps_1_10 += Sum(s, 1, 10);
      e.cnps_0_10 += Sum(s, 0, 10);
    }
    if (s.kind == "pause_frames") {
      e.pauses_20_100 += Sum(s, 20, 100);
      e.pauses_total += Sum(s, 0, 100);
    }
  }
  e.util_15_100 = Mean(Get(r, "utilization", "leaf0->host2"), 15, 100);
  e.util_35_100 = Mean(Get(r, "utilization", "leaf0->host2"), 35, 100);
  {
    const Series& u = Get(r, "utilization", "leaf0->host2");
    int first_good = -1;  // first bin [ms, ms + 1) of the final run of bins >= 90 %
    for (int ms = 99; ms >= 10 && Mean(u, ms, ms + 1) >= 0.90; --ms) first_good = ms;
    e.settle_90_ms = first_good < 0 ? -1 : first_good - 10;
  }
  e.rate1_50_100 = Mean(g1, 50, 100);
  e.rate2_50_100 = Mean(g2, 50, 100);
  const double a = e.rate1_50_100, b = e.rate2_50_100;
  e.jain_50_100 = (a + b) * (a + b) / (2 * (a * a + b * b));
  const Series& q = Get(r, "queue_bytes", "leaf0->host2");
  int64_t le = 0, n = 0;
  for (size_t i = 20'000; i < 100'000 && i < q.values.size(); ++i, ++n) {
    le += q.values[i] <= static_cast<double>(kmax) ? 1 : 0;
    e.queue_max_20_100 = std::max(e.queue_max_20_100, q.values[i]);
  }
  e.queue_le_kmax_20_100 = n ? static_cast<double>(le) / static_cast<double>(n) : 0;
  std::printf(
      "E6 %s seed %llu: [1,10] ms flow 1 min 1-ms goodput %.3f Gb/s (C = %.3f); CNPs [1,10] ms "
      "%.0f, [0,10] ms %.0f; utilization [15,100] ms %.4f ([35,100] ms %.4f), 1-ms bins >= 90 %% "
      "from %.0f ms after "
      "flow 2 starts; [50,100] ms goodput %.3f / %.3f Gb/s (C/2 = %.3f), Jain %.5f; PAUSE frames "
      "[20,100] ms %.0f (whole "
      "run %.0f); queue <= Kmax in %.4f of [20,100] ms samples, max %.0f B; ECN marks %llu, "
      "drops %llu\n",
      sc.net.dcqcn_params.variant == cc::DcqcnVariant::kPaper ? "paper" : "firmware",
      static_cast<unsigned long long>(sc.seed), e.flow1_min_bin_1_10, e.goodput_cap, e.cnps_1_10,
      e.cnps_0_10, e.util_15_100, e.util_35_100, e.settle_90_ms, e.rate1_50_100, e.rate2_50_100,
      e.goodput_cap / 2, e.jain_50_100, e.pauses_20_100, e.pauses_total, e.queue_le_kmax_20_100,
      e.queue_max_20_100, static_cast<unsigned long long>(r.ecn_marks),
      static_cast<unsigned long long>(r.drops));
  EXPECT_EQ(r.drops, 0u);
  return e;
}

// Seeds 1..5 of each variant, run once per test binary and shared by the checks.
constexpr int kSeeds = 5;
enum class Variant { kPaper40, kFirmware40, kPaper100 };

const std::vector<E6>& Runs(Variant v) {
  static std::map<Variant, std::vector<E6>> cache;
  auto it = cache.find(v);
  if (it != cache.end()) return it->second;
  std::vector<E6> out;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    std::vector<std::string> sets = {"seed=" + std::to_string(seed)};
    if (v == Variant::kFirmware40) sets.push_back("fabric.cc=dcqcn-firmware");
    if (v == Variant::kPaper100) {
      for (const char* x :
           {"fabric.link_rate=100Gbps", "fabric.ecn.kmin=400KB", "fabric.ecn.kmax=1600KB",
            "fabric.ecn.pmax=0.2", "fabric.pfc.xoff=1600KB"})
        sets.emplace_back(x);
    }
    const bool g100 = v == Variant::kPaper100;
    out.push_back(RunE6(sets, g100 ? 100 : 40, g100 ? 1'600'000 : 200'000));
  }
  return cache.emplace(v, std::move(out)).first->second;
}

// 1. [1, 10] ms: flow 1 alone at >= 95 % of the wire-efficiency-adjusted line
//    rate (every 1 ms bin), and no CNP.
void Check1(Variant v) {
  for (const E6& e : Runs(v)) {
    EXPECT_GE(e.flow1_min_bin_1_10, 0.95 * e.goodput_cap);
    EXPECT_EQ(e.cnps_1_10, 0);
  }
}
// 2. [35, 100] ms: mean bottleneck utilisation >= 95 %. The [15, 100] ms mean
//    and the settling time of the 1 ms bins are printed by RunE6, not asserted.
void Check2(Variant v) {
  for (const E6& e : Runs(v)) EXPECT_GE(e.util_35_100, 0.95);
}
// 3. [50, 100] ms: each flow's mean rate within +-tol of C/2 (E6: 15 %);
//    Jain's index >= 0.98.
void Check3(Variant v, double tol = 0.15) {
  for (const E6& e : Runs(v)) {
    EXPECT_NEAR(e.rate1_50_100, e.goodput_cap / 2, tol * e.goodput_cap / 2);
    EXPECT_NEAR(e.rate2_50_100, e.goodput_cap / 2, tol * e.goodput_cap / 2);
    EXPECT_GE(e.jain_50_100, 0.98);
  }
}
// 4. [20, 100] ms: no PFC frame (an XON or refresh there would need an XOFF
//    episode, so every PFC frame counts); queue <= Kmax in >= 95 % of samples.
void Check4(Variant v) {
  for (const E6& e : Runs(v)) {
    EXPECT_EQ(e.pauses_20_100, 0);
    EXPECT_GE(e.queue_le_kmax_20_100, 0.95);
  }
}

TEST(RefE6_DcqcnTwoFlowConvergence, Check1_FlowAloneAtLineRateNoCnp) {
  Check1(Variant::kPaper40);
}

// Checks 2 and 3 as amended in E6 (utilisation window from 35 ms, +-15 % per
// flow). Why the windows start late (measured, seeds 1-5): when flow 2 starts
// at 10 ms the queue climbs past Kmax before the first CNP takes effect (20 us
// base RTT, Pmax 1 % marks late); with alpha = 1 every CNP halves the rate, so
// each flow takes about four cuts 50 us apart (40 -> 2.5 Gb/s). Recovery is
// additive only (R_AI = 40 Mb/s per 55 us timer event; hyper increase needs
// several 10 MB byte-counter periods, tens of ms at a few Gb/s), so the link
// is under-used until about 30 ms; the [15, 100] ms mean is 0.934-0.975 and
// is printed. Additive increase moves both flows by the same step, so the
// unfairness the transient leaves shrinks only through cuts, which Pmax 1 %
// makes rare (seed 3 is the worst, flow 1 12.0 % below C/2, Jain 0.987). This follows
// from the paper preset and E6's 5 us links (the reaction point is E5-exact);
// larger R_AI overshoots and the cuts that follow cost more than the faster
// recovery gains.
TEST(RefE6_DcqcnTwoFlowConvergence, Check2_BottleneckUtilisation) {
  Check2(Variant::kPaper40);
}

TEST(RefE6_DcqcnTwoFlowConvergence, Check3_FairShare) {
  Check3(Variant::kPaper40);
}

TEST(RefE6_DcqcnTwoFlowConvergence, Check4_NoPauseQueueBelowKmax) {
  Check4(Variant::kPaper40);
}

// 5. The firmware preset: metrics printed, only check 4 asserted.
TEST(RefE6_DcqcnTwoFlowConvergence, Check5_FirmwarePresetCheck4) {
  Check4(Variant::kFirmware40);
}

TEST(RefE6_DcqcnTwoFlowConvergence, Check1_100G) {
  Check1(Variant::kPaper100);
}

// At 100G the same 40 Mb/s additive step works against 2.5x the capacity:
// the [15, 100] ms mean is 0.859-0.865 (printed), [35, 100] ms 0.978-0.986.
TEST(RefE6_DcqcnTwoFlowConvergence, Check2_BottleneckUtilisation100G) {
  Check2(Variant::kPaper100);
}

// At 100G the flows settle closer to C/2 (worst measured, seeds 1-5: 8.0 %
// off, seed 3), so the tighter +-10 % this test had before E6 was amended
// stays.
TEST(RefE6_DcqcnTwoFlowConvergence, Check3_FairShare100G) {
  Check3(Variant::kPaper100, 0.10);
}

TEST(RefE6_DcqcnTwoFlowConvergence, Check4_NoPauseQueueBelowKmax100G) {
  Check4(Variant::kPaper100);
}

}  // namespace
}  // namespace lossless::run
