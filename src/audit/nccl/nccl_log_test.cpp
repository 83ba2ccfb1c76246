#include "audit/nccl/nccl_log.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "audit/nccl/nccl_log_internal.hpp"
#include "base/error.hpp"

namespace lossless::audit::nccl {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/nccl/" + name;
}

NcclLog ParseFile(const std::string& name) {
  std::ifstream in(Fixture(name), std::ios::binary);
  EXPECT_TRUE(in) << name;
  return ParseNcclLog(in, name);
}

NcclLog ParseText(const std::string& text) {
  std::istringstream in(text);
  return ParseNcclLog(in, "t.log");
}

// Expects an InputError whose text contains `needle` and names line `line`.
void ExpectError(const std::string& text, int64_t line, const std::string& needle) {
  try {
    ParseText(text);
    FAIL() << "no error for: " << text.substr(0, 80);
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A G2 all_reduce run of 4 ranks on 2 hosts in the layout of docs/model/nccl-tests.md#g2-layout.
const char* kG2 =
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 4(factor) warmup iters: 5 "
    "iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  52100 on     node-a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid  52101 on     node-a device  1 [0000:43:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid  52102 on     node-b device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid  52103 on     node-b device  1 [0000:43:00] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#                                                              out-of-place                 "
    "      in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)       \n"
    "     1048576        262144     float     sum      -1    71.52   14.66   21.99      0    "
    "70.84   14.80   22.20      0\n"
    "  1073741824     268435456     float     sum      -1    23811   45.09   67.64      0    "
    "23796   45.12   67.68      0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 44.8775 \n"
    "#\n"
    "\n";

TEST(NcclLog, ParsesG2RunWithAllFields) {
  NcclLog log = ParseText(kG2);
  ASSERT_EQ(log.runs.size(), 1u);
  const NcclRun& r = log.runs[0];
  EXPECT_EQ(r.generation, NcclGeneration::kG2Classic);
  EXPECT_EQ(r.n_threads, 1);
  EXPECT_EQ(r.n_gpus, 1);
  ASSERT_EQ(r.ranks.size(), 4u);
  EXPECT_EQ(r.ranks[3].host, "node-b");
  EXPECT_EQ(r.ranks[3].device, 1);
  EXPECT_EQ(r.ranks[3].gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.Hosts(), (std::vector<std::string>{"node-a", "node-b"}));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[1].line, 13);
  EXPECT_EQ(r.rows[1].size_bytes, 1073741824);
  EXPECT_EQ(r.rows[1].count, 268435456);
  EXPECT_EQ(r.rows[1].type, "float");
  EXPECT_EQ(r.rows[1].redop, "sum");
  EXPECT_EQ(r.rows[1].root, -1);
  EXPECT_DOUBLE_EQ(r.rows[1].out_of_place.time_us, 23811);
  EXPECT_DOUBLE_EQ(r.rows[1].out_of_place.busbw_gbs, 67.64);
  EXPECT_DOUBLE_EQ(r.rows[1].in_place.algbw_gbs, 45.12);
  EXPECT_EQ(r.rows[1].in_place.wrong, 0.0);
  EXPECT_EQ(r.out_of_bounds, 0);
  EXPECT_FALSE(r.out_of_bounds_failed);
  EXPECT_DOUBLE_EQ(*r.avg_busbw_gbs, 44.8775);
  EXPECT_FALSE(r.truncated);
  // busbw/algbw = 2*3/4 on 4 ranks and redop sum, root -1: all_reduce.
  EXPECT_EQ(r.collective, Collective::kAllReduce);
  EXPECT_TRUE(r.collective_inferred);
}

TEST(NcclLog, G1LegacyErrorColumnAndPerBinaryPreamble) {
  NcclLog log = ParseFile("g1_allgather_legacy.log");
  ASSERT_EQ(log.runs.size(), 1u);
  const NcclRun& r = log.runs[0];
  EXPECT_EQ(r.generation, NcclGeneration::kG1Legacy);
  EXPECT_EQ(r.collective, Collective::kAllGather);
  EXPECT_EQ(r.ranks.size(), 16u);
  ASSERT_EQ(r.rows.size(), 7u);
  EXPECT_EQ(r.rows[0].redop, "");  // all_gather printed no redop column in G1
  EXPECT_EQ(r.rows[6].size_bytes, 4294967296);
  EXPECT_DOUBLE_EQ(r.rows[6].out_of_place.busbw_gbs, 373.10);
  EXPECT_DOUBLE_EQ(r.rows[6].out_of_place.time_us, 10792);
  EXPECT_EQ(r.rows[6].out_of_place.wrong, 0.0);
}

TEST(NcclLog, G3AdaptiveDecimalsAndVersionLine) {
  NcclLog log = ParseFile("g3_allreduce_healthy.log");
  ASSERT_EQ(log.runs.size(), 1u);
  const NcclRun& r = log.runs[0];
  EXPECT_EQ(r.generation, NcclGeneration::kG3Current);
  EXPECT_EQ(r.nccl_tests_version, "2.19.6");
  EXPECT_EQ(r.binary, "all_reduce_perf");
  EXPECT_EQ(r.collective, Collective::kAllReduce);
  EXPECT_FALSE(r.collective_inferred);
  ASSERT_EQ(r.rows.size(), 7u);
  EXPECT_DOUBLE_EQ(r.rows[6].out_of_place.busbw_gbs, 376.2);
}

TEST(NcclLog, NoiseSrunPrefixCrlfAndInfoLinesInsideTable) {
  NcclLog log = ParseFile("g2_noisy_srun_crlf.log");
  ASSERT_EQ(log.runs.size(), 1u);
  const NcclRun& r = log.runs[0];
  EXPECT_EQ(r.rows.size(), 7u);
  EXPECT_EQ(r.ranks.size(), 16u);
  // Named by the echoed srun command line, not inferred.
  EXPECT_EQ(r.collective, Collective::kAllReduce);
  EXPECT_FALSE(r.collective_inferred);
  EXPECT_TRUE(r.avg_busbw_gbs.has_value());
}

TEST(NcclLog, OpenMpiTagOutputPrefix) {
  std::string text;
  std::istringstream in(kG2);
  for (std::string l; std::getline(in, l);) text += "[1,0]<stdout>:" + l + "\n";
  NcclLog log = ParseText(text);
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].rows.size(), 2u);
}

