// Every real capture under tests/fixtures/real/optics/ parses and gets the verdict an
// expert would give; tests/fixtures/real/SOURCES.md says where each comes from and why
// the verdict is the right one. Each reading is judged on its own (one capture).
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/optics/ingest.hpp"
#include "audit/optics/rules.hpp"
#include "audit/optics/test_util.hpp"

namespace lossless::audit::optics {
namespace {

using testing::ReadRealSample;

constexpr int64_t kIngestTime = 1772366400;  // 2026-03-01T12:00:00Z

std::map<std::string, Verdict> Verdicts(const std::string& sample) {
  IngestOptions o;
  o.now = kIngestTime;
  ParsedInput p = ParseInputDetailed(ReadRealSample(sample), sample, o);
  std::map<std::string, Verdict> out;
  for (const Reading& r : p.readings) {
    EXPECT_EQ(*r.time_s, kIngestTime) << sample << " " << r.link;
    out[r.link] = EvaluateLink(r.link, {r}, RuleParams{}).state;
  }
  return out;
}

struct Case {
  const char* sample;
  std::map<std::string, Verdict> want;
};

const Verdict H = Verdict::kPass;
const Verdict W = Verdict::kWarn;
const Verdict Q = Verdict::kFail;
const Verdict I = Verdict::kIndeterminate;

TEST(RealCorpus, EverySampleGetsTheExpertVerdict) {
  const Case cases[] = {
      {"ethtool_sfp_10gsr_commented.txt", {{"enp134s0f0", W}}},
      {"ethtool_sfp_10gsr_i40e.txt", {{"ethtool_sfp_10gsr_i40e", H}}},
      {"ethtool_sfp_10gsr_bnxt_garbage_dom.txt", {{"ethtool_sfp_10gsr_bnxt_garbage_dom", I}}},
      {"ethtool_sfp_10gsr_zero_dom.txt", {{"ethtool_sfp_10gsr_zero_dom", I}}},
      {"ethtool_qsfp28_sr4_cumulus.txt", {{"ethtool_qsfp28_sr4_cumulus", H}}},
      {"ethtool_qsfp28_sr4_sn2100.txt", {{"ethtool_qsfp28_sr4_sn2100", H}}},
      {"ethtool_qsfp_sr4_dark_cumulus.txt", {{"ethtool_qsfp_sr4_dark_cumulus", Q}}},
      {"ethtool_qsfp_cr4_dac_cumulus.txt", {{"ethtool_qsfp_cr4_dac_cumulus", H}}},
      {"ethtool_cmis_qsfpdd_400g_xdr4_netdev.txt", {{"ethtool_cmis_qsfpdd_400g_xdr4_netdev", W}}},
      {"ethtool_cmis_qsfpdd_dac_netdev.txt", {{"swp1", H}}},
      {"mlxlink_bf3_qsfp28_dac_m_c.txt",
       {{"/dev/mst/mt41692_pciconf0/p1", H}, {"/dev/mst/mt41692_pciconf0.1/p1", H}}},
      {"sonic_eeprom_dom_qsfp28_aoc.txt", {{"Ethernet0", H}}},
      {"sonic_eeprom_dom_qsfpdd_zr.txt", {{"Ethernet8", Q}}},
      {"sonic_eeprom_dom_osfp_copper.txt", {{"Ethernet72", H}}},
      {"sonic_eeprom_dom_all_ports.txt", {{"Ethernet0", H}, {"Ethernet64", H}}},
      {"nxos_details_ntc_1.txt",
       {{"Ethernet3/1", Q}, {"Ethernet3/2", Q}, {"Ethernet3/3", Q}, {"Ethernet4/1", H}}},
      {"nxos_details_ntc_2.txt",
       {{"Ethernet1/7", H},
        {"Ethernet1/43", I},
        {"Ethernet1/45", I},
        {"Ethernet1/47", H},
        {"Ethernet1/48", H}}},
      {"nxos_details_genie_1.txt", {{"Ethernet1/1", H}}},
      {"nxos_details_genie_2.txt", {{"Ethernet1/63", H}}},
      {"nxos_details_genie_3.txt",
       {{"Ethernet1/44", I},
        {"Ethernet1/45", H},
        {"Ethernet1/46", H},
        {"Ethernet1/47", H},
        {"Ethernet1/48", I},
        {"Ethernet1/49", I},
        {"Ethernet1/50", W}}},
      {"nxos_details_genie_4.txt", {{"Ethernet1/26", H}}},
      {"junos_diagnostics_optics_genie_1.txt", {{"xe-0/1/7", H}}},
      {"junos_diagnostics_optics_genie_2.txt", {{"et-0/0/0", H}}},
      {"iosxr_controllers_optics_genie_0.txt", {{"0/0/1/2", H}}},
      {"iosxr_controllers_optics_genie_1.txt", {{"iosxr_controllers_optics_genie_1", H}}},
      {"iosxr_controllers_optics_genie_2.txt", {{"iosxr_controllers_optics_genie_2", Q}}},
      {"iosxr_controllers_optics_genie_3.txt", {{"0/2/0/4", H}}},
      {"iosxr_controllers_optics_genie_4.txt",
       {{"Optics0/2/0/4", Q}, {"Optics0/2/0/5", Q}, {"Optics0/2/0/10", Q}, {"Optics0/2/0/22", Q}}},
      {"iosxr_controllers_optics_genie_5.txt", {{"Optics0/0/0/18", H}}},
      {"arista_transceiver_ntc_1.txt",
       {{"Et3/1/1", H}, {"Et3/17/1", H}, {"Et3/17/2", H}, {"Et3/17/3", H}, {"Et5/29/1", I}}},
      {"arista_transceiver_ntc_2.txt",
       {{"Et3/1/1", H},
        {"Et3/17/1", H},
        {"Et3/17/2", H},
        {"Et3/17/3", H},
        {"Et4/21/1", Q},
        {"Et5/29/1", I}}},
      {"arista_transceiver_detail_ntc.txt",
       {{"Et6/1", H},
        {"Et6/2", H},
        {"Et6/3", H},
        {"Et6/4", H},
        {"Et29/1", H},
        {"Et29/2", H},
        {"Et29/3", H},
        {"Et29/4", H},
        {"Et7/1", H}}},
  };
  std::set<std::string> listed;
  for (const Case& c : cases) listed.insert(c.sample);
  for (const auto& e : std::filesystem::directory_iterator(std::string(LOSSLESS_SOURCE_DIR) +
                                                           "/tests/fixtures/real/optics"))
    EXPECT_TRUE(listed.count(e.path().filename().string()))
        << e.path().filename().string() << " has no expected verdict here";
  for (const Case& c : cases) {
    auto got = Verdicts(c.sample);
    EXPECT_EQ(got.size(), c.want.size()) << c.sample;
    for (const auto& [link, state] : c.want) {
      auto it = got.find(link);
      ASSERT_NE(it, got.end()) << c.sample << ": no reading for " << link;
      EXPECT_EQ(StateName(it->second), StateName(state)) << c.sample << ": " << link;
    }
  }
}

}  // namespace
}  // namespace lossless::audit::optics
