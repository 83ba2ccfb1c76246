#include "perf/nccl_tests_writer.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "collective/model/alpha_beta.hpp"

namespace lossless::perf {
namespace {

// The invented 4-rank all-reduce of docs/model/nccl-tests.md (1 MiB to 1 GiB, factor 4):
// every printed algbw, busbw and the footer average follow from size and time.
struct Sample {
  int64_t size;
  double out_us;
  double in_us;
};
constexpr Sample kSamples[] = {{1048576, 71.52, 70.84},     {4194304, 139.7, 138.9},
                               {16777216, 431.6, 430.2},    {67108864, 1538.4, 1535.1},
                               {268435456, 5972.3, 5968.0}, {1073741824, 23811, 23796}};

std::vector<DeviceLine> ExampleDevices() {
  std::vector<DeviceLine> d;
  const int bus[] = {0x1b, 0x43};
  for (int r = 0; r < 4; ++r) {
    d.push_back({r, 0, 52100 + r, r < 2 ? "node-a" : "node-b", r % 2, 0, bus[r % 2], 0,
                 "NVIDIA H100 80GB HBM3"});
  }
  return d;
}

RunHeader ExampleHeader(int64_t warmup) {
  RunHeader h;
  h.binary = "all_reduce_perf";
  h.min_bytes = 1048576;
  h.max_bytes = 1073741824;
  h.step_factor = 4;
  h.warmup_iters = warmup;
  h.nccl_version_code = 22907;
  return h;
}

std::string WriteExample(OutputFormat f, int64_t warmup) {
  NcclTestsWriter w(f, ExampleHeader(warmup));
  std::string out = w.Preamble(ExampleDevices());
  for (const Sample& s : kSamples) {
    Row row;
    row.size_bytes = s.size;
    row.count = s.size / 4;
    auto half = [&](double t) {
      return HalfRow{t,
                     collective::AlgBwGbs(s.size, t),
                     collective::BusBwGbs(collective::Collective::kAllReduce, 4, s.size, t),
                     0,
                     {}};
    };
    row.out_of_place = half(s.out_us);
    row.in_place = half(s.in_us);
    out += w.AddRow(row);
  }
  return out + w.Footer();
}

const char* const kRanks =
    "#  Rank  0 Group  0 Pid  52100 on     node-a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid  52101 on     node-a device  1 [0000:43:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid  52102 on     node-b device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid  52103 on     node-b device  1 [0000:43:00] NVIDIA H100 80GB HBM3\n";

TEST(NcclTestsWriter, G2MatchesTheClassicLayoutByteForByte) {
  // The reference's G2 example (v2.14.1-v2.16.6) plus the start and end lines of v2.16.7+.
  const std::string expected = std::string(
                                   "# Collective test starting: all_reduce_perf\n"
                                   "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: "
                                   "4(factor) warmup iters: 5 iters: 20 agg "
                                   "iters: 1 validation: 1 graph: 0\n"
                                   "#\n"
                                   "# Using devices\n") +
                               kRanks +
                               "#\n"
                               "#                                                              "
                               "out-of-place                       in-place  "
                               "        \n"
                               "#       size         count      type   redop    root     time   "
                               "algbw   busbw #wrong     time   algbw   busbw "
                               "#wrong\n"
                               "#        (B)    (elements)                               (us)  "
                               "(GB/s)  (GB/s)            (us)  (GB/s)  (GB/s) "
                               "      \n"
                               "     1048576        262144     float     sum      -1    71.52   "
                               "14.66   21.99      0    70.84   14.80   22.20 "
                               "     0\n"
                               "     4194304       1048576     float     sum      -1    139.7   "
                               "30.02   45.04      0    138.9   30.20   45.29 "
                               "     0\n"
                               "    16777216       4194304     float     sum      -1    431.6   "
                               "38.87   58.31      0    430.2   39.00   58.50 "
                               "     0\n"
                               "    67108864      16777216     float     sum      -1   1538.4   "
                               "43.62   65.43      0   1535.1   43.72   65.57 "
                               "     0\n"
                               "   268435456      67108864     float     sum      -1   5972.3   "
                               "44.95   67.42      0   5968.0   44.98   67.47 "
                               "     0\n"
                               "  1073741824     268435456     float     sum      -1    23811   "
                               "45.09   67.64      0    23796   45.12   67.68 "
                               "     0\n"
                               "# Out of bounds values : 0 OK\n"
                               "# Avg bus bandwidth    : 54.3795 \n"
                               "#\n"
                               "# Collective test concluded: all_reduce_perf\n"
                               "\n";
  EXPECT_EQ(WriteExample(OutputFormat::kG2, 5), expected);
}

TEST(NcclTestsWriter, G3MatchesTheCurrentLayoutByteForByte) {
  const std::string expected =
      std::string(
          "# nccl-tests version 2.19.6 nccl-headers=22907 nccl-library=22907\n"
          "# Collective test starting: all_reduce_perf\n"
          "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 4(factor) warmup iters: "
          "1 iters: 20 agg "
          "iters: 1 validation: 1 graph: 0 unalign: 0\n"
          "#\n"
          "# Using devices\n") +
      kRanks +
      "#\n"
      "#                                                              out-of-place                 "
      "      in-place  "
      "        \n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
      "time   algbw   "
      "busbw  #wrong \n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             "
      "(us)  (GB/s)  "
      "(GB/s)         \n"
      "     1048576        262144     float     sum      -1    71.52   14.66   21.99       0    "
      "70.84   14.80   "
      "22.20       0\n"
      "     4194304       1048576     float     sum      -1   139.70   30.02   45.04       0   "
      "138.90   30.20   "
      "45.29       0\n"
      "    16777216       4194304     float     sum      -1   431.60   38.87   58.31       0   "
      "430.20   39.00   "
      "58.50       0\n"
      "    67108864      16777216     float     sum      -1  1538.40   43.62   65.43       0  "
      "1535.10   43.72   "
      "65.57       0\n"
      "   268435456      67108864     float     sum      -1  5972.30   44.95   67.42       0  "
      "5968.00   44.98   "
      "67.47       0\n"
      "  1073741824     268435456     float     sum      -1  23811.0   45.09   67.64       0  "
      "23796.0   45.12   "
      "67.68       0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 54.3795 \n"
      "#\n"
      "# Collective test concluded: all_reduce_perf\n"
      "#\n"
      "\n";
  EXPECT_EQ(WriteExample(OutputFormat::kG3, 1), expected);
}

TEST(NcclTestsWriter, ColumnsAreFixedWidth) {
  // Every G2 row and header line is 116 characters; G3 rows 118 (two wider #wrong).
  for (OutputFormat f : {OutputFormat::kG2, OutputFormat::kG3}) {
    const std::string out = WriteExample(f, 1);
    size_t start = 0;
    int rows = 0;
    while (start < out.size()) {
      size_t end = out.find('\n', start);
      const std::string line = out.substr(start, end - start);
      start = end + 1;
      if (!line.empty() && line[0] == ' ') {
        EXPECT_EQ(line.size(), f == OutputFormat::kG2 ? 116u : 118u) << line;
        ++rows;
      }
    }
    EXPECT_EQ(rows, 6);
  }
}

TEST(NcclTestsWriter, G3SqueezesNumbersIntoTheirColumns) {
  EXPECT_EQ(GetFloatStr(139.7, 7), " 139.70");
  EXPECT_EQ(GetFloatStr(23811, 7), "23811.0");
  EXPECT_EQ(GetFloatStr(104180, 7), " 104180");
  EXPECT_EQ(GetFloatStr(1234.5, 6), "1234.5");
  EXPECT_EQ(GetFloatStr(99.999, 6), "100.00");
  EXPECT_EQ(GetFloatStr(12345.6, 6), " 12346");
  EXPECT_EQ(GetFloatStr(0, 6), "  0.00");
  EXPECT_EQ(GetFloatStr(123456789.0, 7), "1.2e+08");
  EXPECT_EQ(GetFloatStr(1234567.0, 6), " 1e+06");
  // G2 time strings.
  EXPECT_EQ(G2TimeStr(61.37), "  61.37");
  EXPECT_EQ(G2TimeStr(1538.4), " 1538.4");
  EXPECT_EQ(G2TimeStr(23811), "  23811");
  EXPECT_EQ(G2TimeStr(10000.0), "  10000");  // ">=" since v2.10.1
  EXPECT_EQ(G2TimeStr(104180), " 104180");
  EXPECT_EQ(G2TimeStr(99.999), " 100.00");
  EXPECT_EQ(G2TimeStr(9999.96), "10000.0");
}

TEST(NcclTestsWriter, NotCheckedHalvesPrintNA) {
  for (OutputFormat f : {OutputFormat::kG2, OutputFormat::kG3}) {
    NcclTestsWriter w(f, RunHeader{});
    Row row;
    row.size_bytes = 1024;
    row.count = 16;
    row.redop = "none";
    row.out_of_place = {10.0, 0.1, 0.2, 0, {}};
    row.in_place = {10.0, 0.1, 0.2, std::nullopt, {}};
    const std::string line = w.AddRow(row);
    EXPECT_TRUE(line.ends_with("0.20    N/A\n")) << line;
    EXPECT_NE(line.find(f == OutputFormat::kG2 ? "0.20      0  " : "0.20       0  "),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("  none  "), std::string::npos);
    EXPECT_EQ(w.OutOfBounds(), 0);
  }
}

TEST(NcclTestsWriter, FooterCountsFailedHalvesAndAveragesUnroundedBusBw) {
  NcclTestsWriter w(OutputFormat::kG3, RunHeader{});
  Row row;
  row.out_of_place = {1.0, 1.0, 10.004, 3, {}};
  row.in_place = {1.0, 1.0, 20.004, 0, {}};
  w.AddRow(row);
  row.out_of_place.wrong = 1;
  row.in_place.wrong = 7;
  w.AddRow(row);
  EXPECT_EQ(w.OutOfBounds(), 3);
  EXPECT_DOUBLE_EQ(w.AvgBusBw(), 15.004);
  const std::string footer = w.Footer();
  EXPECT_EQ(footer.substr(0, footer.find('\n')), "# Out of bounds values : 3 FAILED");
  EXPECT_NE(footer.find("# Avg bus bandwidth    : 15.004 \n"), std::string::npos);
  EXPECT_NE(w.Footer(20.0).find(": 15.004 FAILED\n"), std::string::npos);  // below 0.9 x 20
  EXPECT_NE(w.Footer(16.0).find(": 15.004 OK\n"), std::string::npos);
}

TEST(NcclTestsWriter, NotesBlockingAndCpuTimeInTheHeader) {
  RunHeader h = ExampleHeader(1);
  h.notes = {"lossless 0.1.0: ANALYTIC MODEL"};
  h.blocking = 3;
  h.report_cputime = true;
  const std::string g3 = NcclTestsWriter(OutputFormat::kG3, h).Preamble({});
  EXPECT_NE(
      g3.find(
          "unalign: 0\n# Blocking Enabled: wait and barrier after each outer iteration (-n); time "
          "excludes barrier \n# lossless 0.1.0: ANALYTIC MODEL\n#\n# Using devices\n#\n"),
      std::string::npos)
      << g3;
  EXPECT_NE(g3.find("  cputime   algbw"), std::string::npos);
  const std::string g2 = NcclTestsWriter(OutputFormat::kG2, h).Preamble({});
  EXPECT_NE(g2.find("# Blocking Enabled: wait for completion and barrier after each collective \n"),
            std::string::npos);
  EXPECT_EQ(g2.find("nccl-tests version"), std::string::npos);
}

TEST(NcclTestsWriter, ModelledDevices) {
  auto d = ModelledDevices(2, 8);
  ASSERT_EQ(d.size(), 16u);
  EXPECT_EQ(d[9].rank, 9);
  EXPECT_EQ(d[9].host, "node-1");
  EXPECT_EQ(d[9].device, 1);
  EXPECT_EQ(d[9].pid, 10001);
  EXPECT_EQ(d[9].pci_bus, 0x2a);
  NcclTestsWriter w(OutputFormat::kG3, RunHeader{});
  EXPECT_NE(w.Preamble(d).find(
                "#  Rank 15 Group  0 Pid  10001 on     node-1 device  7 [0000:db:00] NVIDIA H100 "
                "80GB HBM3\n"),
            std::string::npos);
}

}  // namespace
}  // namespace lossless::perf

