// Every real capture under tests/fixtures/real/optics/ parses and gets the verdict an
// expert would give; tests/fixtures/real/SOURCES.md says where each comes from and why
// the verdict is the right one. Each reading is judged on its own (one capture).
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "optics/ingest.hpp"
#include "optics/rules.hpp"
#include "optics/test_util.hpp"

namespace lossless::optics {
namespace {

using testing::ReadRealSample;

constexpr int64_t kIngestTime = 1772366400;  // 2026-03-01T12:00:00Z

std::map<std::string, State> Verdicts(const std::string& sample) {
  IngestOptions o;
  o.now = kIngestTime;
  ParsedInput p = ParseInputDetailed(ReadRealSample(sample), sample, o);
  std::map<std::string, State> out;
  for (const Reading& r : p.readings) {
    EXPECT_EQ(*r.time_s, kIngestTime) << sample << " " << r.link;
    out[r.link] = EvaluateLink(r.link, {r}, RuleParams{}).state;
  }
  return out;
}

struct Case {
  const char* sample;
  std::map<std::string, State> want;
};

const State H = State::kHealthy;
const State W = State::kWatch;
const State Q = State::kQuarantine;
const State I = State::kInvalidData;

TEST(RealCorpus, EverySampleGetsTheExpertVerdict) {
  const Case cases[] = {
      {"ethtool_sfp_10gsr_commented.txt", {{"enp134s0f0", W}}},
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
      {"arista_transceiver_ntc_1.txt",
       {{"Et3/1/1", H}, {"Et3/17/1", H}, {"Et3/17/2", H}, {"Et3/17/3", H}, {"Et5/29/1", I}}},
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
}  // namespace lossless::optics
