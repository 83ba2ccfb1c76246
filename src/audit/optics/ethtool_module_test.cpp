#include "audit/optics/ethtool_module.hpp"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/optics/test_util.hpp"

namespace lossless::audit::optics {
namespace {

using ::testing::HasSubstr;
using testing::ReadFixture;

TEST(EthtoolModule, SfpHealthyValuesAndThresholds) {
  Reading r = ParseEthtoolModule(ReadFixture("sfp_healthy.txt"), "sfp_healthy.txt");
  EXPECT_EQ(r.format, "ethtool-sff8472");
  EXPECT_EQ(r.module_type, "SFP");
  EXPECT_EQ(r.link, "eth2");  // from the saved "$ ethtool -m eth2" prompt
  EXPECT_FALSE(r.time_s.has_value());
  EXPECT_FALSE(r.copper);
  ASSERT_EQ(r.lanes.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.lanes[0].bias_ma, 6.024);
  // dBm form wins: -3.14 dBm.
  EXPECT_NEAR(MwToDbm(*r.lanes[0].rx_power_mw), -3.14, 1e-9);
  EXPECT_NEAR(MwToDbm(*r.lanes[0].tx_power_mw), -2.36, 1e-9);
  EXPECT_DOUBLE_EQ(*r.temperature_c, 30.5);
  EXPECT_DOUBLE_EQ(*r.voltage_v, 3.325);
  EXPECT_NEAR(MwToDbm(*r.thr(Quantity::kRxPower).low_alarm), -20.0, 1e-9);
  EXPECT_DOUBLE_EQ(*r.thr(Quantity::kTemperature).high_alarm, 90.0);
  EXPECT_DOUBLE_EQ(*r.thr(Quantity::kBias).low_warning, 3.0);
  EXPECT_DOUBLE_EQ(*r.thr(Quantity::kVoltage).high_warning, 3.5);
}

TEST(EthtoolModule, Qsfp28FourLanesAndCaptureComments) {
  std::istringstream in(ReadFixture("qsfp28_healthy.txt"));
  Reading r = ParseEthtoolModule(in, "q.txt");
  EXPECT_EQ(r.format, "ethtool-sff8636");
  EXPECT_EQ(r.module_type, "QSFP28");
  EXPECT_EQ(r.link, "leaf1/swp1");
  EXPECT_EQ(r.time_s, 1772366400);  // 2026-03-01T12:00:00Z
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_DOUBLE_EQ(*r.lanes[2].bias_ma, 6.8);
  EXPECT_NEAR(MwToDbm(*r.lanes[1].rx_power_mw), -1.08, 1e-9);
  EXPECT_NEAR(MwToDbm(*r.thr(Quantity::kRxPower).low_alarm), -13.10, 1e-9);
  EXPECT_EQ(r.thr(Quantity::kTxPower).Count(), 4);
}

TEST(EthtoolModule, CmisEightLanes) {
  Reading r = ParseEthtoolModule(ReadFixture("qsfpdd_rx_low_alarm.txt"), "dd.txt");
  EXPECT_EQ(r.format, "ethtool-cmis");
  EXPECT_EQ(r.module_type, "QSFP-DD");
  ASSERT_EQ(r.lanes.size(), 8u);
  EXPECT_NEAR(*r.lanes[7].rx_power_mw, 0.03, 1e-4);
}

TEST(EthtoolModule, CopperZeroReadings) {
  Reading r = ParseEthtoolModule(ReadFixture("qsfp28_copper.txt"), "c.txt");
  EXPECT_TRUE(r.copper);
  EXPECT_DOUBLE_EQ(*r.temperature_c, 0.0);
  EXPECT_DOUBLE_EQ(*r.lanes[0].rx_power_mw, 0.0);  // "0.0000 mW / -inf dBm"
  EXPECT_FALSE(r.thr(Quantity::kRxPower).Any());
  Reading sfp = ParseEthtoolModule(ReadFixture("sfp_copper.txt"), "s.txt");
  EXPECT_TRUE(sfp.copper);
  EXPECT_TRUE(sfp.lanes.empty());
}

TEST(EthtoolModule, LosAndTxDisablePerLane) {
  Reading los = ParseEthtoolModule(ReadFixture("qsfp28_los.txt"), "l.txt");
  EXPECT_EQ(los.lanes[1].rx_los, true);
  EXPECT_EQ(los.lanes[0].rx_los, false);
  Reading off = ParseEthtoolModule(ReadFixture("qsfp28_laser_off.txt"), "o.txt");
  for (const auto& l : off.lanes) EXPECT_EQ(l.tx_disabled, true);
}

TEST(EthtoolModule, PowerFormsMwOnlyDbmOnlyAndList) {
  const std::string text =
      "\tIdentifier : 0x11 (QSFP28)\n"
      "\tTransmit avg optical power (Channel 1) : 0.5000 mW\n"
      "\tTransmit avg optical power (Channel 2) : -3.01 dBm\n"
      "\tRcvr signal avg optical power(Channel 1) : 1.0000 mW / 0.00 dBm\n"
      "\tRcvr signal avg optical power(Channel 2) : 0.0000 mW / -inf dBm\n"
      "\tRx loss of signal : [ No, Yes ]\n";
  Reading r = ParseEthtoolModule(text, "t");
  EXPECT_DOUBLE_EQ(*r.lanes[0].tx_power_mw, 0.5);
  EXPECT_NEAR(*r.lanes[1].tx_power_mw, 0.5, 1e-3);
  EXPECT_DOUBLE_EQ(*r.lanes[0].rx_power_mw, 1.0);
  EXPECT_DOUBLE_EQ(*r.lanes[1].rx_power_mw, 0.0);
  EXPECT_EQ(r.lanes[1].rx_los, true);
  EXPECT_EQ(r.lanes[0].rx_los, false);
}

TEST(EthtoolModule, MalformedInputsNameFileAndLine) {
  try {
    ParseEthtoolModule(ReadFixture("qsfp28_truncated.txt"), "trunc.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("trunc.txt:"));
    EXPECT_THAT(e.what(), HasSubstr("truncated output: rx power thresholds incomplete (1 of 4)"));
  }
  EXPECT_THROW(ParseEthtoolModule(std::string_view("\tIdentifier : 0x11 (QSFP28)\n\0x", 31), "b"),
               InputError);
  {
    // A line that is not "key : value" is skipped and reported with its line number.
    SkippedLines skipped;
    auto rs = ParseEthtoolModules("\tIdentifier : 0x11 (QSFP28)\nthis line has no colon\n", "n.txt",
                                  &skipped);
    ASSERT_EQ(rs.size(), 1u);
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(skipped[0].line, 2);
    EXPECT_THAT(skipped[0].why, HasSubstr("not a 'key : value' line"));
  }
  try {
    ParseEthtoolModule("\tIdentifier : 0x11 (QSFP28)\n\tModule voltage : three V\n", "v.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().field, "Module voltage");
  }
  EXPECT_THROW(ParseEthtoolModule("\tVendor name : X\n", "x"), InputError);  // no Identifier
  EXPECT_THROW(ParseEthtoolModule("\tIdentifier : 0xZZ\n", "x"), InputError);
  // Lanes 1, 2 and 4 but not 3.
  EXPECT_THROW(ParseEthtoolModule("\tIdentifier : 0x11 (QSFP28)\n"
                                  "\tLaser tx bias current (Channel 1) : 6 mA\n"
                                  "\tLaser tx bias current (Channel 2) : 6 mA\n"
                                  "\tLaser tx bias current (Channel 4) : 6 mA\n",
                                  "x"),
               InputError);
}

TEST(EthtoolModule, SeveralModulesWithPromptsAndHeaders) {
  // Hand-made: a loop over two NICs, each preceded by its prompt or header.
  const char* text =
      "# time: 2026-03-01T12:00:00Z\n"
      "root@node1:~# ethtool -m ens1f0\n"
      "\tIdentifier : 0x03 (SFP)\n"
      "\tLaser output power : 0.5 mW / -3.01 dBm\n"
      "\tReceiver signal average optical power : 0.0000 mW / -inf dBm\n"
      "==== ens1f1 ====\n"
      "\tIdentifier : 0x11 (QSFP28)\n"
      "\tLaser tx bias current (Channel 1) : 0.000 mA\n";
  SkippedLines skipped;
  auto rs = ParseEthtoolModules(text, "loop.txt", &skipped);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].link, "ens1f0");
  EXPECT_EQ(rs[1].link, "ens1f1");
  EXPECT_EQ(rs[0].time_s, rs[1].time_s);               // one "# time:" for the whole loop
  EXPECT_DOUBLE_EQ(*rs[0].lanes[0].rx_power_mw, 0.0);  // -inf dBm: no light
  EXPECT_EQ(rs[1].format, "ethtool-sff8636");
  EXPECT_TRUE(skipped.empty());
  EXPECT_THROW(ParseEthtoolModule(text, "loop.txt"), InputError);  // single-module API
}

TEST(EthtoolModule, RealCaptureWithCommentPrefixedLines) {
  const std::string text = testing::ReadRealSample("ethtool_sfp_10gsr_commented.txt");
  EXPECT_TRUE(LooksLikeEthtoolModule(text));
  SkippedLines skipped;
  auto rs = ParseEthtoolModules(text, "c.txt", &skipped);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].link, "enp134s0f0");  // from the bare "ethtool -m enp134s0f0" line
  EXPECT_EQ(rs[0].dom_supported, true);
  EXPECT_NEAR(MwToDbm(*rs[0].lanes[0].rx_power_mw), -13.57, 1e-9);
  EXPECT_NEAR(MwToDbm(*rs[0].thr(Quantity::kRxPower).low_warning), -14.0, 1e-9);
  ASSERT_FALSE(skipped.empty());
  EXPECT_EQ(skipped[0].line, 1);  // "#!/bin/bash"
}

TEST(EthtoolModule, Sniff) {
  EXPECT_TRUE(LooksLikeEthtoolModule(ReadFixture("sfp_healthy.txt")));
  EXPECT_FALSE(LooksLikeEthtoolModule(ReadFixture("mlxlink_healthy.txt")));
}

}  // namespace
}  // namespace lossless::audit::optics
