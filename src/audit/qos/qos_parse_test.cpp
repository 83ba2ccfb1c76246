// QoS config reading across formats (qos_parse.hpp): format detection and
// --format, bad input named by line and field, unreadable lines skipped with
// their reason, configs without RoCE settings as findings, blocks between
// prompts, prose and fences. Each vendor's reader: qos_parse_nxos_test.cpp and
// qos_parse_vendors_test.cpp.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "audit/qos/qos_parse.hpp"
#include "audit/qos/qos_rules.hpp"
#include "audit/qos/qos_segment.hpp"
#include "base/error.hpp"
#include "testing/qos_fixtures.hpp"

namespace lossless::audit::qos {
namespace parse_common {

using lossless::testing::ErrorOf;
using lossless::testing::Fixture;
using lossless::testing::Load;
using lossless::testing::PortNamed;

TEST(QosParse, BrokenJsonAfterManyBlankLinesGivesAShortMessage) {
  // A Markdown page whose JSON-looking block is a template: the JSON parser's
  // "last read" quote ran to thousands of characters in one message.
  const std::string text = "{\n\"BUFFER_PROFILE\": {\n" + std::string(400, '\n') + "{%";
  try {
    ParseQosText(text, "t.json");
    ADD_FAILURE() << "parsed without error";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated or invalid JSON"), std::string::npos);
  }
}

// Issue 13: configuration without RoCE settings is a finding, not bad input.
TEST(QosParse, SwitchConfigWithoutQosIsAFindingNotBadInput) {
  QosConfig excerpt = ParseQosText("interface Ethernet1\n   description uplink\n", "t.txt");
  EXPECT_EQ(excerpt.format, QosFormat::kSwitchConfig);
  EXPECT_EQ(AuditQos(excerpt, {}).verdict, Verdict::kIndeterminate);
  QosConfig whole = ParseQosText(
      "! Command: show running-config\n!\nhostname leaf1\ninterface Ethernet1\n   mtu 9214\n",
      "t.txt");
  EXPECT_EQ(whole.format, QosFormat::kSwitchConfig);
  EXPECT_EQ(AuditQos(whole, {}).verdict, Verdict::kFail);
  // A whole config_db.json without QoS tables: fail.
  QosConfig db = ParseQosText(
      "{\"DEVICE_METADATA\": {\"localhost\": {\"hostname\": \"sonic\"}},\n"
      " \"PORT\": {\"Ethernet0\": {\"speed\": \"100000\"}}}\n",
      "t.json");
  EXPECT_EQ(db.format, QosFormat::kSonicJson);
  EXPECT_EQ(AuditQos(db, {}).verdict, Verdict::kFail);
  // Not configuration at all: still bad input.
  EXPECT_EQ(ErrorOf("link s0 s1 count=2\nlink s1 s2\n").field, "format");
}

TEST(QosParse, DetectsEachFormat) {
  EXPECT_EQ(Load("sonic_healthy.json").format, QosFormat::kSonicJson);
  EXPECT_EQ(Load("sonic_show_healthy.txt").format, QosFormat::kSonicShow);
  EXPECT_EQ(Load("nvue_healthy.txt").format, QosFormat::kNvue);
  EXPECT_EQ(Load("onyx_healthy.txt").format, QosFormat::kOnyx);
  EXPECT_EQ(Load("eos_healthy.txt").format, QosFormat::kEos);
  EXPECT_EQ(Load("nxos_healthy.txt").format, QosFormat::kNxos);
  EXPECT_EQ(Load("nxos_healthy_crlf.txt").format, QosFormat::kNxos);
}

TEST(QosParse, ExplicitFormatOverridesDetection) {
  std::ifstream in(Fixture("eos_healthy.txt"));
  QosConfig c = ParseQosConfig(in, "eos_healthy.txt", QosFormat::kEos);
  EXPECT_EQ(c.format, QosFormat::kEos);
}

TEST(QosParse, RejectsEmptyBinaryAndOtherKindsAtLineOne) {
  EXPECT_EQ(ErrorOf("").line, 1);
  EXPECT_EQ(ErrorOf("   \n\n").line, 1);
  EXPECT_EQ(ErrorOf(std::string("abc\0def", 7)).line, 1);
  Location topo = ErrorOf("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-63\n");
  EXPECT_EQ(topo.line, 1);
  EXPECT_EQ(topo.field, "format");
  EXPECT_EQ(ErrorOf("# nThread 1 nGpus 8 minBytes 8\n#  size count type\n").line, 1);
  EXPECT_EQ(ErrorOf("{\"foo\": 1}").line, 1);
}

TEST(QosParse, TruncatedJsonNamesTheLastLine) {
  Location w = ErrorOf("{\n  \"BUFFER_POOL\": {\n    \"p\": {\"size\": \"1\",\n", "c.json");
  EXPECT_EQ(w.file, "c.json");
  EXPECT_GE(w.line, 3);
}

TEST(QosParse, BadValuesNameLineAndField) {
  Location w = ErrorOf("{\n\"BUFFER_PROFILE\": {\n  \"p\": {\"xoff\": \"lots\"}\n}\n}\n");
  EXPECT_EQ(w.line, 3);
  EXPECT_EQ(w.field, "BUFFER_PROFILE.p.xoff");
  // A dangling reference is an error when BUFFER_PROFILE is in the input; a fragment
  // without the table names profiles defined elsewhere (SonicJsonDatabaseDumpAndFragmentsAreRead).
  Location pg = ErrorOf(
      "{\"BUFFER_PROFILE\": {}, \"BUFFER_PG\": {\"Ethernet0|3\": {\"profile\": \"missing\"}}}");
  EXPECT_EQ(pg.field, "BUFFER_PG.Ethernet0|3.profile");
}

// A text line whose value cannot be read is skipped and reported with its line
// and reason; the rest of the configuration is still checked.
TEST(QosParse, UnreadableTextLinesAreSkippedWithTheirReason) {
  QosConfig eos = ParseQosText(
      "interface Ethernet1\n   priority-flow-control on\n   tx-queue 3\n      random-detect ecn "
      "minimum-threshold 1 furlongs maximum-threshold 2 kbytes\n",
      "x.txt");
  ASSERT_EQ(eos.skipped.size(), 1u);
  EXPECT_EQ(eos.skipped[0].line, 4);
  EXPECT_NE(eos.skipped[0].reason.find("furlongs"), std::string::npos);
  EXPECT_TRUE(eos.ports.at(0).pfc_stated);
  QosConfig onyx = ParseQosText("roce\ndcb priority-flow-control priority 9 enable\n", "x.txt");
  ASSERT_EQ(onyx.skipped.size(), 1u);
  EXPECT_EQ(onyx.skipped[0].line, 2);
  EXPECT_EQ(onyx.ports.at(0).pfc_priorities, std::set<int>{3});
}

// Inputs written for these tests (hand-made, not real samples; the real
// corpus is tests/fixtures/real/qos, checked by tests/cli/audit_qos.sh).
TEST(QosParse, ReadsEveryBlockBetweenPromptsProseAndFences) {
  const std::string text =
      "Here is what the leaf shows:\n"
      "admin@sonic:~$ show pfc priority\n"
      "\n"
      "Interface    Lossless priorities\n"
      "-----------  ---------------------\n"
      "Ethernet0    3\n"
      "...\n"
      "admin@sonic:~$ show ecn\n"
      "Profile: AZURE_LOSSLESS\n"
      "-----------------------  -------\n"
      "ecn                      ecn_all\n"
      "green_min_threshold      250000\n"
      "green_max_threshold      600000\n"
      "-----------------------  -------\n"
      "```\n"
      "    {\"BUFFER_POOL\": {\"ingress_lossless_pool\": {\"size\": \"1000000\"}}}\n"
      "```\n";
  QosConfig c = ParseQosText(text, "paste.txt");
  EXPECT_EQ(c.format, QosFormat::kSonicShow);
  ASSERT_EQ(c.formats.size(), 2u);
  const PortQos& e0 = PortNamed(c, "Ethernet0");
  EXPECT_EQ(e0.pfc_priorities, std::set<int>{3});
  ASSERT_TRUE(e0.ecn.count(3));
  EXPECT_EQ(e0.ecn.at(3).kmin->value, 250'000);
  ASSERT_TRUE(c.lossless_pool.has_value());
  EXPECT_EQ(c.lossless_pool->value, 1'000'000);
  // Prose, prompts, the elision and fences are reported with their line.
  std::vector<int64_t> lines;
  for (const SkippedLine& s : c.skipped) lines.push_back(s.line);
  EXPECT_EQ(lines, (std::vector<int64_t>{1, 2, 7, 8, 15, 17}));
}

TEST(QosParse, SwitchTextWithoutRoceSettingsIsAFindingNotBadInput) {
  QosConfig c = ParseQosText(
      "policy-map type network-qos default-nq\n  class type network-qos "
      "c-8q-nq-default\n    mtu 9216\nsystem qos\n  service-policy type "
      "network-qos default-nq\n",
      "nx.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_TRUE(c.ports[0].pfc_stated);
  EXPECT_TRUE(c.ports[0].pfc_priorities.empty());
}

// A retry blanks the line a reader could not interpret in place; the text must
// be the one SegmentText builds without that line (line numbers unchanged).
TEST(QosParse, GroupTextBlanksALineAsSegmentTextWithoutIt) {
  const internal::SegmentedText seg =
      internal::SegmentQosText("a 1\nbb 2\n\nccc 3\r\ndddd 4\ne", std::nullopt);
  ASSERT_EQ(seg.content.size(), 6u);
  std::vector<int64_t> lines{1, 2, 4, 5, 6};
  internal::GroupText g(seg, lines);
  EXPECT_EQ(g.text(), internal::SegmentText(seg, lines));
  for (int64_t drop : {4, 1, 6, 5, 2}) {
    g.Blank(drop);
    lines.erase(std::find(lines.begin(), lines.end(), drop));
    EXPECT_EQ(g.text(), internal::SegmentText(seg, lines)) << "after blanking line " << drop;
  }
  EXPECT_EQ(g.text(), std::string(5, '\n'));
  g.Blank(0);
  g.Blank(7);
  EXPECT_EQ(g.text(), std::string(5, '\n'));
}

}  // namespace parse_common
}  // namespace lossless::audit::qos