namespace lossless::perf {
namespace {

TEST(NcclTestsWriter, PerIterationColumnsInG3) {
  EXPECT_NEAR(ComputeIterStats({4, 1, 3, 2}).cv_pct, std::sqrt(1.25) / 2.5 * 100, 1e-9);
  EXPECT_EQ(ComputeIterStats({4, 1, 3, 2}).p99_us, 4);
  EXPECT_EQ(ComputeIterStats({4, 1, 3, 2}).min_us, 1);
  EXPECT_EQ(ComputeIterStats({}).max_us, 0);
  RunHeader h = ExampleHeader(1);
  h.per_iter_timing = true;
  h.per_iter_skip = 2;
  NcclTestsWriter w(OutputFormat::kG3, h);
  const std::string pre = w.Preamble({});
  EXPECT_NE(pre.find("# Per-Iteration Report: CUDA event timing; i_* uses max over process rows; "
                     "summary skips "
                     "first 2 iterations \n"),
            std::string::npos);
  EXPECT_NE(pre.find("#wrong    i_min    i_max    i_p99    i_cv%     time"), std::string::npos)
      << pre;
  Row row;
  row.size_bytes = 1024;
  row.count = 256;
  row.out_of_place = {10.0, 0.1, 0.2, 0, {9.0, 10.0, 11.0}};
  row.in_place = {10.0, 0.1, 0.2, 0, {10.0}};
  const std::string line = w.AddRow(row);
  EXPECT_NE(line.find("       0     9.00    11.00    11.00     8.16    10.00"), std::string::npos)
      << line;
  EXPECT_TRUE(line.ends_with("       0    10.00    10.00    10.00     0.00\n")) << line;
  // Header lines and rows share the column grid: "#wrong" ends where the row's count ends.
  const size_t header_wrong = pre.find("#wrong") + 6;
  const size_t row_wrong = line.find("       0     9.00") + 8;
  EXPECT_EQ(header_wrong - pre.rfind('\n', pre.find("#wrong")) - 1, row_wrong);
}

}  // namespace
}  // namespace lossless::perf
