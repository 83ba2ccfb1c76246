// A DCQCN fabric with a long link between two leaves: CNPs are sent while
// thousands of packets are in flight, so the packet pool grows while the
// receiving NIC still reads the marked packet. The NIC held a reference into
// the pool across the CNP's allocation and this run crashed (segmentation
// fault in the NIC's receive, then Network::ReceiveAtHost, now Nics::Receive;
// ASan: heap-use-after-free). Found by `lossless compare --scenario` with a
// 2 ms inter-leaf link.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perf/options.hpp"
#include "run/perf_run.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {

TEST(PerfLongLink, DcqcnCnpsWhileThePacketPoolGrowsDoNotCrash) {
  const std::string topo = ::testing::TempDir() + "perf-long-link.topo";
  {
    std::ofstream t(topo);
    t << "defaults rate=400Gbps delay=500ns\nswitch leaf0\nswitch leaf1\n";
    for (int h = 0; h < 16; ++h) t << "host h" << h << "\nlink h" << h << " leaf" << h / 8 << "\n";
    t << "link leaf0 leaf1 delay=200us\n";
  }
  const std::string text = "name: long-link\n"
                           "fabric:\n"
                           "  preset: roce\n"
                           "  link_rate: 400Gbps\n"
                           "  switch_latency: 600ns\n"
                           "  cut_through: true\n"
                           "  buffer: 1GiB\n"
                           "  pfc:\n"
                           "    xoff: 200KB\n"
                           "    headroom: 105538B\n"
                           "  ecn:\n"
                           "    enabled: true\n"
                           "    kmin: 50KB\n"
                           "    kmax: 150KB\n"
                           "    pmax: 0.2\n"
                           "  cc: dcqcn-paper\n"
                           "topology:\n"
                           "  kind: file\n"
                           "  file: " + topo + "\n"
                           "  gpus_per_node: 8\n";
  const scenario::Scenario s = scenario::LoadFabricText(text, "long-link.yaml");
  std::string failure;
  const perf::PerfResult r = RunPerf(
      perf::ParsePerfArgs(std::vector<std::string>{"all_reduce", "-b", "8M", "-e", "8M", "-g", "8",
                                                   "--nodes", "2", "-n", "1", "-w", "0"}),
      s, "long-link", &failure);
  EXPECT_EQ(failure, "");
  ASSERT_EQ(r.sizes.size(), 1u);
  ASSERT_TRUE(r.sizes[0].out_of_place.wrong.has_value());
  EXPECT_EQ(*r.sizes[0].out_of_place.wrong, 0);
  // Each iteration crosses the 200 us link both ways at least once.
  EXPECT_GT(r.sizes[0].out_of_place.MeanUs(), 400.0);
}

}  // namespace
}  // namespace lossless::run
