#include "audit/nccl/nccl_rules.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless::audit::nccl {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace rules {

NcclRulesConfig Ndr8() {
  NcclRulesConfig c;
  c.nic_gbps = 400;
  c.nics_per_node = 8;
  return c;
}

std::vector<NcclRunReport> Evaluate(const std::string& name, const NcclRulesConfig& cfg = Ndr8()) {
  std::ifstream in(std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/nccl/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::vector<NcclRunReport> out;
  for (const auto& run : ParseNcclLog(in, name).runs) out.push_back(EvaluateNcclRun(run, cfg));
  return out;
}

std::vector<std::string> Codes(const NcclRunReport& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) out.push_back(f.code);
  return out;
}

TEST(NcclRules, HealthyTwoNodeRunPasses) {
  for (const char* f :
       {"g2_allreduce_healthy.log", "g3_allreduce_healthy.log", "g2_noisy_srun_crlf.log"}) {
    auto reps = Evaluate(f);
    ASSERT_EQ(reps.size(), 1u) << f;
    const auto& r = reps[0];
    EXPECT_EQ(r.verdict, Verdict::kPass) << f;
    EXPECT_TRUE(r.findings.empty()) << f;
    EXPECT_EQ(r.ranks, 16);
    EXPECT_EQ(r.nodes, 2);
    EXPECT_DOUBLE_EQ(r.peak_busbw_gbs, 376.2);
    EXPECT_EQ(r.peak_size_bytes, 4294967296);
    EXPECT_DOUBLE_EQ(*r.line_rate_gbs, 400.0);
    EXPECT_NEAR(*r.peak_efficiency, 0.9405, 1e-4);
    // 256 MiB and up are judged; 64 MiB is not.
    EXPECT_FALSE(r.sizes[3].judged);
    EXPECT_TRUE(r.sizes[4].judged);
    EXPECT_NEAR(*r.sizes[4].efficiency, 366.3 / 400, 1e-9);
  }
}

TEST(NcclRules, AverageFromFooterOrComputed) {
  auto r = Evaluate("g2_allreduce_healthy.log")[0];
  EXPECT_TRUE(r.avg_from_footer);
  EXPECT_NEAR(r.avg_busbw_gbs, 265.571, 1e-3);
  auto t = Evaluate("g2_truncated_end.log")[0];
  EXPECT_FALSE(t.avg_from_footer);
  EXPECT_NEAR(t.avg_busbw_gbs, (40.1 + 120.5 + 250.2 + 330.8 + 366.3) / 5, 1e-9);
}

TEST(NcclRules, BelowLineRateFails) {
  auto r = Evaluate("g2_below_line_rate.log")[0];
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"below_line_rate"}));
  EXPECT_NEAR(*r.peak_efficiency, 302.0 / 400, 1e-9);
  // With a lower bar the same run passes.
  NcclRulesConfig lax = Ndr8();
  lax.min_efficiency = 0.75;
  EXPECT_EQ(Evaluate("g2_below_line_rate.log", lax)[0].verdict, Verdict::kPass);
}

TEST(NcclRules, WrongElementsAndOutOfBounds) {
  auto r = Evaluate("g2_wrong_elements.log")[0];
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"out_of_bounds", "wrong_elements"}));
  EXPECT_EQ(r.findings[1].line, 30);
  EXPECT_NE(r.findings[1].message.find("1024 wrong elements at size 1GiB"), std::string::npos);
}

TEST(NcclRules, FallingBusBw) {
  auto r = Evaluate("g2_falling_busbw.log")[0];
  EXPECT_EQ(r.verdict, Verdict::kFail);
  ASSERT_EQ(Codes(r), (std::vector<std::string>{"falling_busbw"}));
  EXPECT_EQ(r.findings[0].line, 30);
  EXPECT_NE(r.findings[0].message.find("290.40 GB/s at 1GiB from 371.30 GB/s at 256MiB"),
            std::string::npos);
}

TEST(NcclRules, InPlaceFarBelowOutOfPlace) {
  auto r = Evaluate("g2_inplace_low.log")[0];
  ASSERT_EQ(Codes(r), (std::vector<std::string>{"inplace_low"}));
  EXPECT_EQ(r.findings[0].line, 29);
  EXPECT_EQ(r.verdict, Verdict::kFail);
}

TEST(NcclRules, AboveLineRateIsNotAPass) {
  auto r = Evaluate("g2_above_line_rate_nvls.log")[0];
  EXPECT_EQ(r.verdict, Verdict::kIndeterminate);
  ASSERT_EQ(Codes(r), (std::vector<std::string>{"above_line_rate"}));
  EXPECT_NE(r.findings[0].message.find("NVLS"), std::string::npos);
  EXPECT_EQ(r.findings[0].line, 28);  // first size above 400 GB/s: 64 MiB at 420.6
}

