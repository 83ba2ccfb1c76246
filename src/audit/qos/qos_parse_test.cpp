#include "audit/qos/qos_parse.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "audit/qos/qos_rules.hpp"
#include "audit/qos/qos_segment.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/qos/" + name;
}

QosConfig Load(const std::string& name) {
  std::ifstream in(Fixture(name), std::ios::binary);
  EXPECT_TRUE(in) << name;
  return ParseQosConfig(in, name);
}

const PortQos& PortNamed(const QosConfig& c, const std::string& name) {
  for (const PortQos& p : c.ports)
    if (p.name == name) return p;
  throw std::runtime_error("no port " + name);
}

// Error location of parsing `text`; fails the test if it parses.
Location ErrorOf(const std::string& text, const std::string& file = "x.txt") {
  try {
    ParseQosText(text, file);
  } catch (const InputError& e) {
    return e.where();
  }
  ADD_FAILURE() << "parsed without error";
  return {};
}

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

TEST(QosParse, OnyxCongestionControlJson) {
  QosConfig c = ParseQosText(
      "[ {\"Interface ethernet\": \"1/5\", \"ECN marked packets\": \"0\"},\n"
      "  {\"header\": \"TC-2\", \"Mode\": \"RED\", \"Threshold mode\": \"relative\",\n"
      "   \"Minimum threshold\": \"9%\", \"Maximum threshold\": \"90%\"},\n"
      "  {\"header\": \"TC-3\", \"Mode\": \"ECN\", \"Threshold mode\": \"absolute\",\n"
      "   \"Minimum threshold\": \"150 KB\", \"Maximum threshold\": \"150 KB\"} ]\n",
      "t.json");
  EXPECT_EQ(c.format, QosFormat::kOnyx);
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_EQ(c.ports[0].name, "Eth1/5");
  ASSERT_TRUE(c.ports[0].ecn.count(3));
  EXPECT_EQ(c.ports[0].ecn.at(3).kmin->value, 150000);
  EXPECT_FALSE(c.ports[0].ecn.count(2));  // RED drops, it does not mark
  // Minimum equal to maximum: a step, no ramp (issue 13's Onyx finding).
  QosAudit a = AuditQos(c, {});
  bool seen = false;
  for (const QosCheck& k : a.checks) {
    if (k.id != "ecn.kmin-kmax") continue;
    seen = true;
    EXPECT_EQ(k.verdict, Verdict::kWarn);
  }
  EXPECT_TRUE(seen);
}

