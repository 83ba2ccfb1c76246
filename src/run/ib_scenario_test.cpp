// InfiniBand link-layer fields of a scenario (fabric.ib.*): loading, bad
// input, and a run under the infiniband preset.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace ib_scenario {

using report::RunResult;
using scenario::LoadScenarioText;
using scenario::Scenario;

constexpr const char* kIb = R"(name: ib
fabric:
  preset: infiniband
topology:
  kind: leaf-spine
  gpus: 32
  radix: 16
traffic:
  - pattern: incast
    target: 0
    senders: 15
    bytes: 256KiB
)";

std::string ErrorOf(const std::vector<std::string>& sets, const char* text = kIb) {
  try {
    LoadScenarioText(text, "ib.yaml", sets);
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(IbScenario, PresetTurnsCreditsOnAndFieldsLoad) {
  Scenario s = LoadScenarioText(
      kIb, "ib.yaml",
      {"fabric.ib.credits=1040", "fabric.ib.vlarb_low=0:20, 1:40", "fabric.ib.vlarb_high=2:255",
       "fabric.ib.high_limit=255", "fabric.ib.fcp_on_release=false", "fabric.ib.fcp_period=100ns"});
  EXPECT_TRUE(s.net.ib.enabled);
  EXPECT_EQ(s.net.ib.credits, 1040);
  EXPECT_EQ(s.net.ib.low, (std::vector<fabric::VlArbEntry>{{0, 20}, {1, 40}}));
  EXPECT_EQ(s.net.ib.high, (std::vector<fabric::VlArbEntry>{{2, 255}}));
  EXPECT_EQ(s.net.ib.limit_of_high, 255);
  EXPECT_FALSE(s.net.ib.fcp_on_release);
  EXPECT_EQ(s.net.ib.fcp_period, units::Time::Ns(100));
  EXPECT_FALSE(s.net.pfc.enabled);
}

TEST(IbScenario, ThresholdsThatCannotWorkAreErrors) {
  EXPECT_EQ(ErrorOf({"fabric.ib.credits=64"}),
            "<--set>: fabric.ib.credits: expected credits for at least one MTU packet (65 blocks "
            "of 64 B), got \"64\"");
  EXPECT_EQ(ErrorOf({"fabric.ib.credits=4096"}),
            "<--set>: fabric.ib.credits: expected an integer from 1 to 2048, got \"4096\"");
  const std::string vlarb =
      "expected comma-separated VL:weight entries (VL 0..3, weight 0..255, at most 64), got ";
  EXPECT_EQ(ErrorOf({"fabric.ib.vlarb_low=0:64,1:256"}),
            "<--set>: fabric.ib.vlarb_low: " + vlarb + "\"0:64,1:256\"");
  EXPECT_EQ(ErrorOf({"fabric.ib.vlarb_high=5:10"}),
            "<--set>: fabric.ib.vlarb_high: " + vlarb + "\"5:10\"");
  EXPECT_EQ(ErrorOf({"fabric.ib.vlarb_low=0:64,,1:2"}),
            "<--set>: fabric.ib.vlarb_low: " + vlarb + "\"0:64,,1:2\"");
  EXPECT_EQ(ErrorOf({"fabric.ib.vlarb_low=1:x"}),
            "<--set>: fabric.ib.vlarb_low: " + vlarb + "\"1:x\"");
  EXPECT_EQ(ErrorOf({"fabric.ib.vls=2", "fabric.data_class=3"}),
            "<--set>: fabric.data_class: expected an SL below fabric.ib.vls (2), got \"3\"");
  EXPECT_EQ(ErrorOf({"fabric.pfc.enabled=true"}),
            "<--set>: fabric.pfc.enabled: expected false with fabric.ib.enabled (credits are the "
            "lossless mechanism of InfiniBand; PFC is Ethernet's), got \"true\"");
  EXPECT_EQ(ErrorOf({"fabric.preset=roce", "fabric.ib.enabled=true"}),
            "<--set>: fabric.ib.enabled: expected false with the roce preset (credits are IB's "
            "link layer), got \"true\"");
}

TEST(IbScenario, IncastRunsLosslessUnderCredits) {
  RunResult r = RunScenario(LoadScenarioText(kIb, "ib.yaml", {}));
  EXPECT_EQ(r.stop_reason, "completed");
  EXPECT_TRUE(r.ib_credits);
  EXPECT_EQ(r.drops, 0u);
  EXPECT_GT(r.fcp_frames, 0u);
  EXPECT_EQ(r.pause_frames, 0u);
  // 15 senders into one 400G port: credits hold the senders back (their links
  // wait for credits) without starving the bottleneck, which stays busy: the
  // incast ends within 2 % of 15 x 64 packets of 4,122 B at 400 Gb/s.
  EXPECT_GT(r.max_credit_starved_fraction, 0.0);
  EXPECT_FALSE(r.most_credit_starved.empty());
  EXPECT_GT(r.max_link_utilization, 0.98);
  const double ideal_us = 15 * 64 * 4122 * 8 / 400e3;
  EXPECT_LT(r.fct.max.ps() / 1e6, ideal_us * 1.02);
}

TEST(IbScenario, IbCcIsAChoiceOfFabricCcAndNeedsCredits) {
  Scenario s = LoadScenarioText(kIb, "ib.yaml",
                                {"fabric.cc=ib-cc", "fabric.ibcc.threshold=32KiB",
                                 "fabric.ibcc.cct_step=20ns", "fabric.ibcc.cct_entries=64"});
  EXPECT_TRUE(s.net.ib_cc);
  EXPECT_FALSE(s.net.dcqcn);
  EXPECT_EQ(s.net.fecn.queue_threshold.count(), 32 * 1024);
  ASSERT_EQ(s.net.ib_cc_params.cct.size(), 64u);
  EXPECT_EQ(s.net.ib_cc_params.cct[63], units::Time::Ns(63 * 20));
  EXPECT_EQ(ErrorOf({"fabric.cc=ib-cc", "fabric.preset=roce"}),
            "<--set>: fabric.cc: expected fabric.ib.enabled along with ib-cc, got \"ib-cc\"");
  EXPECT_EQ(ErrorOf({"fabric.cc=dcqcn-paper"}),
            "<--set>: fabric.cc: expected none or ib-cc with InfiniBand credits (DCQCN is RoCE's), "
            "got \"dcqcn-paper\"");
  EXPECT_EQ(ErrorOf({"fabric.cc=ib-cc", "fabric.ibcc.ccti_timer=0s"}),
            "<--set>: fabric.ibcc.ccti_timer: expected a period above zero, got \"0s\"");
  RunResult r = RunScenario(s);
  EXPECT_EQ(r.stop_reason, "completed");
  EXPECT_EQ(r.drops, 0u);
}

}  // namespace ib_scenario
}  // namespace
}  // namespace lossless::run
