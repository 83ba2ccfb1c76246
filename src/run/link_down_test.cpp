// Issue 19's rail check (docs/what-if.md#the-rail-check): on a
// rail-optimized fabric whose rail leaves have exactly one NIC's rate of
// uplinks, one leaf-spine link down costs ring all-reduce the share of that
// rail's uplink capacity lost: with u = 4 uplinks, bus bandwidth falls to
// (u - 1)/u = 3/4 of healthy, on InfiniBand and on RoCE.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perf/options.hpp"
#include "run/perf_run.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {

// 4 nodes x 2 GPUs on tests/fixtures/topology/rail_2su_thin_uplinks.topo
// (2 scalable units of 2 nodes; each rail leaf has 4 x 100G uplinks, one per
// spine, and 400G NICs), adaptive routing, RC transport (perf's own).
std::string Fabric(const std::string& preset) {
  return "name: rail-check\n"
         "fabric:\n"
         "  preset: " +
         preset +
         "\n"
         "  routing: adaptive\n"
         "topology:\n"
         "  kind: file\n"
         "  file: " LOSSLESS_SOURCE_DIR "/tests/fixtures/topology/rail_2su_thin_uplinks.topo\n";
}

// Bus bandwidth (GB/s) of a 32 MiB ring all-reduce, nccl-tests' formula:
// bytes / time x 2 (n - 1) / n.
double RingBusbw(const std::string& preset, const std::vector<std::string>& sets) {
  const scenario::Scenario s = scenario::LoadFabricText(Fabric(preset), "rail.yaml", sets);
  std::string failure;
  const perf::PerfResult r = RunPerf(perf::ParsePerfArgs(std::vector<std::string>{
                                         "all_reduce", "-b", "32M", "-e", "32M", "-g", "2",
                                         "--nodes", "4", "-n", "1", "-w", "0", "--algo", "ring"}),
                                     s, "rail-check", &failure);
  EXPECT_TRUE(failure.empty()) << failure;
  if (r.sizes.size() != 1) return 0;
  const perf::SizeResult& row = r.sizes[0];
  EXPECT_EQ(row.out_of_place.wrong, std::optional<int64_t>(0));
  const double t_us = row.out_of_place.MeanUs();
  const double bytes = 32.0 * (1 << 20);
  return bytes / (t_us * 1e-6) * 2 * 7 / 8 / 1e9;
}

class RailCheck : public ::testing::TestWithParam<const char*> {};

TEST_P(RailCheck, OneLeafSpineLinkDownCostsRingAllReduceThatRailsShareOfCapacity) {
  const double healthy = RingBusbw(GetParam(), {});
  // su0-rail0 - spine0 down from the start, rerouted at once: the steady
  // state after the reroute.
  const double down =
      RingBusbw(GetParam(), {"faults.link_down.0.link=su0-rail0-spine0", "faults.link_down.0.at=0s",
                             "faults.reroute.ib=0s", "faults.reroute.ethernet=0s"});
  // The other rail's leaf-spine link: the same share on rail 1.
  const double down_rail1 =
      RingBusbw(GetParam(), {"faults.link_down.0.link=spine2-su1-rail1", "faults.link_down.0.at=0s",
                             "faults.reroute.ib=0s", "faults.reroute.ethernet=0s"});
  std::printf(
      "%s: ring all-reduce 32 MiB busbw healthy %.2f GB/s, su0-rail0-spine0 down %.2f "
      "GB/s (x%.3f), su1-rail1-spine2 down %.2f GB/s (x%.3f); derived x0.750\n",
      GetParam(), healthy, down, down / healthy, down_rail1, down_rail1 / healthy);
  ASSERT_GT(healthy, 0);
  // Derived: (u - 1)/u = 3/4 (docs/what-if.md#the-rail-check). Measured
  // 0.756 at 64 MiB and about 0.76 at 32 MiB: the fixed costs (pipeline
  // fill, NCCL's per-step latencies) are the same in both runs, so they are a
  // larger share of the shorter healthy one; the ratio sits a little above
  // 3/4 and nears it as the size grows. The tolerance covers that and
  // adaptive routing's spread over the three remaining uplinks.
  EXPECT_NEAR(down / healthy, 0.75, 0.04);
  EXPECT_NEAR(down_rail1 / healthy, 0.75, 0.04);
}

INSTANTIATE_TEST_SUITE_P(LinkDown, RailCheck, ::testing::Values("infiniband", "roce"));

}  // namespace
}  // namespace lossless::run