TEST(QosParse, OnyxPfcPortJson) {
  QosConfig c = ParseQosText(
      "{\"Eth1/1\": [{\"PFC admin\": \"Auto\", \"PFC oper\": \"Disabled\"}],\n"
      " \"Eth1/2\": [{\"PFC admin\": \"on\", \"PFC oper\": \"Enabled\"}]}\n",
      "t.json");
  EXPECT_EQ(c.format, QosFormat::kOnyx);
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_TRUE(c.ports[0].pfc_stated);   // Eth1/1: off
  EXPECT_FALSE(c.ports[1].pfc_stated);  // Eth1/2: on, priorities not in this output
  EXPECT_EQ(
      ErrorOf("{\"Eth1/1\": [{\"PFC admin\": \"on\", \"PFC oper\": \"maybe\"}]}\n", "t.json").field,
      "Eth1/1.PFC oper");
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

TEST(QosParse, SonicJsonReadsProfilesAndMaps) {
  QosConfig c = Load("sonic_healthy.json");
  ASSERT_EQ(c.ports.size(), 2u);
  const PortQos& p = PortNamed(c, "Ethernet0");
  EXPECT_EQ(p.pfc_priorities, (std::set<int>{3}));
  EXPECT_EQ(p.speed_gbps, 100);
  EXPECT_DOUBLE_EQ(*p.cable_m, 5.0);
  EXPECT_EQ(p.pfc_watchdog, true);
  ASSERT_TRUE(p.pgs.count(3));
  EXPECT_EQ(p.pgs.at(3).headroom->value, 56320);
  EXPECT_EQ(p.pgs.at(3).xon->value, 18432);
  EXPECT_DOUBLE_EQ(*p.pgs.at(3).pfc_trigger.alpha, 0.25);
  EXPECT_EQ(p.pgs.at(3).pfc_trigger.pool->value, 12582912);
  EXPECT_EQ(p.pgs.at(3).pfc_trigger.ResolveBytes(0), 2516582);
  EXPECT_FALSE(p.pgs.count(0));  // lossy PG
  ASSERT_TRUE(p.ecn.count(3));
  EXPECT_TRUE(p.ecn.at(3).enabled);
  EXPECT_EQ(p.ecn.at(3).kmin->value, 1048576);
  EXPECT_EQ(p.ecn.at(3).kmax->value, 2097152);
  EXPECT_DOUBLE_EQ(*p.ecn.at(3).pmax_percent, 5.0);
  EXPECT_EQ(p.queue_limit.at(3).ResolveBytes(0), 4194304);
  EXPECT_EQ(c.dscp_to_queue.at(48), 6);
  EXPECT_EQ(c.dscp_to_queue.at(26), 3);
  EXPECT_EQ(c.scheduling.at(6), Scheduling::kStrict);
  EXPECT_EQ(c.scheduling.at(3), Scheduling::kWeighted);
  // Plain (unbracketed) references on the second port resolve the same way.
  EXPECT_EQ(PortNamed(c, "Ethernet4").ecn.at(3).kmax->value, 2097152);
}

TEST(QosParse, SonicJsonBrokenExpandsKeyListsAndRanges) {
  QosConfig c = Load("sonic_broken.json");
  const PortQos& e0 = PortNamed(c, "Ethernet0");
  const PortQos& e8 = PortNamed(c, "Ethernet8");
  EXPECT_EQ(e0.pfc_priorities, (std::set<int>{3, 4}));
  EXPECT_EQ(e8.pfc_priorities, (std::set<int>{4}));
  EXPECT_TRUE(e0.pgs.count(3) && e0.pgs.count(4));
  EXPECT_EQ(e8.queue_limit.at(4).static_size->value, 4194304);
  EXPECT_EQ(e0.pfc_watchdog, false);
  EXPECT_EQ(c.dscp_to_queue.at(48), 3);
}

TEST(QosParse, SonicShowReadsTablesAndCounters) {
  QosConfig c = Load("sonic_show_broken.txt");
  const PortQos& p = PortNamed(c, "Ethernet0");
  EXPECT_EQ(p.pfc_priorities, (std::set<int>{0, 3}));
  EXPECT_EQ(p.queue_drops.at(3), 1234);
  EXPECT_EQ(p.speed_gbps, 100);  // from the profile name
  EXPECT_DOUBLE_EQ(*p.cable_m, 300.0);
  EXPECT_FALSE(p.ecn.at(3).enabled);  // ecn_none
  EXPECT_EQ(p.pgs.at(3).headroom->value, 20480);
  EXPECT_TRUE(PortNamed(c, "Ethernet4").queue_drops.empty());  // N/A
  QosConfig h = Load("sonic_show_healthy.txt");
  EXPECT_EQ(PortNamed(h, "Ethernet0").queue_drops.at(0), 4);
  EXPECT_EQ(PortNamed(h, "Ethernet0").pfc_watchdog, true);
}

// Multi-ASIC `mmuconfig -l` titles its tables "Pool for namespace asicN: NAME", and
// `show queue counters --voq` has a Voq column; both layouts as sonic-utilities
// prints them (tests/fixtures/real/qos/sonic_mmuconfig_l_masic.txt,
// sonic_show_queue_voq_counters.txt).
TEST(QosParse, SonicShowReadsMultiAsicMmuconfigAndVoqCounters) {
  QosConfig m = ParseQosText(
      "Profile for namespace asic1: headroom_profile\n"
      "----------  ---------------------\n"
      "dynamic_th  0\n"
      "pool        ingress_lossless_pool\n"
      "xon         18432\n"
      "xoff        32768\n"
      "size        51200\n"
      "----------  ---------------------\n",
      "m.txt");
  ASSERT_EQ(m.ports.size(), 1u);
  EXPECT_EQ(m.ports[0].pgs.at(3).headroom->value, 32768);
  QosConfig v = ParseQosText(
      "For namespace :\n"
      "            Port    Voq    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
      "----------------  -----  --------------  ---------------  -----------  ------------\n"
      "testsw|Ethernet0   VOQ2              82                7           39            21\n"
      "testsw|Ethernet0   VOQ3              11               59           12            94\n",
      "v.txt");
  const PortQos& p = PortNamed(v, "testsw|Ethernet0");
  EXPECT_EQ(p.queue_drops.at(3), 12);
  EXPECT_EQ(p.queue_drops.at(2), 39);
  EXPECT_TRUE(v.skipped.empty());  // "For namespace :" is the table's title
}

// A database dump keys every entry "TABLE|key" at the top level
// (tests/fixtures/real/qos/sonic_config_db_dump_dynamic_buffer.json); a fragment such as
// the tables `config qos reload` updates (sonic_config_db_update_fragment.json) names
// profiles defined elsewhere. Both are QoS input, not bad input.
TEST(QosParse, SonicJsonDatabaseDumpAndFragmentsAreRead) {
  QosConfig d = ParseQosText(
      "{\n"
      "  \"BUFFER_PG|Ethernet8|3-4\": {\"profile\": \"pg_lossless\"},\n"
      "  \"BUFFER_PROFILE|pg_lossless\": {\"type\": \"hash\", \"value\": {\"xon\": \"18432\",\n"
      "    \"xoff\": \"40960\", \"size\": \"59392\", \"dynamic_th\": \"0\",\n"
      "    \"pool\": \"ingress_lossless_pool\"}},\n"
      "  \"PORT_QOS_MAP|Ethernet8\": {\"pfc_enable\": \"3,4\"}\n"
      "}\n",
      "dump.json");
  const PortQos& p = PortNamed(d, "Ethernet8");
  EXPECT_EQ(p.pfc_priorities, (std::set<int>{3, 4}));
  EXPECT_EQ(p.pgs.at(3).headroom->value, 40960);
  QosConfig f = ParseQosText(
      "{\"BUFFER_PG\": {\"Ethernet0|3-4\": {\"profile\": \"pg_lossless_100000_5m_profile\"}},\n"
      " \"PORT_QOS_MAP\": {\"Ethernet0\": {\"pfc_enable\": \"3\"}},\n"
      " \"QUEUE\": {\"Ethernet0|3\": {\"wred_profile\": \"AZURE_LOSSLESS\"}}}\n",
      "fragment.json");
  const PortQos& q = PortNamed(f, "Ethernet0");
  EXPECT_TRUE(q.pgs.empty());
  EXPECT_FALSE(q.ecn.count(3));
  ASSERT_EQ(f.skipped.size(), 1u);
  EXPECT_TRUE(f.skipped[0].unreadable);
  EXPECT_NE(f.skipped[0].text.find("wred_profile AZURE_LOSSLESS"), std::string::npos);
  // With BUFFER_PROFILE in the input, a name missing from it is still an error.
  EXPECT_THROW(ParseQosText("{\"BUFFER_PROFILE\": {}, \"BUFFER_PG\": {\"Ethernet0|3\": "
                            "{\"profile\": \"nope\"}}}",
                            "bad.json"),
               InputError);
}

TEST(QosParse, NvueReadsBinaryUnitsAndTables) {
  QosConfig c = Load("nvue_healthy.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  const PortQos& p = c.ports[0];
  EXPECT_EQ(p.name, "*");
  EXPECT_EQ(p.pfc_priorities, (std::set<int>{3}));
  EXPECT_DOUBLE_EQ(*p.cable_m, 100.0);
  EXPECT_EQ(p.ecn.at(3).kmin->value, 149996);   // 146.48 KiB
  EXPECT_EQ(p.ecn.at(3).kmax->value, 1499464);  // 1.43 MiB
  EXPECT_TRUE(p.ecn.count(0));
  EXPECT_EQ(c.dscp_to_queue.at(48), 6);
  EXPECT_EQ(c.QueueOf(4), 0);
  EXPECT_EQ(c.scheduling.at(6), Scheduling::kStrict);
}

TEST(QosParse, OnyxAppliesRoceDefaultsAndInterfaceLines) {
  QosConfig c = Load("onyx_healthy.txt");
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0].name, "1/1");
  EXPECT_EQ(c.ports[0].pfc_priorities, (std::set<int>{3}));
  EXPECT_EQ(c.ports[0].speed_gbps, 100);
  EXPECT_EQ(c.ports[0].ecn.at(3).kmin->value, 150000);
  EXPECT_EQ(c.scheduling.at(6), Scheduling::kStrict);
  QosConfig b = Load("onyx_broken.txt");
  const PortQos& p = b.ports[0];
  EXPECT_EQ(p.pfc_priorities, (std::set<int>{0, 3}));
  EXPECT_EQ(p.link_pause, true);
  EXPECT_EQ(p.pgs.at(3).headroom->value, 40000);
  EXPECT_DOUBLE_EQ(*p.pgs.at(3).pfc_trigger.alpha, 2.0);
  EXPECT_EQ(p.pgs.at(3).pfc_trigger.pool->value, 8000000);
  EXPECT_EQ(b.scheduling.at(6), Scheduling::kWeighted);
}

