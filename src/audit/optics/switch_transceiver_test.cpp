#include "audit/optics/switch_transceiver.hpp"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/optics/test_util.hpp"

namespace lossless::audit::optics {
namespace {

using ::testing::HasSubstr;
using testing::ReadRealSample;

double Dbm(std::optional<double> mw) {
  return MwToDbm(*mw);
}

TEST(SonicEeprom, QsfpDomValuesAndThresholds) {
  const std::string text = ReadRealSample("sonic_eeprom_dom_qsfp28_aoc.txt");
  EXPECT_TRUE(LooksLikeSonicEeprom(text));
  SkippedLines skipped;
  auto rs = ParseSonicEeprom(text, "s.txt", &skipped);
  ASSERT_EQ(rs.size(), 1u);
  const Reading& r = rs[0];
  EXPECT_EQ(r.link, "Ethernet0");
  EXPECT_EQ(r.format, "sonic-eeprom");
  EXPECT_EQ(r.module_type, "QSFP28 or later");
  EXPECT_FALSE(r.copper);  // "40G Active Cable (XLPPI)" is an active optical cable
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_NEAR(Dbm(r.lanes[1].rx_power_mw), -0.4871, 1e-4);
  EXPECT_DOUBLE_EQ(*r.lanes[3].bias_ma, 6.75);
  EXPECT_NEAR(*r.temperature_c, 30.9258, 1e-6);
  EXPECT_NEAR(*r.voltage_v, 3.2824, 1e-6);
  EXPECT_NEAR(Dbm(r.thr(Quantity::kRxPower).low_alarm), -13.5067, 1e-4);
  EXPECT_DOUBLE_EQ(*r.thr(Quantity::kBias).high_warning, 9.5);
  EXPECT_DOUBLE_EQ(*r.thr(Quantity::kVoltage).low_warning, 3.1349);
  EXPECT_FALSE(r.thr(Quantity::kTxPower).Any());
  // Identity lines are listed, not silently dropped.
  ASSERT_FALSE(skipped.empty());
  EXPECT_EQ(skipped[0].line, 2);
}

TEST(SonicEeprom, SeveralPortsEmptyPortAndCopper) {
  SkippedLines skipped;
  auto all = ParseSonicEeprom(ReadRealSample("sonic_eeprom_dom_all_ports.txt"), "a", &skipped);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].link, "Ethernet0");
  EXPECT_EQ(all[1].link, "Ethernet64");
  bool empty_port = false;
  for (const auto& s : skipped) {
    empty_port = empty_port || s.text == "Ethernet4: SFP EEPROM Not detected";
  }
  EXPECT_TRUE(empty_port);
  auto osfp = ParseSonicEeprom(ReadRealSample("sonic_eeprom_dom_osfp_copper.txt"), "o", nullptr);
  ASSERT_EQ(osfp.size(), 1u);
  EXPECT_TRUE(osfp[0].copper);
  EXPECT_EQ(osfp[0].lanes.size(), 8u);
  auto dd = ParseSonicEeprom(ReadRealSample("sonic_eeprom_dom_qsfpdd_zr.txt"), "d", nullptr);
  ASSERT_EQ(dd.size(), 1u);
  EXPECT_EQ(dd[0].lanes.size(), 8u);
  EXPECT_NEAR(Dbm(dd[0].thr(Quantity::kTxPower).low_alarm), -10.5012, 1e-4);
}

TEST(NxosTransceiver, PortsLanesFlagsAndNa) {
  const std::string text = ReadRealSample("nxos_details_ntc_1.txt");
  EXPECT_TRUE(LooksLikeNxosTransceiver(text));
  EXPECT_FALSE(LooksLikeSonicEeprom(text));
  auto rs = ParseNxosTransceiver(text, "n.txt", nullptr);
  ASSERT_EQ(rs.size(), 4u);
  EXPECT_EQ(rs[0].link, "Ethernet3/1");
  EXPECT_EQ(rs[0].transceiver, "10Gbase-SR");
  EXPECT_FALSE(rs[0].lanes[0].bias_ma.has_value());  // "Current N/A"
  EXPECT_NEAR(Dbm(rs[0].lanes[0].rx_power_mw), -30.45, 1e-9);
  EXPECT_NEAR(Dbm(rs[0].thr(Quantity::kRxPower).low_warning), -9.90, 1e-9);
  EXPECT_DOUBLE_EQ(*rs[1].lanes[0].bias_ma, 0.43);  // value followed by the "--" flag
  EXPECT_FALSE(rs[2].lanes[0].tx_power_mw.has_value());
  // CFP: a common lane with temperature and voltage, then two network lanes.
  EXPECT_EQ(rs[3].link, "Ethernet4/1");
  EXPECT_NEAR(*rs[3].temperature_c, 40.44, 1e-9);
  ASSERT_EQ(rs[3].lanes.size(), 2u);
  EXPECT_NEAR(Dbm(rs[3].lanes[1].rx_power_mw), -1.57, 1e-9);
}

