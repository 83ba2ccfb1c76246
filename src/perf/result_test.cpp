#include "perf/result.hpp"

#include <gtest/gtest.h>

#include "perf/model_run.hpp"

namespace lossless::perf {
namespace {

using collective::Collective;

TEST(PerfResult, PercentilesAreNearestRank) {
  HalfResult h;
  for (int i = 1; i <= 100; ++i) h.samples_us.push_back(101 - i);  // 100 .. 1, unsorted
  EXPECT_DOUBLE_EQ(h.PercentileUs(50), 50);
  EXPECT_DOUBLE_EQ(h.PercentileUs(99), 99);
  EXPECT_DOUBLE_EQ(h.MaxUs(), 100);
  EXPECT_DOUBLE_EQ(h.MeanUs(), 50.5);
  // Fewer than 100 samples: p99 is the maximum (nccl-tests' note on -I).
  HalfResult few;
  few.samples_us = {3, 1, 2};
  EXPECT_DOUBLE_EQ(few.PercentileUs(99), 3);
  EXPECT_DOUBLE_EQ(few.PercentileUs(50), 2);
  EXPECT_DOUBLE_EQ(HalfResult{}.PercentileUs(50), 0);
  EXPECT_DOUBLE_EQ(HalfResult{}.MeanUs(), 0);
}

TEST(PerfResult, ToRowComputesBandwidthsTheNcclTestsWay) {
  SizeResult s;
  s.counts =
      collective::CountsFor(Collective::kAllGather, 1 << 20, collective::DataType::kFloat, 4);
  s.out_of_place.samples_us = {10.0, 30.0};
  s.in_place.samples_us = {20.0};
  s.in_place.wrong = std::nullopt;
  Row row = ToRow(s, Collective::kAllGather, 4);
  EXPECT_EQ(row.redop, "none");
  EXPECT_EQ(row.size_bytes, 1 << 20);
  EXPECT_EQ(row.count, 65536);
  EXPECT_DOUBLE_EQ(row.out_of_place.time_us, 20.0);
  EXPECT_DOUBLE_EQ(row.out_of_place.algbw_gbs, 1048576 / 20.0 / 1e3);
  EXPECT_DOUBLE_EQ(row.out_of_place.busbw_gbs, 1048576 / 20.0 / 1e3 * 0.75);
  EXPECT_FALSE(row.in_place.wrong.has_value());
  EXPECT_EQ(ToRow(s, Collective::kSendRecv, 4).redop, "sum");
}

PerfOptions Options(std::vector<std::string> args) {
  return ParsePerfArgs(args);
}

collective::AlphaBetaParams Params(const PerfOptions& o) {
  collective::AlphaBetaParams p;
  p.nodes = static_cast<int>(o.nodes);
  p.gpus_per_node = static_cast<int>(o.GpusPerNode());
  p.nics_per_node = p.gpus_per_node;
  return p;
}

collective::TuningModel Tuning(const PerfOptions& o) {
  collective::CommShape shape{static_cast<int>(o.nodes), static_cast<int>(o.GpusPerNode())};
  return collective::TuningModel(shape, collective::DeriveSearchGraph({}, shape.nodes));
}

TEST(PerfResult, ModelRunLoopsTypesOpsRootsAndCycles) {
  PerfOptions o = Options({"reduce", "-g", "4", "-r", "-1", "-o", "all", "-d", "all", "-N", "2",
                           "-b", "1K", "-e", "4K", "-f", "2", "-n", "5"});
  PerfResult r = ModelRun(o, Params(o), Tuning(o));
  EXPECT_EQ(r.sizes.size(), 2u * 12 * 6 * 4 * 3);
  EXPECT_EQ(r.sizes.front().out_of_place.samples_us.size(), 5u);
  // all_gather prints `none` and runs one op pass only.
  PerfOptions ag = Options({"all_gather", "-g", "4", "-o", "all", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(ModelRun(ag, Params(ag), Tuning(ag)).sizes.size(), 1u);
}

TEST(PerfResult, ModelRunTimesAreTheAlphaBetaOfNcclsChoice) {
  PerfOptions o =
      Options({"all_reduce", "-g", "8", "--nodes", "2", "-b", "8", "-e", "1G", "-f", "8"});
  const auto params = Params(o);
  const auto tuning = Tuning(o);
  PerfResult r = ModelRun(o, params, tuning);
  ASSERT_FALSE(r.sizes.empty());
  for (const SizeResult& s : r.sizes) {
    const auto choice = tuning.Choose(Collective::kAllReduce, s.counts.size_bytes);
    EXPECT_EQ(s.choice.algorithm, choice.algorithm);
    EXPECT_EQ(s.choice.protocol, choice.protocol);
    // With the protocol's GPU cap (NCCL's llMaxBw, perChMax*LL128Bw) applied.
    auto capped = params;
    capped.gpu_write_gbs = tuning.ProtocolCapGbs(choice.algorithm, choice.protocol);
    const double t = collective::AlphaBeta(Collective::kAllReduce, choice.algorithm,
                                           choice.protocol, s.counts.size_bytes, capped)
                         .TotalUs();
    EXPECT_DOUBLE_EQ(s.out_of_place.MeanUs(), t);
    EXPECT_EQ(s.model_us, t);
  }
  // Small sizes pick LL, the largest Simple; times grow with size.
  EXPECT_EQ(r.sizes.front().choice.protocol, collective::Protocol::kLL);
  EXPECT_EQ(r.sizes.back().choice.protocol, collective::Protocol::kSimple);
  EXPECT_LT(r.sizes.front().out_of_place.MeanUs(), r.sizes.back().out_of_place.MeanUs());
}

TEST(PerfResult, ModelRunOutputSaysItIsTheModel) {
  PerfOptions o = Options({"alltoall", "-g", "8", "-b", "1M", "-e", "4M", "-f", "2"});
  PerfResult r = ModelRun(o, Params(o), Tuning(o));
  const std::string text =
      FormatNcclTests(r, ModelNotes(r.nccl_version, "real NCCL would consider NVLS"));
  EXPECT_NE(text.find("\n# lossless 0.1.0: ANALYTIC MODEL, NOT A SIMULATION"), std::string::npos)
      << text;
  EXPECT_NE(text.find("NCCL 2.27.7"), std::string::npos);
  EXPECT_NE(text.find("\n# lossless: real NCCL would consider NVLS\n"), std::string::npos);
  EXPECT_NE(text.find("# Collective test starting: alltoall_perf\n"), std::string::npos);
  // alltoall's in-place half is not checked.
  EXPECT_NE(text.find("    N/A\n"), std::string::npos);
  // NCCL's tuning model has no time for point-to-point: "-" and null, not 0.
  const std::string choices = ChoiceTable(r);
  EXPECT_NE(choices.find("#      1048576    P2P  Simple   24           -\n"), std::string::npos)
      << choices;
  EXPECT_TRUE(ToJson(r)["results"][0]["nccl_model_us"].is_null());
}

TEST(PerfResult, SimulationNotesNameTheFabric) {
  auto notes = SimulationNotes("2.27.7", "ib-ndr", "");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "lossless 0.1.0: packet-level simulation of NCCL 2.27.7's algorithms on ib-ndr");
  EXPECT_EQ(notes[0].find("MODEL"), std::string::npos);
  EXPECT_EQ(SimulationNotes("2.27.7", "", "x").size(), 3u);
}

TEST(PerfResult, JsonSchema) {
  PerfOptions o = Options(
      {"all_reduce", "-g", "8", "--nodes", "2", "-b", "1M", "-e", "2M", "-f", "2", "-c", "0"});
  PerfResult r = ModelRun(o, Params(o), Tuning(o));
  r.links.push_back({"node-0/nic-0", 3, 1.5, 7, 2, 0, 1});
  r.sizes[1].in_place.samples_us = {1.0, 2.0, 3.0, 100.0};
  const nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["schema"], "lossless.perf/1");
  EXPECT_EQ(j["kind"], "model");
  EXPECT_EQ(j["collective"], "all_reduce");
  EXPECT_EQ(j["ranks"], 16);
  EXPECT_EQ(j["nccl_version"], "2.27.7");
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& e = j["results"][1];
  EXPECT_EQ(e["size"], 2 << 20);
  EXPECT_TRUE(e["out_of_place"]["wrong"].is_null());  // -c 0
  EXPECT_EQ(e["in_place"]["iterations"], 4);
  EXPECT_EQ(e["in_place"]["p50_us"], 2.0);
  EXPECT_EQ(e["in_place"]["p99_us"], 100.0);
  EXPECT_EQ(e["in_place"]["max_us"], 100.0);
  EXPECT_DOUBLE_EQ(e["in_place"]["time_us"].get<double>(), 26.5);
  EXPECT_EQ(e["algorithm"], std::string(collective::AlgorithmName(r.sizes[1].choice.algorithm)));
  EXPECT_DOUBLE_EQ(e["nccl_model_us"].get<double>(), r.sizes[1].choice.time_us);
  EXPECT_GT(e["nccl_model_us"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(e["model_us"].get<double>(), *r.sizes[1].model_us);
  EXPECT_EQ(j["links"][0]["pause_frames"], 3);
  EXPECT_EQ(j["links"][0]["retransmissions"], 1);
  EXPECT_EQ(j["out_of_bounds"], 0);
  // The average is the mean of the four busbw values.
  double sum = 0;
  for (const auto& x : j["results"]) {
    sum += x["out_of_place"]["busbw_gbs"].get<double>() + x["in_place"]["busbw_gbs"].get<double>();
  }
  EXPECT_DOUBLE_EQ(j["avg_busbw_gbs"].get<double>(), sum / 4);
}

}  // namespace
}  // namespace lossless::perf