TEST(QosParse, EosReadsInterfacesQueuesAndSegments) {
  QosConfig c = Load("eos_healthy.txt");
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[1].name, "Ethernet2/1");
  EXPECT_EQ(c.ports[1].speed_gbps, 400);
  EXPECT_EQ(c.ports[1].pfc_watchdog, true);
  EXPECT_EQ(c.ports[1].ecn.at(3).kmax->value, 1500000);
  EXPECT_DOUBLE_EQ(*c.ports[1].ecn.at(3).pmax_percent, 20.0);
  EXPECT_EQ(c.dscp_to_queue.at(48), 6);
  EXPECT_EQ(c.dscp_to_queue.at(26), 3);
  EXPECT_EQ(c.dscp_to_queue.at(10), 1);  // default DSCP/8
  QosConfig b = Load("eos_broken.txt");
  const PortQos& p = PortNamed(b, "Ethernet1/1");
  EXPECT_EQ(p.ecn.at(3).kmin->unit, BufferAmount::Unit::kCells);
  EXPECT_EQ(p.ecn.at(3).kmin->value, 2000);
  EXPECT_EQ(PortNamed(b, "Ethernet2/1").link_pause, true);
}

TEST(QosParse, NxosFollowsAppliedPolicies) {
  QosConfig c = Load("nxos_healthy.txt");
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0].pfc_priorities, (std::set<int>{3}));
  EXPECT_EQ(c.ports[0].speed_gbps, 100);
  EXPECT_TRUE(c.ports[0].ecn.at(3).enabled);
  EXPECT_EQ(c.ports[0].ecn.at(3).kmax->value, 1500000);
  EXPECT_EQ(c.dscp_to_queue.at(48), 7);
  EXPECT_EQ(c.scheduling.at(7), Scheduling::kStrict);
  QosConfig b = Load("nxos_broken.txt");
  EXPECT_EQ(b.ports[0].pfc_priorities, (std::set<int>{4}));  // pause no-drop in c-8q-nq4
  EXPECT_FALSE(b.ports[0].ecn.at(3).enabled);                // WRED without ecn
  QosConfig crlf = Load("nxos_healthy_crlf.txt");
  EXPECT_EQ(crlf.ports[0].ecn.at(3).kmin->value, 150000);
}

