#include "audit/qos/qos_parse.hpp"

#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless::audit {
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
  Location pg = ErrorOf("{\"BUFFER_PG\": {\"Ethernet0|3\": {\"profile\": \"missing\"}}}");
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

}  // namespace
}  // namespace lossless::audit