TEST(NcclRules, SingleNodeDoesNotExerciseFabric) {
  auto r = Evaluate("g2_single_node.log")[0];
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.verdict, Verdict::kIndeterminate);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"single_node"}));
}

TEST(NcclRules, OnlySmallSizesCannotBeJudged) {
  auto r = Evaluate("g2_small_sizes_only.log")[0];
  EXPECT_EQ(r.verdict, Verdict::kIndeterminate);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"no_large_sizes"}));
  NcclRulesConfig smaller = Ndr8();
  smaller.large_from_bytes = 64 << 20;
  smaller.min_efficiency = 0.80;
  EXPECT_EQ(Evaluate("g2_small_sizes_only.log", smaller)[0].verdict, Verdict::kPass);
}

TEST(NcclRules, TruncatedTableIsAFinding) {
  auto r = Evaluate("g2_truncated_end.log")[0];
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(Codes(r)[0], "truncated");
}

TEST(NcclRules, WithoutLineRateOnlyAnomaliesCount) {
  auto r = Evaluate("g2_below_line_rate.log", NcclRulesConfig{})[0];
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"no_line_rate"}));
  EXPECT_FALSE(r.sizes[0].efficiency.has_value());
}

TEST(NcclRules, EveryRunOfAFileIsJudged) {
  auto reps = Evaluate("g3_two_runs.log");
  ASSERT_EQ(reps.size(), 2u);
  EXPECT_EQ(reps[0].collective, Collective::kAllReduce);
  EXPECT_EQ(reps[1].collective, Collective::kAllGather);
  EXPECT_DOUBLE_EQ(reps[1].peak_busbw_gbs, 373.1);
  EXPECT_EQ(reps[1].verdict, Verdict::kPass);
}

TEST(NcclRules, FindingsPerRuleAreCapped) {
  NcclRun run;
  run.generation = NcclGeneration::kG2Classic;
  for (int i = 0; i < 9; ++i) {
    NcclRow row;
    row.line = 10 + i;
    row.size_bytes = (1LL << 20) << i;
    row.out_of_place = {10, 10, 10, 3.0};
    row.in_place = {10, 10, 10, 0.0};
    run.rows.push_back(row);
  }
  NcclRulesConfig cfg;
  cfg.max_findings_per_rule = 2;
  auto r = EvaluateNcclRun(run, cfg);
  ASSERT_EQ(r.findings.size(), 4u);  // 2 + summary + no_line_rate note
  EXPECT_EQ(r.findings[2].message, "... and 7 more rows like this");
}

TEST(NcclRules, ConfigValidation) {
  NcclRulesConfig c;
  c.nic_gbps = 400;
  EXPECT_THROW(ValidateConfig(c), InputError);  // NICs per node missing
  c.nics_per_node = 0;
  EXPECT_THROW(ValidateConfig(c), InputError);
  c.nics_per_node = 8;
  EXPECT_NO_THROW(ValidateConfig(c));
  c.min_efficiency = 1.5;
  EXPECT_THROW(ValidateConfig(c), InputError);
}

// --- Rule boundaries on generated logs ------------------------------------
// A G2 all_reduce_perf log of 16 ranks on 2 nodes whose rows are given as
// (size, out-of-place busbw, in-place busbw, wrong elements); algbw and time
// follow from busbw with the all-reduce factor 2(n-1)/n.
struct GenRow {
  int64_t size;
  double busbw_op, busbw_ip;
  int wrong = 0;
};

std::string GeneratedLog(const std::vector<GenRow>& rows, const std::string& oob = "0 OK") {
  std::string s =
      "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4294967296 step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
  for (int r = 0; r < 16; ++r)
    s += fmt::format(
        "#  Rank {:2} Group  0 Pid  {} on     node-{} device  {} [0000:1b:00] NVIDIA "
        "H100 80GB HBM3\n",
        r, 40000 + r, r < 8 ? 'a' : 'b', r % 8);
  s +=
      "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  const double factor = 2.0 * 15 / 16;
  for (const GenRow& r : rows) {
    const double alg_op = r.busbw_op / factor, alg_ip = r.busbw_ip / factor;
    s += fmt::format(
        "{:12} {:13}     float     sum      -1 {:8.1f} {:7.2f} {:7.2f} {:6} {:8.1f} "
        "{:7.2f} {:7.2f} {:6}\n",
        r.size, r.size / 4, static_cast<double>(r.size) / alg_op / 1e3, alg_op, r.busbw_op, r.wrong,
        static_cast<double>(r.size) / alg_ip / 1e3, alg_ip, r.busbw_ip, 0);
  }
  s += "# Out of bounds values : " + oob + "\n# Avg bus bandwidth    : 100.0 \n#\n";
  return s;
}