TEST(NcclLog, TwoRunsInOneFile) {
  NcclLog log = ParseFile("g3_two_runs.log");
  ASSERT_EQ(log.runs.size(), 2u);
  EXPECT_EQ(log.runs[0].collective, Collective::kAllReduce);
  EXPECT_EQ(log.runs[1].collective, Collective::kAllGather);
  EXPECT_EQ(log.runs[1].first_line, 40);
  EXPECT_EQ(log.runs[1].rows.size(), 7u);
}

TEST(NcclLog, InfersEveryCollectiveFromItsTable) {
  const std::pair<const char*, Collective> cases[] = {
      {"all_reduce", Collective::kAllReduce},
      {"all_gather", Collective::kAllGather},
      {"reduce_scatter", Collective::kReduceScatter},
      {"broadcast", Collective::kBroadcast},
      {"reduce", Collective::kReduce},
      {"alltoall", Collective::kAllToAll},
      {"sendrecv", Collective::kSendRecv},
      {"hypercube", Collective::kHypercube},
      // gather and scatter print identical tables: the tool must not guess.
      {"gather", Collective::kUnknown},
      {"scatter", Collective::kUnknown},
  };
  for (const auto& [name, want] : cases) {
    NcclLog log = ParseFile(std::string("g2_") + name + "_nameless.log");
    ASSERT_EQ(log.runs.size(), 1u) << name;
    EXPECT_EQ(log.runs[0].collective, want) << name;
    EXPECT_EQ(log.runs[0].rows.size(), 7u) << name;
  }
}

TEST(NcclLog, HypercubeBlankRedopKeepsColumns) {
  NcclLog log = ParseFile("g2_hypercube_nameless.log");
  EXPECT_EQ(log.runs[0].rows[0].redop, "");
  EXPECT_EQ(log.runs[0].rows[0].root, -1);
}

TEST(NcclLog, UncheckedInPlaceIsNullopt) {
  NcclLog log = ParseFile("g2_alltoall_nameless.log");
  EXPECT_TRUE(log.runs[0].rows[0].out_of_place.wrong.has_value());
  EXPECT_FALSE(log.runs[0].rows[0].in_place.wrong.has_value());
}

TEST(NcclLog, TruncatedTableAtEndIsKeptAndMarked) {
  NcclLog log = ParseFile("g2_truncated_end.log");
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_TRUE(log.runs[0].truncated);
  EXPECT_EQ(log.runs[0].rows.size(), 5u);  // sixth row was half written
  EXPECT_FALSE(log.runs[0].avg_busbw_gbs.has_value());
}

// Issue 16: the same cut followed by a job manager's kill line (the row then
// ends in a newline) gave exit 2; both are a truncated run with the rows read.
TEST(NcclLog, RowCutByAKillLineIsTruncatedToo) {
  std::ifstream f(std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/nccl/g2_truncated_end.log");
  std::string cut((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  NcclLog log = ParseText(cut +
                          "\nsrun: error: node17: task 3: Killed\n"
                          "srun: Job step aborted: Waiting up to 32 seconds\n");
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_TRUE(log.runs[0].truncated);
  EXPECT_EQ(log.runs[0].rows.size(), 5u);
  // A bad row followed by more table is still bad input, at the bad row's line.
  try {
    ParseText(cut + "\nNCCL INFO noise\n  8 2 float sum -1 1 1 1 0 1 1 1 0\n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 13 columns"), std::string::npos) << e.what();
  }
}

TEST(NcclLog, CollectiveFromText) {
  EXPECT_EQ(CollectiveFromText("./build/all_reduce_perf -b 8"), Collective::kAllReduce);
  EXPECT_EQ(CollectiveFromText("reduce_perf"), Collective::kReduce);
  EXPECT_EQ(CollectiveFromText("/x/alltoallv_perf"), Collective::kAllToAllV);
  EXPECT_EQ(CollectiveFromText("reduce_scatter_perf_mpi"), Collective::kReduceScatter);
  EXPECT_EQ(CollectiveFromText("nothing here"), Collective::kUnknown);
}

TEST(NcclLog, BusBwFactors) {
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 16), 30.0 / 16);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kUnknown, 8), 0.0);
}

