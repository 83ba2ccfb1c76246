#include "audit/optics/mlxlink.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/optics/test_util.hpp"

namespace lossless::audit::optics {
namespace {

using ::testing::HasSubstr;
using testing::ReadFixture;

TEST(Mlxlink, HealthyModuleAndCounters) {
  Reading r = ParseMlxlink(ReadFixture("mlxlink_healthy.txt"), "m.txt");
  EXPECT_EQ(r.format, "mlxlink");
  EXPECT_EQ(r.link, "mlx5_0/p1");
  EXPECT_EQ(r.module_type, "OSFP");
  EXPECT_EQ(r.speed, "400G");
  EXPECT_EQ(r.fec, "Standard_RS-FEC - (544,514)");
  EXPECT_FALSE(r.copper);
  EXPECT_DOUBLE_EQ(*r.temperature_c, 48);
  EXPECT_DOUBLE_EQ(*r.thr(Quantity::kTemperature).high_alarm, 75);
  EXPECT_DOUBLE_EQ(*r.thr(Quantity::kTemperature).low_alarm, -5);
  EXPECT_FALSE(r.thr(Quantity::kTemperature).high_warning.has_value());
  EXPECT_NEAR(*r.voltage_v, 3.2618, 1e-9);
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_NEAR(MwToDbm(*r.lanes[1].rx_power_mw), 0.85, 1e-9);
  EXPECT_NEAR(MwToDbm(*r.thr(Quantity::kRxPower).low_alarm), -10.41, 1e-9);
  EXPECT_EQ(r.lanes[0].rx_los, false);
  EXPECT_EQ(r.lanes[2].raw_errors, 1100);
  EXPECT_DOUBLE_EQ(*r.raw_ber, 1e-10);
  EXPECT_DOUBLE_EQ(*r.effective_ber, 0.0);  // "15E-255" is mlxlink's zero
  EXPECT_EQ(r.port_state, "up");
  EXPECT_EQ(r.post_fec_errors, 0);
  EXPECT_DOUBLE_EQ(*r.counters_age_s, 1440.0 * 60);
  EXPECT_EQ(r.link_down_count, 0);
  EXPECT_EQ(r.troubleshooting, "No issue was observed");
}

TEST(Mlxlink, TroubleshootingOpcodeAndCopper) {
  Reading bad = ParseMlxlink(ReadFixture("mlxlink_high_ber.txt"), "b.txt");
  EXPECT_DOUBLE_EQ(*bad.raw_ber, 3e-4);
  EXPECT_EQ(bad.troubleshooting, "opcode 1024: Check the cable and module, consider replacing");
  Reading cu = ParseMlxlink(ReadFixture("mlxlink_copper.txt"), "c.txt");
  EXPECT_TRUE(cu.copper);
  EXPECT_FALSE(cu.temperature_c.has_value());
  EXPECT_DOUBLE_EQ(*cu.raw_ber, 1e-12);
}

TEST(Mlxlink, SymbolErrorsArePostFecWhenPrinted) {
  const std::string text =
      "Physical Counters and BER Info\n------------------------------\n"
      "Effective Physical Errors : 5\nRaw Physical BER : 1E-9\nSymbol Errors : 2\n";
  Reading r = ParseMlxlink(text, "s");
  EXPECT_EQ(r.post_fec_errors, 2);
}

TEST(Mlxlink, SeveralHcasErrorLinesAndZeroBer) {
  // Hand-made in mlxlink's layout: a loop over two HCAs; the first one's -m query failed.
  const char* text =
      "root@node1:~# mlxlink -d mlx5_0 -m -c\n"
      "\n"
      "Operational Info\n"
      "----------------\n"
      "State                           : Active\n"
      "-E- Failed to get module info\n"
      "\n"
      "Physical Counters and BER Info\n"
      "------------------------------\n"
      "Effective Physical Errors       : 0\n"
      "Effective Physical BER          : 15E-255\n"
      "Raw Physical BER                : 15E-255\n"
      "root@node1:~# mlxlink -d mlx5_1 -m -c\n"
      "Operational Info\n"
      "----------------\n"
      "State                           : Disable\n"
      "Module Info\n"
      "-----------\n"
      "Digital Diagnostic Monitoring   : No\n"
      "Temperature [C]                 : N/A\n";
  SkippedLines skipped;
  auto rs = ParseMlxlinkReports(text, "loop.txt", &skipped);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].link, "mlx5_0");
  EXPECT_EQ(rs[0].port_state, "up");
  EXPECT_EQ(rs[0].raw_ber, 0.0);
  EXPECT_EQ(rs[0].effective_ber, 0.0);
  EXPECT_EQ(rs[1].link, "mlx5_1");
  EXPECT_EQ(rs[1].port_state, "admin-down");
  EXPECT_EQ(rs[1].dom_supported, false);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].line, 6);
  EXPECT_THAT(skipped[0].why, HasSubstr("mlxlink message"));
}

TEST(Mlxlink, MalformedInputs) {
  try {
    ParseMlxlink(ReadFixture("mlxlink_truncated.txt"), "t.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("truncated output"));
    EXPECT_THAT(e.what(), HasSubstr("Raw Physical BER"));
  }
  EXPECT_THROW(ParseMlxlink("Operational Info\n----\nState : Active\n", "x"), InputError);
  try {
    ParseMlxlink("Module Info\n-----------\nTemperature [C] : hot [-5..75]\n", "x");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().field, "Temperature [C]");
  }
  EXPECT_THROW(ParseMlxlink("Physical Counters and BER Info\n---\nRaw Physical BER : 2\n"
                            "Effective Physical Errors : 0\n",
                            "x"),
               InputError);  // BER > 1
  EXPECT_THROW(ParseMlxlink("Physical Counters and BER Info\n---\nRaw Physical BER : 1E-9\n"
                            "Effective Physical Errors : -4\n",
                            "x"),
               InputError);
}

}  // namespace
}  // namespace lossless::audit::optics
