// The Cisco NX-OS reader (qos_parse_nxos.cpp): applied policies, interface
// ranges, and the no-drop class's pause buffer in network-qos and ingress
// queuing policies (system and per port, applied or not).
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
namespace parse_nxos {

using lossless::testing::ErrorOf;
using lossless::testing::Fixture;
using lossless::testing::Load;
using lossless::testing::PortNamed;

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

}  // namespace parse_nxos
}  // namespace lossless::audit::qos
