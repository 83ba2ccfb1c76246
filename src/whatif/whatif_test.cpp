// `lossless what-if` (docs/what-if.md#what-if-quarantine-now-or-wait): the quarantined case of the
// rail check against its derived (u - 1)/u share, a degraded link against
// the healthy fabric, the answer's words and bad input.
#include "whatif/whatif.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "scenario/scenario.hpp"

namespace lossless::whatif {
namespace {
namespace whatif_test {

// 4 nodes x 2 GPUs on the rail check's fixture (docs/what-if.md#the-rail-check):
// 2 scalable units of 2 nodes, each rail leaf with 4 x 100G uplinks, one per
// spine, and 400G NICs.
scenario::Scenario Rail(const std::string& preset) {
  return scenario::LoadFabricText("name: rail\nfabric: {preset: " + preset +
                                      ", routing: adaptive}\n"
                                      "topology: {kind: file, file: " LOSSLESS_SOURCE_DIR
                                      "/tests/fixtures/topology/rail_2su_thin_uplinks.topo, "
                                      "gpus_per_node: 2}\n",
                                  "rail.yaml");
}

Options OneSize(std::vector<LinkFault> links) {
  Options o;
  o.links = std::move(links);
  o.sizes = {int64_t{32} << 20};
  o.iterations = 1;
  o.train_model = "none";
  return o;
}

LinkFault Degraded(const std::string& link, double ber) {
  LinkFault l;
  l.link = link;
  l.ber = ber;
  l.source = "test";
  l.where = {"<test>", 0, "--degrade"};
  return l;
}

double Busbw(const nlohmann::ordered_json& doc, int k) { return doc["cases"][k]["busbw_gbs"].get<double>(); }

}  // namespace whatif_test
using namespace whatif_test;

class WhatIfRail : public ::testing::TestWithParam<const char*> {};

// Quarantining one leaf-spine link of a rail leaf whose uplinks carry exactly
// one NIC's rate leaves (u - 1)/u = 3/4 of the ring's bus bandwidth
// (docs/what-if.md#the-rail-check derives it; the same tolerance and the
// same reason: fixed costs weigh more in the shorter healthy run). Left in
// service at a post-FEC BER of 1e-6, the link's losses cost busbw too (each
// lost frame is sent again over the bottleneck), and with a BER of 0 it is
// the healthy fabric, byte for byte.
TEST_P(WhatIfRail, QuarantinedLinkCostsItsShareOfTheRailAndADegradedOneCostsLoss) {
  const scenario::Scenario s = Rail(GetParam());
  const nlohmann::ordered_json doc = whatif::Run(s, "rail", 4, OneSize({Degraded("su0-rail0-spine0", 1e-6)}));
  ASSERT_EQ(doc["schema"], "lossless.whatif/1");
  ASSERT_TRUE(doc["cases"][2]["failure"].is_null());
  const double healthy = Busbw(doc, 0), in_service = Busbw(doc, 1), quarantined = Busbw(doc, 2);
  std::printf("%s: 32 MiB busbw healthy %.2f, in service (BER 1e-6) %.2f, quarantined %.2f (x%.3f; derived x0.750)\n",
              GetParam(), healthy, in_service, quarantined, quarantined / healthy);
  EXPECT_NEAR(quarantined / healthy, 0.75, 0.04);
  EXPECT_LT(in_service, healthy);
  EXPECT_EQ(doc["cases"][0]["frames_dropped"].get<int64_t>(), 0);
  EXPECT_GT(doc["cases"][1]["frames_dropped"].get<int64_t>(), 0);
  EXPECT_GT(doc["cases"][1]["packets_resent"].get<int64_t>(), 0);
  EXPECT_NEAR(doc["answer"]["quarantined_lost_pct"].get<double>(), 100 * (1 - quarantined / healthy), 0.01);

  // BER 0 (a port on watch without post-FEC errors): in service = healthy.
  // On one fabric only: the three cases cost a sweep each (the same document
  // twice is tests/cli/whatif.sh's check).
  if (std::string(GetParam()) != "infiniband") return;
  const nlohmann::ordered_json zero = whatif::Run(s, "rail", 4, OneSize({Degraded("su0-rail0-spine0", 0)}));
  EXPECT_EQ(zero["cases"][1]["sweep"], zero["cases"][0]["sweep"]);
  EXPECT_EQ(zero["answer"]["better"], "in_service");
}

INSTANTIATE_TEST_SUITE_P(WhatIf, WhatIfRail, ::testing::Values("infiniband", "roce"));

TEST(WhatIf, DownLinksAreDownInBothFaultedCases) {
  LinkFault d;
  d.link = "spine2-su1-rail1";
  d.down = true;
  d.where = {"<test>", 0, "--down"};
  const nlohmann::ordered_json doc = whatif::Run(Rail("infiniband"), "rail", 4, OneSize({d}));
  EXPECT_EQ(doc["cases"][1]["sweep"], doc["cases"][2]["sweep"]);
  EXPECT_EQ(doc["answer"]["better"], "same");
  EXPECT_NE(doc["answer"]["text"].get<std::string>().find("nothing to decide"), std::string::npos);
}

TEST(WhatIf, AnswerSaysWhichIsBetterAndByHowMuch) {
  EXPECT_EQ(Answer(5.0, false, 12.25, false, 1),
            "quarantine now: 5.0 % busbw lost vs 12.3 % left in service (taking the link out costs 7.3 points "
            "less)");
  EXPECT_EQ(Answer(24.0, false, 6.4, false, 2),
            "wait for the maintenance window: 6.4 % busbw lost left in service vs 24.0 % if quarantined now "
            "(leaving the 2 links in costs 17.6 points less)");
  EXPECT_EQ(Answer(3.04, false, 2.96, false, 1),
            "either: 3.0 % busbw lost quarantined vs 3.0 % left in service, the same to 0.1 %");
  EXPECT_EQ(Answer(0, true, 6.4, false, 1),
            "wait for the maintenance window: taking the link out stops the all-reduce (no path left), left "
            "in service it loses 6.4 % busbw");
  EXPECT_EQ(Answer(10, false, 0, true, 1),
            "quarantine now: 10.0 % busbw lost vs the all-reduce failing with the link left in service");
}

TEST(WhatIf, BadInputNamesTheFieldAndWhatWasExpected) {
  const scenario::Scenario s = Rail("roce");
  try {
    Check(s, OneSize({Degraded("su0-rail0-spine9", 1e-7)}));
    FAIL() << "unknown link accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--degrade"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("su0-rail0-spine0 (lossless links lists them)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Check(s, OneSize({Degraded("su0-rail0-spine0", 1e-7), Degraded("spine0-su0-rail0", 1e-8)})),
               InputError);
  EXPECT_THROW(ParseDegrade("su0-rail0-spine0=0.5"), InputError);
  EXPECT_THROW(ParseDegrade("su0-rail0-spine0=0"), InputError);
  EXPECT_THROW(ParseDegrade("su0-rail0-spine0=abc"), InputError);
  EXPECT_THROW(ParseDegrade("su0-rail0-spine0"), InputError);
  const LinkFault l = ParseDegrade("su0-rail0-spine0#0=1e-7");
  EXPECT_EQ(l.link, "su0-rail0-spine0#0");
  EXPECT_DOUBLE_EQ(l.ber, 1e-7);
}

}  // namespace
}  // namespace lossless::whatif