NcclRunReport EvaluateText(const std::string& text) {
  std::istringstream in(text);
  NcclLog log = ParseNcclLog(in, "gen.log");
  EXPECT_EQ(log.runs.size(), 1u);
  return EvaluateNcclRun(log.runs.at(0), Ndr8());
}

// The three judged sizes (256 MiB .. 4 GiB) all at `busbw`; 8 x 400 Gb/s = 400 GB/s.
NcclRunReport AtPlateau(double busbw) {
  return EvaluateText(GeneratedLog({{64 << 20, 300, 300},
                                    {256 << 20, busbw, busbw},
                                    {1LL << 30, busbw, busbw},
                                    {4LL << 30, busbw, busbw}}));
}

TEST(NcclRulesBoundaries, LineRateRuleAt90To92PercentOfLineRate) {
  // min_efficiency 0.92 of 400 GB/s = 368 GB/s.
  for (double busbw : {360.0, 364.0, 367.6}) {  // 90 %, 91 %, 91.9 %
    const NcclRunReport r = AtPlateau(busbw);
    EXPECT_EQ(r.verdict, Verdict::kFail) << busbw;
    EXPECT_EQ(Codes(r), (std::vector<std::string>{"below_line_rate"})) << busbw;
    EXPECT_NEAR(*r.peak_efficiency, busbw / 400, 1e-9);
  }
  for (double busbw : {368.0, 372.0}) {  // 92 %, 93 %
    const NcclRunReport r = AtPlateau(busbw);
    EXPECT_EQ(r.verdict, Verdict::kPass) << busbw;
    EXPECT_TRUE(r.findings.empty()) << busbw;
  }
}

TEST(NcclRulesBoundaries, LineRateIsGigabitsOverEightBitsPerByte) {
  const NcclRunReport r = AtPlateau(372.0);
  EXPECT_DOUBLE_EQ(*r.line_rate_gbs, 400.0);  // 8 NICs x 400 Gb/s / 8
}

TEST(NcclRulesBoundaries, FallingBusbwAtTenPercent) {
  // 4 GiB falls 11 % below the best smaller size: a finding; 9 %: none.
  auto falling = [](double last) {
    return EvaluateText(
        GeneratedLog({{256 << 20, 380, 380}, {1LL << 30, 380, 380}, {4LL << 30, last, last}}));
  };
  const NcclRunReport bad = falling(380 * 0.89);
  EXPECT_EQ(Codes(bad), (std::vector<std::string>{"falling_busbw"}));
  EXPECT_EQ(bad.verdict, Verdict::kFail);
  const NcclRunReport ok = falling(380 * 0.93);
  EXPECT_TRUE(ok.findings.empty()) << ok.findings.size();
}

TEST(NcclRulesBoundaries, InPlaceGapAtTwentyPercent) {
  auto gap = [](double in_place) {
    return EvaluateText(
        GeneratedLog({{256 << 20, 380, 380}, {1LL << 30, 380, 380}, {4LL << 30, 380, in_place}}));
  };
  const NcclRunReport bad = gap(380 * 0.78);
  EXPECT_EQ(Codes(bad), (std::vector<std::string>{"inplace_low"}));
  const NcclRunReport ok = gap(380 * 0.82);
  EXPECT_TRUE(ok.findings.empty());
}

TEST(NcclRulesBoundaries, OneWrongElementFails) {
  const NcclRunReport r = EvaluateText(
      GeneratedLog({{256 << 20, 380, 380}, {1LL << 30, 380, 380, 1}, {4LL << 30, 380, 380}}));
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"wrong_elements"}));
}

TEST(NcclRulesBoundaries, OutOfBoundsFooterFailedEvenAtZero) {
  const NcclRunReport r = EvaluateText(GeneratedLog(
      {{256 << 20, 380, 380}, {1LL << 30, 380, 380}, {4LL << 30, 380, 380}}, "0 FAILED"));
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"out_of_bounds"}));
}

TEST(NcclRulesBoundaries, RepeatedSizeStartsANewSweep) {
  // -N cycles over one size (-b 4G -e 4G -N 3): each row is a sweep of its
  // own, so a slower repetition is noise between iterations, not busbw
  // "falling at a larger size".
  const NcclRunReport r = EvaluateText(
      GeneratedLog({{4LL << 30, 380, 380}, {4LL << 30, 300, 300}, {4LL << 30, 385, 385}}));
  for (const auto& f : r.findings) EXPECT_NE(f.code, "falling_busbw") << f.message;
  // The same rows as one sweep of growing sizes do fall.
  const NcclRunReport g = EvaluateText(
      GeneratedLog({{1LL << 30, 380, 380}, {4LL << 30, 300, 300}, {8LL << 30, 385, 385}}));
  EXPECT_EQ(Codes(g), (std::vector<std::string>{"falling_busbw"}));
}

}  // namespace rules
}  // namespace
}  // namespace lossless::audit::nccl