TEST(AristaTransceiver, ValuesTableAndDetailThresholds) {
  const std::string values = ReadRealSample("arista_transceiver_ntc_1.txt");
  EXPECT_TRUE(LooksLikeAristaTransceiver(values));
  auto rs = ParseAristaTransceiver(values, "a.txt", nullptr);
  ASSERT_EQ(rs.size(), 5u);
  EXPECT_EQ(rs[0].link, "Et3/1/1");
  EXPECT_FALSE(rs[0].lanes[0].tx_power_mw.has_value());
  EXPECT_NEAR(Dbm(rs[0].lanes[0].rx_power_mw), -2.39, 1e-9);
  EXPECT_FALSE(rs[4].temperature_c.has_value());  // all N/A
  auto detail =
      ParseAristaTransceiver(ReadRealSample("arista_transceiver_detail_ntc.txt"), "d", nullptr);
  ASSERT_GE(detail.size(), 9u);
  const Reading& et61 = detail[0];
  EXPECT_EQ(et61.link, "Et6/1");
  // Arista order: high alarm, high warn, low alarm, low warn.
  EXPECT_DOUBLE_EQ(*et61.thr(Quantity::kTemperature).low_alarm, -5.0);
  EXPECT_DOUBLE_EQ(*et61.thr(Quantity::kTemperature).high_warning, 75.0);
  EXPECT_NEAR(Dbm(et61.thr(Quantity::kRxPower).low_warning), -10.5, 1e-9);
  EXPECT_NEAR(Dbm(et61.lanes[0].tx_power_mw), -2.39, 1e-9);
}

TEST(SwitchTransceiver, MalformedNumbersNameTheLine) {
  try {
    ParseSonicEeprom("Ethernet0: SFP EEPROM detected\n        Temperature: hotC\n", "x", nullptr);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
  }
  EXPECT_THROW(ParseNxosTransceiver("Ethernet1/1\n    transceiver is not present\n", "x", nullptr),
               InputError);
  EXPECT_THROW(ParseAristaTransceiver("nothing here\n", "x", nullptr), InputError);
}

}  // namespace
}  // namespace lossless::audit::optics

namespace lossless::audit::optics {
namespace {

TEST(JunosOptics, ModuleAndLanes) {
  const std::string text = testing::ReadRealSample("junos_diagnostics_optics_genie_2.txt");
  EXPECT_TRUE(LooksLikeJunosOptics(text));
  auto rs = ParseJunosOptics(text, "j", nullptr);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].link, "et-0/0/0");
  EXPECT_DOUBLE_EQ(*rs[0].temperature_c, 48);
  ASSERT_EQ(rs[0].lanes.size(), 4u);  // "Lane 0".."Lane 3" -> lanes 1..4
  EXPECT_NEAR(MwToDbm(*rs[0].lanes[0].rx_power_mw), 1.03, 1e-9);
  EXPECT_DOUBLE_EQ(*rs[0].thr(Quantity::kBias).low_alarm, 75.0);
  EXPECT_NEAR(MwToDbm(*rs[0].thr(Quantity::kRxPower).low_warning), -10.60, 1e-9);
}

TEST(IosxrOptics, StatesLaneTableThresholdsAndAbsentOptics) {
  const std::string dark = testing::ReadRealSample("iosxr_controllers_optics_genie_2.txt");
  EXPECT_TRUE(LooksLikeIosxrOptics(dark));
  EXPECT_FALSE(LooksLikeJunosOptics(dark));
  auto rs = ParseIosxrOptics(dark, "x", nullptr);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].port_state, "up");
  ASSERT_EQ(rs[0].lanes.size(), 4u);                   // lanes 0..3
  EXPECT_DOUBLE_EQ(*rs[0].lanes[3].rx_power_mw, 0.0);  // -40.00 dBm floor: no light
  EXPECT_EQ(rs[0].lanes[0].rx_los, true);              // "Detected LOS/LOL/FAULT: RX-LOS"
  EXPECT_NEAR(MwToDbm(*rs[0].thr(Quantity::kRxPower).low_alarm), -18.4, 1e-9);
  EXPECT_DOUBLE_EQ(*rs[0].thr(Quantity::kBias).high_alarm, 81.75);
  auto down = ParseIosxrOptics(testing::ReadRealSample("iosxr_controllers_optics_genie_3.txt"), "d",
                               nullptr);
  EXPECT_EQ(down[0].link, "0/2/0/4");  // from the prompt "#show controllers optics 0/2/0/4"
  EXPECT_EQ(down[0].port_state, "admin-down");
  SkippedLines skipped;
  auto all = ParseIosxrOptics(testing::ReadRealSample("iosxr_controllers_optics_genie_4.txt"), "a",
                              &skipped);
  EXPECT_EQ(all.size(), 4u);  // the other ports say "Optics not present"
  EXPECT_EQ(all[0].link, "Optics0/2/0/4");
}

}  // namespace
}  // namespace lossless::audit::optics

namespace lossless::audit::optics {
namespace {

TEST(SonicEeprom, VendorVariantWithoutIndentation) {
  // Hand-made in the layout of a vendor SONiC CLI ("show interface transceiver ethernet 0/0
  // eeprom detail"): port "0/0", keys not indented.
  const char* text =
      "sonic# show interface transceiver ethernet 0/0 eeprom detail\n"
      "0/0 : SFP EEPROM detected\n"
      "Identifier: QSFP28 or later\n"
      "ChannelMonitorValues:\n"
      "RX1Power: 0.8422dBm\n"
      "TX1Bias: 6.0740mA\n"
      "ChannelThresholdValues:\n"
      "RxPowerLowAlarm : -13.2975dBm\n"
      "ModuleMonitorValues:\n"
      "Temperature: 32.9570C\n"
      "Vcc: 3.2961Volts\n";
  EXPECT_TRUE(LooksLikeSonicEeprom(text));
  auto rs = ParseSonicEeprom(text, "v", nullptr);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].link, "0/0");
  EXPECT_NEAR(MwToDbm(*rs[0].lanes[0].rx_power_mw), 0.8422, 1e-9);
  EXPECT_NEAR(MwToDbm(*rs[0].thr(Quantity::kRxPower).low_alarm), -13.2975, 1e-9);
  EXPECT_NEAR(*rs[0].voltage_v, 3.2961, 1e-9);
}

}  // namespace
}  // namespace lossless::audit::optics
