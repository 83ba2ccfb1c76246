// Every real nccl-tests log under tests/fixtures/real/nccl/ parses and gets the verdict an
// expert would give; tests/fixtures/real/SOURCES.md says where each comes from and why the
// verdict is the right one. A file in that folder without an entry here fails the test.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audit/nccl/nccl_log.hpp"
#include "audit/nccl/nccl_rules.hpp"

namespace lossless::audit::nccl {
namespace {

const std::string kDir = std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/real/nccl/";

std::vector<NcclRunReport> Evaluate(const std::string& name, const NcclRulesConfig& cfg) {
  std::ifstream in(kDir + name, std::ios::binary);
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

struct Case {
  const char* sample;
  Verdict verdict;
  NcclGeneration generation;
  Collective collective;
  bool inferred;
  int64_t ranks;
  std::optional<int64_t> nodes;
  double peak_busbw;
  std::vector<std::string> codes;  // findings, in report order
};

TEST(NcclRealCorpus, EveryLogGetsTheExpertVerdict) {
  const auto G1 = NcclGeneration::kG1Legacy, G2 = NcclGeneration::kG2Classic,
             G3 = NcclGeneration::kG3Current;
  const auto AR = Collective::kAllReduce;
  const std::vector<Case> cases = {
      // p4d (2 x 8 A100, 4 x 100G EFA): MPI-tagged lines, NCCL INFO noise, G1 error column.
      {"aws_p4d_a100_2x8_efa_mpi_tagged.log", Verdict::kPass, G1, AR, true, 16, 2, 43.81,
       {"no_line_rate"}},
      // A3 Mega (2 x 8 H100): G2 table (root and #wrong columns, no version line).
      {"gcp_a3mega_h100_2x8_tcpxo.log", Verdict::kPass, G2, AR, true, 16, 2, 338.82,
       {"no_line_rate"}},
      // OCI BM.GPU.B4.8: the docs kept only ranks 0, 7, 8 and 15 of 16.
      {"oci_b4_a100_2x8_elided_ranks.log", Verdict::kPass, G3, AR, false, 16, 2, 188.41,
       {"rank_list_incomplete", "no_line_rate"}},
      // OCI MI300X, rccl-tests: same layout, shortened rank list, no GPU names.
      {"oci_mi300x_2x8_rccl.log", Verdict::kPass, G2, AR, false, 16, 2, 358.37,
       {"rank_list_incomplete", "no_line_rate"}},
      // OCI GB200 (32 x 4): the paste starts at the last Rank line (rank 127); busbw dips
      // 31% at 1 GiB, in both halves, then recovers.
      {"oci_gb200_32x4_cut_top.log", Verdict::kFail, G3, AR, false, 128, std::nullopt, 683.57,
       {"rank_list_incomplete", "falling_busbw", "no_line_rate"}},
      // Table-only pastes from a tutorial (no Rank lines, no name). 4 A40s across a socket
      // boundary with NVLink P2P disabled: 1.4 GB/s. algbw < 1 GB/s is too coarse to infer
      // the collective; nothing in the table itself is wrong.
      {"llminsights_a40_4gpu_sys_p2p_off_table_only.log", Verdict::kPass, G2,
       Collective::kUnknown, false, 0, std::nullopt, 1.44, {"no_line_rate"}},
      // 4 A100s on NVSwitch: busbw/algbw = 1.5 makes it an all_reduce of 4 ranks; the
      // in-place half at 4 GiB is 30% below the out-of-place half.
      {"llminsights_dgxa100_4gpu_inplace_dip_table_only.log", Verdict::kFail, G2, AR, true, 0,
       std::nullopt, 234.74, {"inplace_low", "no_line_rate"}},
  };
  std::set<std::string> listed;
  for (const Case& c : cases) listed.insert(c.sample);
  for (const auto& e : std::filesystem::directory_iterator(kDir))
    EXPECT_TRUE(listed.count(e.path().filename().string()))
        << e.path().filename().string() << " has no expected verdict here";
  for (const Case& c : cases) {
    auto reps = Evaluate(c.sample, NcclRulesConfig{});
    ASSERT_EQ(reps.size(), 1u) << c.sample;
    const NcclRunReport& r = reps[0];
    EXPECT_EQ(r.verdict, c.verdict) << c.sample;
    EXPECT_EQ(r.generation, c.generation) << c.sample;
    EXPECT_EQ(r.collective, c.collective) << c.sample;
    EXPECT_EQ(r.collective_inferred, c.inferred) << c.sample;
    EXPECT_EQ(r.ranks, c.ranks) << c.sample;
    EXPECT_EQ(r.nodes, c.nodes) << c.sample;
    EXPECT_DOUBLE_EQ(r.peak_busbw_gbs, c.peak_busbw) << c.sample;
    EXPECT_EQ(Codes(r), c.codes) << c.sample;
  }
}

// BM.GPU.B4.8 carries 16 x 100 Gb/s RDMA NICs (200 GB/s a node): 188.4 GB/s is 94%.
TEST(NcclRealCorpus, OciB4AtItsLineRatePasses) {
  NcclRulesConfig cfg;
  cfg.nic_gbps = 100;
  cfg.nics_per_node = 16;
  auto r = Evaluate("oci_b4_a100_2x8_elided_ranks.log", cfg)[0];
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_NEAR(*r.peak_efficiency, 188.41 / 200.0, 1e-9);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"rank_list_incomplete"}));
}

// A shortened Rank list: the rank count is the highest index plus one, the hosts named
// are a lower bound, and one host named out of many does not make a single-node run.
TEST(NcclRealCorpus, ShortenedRankListIsNotASingleNodeRun) {
  auto r = Evaluate("oci_gb200_32x4_cut_top.log", NcclRulesConfig{})[0];
  for (const auto& f : r.findings) EXPECT_NE(f.code, "single_node") << f.message;
  EXPECT_NE(r.findings[0].message.find("list 1 of 128 ranks"), std::string::npos)
      << r.findings[0].message;
  auto b4 = Evaluate("oci_b4_a100_2x8_elided_ranks.log", NcclRulesConfig{})[0];
  EXPECT_NE(b4.findings[0].message.find("2 nodes is a lower bound"), std::string::npos)
      << b4.findings[0].message;
}

}  // namespace
}  // namespace lossless::audit::nccl

namespace lossless::audit::nccl {
namespace {

// Streaming: the cut G3 run is held after its footer and emitted, named, at the
// "Collective test concluded" line; nothing waits for the end of the input.
TEST(NcclRealCorpus, CutG3RunIsEmittedAtItsConcludedLine) {
  std::vector<Collective> seen;
  NcclLogParser p("gb200", [&](NcclRun&& r) { seen.push_back(r.collective); });
  std::ifstream in(kDir + "oci_gb200_32x4_cut_top.log", std::ios::binary);
  for (std::string l; std::getline(in, l);) {
    const bool concluded = l.rfind("# Collective test concluded:", 0) == 0;
    if (concluded) {
      EXPECT_TRUE(seen.empty());  // footer read, run still held for its name
    }
    p.FeedLine(l);
    if (concluded) {
      EXPECT_EQ(seen, (std::vector<Collective>{Collective::kAllReduce}));
    }
  }
  p.Finish();
  EXPECT_EQ(seen.size(), 1u);
}

}  // namespace
}  // namespace lossless::audit::nccl