// The Cisco N9364E example of ROCm's RoCE guide applies its interface settings to a
// range (tests/fixtures/real/qos/nxos_dcqcn_n9364e_rocm.txt): the range is the port.
TEST(QosParse, NxosInterfaceRangeIsOneBlockNamedByItsRange) {
  QosConfig c = ParseQosText(
      "policy-map type network-qos qos_network\n"
      "  class type network-qos c-8q-nq3\n"
      "    pause pfc-cos 3\n"
      "system qos\n"
      "  service-policy type network-qos qos_network\n"
      "interface Ethernet1/1/1 - 2\n"
      "  priority-flow-control mode on\n"
      "  priority-flow-control watch-dog-interval on\n",
      "r.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_EQ(c.ports[0].name, "Ethernet1/1/1 - 2");
  EXPECT_EQ(c.ports[0].pfc_watchdog, true);
  EXPECT_EQ(c.ports[0].pfc_priorities, (std::set<int>{3}));
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

TEST(QosParse, DellSonicCliReadsPoliciesMapsAndInterfaces) {
  QosConfig c = ParseQosText(
      "qos wred-policy ROCE\n green minimum-threshold 150 maximum-threshold 1500 "
      "drop-probability 20\n ecn green\n!\nqos scheduler-policy ROCE\n queue 6\n  type strict\n!\n"
      "qos map dscp-tc ROCE\n dscp 26 traffic-class 3\n dscp 48 traffic-class 6\n!\n"
      "interface Eth1/1\n speed 400000\n queue 3 wred-policy ROCE\n scheduler-policy ROCE\n "
      "qos-map dscp-tc ROCE\n priority-flow-control priority 3\n!\n",
      "dell.txt");
  EXPECT_EQ(c.format, QosFormat::kDellSonic);
  const PortQos& p = PortNamed(c, "Eth1/1");
  EXPECT_EQ(p.pfc_priorities, std::set<int>{3});
  EXPECT_EQ(p.pfc_watchdog, std::optional<bool>(false));
  EXPECT_EQ(p.speed_gbps, 400);
  ASSERT_TRUE(p.ecn.count(3));
  EXPECT_EQ(p.ecn.at(3).kmin->value, 150'000);
  EXPECT_EQ(c.dscp_to_queue.at(48), 6);
  EXPECT_EQ(c.scheduling.at(6), Scheduling::kStrict);
}

TEST(QosParse, EosQosProfileAppliesToItsInterfaces) {
  QosConfig c = ParseQosText(
      "qos profile ROCE\n   priority-flow-control on\n   priority-flow-control priority 3 "
      "no-drop\n   uc-tx-queue 3\n      random-detect ecn minimum-threshold 2000 segments "
      "maximum-threshold 10000 segments max-mark-probability 20\n!\ninterface Ethernet1/1\n   "
      "speed 400g\n   service-profile ROCE\n",
      "eos.txt");
  const PortQos& p = PortNamed(c, "Ethernet1/1");
  EXPECT_EQ(p.pfc_priorities, std::set<int>{3});
  ASSERT_TRUE(p.ecn.count(3));
  EXPECT_EQ(p.ecn.at(3).kmin->unit, BufferAmount::Unit::kCells);
  EXPECT_EQ(p.pfc_watchdog, std::optional<bool>(false));
}

TEST(QosParse, NvueCountersMarkRoceDiscardsAsLosslessDrops) {
  QosConfig c = ParseQosText(
      "                               operational   applied  description\n"
      "tx-stats\n  tx-roce-stats\n    unicast-no-buffer-discard  42           Tx buffer "
      "discards for RoCE traffic\n",
      "nv.txt");
  EXPECT_EQ(c.format, QosFormat::kNvue);
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_FALSE(c.ports[0].pfc_stated);
  EXPECT_TRUE(c.ports[0].drops_are_roce);
  EXPECT_EQ(c.ports[0].queue_drops.at(3), 42);
}

// The ingress-queuing form of the no-drop class's pause buffer counts only
// where `service-policy type queuing input` applies it. A policy that nothing
// applies (these three lines, hand-made after the public RoCE configs) is
// listed as skipped with its line and why, never dropped silently, and states
// no buffer.
TEST(QosParse, NxosPauseBufferInAnUnappliedQueuingPolicyIsListedAsNotUsed) {
  const std::string text =
      "policy-map type queuing ROCE-INQ\n"
      "  class type queuing c-in-q3\n"
      "    pause buffer-size 27456 pause-threshold 12480 resume-threshold 12480\n";
  QosConfig c = ParseQosText(text, "handmade_nxos.txt");
  bool listed = false;
  for (const auto& k : c.skipped)
    if (k.line == 3 && k.text.find("pause buffer-size 27456") != std::string::npos &&
        k.reason.find("no 'service-policy type queuing input' applies") != std::string::npos)
      listed = true;
  EXPECT_TRUE(listed);
  for (const PortQos& p : c.ports) EXPECT_TRUE(p.pgs.empty()) << p.name;
  // An input policy is not taken as the output (ECN) policy: ECN is not stated.
  EXPECT_FALSE(c.ecn_stated);
}

// Real: Microsoft's Nexus 3132 top-of-rack running-config for SDN with RDMA
// storage (tests/fixtures/real/qos/nxos_nexus3132_tor1_microsoft_sdn.cfg).
// CoS 3 -> qos-group 3 (`class-map type qos RDMA` / `match cos 3`), the
// network-qos class RDMA (`match qos-group 3`) is `pause no-drop`, and the
// ingress queuing class RDMA (`class-map type queuing RDMA` / `match
// qos-group 3`) of INPUT_QUEUING, applied on each host port, states the
// buffer: 101920 B, pause at 46800 B, resume at 34320 B (line 122).
TEST(QosParse, NxosIngressQueuingPauseBufferOfMicrosoftSdnNexus3132IsReadPerPort) {
  std::ifstream in(std::string(LOSSLESS_SOURCE_DIR) +
                       "/tests/fixtures/real/qos/nxos_nexus3132_tor1_microsoft_sdn.cfg",
                   std::ios::binary);
  ASSERT_TRUE(in);
  QosConfig c = ParseQosConfig(in, "nxos_nexus3132_tor1_microsoft_sdn.cfg");
  EXPECT_EQ(c.format, QosFormat::kNxos);
  ASSERT_EQ(c.ports.size(), 32u);  // the 32 host ports that apply INPUT_QUEUING
  for (const PortQos& p : c.ports) {
    EXPECT_EQ(p.pfc_priorities, (std::set<int>{3})) << p.name;
    ASSERT_EQ(p.pgs.count(3), 1u) << p.name;
    const LosslessPg& pg = p.pgs.at(3);
    EXPECT_EQ(pg.pfc_trigger.static_size->value, 46'800) << p.name;
    EXPECT_EQ(pg.xon->value, 34'320) << p.name;
    EXPECT_EQ(pg.headroom->value, 101'920 - 46'800) << p.name;
    EXPECT_EQ(pg.line, 122) << p.name;
    EXPECT_NE(pg.source.find("INPUT_QUEUING RDMA"), std::string::npos) << pg.source;
    EXPECT_EQ(p.pgs.size(), 1u) << p.name;
  }
  EXPECT_EQ(PortNamed(c, "Ethernet1/3/1").speed_gbps, std::optional<int64_t>(10));
  EXPECT_EQ(PortNamed(c, "Ethernet1/3/1").line, 410);
  EXPECT_FALSE(PortNamed(c, "Ethernet1/3/2").speed_gbps.has_value());
  // The output policy QOS_QUEUEING states no WRED: ECN is stated, and off.
  EXPECT_TRUE(c.ecn_stated);
  EXPECT_TRUE(c.ports[0].ecn.empty());
  EXPECT_EQ(c.scheduling.at(3), Scheduling::kWeighted);  // class RDMA, bandwidth percent 50
  for (const auto& k : c.skipped) EXPECT_NE(k.line, 122) << k.reason;
}

// Hand-made (tests/fixtures/qos/nxos_ingress_queuing.txt): the c-in-8q-qN /
// c-8q-nqN form of the Nexus 9000 RoCE guides. The system input policy gives
// Ethernet1/1 its buffer; Ethernet1/2's own input policy overrides it; a
// policy applied nowhere is listed, not used.
TEST(QosParse, NxosIngressQueuingPolicyOfAPortOverridesTheSystemOne) {
  QosConfig c = Load("nxos_ingress_queuing.txt");
  ASSERT_EQ(c.ports.size(), 2u);
  const LosslessPg& sys = PortNamed(c, "Ethernet1/1").pgs.at(3);
  EXPECT_EQ(sys.pfc_trigger.static_size->value, 103'424);
  EXPECT_EQ(sys.xon->value, 90'112);
  EXPECT_EQ(sys.headroom->value, 407'040 - 103'424);
  EXPECT_EQ(sys.line, 25);
  const LosslessPg& own = PortNamed(c, "Ethernet1/2").pgs.at(3);
  EXPECT_EQ(own.headroom->value, 609'536 - 103'424);
  EXPECT_EQ(own.line, 28);
  EXPECT_EQ(PortNamed(c, "Ethernet1/2").pfc_priorities, (std::set<int>{3}));
  EXPECT_TRUE(PortNamed(c, "Ethernet1/1").ecn.at(3).enabled);
  int unused = 0;
  for (const auto& k : c.skipped)
    if (k.line == 31 && k.reason.find("UNUSED-IN") != std::string::npos) ++unused;
  EXPECT_EQ(unused, 1);
  // The audit judges each port's buffer: at 400G, 100 m needs 156,476 B of
  // headroom; 303,616 B and 506,112 B are stated.
  QosAuditOptions o;
  o.cable_m = 100;
  int headroom = 0;
  for (const QosCheck& k : AuditQos(c, o).checks)
    if (k.id == "pfc.headroom") {
      EXPECT_EQ(k.verdict, Verdict::kPass) << k.message;
      ++headroom;
    }
  EXPECT_EQ(headroom, 2);
}

// Hand-made: an ingress queuing class with no qos-group (no c-in-qN name, no
// class-map type queuing), and one for a qos-group that is not no-drop, are
// listed with their lines and the reason; the no-drop priority keeps the
// network-qos buffer.
TEST(QosParse, NxosIngressQueuingClassWithoutANoDropGroupIsListed) {
  QosConfig c = ParseQosText(
      "policy-map type queuing IN\n"
      "  class type queuing ROCE-IN\n"
      "    pause buffer-size 300000 pause-threshold 100000 resume-threshold 90000\n"
      "  class type queuing c-in-8q-q4\n"
      "    pause buffer-size 300000 pause-threshold 100000 resume-threshold 90000\n"
      "  class type queuing c-in-8q-q-default\n"
      "    queue-limit percent 30\n"
      "policy-map type network-qos NQ\n"
      "  class type network-qos c-8q-nq3\n"
      "    pause buffer-size 311476 pause-threshold 200000 resume-threshold 195842 pfc-cos 3\n"
      "system qos\n"
      "  service-policy type network-qos NQ\n"
      "  service-policy type queuing input IN\n"
      "interface Ethernet1/1\n"
      "  priority-flow-control mode on\n",
      "handmade_nxos.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_EQ(c.ports[0].pgs.at(3).line, 10);
  EXPECT_EQ(c.ports[0].pgs.at(3).pfc_trigger.static_size->value, 200'000);
  std::map<int64_t, std::string> reason;
  for (const auto& k : c.skipped) reason[k.line] = k.reason;
  ASSERT_EQ(reason.count(3), 1u);
  EXPECT_NE(reason[3].find("no qos-group for the class"), std::string::npos) << reason[3];
  ASSERT_EQ(reason.count(5), 1u);
  EXPECT_NE(reason[5].find("qos-group 4 is not a no-drop class"), std::string::npos) << reason[5];
  // Another statement of the input policy is listed too.
  ASSERT_EQ(reason.count(7), 1u);
  EXPECT_NE(reason[7].find("statement of ingress queuing policy IN not read"), std::string::npos)
      << reason[7];
}

// Hand-made: one queuing policy applied both as input and as output (Cisco
// forbids pause buffers beside priority/bandwidth in an input policy, but
// generated configs do it): its ECN is read as the output policy's, its
// pause buffer as the input one's, and nothing of it is listed as not read.
TEST(QosParse, NxosQueuingPolicyAppliedBothWaysGivesEcnAndPauseBuffer) {
  QosConfig c = ParseQosText(
      "policy-map type queuing BOTH\n"
      "  class type queuing c-out-8q-q3\n"
      "    random-detect minimum-threshold 20 kbytes maximum-threshold 90 kbytes "
      "drop-probability 7 weight 0 ecn\n"
      "  class type queuing c-in-8q-q3\n"
      "    pause buffer-size 300000 pause-threshold 100000 resume-threshold 90000\n"
      "policy-map type network-qos NQ\n"
      "  class type network-qos c-8q-nq3\n"
      "    pause pfc-cos 3\n"
      "system qos\n"
      "  service-policy type network-qos NQ\n"
      "  service-policy type queuing input BOTH\n"
      "  service-policy type queuing output BOTH\n"
      "interface Ethernet1/1\n"
      "  priority-flow-control mode on\n",
      "handmade_nxos.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_TRUE(c.ecn_stated);
  EXPECT_TRUE(c.ports[0].ecn.at(3).enabled);
  EXPECT_EQ(c.ports[0].pgs.at(3).line, 5);
  EXPECT_EQ(c.ports[0].pgs.at(3).headroom->value, 200'000);
  for (const auto& k : c.skipped) EXPECT_NE(k.line, 3) << k.reason;
}

// Hand-made (not a collected config): the no-drop class's buffer as Cisco's Nexus
// 9000 QoS guide states it in the network-qos class, `pause buffer-size B
// pause-threshold P resume-threshold R pfc-cos N` in bytes.
TEST(QosParse, NxosPauseBufferGivesTriggerXonAndHeadroom) {
  const std::string text =
      "policy-map type queuing Q\n"
      "  class type queuing c-out-8q-q3\n"
      "    random-detect minimum-threshold 70000 bytes maximum-threshold 150000 bytes "
      "drop-probability 20 weight 0 ecn\n"
      "policy-map type network-qos NQ\n"
      "  class type network-qos c-8q-nq3\n"
      "    pause buffer-size 311476 pause-threshold 200000 resume-threshold 195842 pfc-cos 3\n"
      "system qos\n"
      "  service-policy type network-qos NQ\n"
      "  service-policy type queuing output Q\n"
      "interface Ethernet1/1\n"
      "  priority-flow-control mode on\n"
      "  speed 400000\n";
  QosConfig c = ParseQosText(text, "handmade_nxos.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_EQ(c.ports[0].pfc_priorities, (std::set<int>{3}));
  const LosslessPg& pg = c.ports[0].pgs.at(3);
  EXPECT_EQ(pg.pfc_trigger.static_size->value, 200'000);
  EXPECT_EQ(pg.xon->value, 195'842);
  EXPECT_EQ(pg.headroom->value, 111'476);
  EXPECT_EQ(pg.line, 6);
  // The audit now sets ECN against the trigger.
  QosAuditOptions o;
  o.cable_m = 10;
  const QosAudit a = AuditQos(c, o);
  int decided = 0;
  for (const QosCheck& k : a.checks) {
    if (k.id == "ecn.kmax-below-pfc" || k.id == "ecn.kmin-ratio" || k.id == "pfc.headroom") {
      EXPECT_EQ(k.verdict, Verdict::kPass) << k.id << ": " << k.message;
      ++decided;
    }
  }
  EXPECT_EQ(decided, 3);
  // A buffer below its own pause threshold is not read: the line is listed as
  // unreadable, with the field and what was expected.
  QosConfig bad = ParseQosText(
      "policy-map type network-qos NQ\n"
      "  class type network-qos c-8q-nq3\n"
      "    pause buffer-size 1000 pause-threshold 200000 pfc-cos 3\n",
      "handmade_nxos.txt");
  ASSERT_EQ(bad.skipped.size(), 1u);
  EXPECT_EQ(bad.skipped[0].line, 3);
  EXPECT_TRUE(bad.skipped[0].unreadable);
  EXPECT_NE(bad.skipped[0].reason.find("buffer-size of at least the pause-threshold"),
            std::string::npos)
      << bad.skipped[0].reason;
}

// Hand-made: the port speed as Cumulus Linux NVUE sets it.
TEST(QosParse, NvueSetLinkSpeedIsThePortSpeed) {
  QosConfig c = ParseQosText(
      "nv set qos roce mode lossless\n"
      "nv set interface swp1-64 link speed 400G\n"
      "nv set interface swp65 link speed auto\n",
      "handmade_nvue.txt");
  ASSERT_EQ(c.ports.size(), 1u);  // `auto` states no speed: swp65 is not a port here
  EXPECT_EQ(PortNamed(c, "swp1-64").speed_gbps, std::optional<int64_t>(400));
  QosConfig bad = ParseQosText(
      "nv set qos roce mode lossless\nnv set interface swp1 link speed fast\n", "x.txt");
  ASSERT_EQ(bad.skipped.size(), 1u);
  EXPECT_EQ(bad.skipped[0].line, 2);
  EXPECT_TRUE(bad.skipped[0].unreadable);
}

TEST(QosParse, NvueSetLinesApplyRoceDefaultsProfilesAndInterfaces) {
  // Hand-written in the documented `nv set` syntax (Cumulus Linux 5.x QoS and RoCE pages).
  QosConfig c = ParseQosText(
      "cumulus@leaf01:mgmt:~$ nv set qos roce mode lossless\n"
      "nv set qos congestion-control ROCE_ECN traffic-class 3 min-threshold 300000\n"
      "nv set qos congestion-control ROCE_ECN traffic-class 3 max-threshold 1.2MB\n"
      "nv set qos traffic-pool roce-lossless memory-percent 60\n"
      "nv set qos pfc default-global cable-length 10\n"
      "nv set interface swp1 qos congestion-control profile ROCE_ECN\n"
      "nv set interface swp1 qos pfc-watchdog\n"
      "nv set interface swp2 qos link-pause profile my_pause\n"
      "nv set system hostname leaf01\n"
      "nv config apply\n",
      "nvset.txt");
  EXPECT_EQ(c.format, QosFormat::kNvue);
  ASSERT_EQ(c.ports.size(), 2u);
  const PortQos& a = PortNamed(c, "swp1");
  EXPECT_EQ(a.pfc_priorities, std::set<int>({3}));  // roce lossless default
  EXPECT_EQ(a.cable_m, std::optional<double>(10));
  EXPECT_EQ(a.ecn.at(3).kmin->value, 300'000);  // the profile the interface names
  EXPECT_EQ(a.ecn.at(3).kmax->value, 1'200'000);
  EXPECT_EQ(a.pfc_watchdog, std::optional<bool>(true));
  const PortQos& b = PortNamed(c, "swp2");
  EXPECT_EQ(b.ecn.at(3).kmin->value, 150'000);  // roce default profile
  EXPECT_EQ(b.link_pause, std::optional<bool>(true));
  EXPECT_EQ(b.pfc_watchdog, std::optional<bool>(false));
  EXPECT_EQ(c.QueueOf(3), 3);
  EXPECT_EQ(c.dscp_to_queue.at(48), 6);
  EXPECT_EQ(c.scheduling.at(6), Scheduling::kStrict);
  bool pool_note = false, hostname_skipped = false;
  for (const auto& n : c.notes) pool_note |= n.find("roce-lossless has 60%") != std::string::npos;
  for (const auto& s : c.skipped) hostname_skipped |= s.line == 9 && !s.unreadable;
  EXPECT_TRUE(pool_note);
  EXPECT_TRUE(hostname_skipped);
}

TEST(QosParse, OnyxStepEcnAndGlobalPauseAreRead) {
  QosConfig c = ParseQosText(
      "switch (config) # interface ethernet 1/1 traffic-class 3 congestion-control ecn "
      "minimum-absolute 3000 maximum-absolute 3000\n"
      "switch (config) # interface ethernet 1/1 flowcontrol receive on force\n"
      "switch (config) # show interfaces ethernet 1/1\n",
      "onyx.txt");
  EXPECT_EQ(c.format, QosFormat::kOnyx);
  const PortQos& p = PortNamed(c, "1/1");
  EXPECT_EQ(p.ecn.at(3).kmin->value, p.ecn.at(3).kmax->value);
  EXPECT_EQ(p.link_pause, std::optional<bool>(true));
  QosConfig rel = ParseQosText(
      "interface ethernet 1/2 traffic-class 3 congestion-control ecn minimum-relative 10 "
      "maximum-relative 50\n",
      "onyx.txt");
  const EcnQueue& e = PortNamed(rel, "1/2").ecn.at(3);
  EXPECT_FALSE(e.kmin.has_value());
  EXPECT_EQ(e.kmin_percent, std::optional<double>(10));
  EXPECT_EQ(e.kmax_percent, std::optional<double>(50));
}

TEST(QosParse, JunosSetAndBraceFormsReadTheSame) {
  const std::string set_form =
      "user@qfx# set class-of-service forwarding-classes class NO-LOSS queue-num 3 no-loss\n"
      "set class-of-service congestion-notification-profile cnp input ieee-802.1 code-point 011 "
      "pfc\n"
      "set class-of-service congestion-notification-profile cnp pfc-watchdog\n"
      "set class-of-service schedulers s1 explicit-congestion-notification\n"
      "set class-of-service scheduler-maps sm1 forwarding-class NO-LOSS scheduler s1\n"
      "set class-of-service interfaces et-0/0/1 congestion-notification-profile cnp\n"
      "set class-of-service interfaces et-0/0/1 scheduler-map sm1\n";
  const std::string brace_form =
      "class-of-service {\n  forwarding-classes {\n    class NO-LOSS queue-num 3 no-loss;\n  }\n"
      "  congestion-notification-profile cnp {\n    input {\n      ieee-802.1 {\n        "
      "code-point "
      "011 {\n          pfc;\n        }\n      }\n    }\n    pfc-watchdog;\n  }\n"
      "  schedulers {\n    s1 {\n      explicit-congestion-notification; /* DCQCN */\n    }\n  }\n"
      "  scheduler-maps {\n    sm1 {\n      forwarding-class NO-LOSS scheduler s1;\n    }\n  }\n"
      "  interfaces {\n    et-0/0/1 {\n      congestion-notification-profile cnp;\n      "
      "scheduler-map sm1;\n    }\n  }\n}\n";
  for (const std::string& text : {set_form, brace_form}) {
    QosConfig c = ParseQosText(text, "junos.txt");
    EXPECT_EQ(c.format, QosFormat::kJunos);
    const PortQos& p = PortNamed(c, "et-0/0/1");
    EXPECT_EQ(p.pfc_priorities, std::set<int>{3});
    EXPECT_EQ(p.pfc_watchdog, std::optional<bool>(true));
    ASSERT_TRUE(p.ecn.count(3));
    EXPECT_TRUE(p.ecn.at(3).enabled);
  }
}

// ROCm's QFX5240 example (tests/fixtures/real/qos/junos_cos_dcqcn_qfx5240_rocm.txt) puts
// `drop-probability [ 0 100 ]` on its own line under `interpolate`: the ramp's top is the
// marking probability at Kmax.
TEST(QosParse, JunosDropProbabilityIsTheMarkingProbabilityAtKmax) {
  const std::string brace =
      "forwarding-classes {\n    class NO-LOSS queue-num 4 no-loss pfc-priority 3;\n}\n"
      "drop-profiles {\n    dp1 {\n        interpolate {\n"
      "            fill-level [ 45 90 ];\n            drop-probability [ 0 100 ];\n"
      "        }\n    }\n}\n"
      "scheduler-maps {\n    sm1 {\n        forwarding-class NO-LOSS scheduler s1;\n    }\n}\n"
      "schedulers {\n    s1 {\n"
      "        drop-profile-map loss-priority any protocol any drop-profile dp1;\n"
      "        explicit-congestion-notification;\n    }\n}\n"
      "interfaces {\n    et-0/0/1 {\n        scheduler-map sm1;\n    }\n}\n";
  const std::string set =
      "set class-of-service forwarding-classes class NO-LOSS queue-num 4 no-loss pfc-priority 3\n"
      "set class-of-service drop-profiles dp1 interpolate fill-level [ 45 90 ]\n"
      "set class-of-service drop-profiles dp1 interpolate drop-probability 0\n"
      "set class-of-service drop-profiles dp1 interpolate drop-probability 20\n"
      "set class-of-service scheduler-maps sm1 forwarding-class NO-LOSS scheduler s1\n"
      "set class-of-service schedulers s1 drop-profile-map loss-priority any protocol any "
      "drop-profile dp1\n"
      "set class-of-service schedulers s1 explicit-congestion-notification\n"
      "set class-of-service interfaces et-0/0/1 scheduler-map sm1\n";
  QosConfig b = ParseQosText(brace, "b.txt");
  const EcnQueue& e = PortNamed(b, "et-0/0/1").ecn.at(4);
  EXPECT_DOUBLE_EQ(*e.kmin_percent, 45.0);
  EXPECT_DOUBLE_EQ(*e.pmax_percent, 100.0);
  EXPECT_TRUE(b.skipped.empty());
  QosConfig s = ParseQosText(set, "s.txt");
  EXPECT_DOUBLE_EQ(*PortNamed(s, "et-0/0/1").ecn.at(4).pmax_percent, 20.0);
}

TEST(QosParse, CumulusTrafficConfReadsPfcAndEcnGroups) {
  QosConfig c = ParseQosText(
      "pfc.port_group_list = [ROCE]\npfc.ROCE.port_set = swp1\npfc.ROCE.cos_list = [3]\n"
      "pfc.ROCE.xoff_size = 120000\necn_red.ECN.port_set = swp1\necn_red.ECN.cos_list = [3]\n"
      "ecn_red.ECN.min_threshold_bytes = 150000\necn_red.ECN.max_threshold_bytes = 1500000\n"
      "ecn_red.ECN.ecn_enable = true\n",
      "traffic.conf");
  EXPECT_EQ(c.format, QosFormat::kTrafficConf);
  const PortQos& p = PortNamed(c, "swp1");
  EXPECT_EQ(p.pfc_priorities, std::set<int>{3});
  EXPECT_EQ(p.pgs.at(3).headroom->value, 120'000);
  EXPECT_TRUE(p.ecn.at(3).enabled);
  EXPECT_EQ(p.ecn.at(3).kmax->value, 1'500'000);
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

}  // namespace
}  // namespace lossless::audit::qos
