// The QoS readers of every vendor but Cisco NX-OS (qos_parse_nxos_test.cpp):
// NVIDIA Onyx (text and JSON), SONiC (config_db JSON, show output, Dell's
// CLI), Cumulus Linux (NVUE YAML and set lines, traffic.conf), Arista EOS and
// Juniper Junos.
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
namespace parse_vendors {

using lossless::testing::ErrorOf;
using lossless::testing::Fixture;
using lossless::testing::Load;
using lossless::testing::PortNamed;

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

}  // namespace parse_vendors
}  // namespace lossless::audit::qos
