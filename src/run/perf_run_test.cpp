// `perf` at packet level: 2 nodes x 8 GPUs on a rail-optimized InfiniBand
// fabric; large-message bus bandwidth against the alpha-beta model of the same
// links, determinism, a failed queue pair as #wrong, refusals.
#include "run/perf_run.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perf/options.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {

constexpr const char* kTwoNodes = R"(name: two-dgx
fabric:
  preset: infiniband
  link_rate: 400Gbps
  cut_through: true
topology:
  kind: rail-optimized
  gpus: 16
  gpus_per_node: 8
  radix: 64
)";

perf::PerfOptions Opts(const std::vector<std::string>& args) {
  return perf::ParsePerfArgs(args);
}

// Large messages run close to the NICs' payload rate, 8 NICs of 400 Gb/s x
// 4,096 / (4,122 + 30) (the IB data packet and the ACK it draws on the same
// link): the rest is NCCL's launch and per-hop latencies paid while the
// pipeline fills (about 3 % at 256 MiB).
// The alpha-beta model's time is printed beside it: it adds NCCL's per-hop
// latencies one after another (about 10 % at this size), where the engine
// pays them once while the pipeline fills (docs/perf.md).
TEST(PerfRunTest, LargeRingAllReduceRunsAtTheNicBound) {
  const scenario::Scenario s = scenario::LoadFabricText(kTwoNodes, "s.yaml");
  std::string failure;
  const perf::PerfResult r =
      RunPerf(Opts({"all_reduce", "-b", "256M", "-e", "256M", "-g", "8", "--nodes", "2", "-n",
                    "2", "-w", "0"}),
              s, "two-dgx", &failure);
  ASSERT_TRUE(failure.empty()) << failure;
  ASSERT_EQ(r.sizes.size(), 1u);
  const perf::SizeResult& row = r.sizes[0];
  ASSERT_TRUE(row.model_us.has_value());
  ASSERT_EQ(row.out_of_place.samples_us.size(), 2u);
  const double t = row.out_of_place.MeanUs();
  std::printf("perf 2 x 8 GPUs, 256 MiB on IB 400G: %.2f us simulated, %.2f us alpha-beta\n", t,
              *row.model_us);
  const double bytes = 256.0 * (1 << 20);
  const double busbw = bytes / (t * 1e-6) * 2 * 15 / 16 / 1e9;
  const double bound = 8 * 400e9 / 8 * 4096 / (4122 + 30) / 1e9;
  EXPECT_LE(busbw, bound);
  EXPECT_GE(busbw, 0.95 * bound) << busbw << " GB/s";
  EXPECT_LT(t, *row.model_us);
  EXPECT_EQ(row.out_of_place.wrong, std::optional<int64_t>(0));
  // Same seed, same bytes out.
  const perf::PerfResult again =
      RunPerf(Opts({"all_reduce", "-b", "256M", "-e", "256M", "-g", "8", "--nodes", "2", "-n",
                    "2", "-w", "0"}),
              s, "two-dgx", &failure);
  EXPECT_EQ(perf::FormatNcclTests(r, PerfNotes(r)), perf::FormatNcclTests(again, PerfNotes(again)));
}

TEST(PerfRunTest, AQueuePairOutOfRetriesShowsAsWrongElements) {
  const scenario::Scenario s = scenario::LoadFabricText(
      kTwoNodes, "s.yaml",
      {"transport.retry_cnt=0", "faults.link_loss.0.link=host0<->leaf0",
       "faults.link_loss.0.every=50"});
  std::string failure;
  const perf::PerfResult r = RunPerf(
      Opts({"all_reduce", "-b", "64M", "-e", "128M", "-f", "2", "-g", "8", "--nodes", "2"}), s,
      "two-dgx", &failure);
  EXPECT_NE(failure.find("retry count 0 exhausted"), std::string::npos) << failure;
  ASSERT_EQ(r.sizes.size(), 1u);  // the sweep ends at the failed row
  EXPECT_EQ(r.sizes[0].out_of_place.wrong, std::optional<int64_t>(r.sizes[0].counts.count));
  EXPECT_NE(perf::FormatNcclTests(r, PerfNotes(r)).find("FAILED"), std::string::npos);
}

TEST(PerfRunTest, RefusesWhatIsNotSimulatedAndMismatchedTopologies) {
  const scenario::Scenario s = scenario::LoadFabricText(kTwoNodes, "s.yaml");
  std::string failure;
  EXPECT_THROW(RunPerf(Opts({"all_gather", "-g", "8", "--nodes", "2"}), s, "", &failure),
               InputError);
  EXPECT_THROW(RunPerf(Opts({"all_reduce", "-g", "8", "--nodes", "4"}), s, "", &failure),
               InputError);
}

}  // namespace
}  // namespace lossless::run