TEST(NcclLogErrors, CorruptRowNamesLineAndField) {
  try {
    ParseFile("g2_corrupt_row.log");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 27);
    EXPECT_EQ(e.where().field, "busbw");
  }
}

TEST(NcclLogErrors, MissingColumns) {
  try {
    ParseFile("g2_missing_columns.log");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 28);
    EXPECT_NE(std::string(e.what()).find("expected 13 columns"), std::string::npos);
  }
}

TEST(NcclLogErrors, EmptyBinaryHeaderOnlyAndForeignInput) {
  ExpectError("", 1, "got an empty file");
  ExpectError(std::string("\x7f"
                          "ELF\x02\x01\x01\x00\x00",
                          9),
              1, "binary data");
  ExpectError("hello\nworld\n", 2, "no nccl-tests result rows");
  ExpectError("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-15\nGPU1\tNV4\t X \t0-15\n", 1,
              "nvidia-smi topo -m");
  ExpectError(std::string(kG2).substr(0, std::string(kG2).find("     1048576")), 11,
              "no nccl-tests result rows");
}

TEST(NcclLogErrors, BadValues) {
  std::string g2(kG2);
  auto with_row = [&](const std::string& row) {
    size_t a = g2.find("     1048576");
    size_t b = g2.find('\n', a);
    return g2.substr(0, a) + row + g2.substr(b);
  };
  ExpectError(with_row("     1048576        262144     float     sum      -1    71.52   -14.66   "
                       "21.99      0    70.84   14.80   22.20      0"),
              12, "algbw");
  ExpectError(with_row("     1048576        262144     float     sum      -1    71.52   nan   "
                       "21.99      0    70.84   14.80   22.20      0"),
              12, "algbw");
  ExpectError(with_row("     1048576        262144     float     sum      -1    71.52   14.66   "
                       "21.99      x    70.84   14.80   22.20      0"),
              12, "#wrong");
  ExpectError(with_row("     1048576        262144     float     sum      -7    71.52   14.66   "
                       "21.99      0    70.84   14.80   22.20      0"),
              12, "root");
  ExpectError(with_row("     1048576x       262144     float     sum      -1    71.52   14.66   "
                       "21.99      0    70.84   14.80   22.20      0"),
              12, "size");
}

TEST(NcclLogErrors, BadRankFooterAndHeader) {
  std::string g2(kG2);
  std::string bad_rank = g2;
  bad_rank.replace(bad_rank.find("Pid  52101"), 10, "Pod  52101");
  ExpectError(bad_rank, 5, "Pid");
  std::string bad_footer = g2;
  bad_footer.replace(bad_footer.find(": 0 OK"), 6, ": zero OK");
  ExpectError(bad_footer, 14, "out_of_bounds");
  std::string bad_header = g2;
  bad_header.replace(bad_header.find("redop    root"), 13, "redop    rooo");
  ExpectError(bad_header, 10, "rooo");
  ExpectError("# Out of bounds values : 0 OK\n", 1, "footer line without a result table");
}

TEST(NcclLog, StreamingParserEmitsRunsAsTheyComplete) {
  std::vector<int64_t> seen;
  NcclLogParser p("s.log",
                  [&](NcclRun&& r) { seen.push_back(static_cast<int64_t>(r.rows.size())); });
  std::istringstream in(kG2);
  for (std::string l; std::getline(in, l);) {
    p.FeedLine(l);
    if (l.rfind("# Avg bus", 0) == 0) {
      EXPECT_EQ(seen.size(), 1u);  // emitted at the footer
    }
  }
  p.Finish();
  EXPECT_EQ(seen, (std::vector<int64_t>{2}));
  EXPECT_EQ(p.lines(), 17);  // the final blank line counts
}

// 18 digits always fit int64_t; 19 may not (9999999999999999999 > 2^63 - 1)
// and are refused rather than wrapped.
TEST(NcclLogLines, ToIntRefusesWhatMightOverflow) {
  EXPECT_EQ(internal::ToInt("999999999999999999"), 999999999999999999);
  EXPECT_EQ(internal::ToInt("-999999999999999999"), -999999999999999999);
  EXPECT_EQ(internal::ToInt("9999999999999999999"), std::nullopt);
  EXPECT_EQ(internal::ToInt("-9999999999999999999"), std::nullopt);
  EXPECT_EQ(internal::ToInt("-"), std::nullopt);
  EXPECT_EQ(internal::ToInt(""), std::nullopt);
}

}  // namespace
}  // namespace lossless::audit::nccl
