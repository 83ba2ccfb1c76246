// Parse-back check: `lossless audit nccl`'s parser reads what the perf writer
// prints, in both layouts, and recovers the sizes, counts, times and bandwidths;
// the audit rules give the verdict a real log would. This binary links `perf` and
// `audit/nccl`, which must not depend on each other (docs/architecture.md).
#include <algorithm>
#include <cmath>
#include <sstream>

#include <gtest/gtest.h>

#include "audit/nccl/nccl_log.hpp"
#include "audit/nccl/nccl_rules.hpp"
#include "perf/model_run.hpp"
#include "perf/result.hpp"

namespace lossless {
namespace {

namespace an = audit::nccl;

perf::PerfResult Model(std::vector<std::string> args, double nic_gbs = 48.5) {
  perf::PerfOptions o = perf::ParsePerfArgs(args);
  collective::AlphaBetaParams p;
  p.nodes = static_cast<int>(o.nodes);
  p.gpus_per_node = static_cast<int>(o.GpusPerNode());
  p.nics_per_node = p.gpus_per_node;
  p.nic_gbs = nic_gbs;
  collective::CommShape shape{p.nodes, p.gpus_per_node};
  collective::NodeHardware hw;
  hw.gpus = hw.nics = p.gpus_per_node;
  collective::TuningModel tuning(shape, collective::DeriveSearchGraph(hw, p.nodes));
  return perf::ModelRun(o, p, tuning);
}

an::NcclRun ParseOne(const std::string& text) {
  std::istringstream in(text);
  an::NcclLog log = an::ParseNcclLog(in, "<perf>");
  EXPECT_EQ(log.runs.size(), 1u);
  return log.runs.empty() ? an::NcclRun{} : log.runs.front();
}

// The printed value, read back, is within the printed precision of the true one.
void ExpectClose(double parsed, double truth, const std::string& what) {
  EXPECT_LE(std::fabs(parsed - truth), 0.005 + 1e-3 * std::fabs(truth))
      << what << " " << parsed << " " << truth;
}

TEST(PerfRoundTrip, AuditParserRecoversEveryRowInBothLayouts) {
  for (const char* coll : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
                           "reduce", "sendrecv"}) {
    for (const char* format : {"g3", "g2"}) {
      perf::PerfResult r = Model(
          {coll, "-g", "8", "--nodes", "2", "-b", "8", "-e", "1G", "-f", "4", "--format", format});
      const std::string text = perf::FormatNcclTests(r, perf::ModelNotes(r.nccl_version, ""));
      an::NcclRun run = ParseOne(text);
      SCOPED_TRACE(std::string(coll) + " " + format);
      EXPECT_EQ(run.generation, std::string(format) == "g3" ? an::NcclGeneration::kG3Current
                                                            : an::NcclGeneration::kG2Classic);
      EXPECT_EQ(an::CollectiveName(run.collective), coll);
      EXPECT_FALSE(run.collective_inferred);
      EXPECT_EQ(run.ranks.size(), 16u);
      EXPECT_EQ(run.Hosts().size(), 2u);
      EXPECT_EQ(run.ranks[15].gpu_name, "NVIDIA H100 80GB HBM3");
      EXPECT_FALSE(run.truncated);
      ASSERT_EQ(run.rows.size(), r.sizes.size());
      for (size_t i = 0; i < r.sizes.size(); ++i) {
        const perf::Row want = perf::ToRow(r.sizes[i], r.options.collective, r.options.Ranks());
        const an::NcclRow& got = run.rows[i];
        EXPECT_EQ(got.size_bytes, want.size_bytes);
        EXPECT_EQ(got.count, want.count);
        EXPECT_EQ(got.type, "float");
        EXPECT_EQ(got.redop, want.redop);
        EXPECT_EQ(got.root, want.root);
        ExpectClose(got.out_of_place.time_us, want.out_of_place.time_us, "time");
        ExpectClose(got.out_of_place.algbw_gbs, want.out_of_place.algbw_gbs, "algbw");
        ExpectClose(got.out_of_place.busbw_gbs, want.out_of_place.busbw_gbs, "busbw");
        ExpectClose(got.in_place.busbw_gbs, want.in_place.busbw_gbs, "busbw in-place");
        EXPECT_EQ(got.in_place.wrong.has_value(), want.in_place.wrong.has_value());
      }
      ASSERT_TRUE(run.out_of_bounds.has_value());
      EXPECT_EQ(*run.out_of_bounds, 0);
      ASSERT_TRUE(run.avg_busbw_gbs.has_value());
      const double avg = perf::ToJson(r)["avg_busbw_gbs"].get<double>();
      EXPECT_LE(std::fabs(*run.avg_busbw_gbs - avg), 1e-5 * avg);  // %g: six significant digits
    }
  }
}

TEST(PerfRoundTrip, PerIterationColumnsParseBack) {
  perf::PerfResult r = Model({"all_reduce", "-g", "8", "--nodes", "2", "-b", "1M", "-e", "64M",
                              "-f", "4", "-n", "5", "-I", "1", "-K", "1"});
  r.sizes[0].out_of_place.samples_us = {500, 100, 110, 120, 130};  // a slow first iteration
  an::NcclRun run = ParseOne(perf::FormatNcclTests(r, {}));
  ASSERT_EQ(run.rows.size(), r.sizes.size());
  ExpectClose(run.rows[0].out_of_place.time_us, 192.0, "time");
  EXPECT_EQ(run.rows[2].size_bytes, 16 << 20);
  EXPECT_NE(std::find(run.columns.begin(), run.columns.end(), "i_p99"), run.columns.end());
}

an::NcclRunReport Audit(const perf::PerfResult& r) {
  an::NcclRulesConfig config;
  config.nic_gbps = 400;
  config.nics_per_node = 8;
  return an::EvaluateNcclRun(ParseOne(perf::FormatNcclTests(r, {})), config);
}

TEST(PerfRoundTrip, AuditVerdictsOnModelledRuns) {
  // A healthy 2 x 8 ring all-reduce on 400G NICs (48.5 GB/s of payload each) passes.
  const std::vector<std::string> args = {"all_reduce", "-g", "8",  "--nodes", "2", "-b",
                                         "1M",         "-e", "4G", "-f",      "2"};
  an::NcclRunReport healthy = Audit(Model(args));
  EXPECT_EQ(healthy.verdict, audit::Verdict::kPass);
  ASSERT_TRUE(healthy.peak_efficiency.has_value());
  EXPECT_GT(*healthy.peak_efficiency, 0.92);
  // The same run at half the NIC rate fails the efficiency rule.
  EXPECT_EQ(Audit(Model(args, 24.25)).verdict, audit::Verdict::kFail);
  // Wrong elements (a chunk lost for good) fail the run and the footer says FAILED.
  perf::PerfResult bad = Model(args);
  bad.sizes[3].out_of_place.wrong = 12;
  const std::string text = perf::FormatNcclTests(bad, {});
  EXPECT_NE(text.find("# Out of bounds values : 1 FAILED\n"), std::string::npos);
  an::NcclRunReport failed = Audit(bad);
  EXPECT_EQ(failed.verdict, audit::Verdict::kFail);
  bool wrong_found = false;
  for (const auto& f : failed.findings) wrong_found |= f.code == "wrong_elements";
  EXPECT_TRUE(wrong_found);
}

}  // namespace
}  // namespace lossless
