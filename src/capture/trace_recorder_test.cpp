#include "capture/trace_recorder.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::capture {
namespace {

// Step slices (docs/capture.md): one per (loop, step) run of messages on a
// (rank, channel) thread, from the first post to the last completion, cut at
// the next step's first post when that comes first.
TEST(Trace, StepSlicesAreCutAtTheNextStepAndNeverOverlap) {
  sim::Simulator sim(1);
  topology::ClosParams p;
  p.gpus = 2;
  p.gpus_per_node = 1;
  p.radix = 8;
  const topology::Topology topo = topology::BuildRailOptimized(p, {"<test>", 0, "topology"});
  fabric::NetworkConfig cfg;
  cfg.framing = fabric::Framing::RoceV2(4096);
  fabric::Network net(sim, topo, cfg);
  TraceOptions o;
  o.flows = false;
  TraceRecorder t(net, o);
  t.CollectiveBegin("all_reduce", 4096, 0);
  // Step 0: two messages, both done before step 1 starts.
  t.StepPost(0, 0, 1, 0, 0, 1000, false, 100);
  t.StepPost(0, 0, 1, 0, 0, 1000, false, 200);
  t.StepSendDone(0, 0, 300);
  t.StepSendDone(0, 0, 400);
  // Step 1 posted at 500; its message completes after step 2 starts at 600.
  t.StepPost(0, 0, 1, 0, 1, 2000, false, 500);
  t.StepPost(0, 0, 1, 0, 2, 3000, true, 600);
  t.StepSendDone(0, 0, 700);  // step 1's message: the slice was already cut
  t.StepSendDone(0, 0, 800);  // step 2's
  t.CollectiveEnd(900);
  const nlohmann::json doc = nlohmann::json::parse(t.Finish({}, 1000));
  std::vector<nlohmann::json> steps;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["pid"] != 3) steps.push_back(e);
  ASSERT_EQ(steps.size(), 3u);
  auto ps = [](const nlohmann::json& v) { return std::llround(v.get<double>() * 1e6); };
  EXPECT_EQ(steps[0]["name"], "all_reduce step 0");
  EXPECT_EQ(ps(steps[0]["ts"]), 100);
  EXPECT_EQ(ps(steps[0]["dur"]), 300);  // to its last completion
  EXPECT_EQ(steps[0]["args"]["bytes"], 2000);
  EXPECT_EQ(steps[0]["args"]["messages"], 2);
  EXPECT_EQ(steps[0]["args"]["clipped"], false);
  EXPECT_EQ(ps(steps[1]["ts"]), 500);
  EXPECT_EQ(ps(steps[1]["dur"]), 100);  // cut at step 2's post
  EXPECT_EQ(steps[1]["args"]["clipped"], true);
  EXPECT_EQ(ps(steps[2]["ts"]), 600);
  EXPECT_EQ(ps(steps[2]["dur"]), 200);  // to 800, its own completion (not step 1's at 700)
  EXPECT_EQ(steps[2]["args"]["link"], "nvlink");
  EXPECT_EQ(steps[2]["args"]["peer"], 1);
}

}  // namespace
}  // namespace lossless::capture
