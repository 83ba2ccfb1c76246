#include "audit/nccl/nccl_rules.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless::audit {
namespace {

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
    EXPECT_EQ(r.verdict, NcclVerdict::kPass) << f;
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
  EXPECT_EQ(r.verdict, NcclVerdict::kFail);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"below_line_rate"}));
  EXPECT_NEAR(*r.peak_efficiency, 302.0 / 400, 1e-9);
  // With a lower bar the same run passes.
  NcclRulesConfig lax = Ndr8();
  lax.min_efficiency = 0.75;
  EXPECT_EQ(Evaluate("g2_below_line_rate.log", lax)[0].verdict, NcclVerdict::kPass);
}

TEST(NcclRules, WrongElementsAndOutOfBounds) {
  auto r = Evaluate("g2_wrong_elements.log")[0];
  EXPECT_EQ(r.verdict, NcclVerdict::kFail);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"out_of_bounds", "wrong_elements"}));
  EXPECT_EQ(r.findings[1].line, 30);
  EXPECT_NE(r.findings[1].message.find("1024 wrong elements at size 1GiB"), std::string::npos);
}

TEST(NcclRules, FallingBusBw) {
  auto r = Evaluate("g2_falling_busbw.log")[0];
  EXPECT_EQ(r.verdict, NcclVerdict::kFail);
  ASSERT_EQ(Codes(r), (std::vector<std::string>{"falling_busbw"}));
  EXPECT_EQ(r.findings[0].line, 30);
  EXPECT_NE(r.findings[0].message.find("290.40 GB/s at 1GiB from 371.30 GB/s at 256MiB"),
            std::string::npos);
}

TEST(NcclRules, InPlaceFarBelowOutOfPlace) {
  auto r = Evaluate("g2_inplace_low.log")[0];
  ASSERT_EQ(Codes(r), (std::vector<std::string>{"inplace_low"}));
  EXPECT_EQ(r.findings[0].line, 29);
  EXPECT_EQ(r.verdict, NcclVerdict::kFail);
}

TEST(NcclRules, AboveLineRateIsNotAPass) {
  auto r = Evaluate("g2_above_line_rate_nvls.log")[0];
  EXPECT_EQ(r.verdict, NcclVerdict::kIndeterminate);
  ASSERT_EQ(Codes(r), (std::vector<std::string>{"above_line_rate"}));
  EXPECT_NE(r.findings[0].message.find("NVLS"), std::string::npos);
  EXPECT_EQ(r.findings[0].line, 28);  // first size above 400 GB/s: 64 MiB at 420.6
}

TEST(NcclRules, SingleNodeDoesNotExerciseFabric) {
  auto r = Evaluate("g2_single_node.log")[0];
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.verdict, NcclVerdict::kIndeterminate);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"single_node"}));
}

TEST(NcclRules, OnlySmallSizesCannotBeJudged) {
  auto r = Evaluate("g2_small_sizes_only.log")[0];
  EXPECT_EQ(r.verdict, NcclVerdict::kIndeterminate);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"no_large_sizes"}));
  NcclRulesConfig smaller = Ndr8();
  smaller.large_from_bytes = 64 << 20;
  smaller.min_efficiency = 0.80;
  EXPECT_EQ(Evaluate("g2_small_sizes_only.log", smaller)[0].verdict, NcclVerdict::kPass);
}

TEST(NcclRules, TruncatedTableIsAFinding) {
  auto r = Evaluate("g2_truncated_end.log")[0];
  EXPECT_EQ(r.verdict, NcclVerdict::kFail);
  EXPECT_EQ(Codes(r)[0], "truncated");
}

TEST(NcclRules, WithoutLineRateOnlyAnomaliesCount) {
  auto r = Evaluate("g2_below_line_rate.log", NcclRulesConfig{})[0];
  EXPECT_EQ(r.verdict, NcclVerdict::kPass);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"no_line_rate"}));
  EXPECT_FALSE(r.sizes[0].efficiency.has_value());
}

TEST(NcclRules, EveryRunOfAFileIsJudged) {
  auto reps = Evaluate("g3_two_runs.log");
  ASSERT_EQ(reps.size(), 2u);
  EXPECT_EQ(reps[0].collective, Collective::kAllReduce);
  EXPECT_EQ(reps[1].collective, Collective::kAllGather);
  EXPECT_DOUBLE_EQ(reps[1].peak_busbw_gbs, 373.1);
  EXPECT_EQ(reps[1].verdict, NcclVerdict::kPass);
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

TEST(NcclRules, CombineOrdersVerdicts) {
  EXPECT_EQ(Combine(NcclVerdict::kPass, NcclVerdict::kIndeterminate), NcclVerdict::kIndeterminate);
  EXPECT_EQ(Combine(NcclVerdict::kFail, NcclVerdict::kIndeterminate), NcclVerdict::kFail);
  EXPECT_EQ(VerdictName(NcclVerdict::kIndeterminate), "indeterminate");
}

}  // namespace
}  // namespace lossless::audit
