#include "audit/optics/telemetry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/optics/ingest.hpp"
#include "audit/optics/test_util.hpp"

namespace lossless::audit::optics {
namespace {

using ::testing::HasSubstr;
using testing::ReadFixture;

TEST(Telemetry, CsvGroupsRowsByLinkAndTime) {
  auto rs = ParseTelemetry(ReadFixture("telemetry_trend.csv"), "t.csv");
  ASSERT_EQ(rs.size(), 6u);
  EXPECT_EQ(rs[0].link, "spine1/swp7");
  EXPECT_EQ(rs[0].time_s, 1772323200);  // 2026-03-01T00:00:00Z
  EXPECT_EQ(*rs[5].time_s - *rs[0].time_s, 5 * 86400);
  ASSERT_EQ(rs[5].lanes.size(), 2u);
  EXPECT_NEAR(MwToDbm(*rs[5].lanes[1].rx_power_mw), -6.0, 1e-9);
  EXPECT_NEAR(MwToDbm(*rs[0].thr(Quantity::kRxPower).low_alarm), -9.0, 1e-9);
  EXPECT_DOUBLE_EQ(*rs[0].raw_ber, 2e-9);
}

TEST(Telemetry, JsonReadingsWithLanes) {
  auto rs = ParseTelemetry(ReadFixture("telemetry_mixed.json"), "t.json");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].module_type, "OSFP");
  EXPECT_DOUBLE_EQ(*rs[0].temperature_c, 45.5);
  EXPECT_NEAR(MwToDbm(*rs[0].lanes[1].rx_power_mw), -1.4, 1e-9);
  EXPECT_EQ(rs[1].time_s, 1772323200);  // epoch form
  EXPECT_EQ(rs[1].post_fec_errors, 17);
  EXPECT_EQ(rs[1].lanes[0].rx_los, false);
}

TEST(Telemetry, Errors) {
  try {
    ParseTelemetry("time,link,rx_powr_dbm\n", "u.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'rx_power_dbm'"));
  }
  try {
    ParseTelemetry(ReadFixture("telemetry_bad_time.csv"), "b.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().field, "time");
  }
  // Same reading, same field, two values.
  EXPECT_THROW(ParseTelemetry("time,link,lane,temperature_c\n1,x,1,40\n1,x,2,41\n", "c"),
               InputError);
  EXPECT_THROW(ParseTelemetry("time,link,lane,rx_power_dbm\n1,x,1,-2\n1,x\n", "c"), InputError);
  EXPECT_THROW(ParseTelemetry("time,link,lane,rx_power_dbm\n1,x,3,-2\n", "c"), InputError);
  EXPECT_THROW(ParseTelemetry("{\"readings\": [ {\"time\": 1} ]}", "j"), InputError);
  EXPECT_THROW(ParseTelemetry(
                   "{\"readings\": [ {\"time\": 1, \"link\": \"x\", \"rx_power_dbm\": 1} ]}", "j"),
               InputError);
  try {
    ParseTelemetry("{\n\"readings\": [\n  {\"time\": 1,,}\n]}", "j.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
  }
}

TEST(Ingest, ResolvesLinkAndTime) {
  IngestOptions none;
  // ethtool dump without a time and without --at: refused, never a silent clock.
  try {
    ParseInput(ReadFixture("sfp_healthy.txt"), "dir/sfp_healthy.txt", none);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--at"));
  }
  IngestOptions at;
  at.at = 1000;
  auto rs = ParseInput(ReadFixture("qsfp28_rx_low_alarm.txt"), "dir/qsfp28_rx_low_alarm.txt", at);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].link, "qsfp28_rx_low_alarm");  // file stem
  EXPECT_EQ(rs[0].time_s, 1000);
  at.link = "leaf9/swp3";
  rs = ParseInput(ReadFixture("qsfp28_healthy.txt"), "q.txt", at);
  EXPECT_EQ(rs[0].link, "leaf9/swp3");
  EXPECT_EQ(rs[0].time_s, 1000);
  // --at cannot merge a telemetry file's several times.
  EXPECT_THROW(ParseInput(ReadFixture("telemetry_trend.csv"), "t.csv", at), InputError);
  EXPECT_EQ(DetectInputKind(ReadFixture("mlxlink_healthy.txt")), InputKind::kMlxlink);
  EXPECT_EQ(DetectInputKind(ReadFixture("telemetry_mixed.json")), InputKind::kTelemetryJson);
  EXPECT_EQ(DetectInputKind(ReadFixture("telemetry_trend.csv")), InputKind::kTelemetryCsv);
  EXPECT_EQ(DetectInputKind(ReadFixture("other_kind.yaml")), InputKind::kUnknown);
  EXPECT_THROW(ParseInput("", "e", at), InputError);
  EXPECT_THROW(ParseInput("\n  \n", "e", at), InputError);
  EXPECT_THROW(ParseInput(ReadFixture("junk.bin"), "j", at), InputError);
}

// Issue 16: a reading dated 2099 kept a link quarantined after a fresh
// healthy one, and rx_power_dbm=1e308 was stored.
TEST(Ingest, FutureTimesAndImpossibleValuesAreRefused) {
  const std::string head = "time,link,lane,rx_power_dbm\n";
  IngestOptions now;
  now.now = 1'780'000'000;  // 2026-05-28
  EXPECT_EQ(ParseInput(head + "2026-05-28T00:00:00Z,l1,1,-2.5\n", "t.csv", now).size(), 1u);
  try {
    ParseInput(head + "2099-01-01T00:00:00Z,l1,1,-2.5\n", "t.csv", now);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("t.csv: time: 2099-01-01T00:00:00Z for l1 is in the future"));
  }
  try {
    ParseInput(head + "2026-05-28T00:00:00Z,l1,1,1e308\n", "t.csv", now);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("t.csv: rx_power: l1 lane 1: expected 0 to 100 mW"));
  }
}

TEST(Timestamps, ParseAndFormat) {
  EXPECT_EQ(ParseTimestamp("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseTimestamp("2026-03-01T12:00:00Z"), 1772366400);
  EXPECT_EQ(ParseTimestamp("2026-03-01 14:00:00.250+02:00"), 1772366400);
  EXPECT_EQ(ParseTimestamp("1772366400"), 1772366400);
  EXPECT_FALSE(ParseTimestamp("2026-03-01T12:00:00"));  // no zone: refused
  EXPECT_FALSE(ParseTimestamp("2026-02-29T00:00:00Z"));
  EXPECT_FALSE(ParseTimestamp("yesterday"));
  EXPECT_EQ(FormatTimestamp(1772366400), "2026-03-01T12:00:00Z");
  EXPECT_EQ(ParseAtOption("2024-02-29T00:00:00Z"), 1709164800);
  EXPECT_THROW(ParseAtOption("soon"), InputError);
}

}  // namespace
}  // namespace lossless::audit::optics
