// Renderings of a RunResult built by hand: the capped "per class" text block
// and the JSON classes of a port.
#include "report/run_report.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lossless::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ClassReport, TextBlockIsCappedAtTwentyLines) {
  RunResult r;
  r.cc = "none";
  for (int p = 0; p < 5; ++p) {
    PortCounters pc;
    pc.name = "port" + std::to_string(p);
    for (int c = 0; c < 5; ++c) pc.stats.classes[static_cast<size_t>(c)].drops = 1;
    r.ports.push_back(pc);
  }
  std::string text = report::RunText(r, false);
  EXPECT_THAT(text, HasSubstr("... 5 more (JSON)"));
  EXPECT_THAT(text, HasSubstr("port3\n"));       // lines 16..20 are port3's
  EXPECT_THAT(text, Not(HasSubstr("port4\n")));  // cut
  r.ports.pop_back();
  text = report::RunText(r, false);
  EXPECT_THAT(text, HasSubstr("port3\n"));
  EXPECT_THAT(text, Not(HasSubstr("more (JSON)")));
  const auto j = report::RunJson(r, false);
  ASSERT_EQ(j["ports"][0]["classes"].size(), 5u);
  EXPECT_EQ(j["ports"][0]["classes"][4]["class"], 4);
  EXPECT_EQ(j["ports"][0]["classes"][4]["drops"], 1);
}

// docs/errors.md: a run in which no flow finished has no FCT (null, never 0);
// its unfinished flows are counted with the bytes they had left.
TEST(RunReport, NoFinishedFlowGivesNullFctAndUnfinishedCounts) {
  RunResult r;
  r.cc = "none";
  r.flows = 2;
  r.flows_unfinished = 2;
  r.bytes_left = 3000;
  const auto j = report::RunJson(r, false);
  EXPECT_TRUE(j["fct_us"].is_null());
  EXPECT_EQ(j["flows"]["unfinished"], 2);
  EXPECT_EQ(j["flows"]["bytes_left"], 3000);
  const std::string text = report::RunText(r, false);
  EXPECT_THAT(text, HasSubstr("fct        no flow finished\n"));
  EXPECT_THAT(text, HasSubstr("unfinished 2 flows, 3000 bytes not delivered\n"));
  r.flows_done = 1;
  r.flows_unfinished = 1;
  r.fct.max = units::Time::Ps(2'000'000);
  const auto k = report::RunJson(r, false);
  ASSERT_TRUE(k["fct_us"].is_object());
  EXPECT_EQ(k["fct_us"]["max"], 2.0);
  EXPECT_THAT(report::RunText(r, false), Not(HasSubstr("no flow finished")));
}

}  // namespace
}  // namespace lossless::report
