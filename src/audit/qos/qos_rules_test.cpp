#include "audit/qos/qos_rules.hpp"

#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "audit/qos/qos_parse.hpp"
#include "audit/qos/qos_report.hpp"

namespace lossless::audit::qos {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace rules {

using units::Time;

// A healthy single-port config built in code: PFC 3, ECN on 3 at 150 KB / 600 KB,
// static XOFF trigger 1 MB, headroom 120 KB at 400G / 5 m, CNP DSCP 48 -> strict queue 6.
QosConfig Healthy() {
  QosConfig c;
  PortQos p;
  p.name = "Ethernet0";
  p.pfc_stated = true;
  p.pfc_priorities = {3};
  p.link_pause = false;
  p.speed_gbps = 400;
  p.cable_m = 5;
  LosslessPg pg;
  pg.pfc_trigger.static_size = BufferAmount::Bytes(1'000'000);
  pg.headroom = BufferAmount::Bytes(120'000);
  p.pgs[3] = pg;
  EcnQueue e;
  e.enabled = true;
  e.kmin = BufferAmount::Bytes(250'000);
  e.kmax = BufferAmount::Bytes(600'000);
  p.ecn[3] = e;
  c.ports.push_back(p);
  c.dscp_to_queue[48] = 6;
  c.scheduling[6] = Scheduling::kStrict;
  c.ecn_stated = true;
  return c;
}

QosCheck Check(const QosAudit& a, const std::string& id) {
  for (const QosCheck& c : a.checks)
    if (c.id == id) return c;
  throw std::runtime_error("no check " + id);
}

TEST(QosRules, HeadroomFormulaMatchesFabricReferenceExample) {
  // docs/model/pfc.md#headroom: 400GbE, 100 m, 9216-B frames, t_PHY 150 ns, D-Resp 905 quanta.
  EXPECT_EQ(RequiredHeadroomBytes(400, 100, 9216, Time::Ns(150), Time::Ps(1'158'400)), 156'476);
  // Same with a 5 m DAC: 108,976 B.
  EXPECT_EQ(RequiredHeadroomBytes(400, 5, 9216, Time::Ns(150), Time::Ps(1'158'400)), 108'976);
  // Without the PHY term: 126,476 B.
  EXPECT_EQ(RequiredHeadroomBytes(400, 100, 9216, Time::Zero(), Time::Ps(1'158'400)), 126'476);
  EXPECT_EQ(DefaultResponseBits(10), 30'720);
  EXPECT_EQ(DefaultResponseBits(40), 60'416);
  EXPECT_EQ(DefaultResponseBits(100), 201'728);
  EXPECT_EQ(DefaultResponseBits(400), 463'360);
}

TEST(QosRules, HealthyConfigPassesEveryCheck) {
  QosAudit a = AuditQos(Healthy(), {});
  EXPECT_EQ(a.verdict, Verdict::kPass);
  for (const QosCheck& c : a.checks)
    EXPECT_EQ(c.verdict, Verdict::kPass) << c.id << ": " << c.message;
  EXPECT_EQ(Check(a, "pfc.headroom").message,
            "headroom 120000B >= 108976B needed for priority 3 at 400 Gb/s, 5 m cable");
  EXPECT_EQ(
      Check(a, "ecn.kmin-ratio").message,
      "Kmin 250000B is 25.0% of 1000000B available (PFC trigger of priority 3, static 1000000B) "
      "(about "
      "20-30% expected)");
  EXPECT_EQ(Check(a, "pfc.headroom").ports, std::vector<std::string>{"Ethernet0"});
}

TEST(QosRules, PfcMissingOnRocePriorityFails) {
  QosConfig c = Healthy();
  c.ports[0].pfc_priorities = {4};
  QosAudit a = AuditQos(c, {});
  EXPECT_EQ(Check(a, "pfc.roce-priority").verdict, Verdict::kFail);
  EXPECT_EQ(Check(a, "pfc.other-priorities").verdict, Verdict::kWarn);
  EXPECT_EQ(a.verdict, Verdict::kFail);
  // A different RoCE priority makes the same config pass that check.
  QosAuditOptions o;
  o.roce_priority = 4;
  EXPECT_EQ(Check(AuditQos(c, o), "pfc.roce-priority").verdict, Verdict::kPass);
}

TEST(QosRules, PfcOnPriorityZeroFails) {
  QosConfig c = Healthy();
  c.ports[0].pfc_priorities = {0, 3};
  EXPECT_EQ(Check(AuditQos(c, {}), "pfc.other-priorities").verdict, Verdict::kFail);
}

TEST(QosRules, EcnMissingFails) {
  QosConfig c = Healthy();
  c.ports[0].ecn[3].enabled = false;
  QosAudit a = AuditQos(c, {});
  EXPECT_EQ(Check(a, "ecn.roce-queue").verdict, Verdict::kFail);
  c.ports[0].ecn.clear();
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.roce-queue").verdict, Verdict::kFail);
  // An input that cannot show ECN at all (counters, PFC tables) is not a finding.
  c.ecn_stated = false;
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.roce-queue").verdict, Verdict::kIndeterminate);
}

TEST(QosRules, AnUnreadEcnLineMakesMissingEcnIndeterminateNotFail) {
  QosConfig c = Healthy();
  c.ports[0].ecn.clear();
  // Prose that mentions ECN is not a setting: still a failure; so is a statement
  // outside the parser's model (EOS `qos random-detect ecn allow non-ect`).
  c.skipped.push_back({4, "ECN must be enabled on queue 3", "not recognised as switch QoS text",
                       /*unreadable=*/false});
  c.skipped.push_back({5, "qos random-detect ecn allow non-ect",
                       "not a QoS statement this tool reads (eos)", /*unreadable=*/false});
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.roce-queue").verdict, Verdict::kFail);
  // A line of configuration naming ECN that the reader could not interpret: unknown.
  c.skipped.push_back({7, "  random-detect ecn minimum-threshold 150 furlongs",
                       "not interpretable as eos: expected a size unit", /*unreadable=*/true});
  QosCheck ecn = Check(AuditQos(c, {}), "ecn.roce-queue");
  EXPECT_EQ(ecn.verdict, Verdict::kIndeterminate);
  EXPECT_NE(ecn.message.find("line 7"), std::string::npos) << ecn.message;
  EXPECT_NE(ecn.message.find("expected a size unit"), std::string::npos) << ecn.message;
  // An unreadable line that is not about ECN does not excuse the gap.
  c.skipped.back().text = "  description uplink";
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.roce-queue").verdict, Verdict::kFail);
}

TEST(QosRules, KminRatioFallsBackToTheLosslessPoolAndNamesIt) {
  QosConfig c = Healthy();
  c.ports[0].pgs.clear();
  c.lossless_pool = BufferAmount::Bytes(1'000'000);
  c.lossless_pool_name = "ingress_lossless_pool";
  QosCheck k = Check(AuditQos(c, {}), "ecn.kmin-ratio");
  EXPECT_EQ(k.verdict, Verdict::kPass);  // 250 KB of 1 MB = 25%
  EXPECT_NE(k.message.find("lossless pool ingress_lossless_pool"), std::string::npos);
}

TEST(QosRules, DropsOnAnAssumedLosslessQueueWarnAndOnAStatedOneFail) {
  QosConfig c = Healthy();
  c.ports[0].queue_drops[3] = 19;
  EXPECT_EQ(Check(AuditQos(c, {}), "drops.lossless").verdict, Verdict::kFail);
  c.ports[0].pfc_stated = false;
  c.ports[0].pfc_priorities.clear();
  EXPECT_EQ(Check(AuditQos(c, {}), "drops.lossless").verdict, Verdict::kWarn);
  c.ports[0].drops_are_roce = true;  // e.g. NVUE "Tx buffer discards for RoCE traffic"
  EXPECT_EQ(Check(AuditQos(c, {}), "drops.lossless").verdict, Verdict::kFail);
}

TEST(QosRules, IngressDropsOnALosslessPriorityGroupFail) {
  QosConfig c = Healthy();
  c.ports[0].pg_drops = {{0, 50}, {3, 0}};
  EXPECT_EQ(Check(AuditQos(c, {}), "drops.lossless").verdict, Verdict::kPass);
  c.ports[0].pg_drops[3] = 7;
  QosCheck d = Check(AuditQos(c, {}), "drops.lossless");
  EXPECT_EQ(d.verdict, Verdict::kFail);
  EXPECT_NE(d.message.find("PG 3: 7 dropped"), std::string::npos) << d.message;
  // Without stated PFC priorities the RoCE priority's PG is assumed lossless: warn.
  c.ports[0].pfc_stated = false;
  c.ports[0].pfc_priorities.clear();
  EXPECT_EQ(Check(AuditQos(c, {}), "drops.lossless").verdict, Verdict::kWarn);
}

TEST(QosRules, PfcFramesOutsideTheLosslessPrioritiesWarn) {
  QosConfig c = Healthy();
  c.ports[0].pfc_rx_frames[3] = 10;
  EXPECT_EQ(Check(AuditQos(c, {}), "pfc.frames").verdict, Verdict::kPass);
  c.ports[0].pfc_rx_frames[0] = 1200;
  QosCheck f = Check(AuditQos(c, {}), "pfc.frames");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_NE(f.message.find("priorities 0"), std::string::npos);
}

TEST(QosRules, KminAboveKmaxFailsAndEqualWarns) {
  QosConfig c = Healthy();
  c.ports[0].ecn[3].kmin = BufferAmount::Bytes(700'000);
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmin-kmax").verdict, Verdict::kFail);
  c.ports[0].ecn[3].kmin = BufferAmount::Bytes(600'000);
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmin-kmax").verdict, Verdict::kWarn);
}

TEST(QosRules, ThresholdsAsSharesOfTheQueueBufferAreComparedAsShares) {
  QosConfig c = Healthy();
  EcnQueue& e = c.ports[0].ecn[3];
  e.kmin.reset();
  e.kmax.reset();
  e.kmin_percent = 20;
  e.kmax_percent = 60;
  QosAudit a = AuditQos(c, {});
  EXPECT_EQ(Check(a, "ecn.kmin-kmax").verdict, Verdict::kPass);
  EXPECT_EQ(Check(a, "ecn.kmin-ratio").verdict, Verdict::kPass);
  EXPECT_EQ(Check(a, "ecn.kmax-below-pfc").verdict, Verdict::kIndeterminate);
  e.kmin_percent = 60;
  a = AuditQos(c, {});
  EXPECT_EQ(Check(a, "ecn.kmin-kmax").verdict, Verdict::kWarn);   // step marking
  EXPECT_EQ(Check(a, "ecn.kmin-ratio").verdict, Verdict::kWarn);  // 60% > 35%
  e.kmin_percent = 70;
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmin-kmax").verdict, Verdict::kFail);
}

TEST(QosRules, KminRatioOutsideWindowWarns) {
  QosConfig c = Healthy();
  c.ports[0].ecn[3].kmin = BufferAmount::Bytes(50'000);  // 5% of 1 MB
  QosCheck low = Check(AuditQos(c, {}), "ecn.kmin-ratio");
  EXPECT_EQ(low.verdict, Verdict::kWarn);
  EXPECT_NE(low.message.find("5.0%"), std::string::npos);
  c.ports[0].ecn[3].kmin = BufferAmount::Bytes(500'000);  // 50%
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmin-ratio").verdict, Verdict::kWarn);
}

TEST(QosRules, KmaxAbovePfcTriggerFails) {
  QosConfig c = Healthy();
  c.ports[0].ecn[3].kmax = BufferAmount::Bytes(1'200'000);
  QosCheck k = Check(AuditQos(c, {}), "ecn.kmax-below-pfc");
  EXPECT_EQ(k.verdict, Verdict::kFail);
  EXPECT_EQ(
      k.message,
      "Kmax 1200000B vs PFC trigger 1000000B (static 1000000B): PFC pauses the sender before ECN "
      "reaches full marking");
}

TEST(QosRules, KmaxAtThePfcTriggerFailsAndJustBelowPasses) {
  // ECN must reach full marking before the ingress reaches XOFF: Kmax equal
  // to the trigger is already too late.
  QosConfig c = Healthy();
  c.ports[0].ecn[3].kmax = BufferAmount::Bytes(1'000'000);
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmax-below-pfc").verdict, Verdict::kFail);
  c.ports[0].ecn[3].kmax = BufferAmount::Bytes(999'999);
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmax-below-pfc").verdict, Verdict::kPass);
}

TEST(QosRules, DynamicThresholdTriggerUsesAlphaOfPool) {
  QosConfig c = Healthy();
  BufferLimit dyn;
  dyn.alpha = 1.0;
  dyn.pool = BufferAmount::Bytes(1'000'000);  // one congested queue settles at 500 KB
  c.ports[0].pgs[3].pfc_trigger = dyn;
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmax-below-pfc").verdict, Verdict::kFail);
  dyn.pool.reset();
  c.ports[0].pgs[3].pfc_trigger = dyn;
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.kmax-below-pfc").verdict, Verdict::kIndeterminate);
}

TEST(QosRules, HeadroomTooSmallFails) {
  QosConfig c = Healthy();
  c.ports[0].cable_m = 100;  // needs 156,476 B
  QosCheck h = Check(AuditQos(c, {}), "pfc.headroom");
  EXPECT_EQ(h.verdict, Verdict::kFail);
  EXPECT_NE(h.message.find("156476B"), std::string::npos);
  // Flags override the config's speed and cable.
  QosAuditOptions o;
  o.cable_m = 5;
  o.port_gbps = 100;
  EXPECT_EQ(Check(AuditQos(c, o), "pfc.headroom").verdict, Verdict::kPass);
}

TEST(QosRules, HeadroomWithoutSpeedOrCableIsIndeterminate) {
  QosConfig c = Healthy();
  c.ports[0].speed_gbps.reset();
  EXPECT_EQ(Check(AuditQos(c, {}), "pfc.headroom").verdict, Verdict::kIndeterminate);
  c = Healthy();
  c.ports[0].cable_m.reset();
  EXPECT_EQ(Check(AuditQos(c, {}), "pfc.headroom").verdict, Verdict::kIndeterminate);
}

TEST(QosRules, CellsNeedACellSize) {
  QosConfig c = Healthy();
  c.ports[0].ecn[3].kmin = BufferAmount::Cells(1000);
  c.ports[0].ecn[3].kmax = BufferAmount::Cells(3000);
  QosAudit a = AuditQos(c, {});
  EXPECT_EQ(Check(a, "ecn.kmin-kmax").verdict, Verdict::kPass);  // same unit: comparable
  EXPECT_EQ(Check(a, "ecn.kmin-ratio").verdict, Verdict::kIndeterminate);
  EXPECT_EQ(Check(a, "ecn.kmax-below-pfc").verdict, Verdict::kIndeterminate);
  QosAuditOptions o;
  o.cell_bytes = 254;  // 254 KB / 1 MB = 25.4 %; Kmax 762 KB < 1 MB
  QosAudit b = AuditQos(c, o);
  EXPECT_EQ(Check(b, "ecn.kmin-ratio").verdict, Verdict::kPass);
  EXPECT_EQ(Check(b, "ecn.kmax-below-pfc").verdict, Verdict::kPass);
  ASSERT_TRUE(FindCellSizePreset("tomahawk3"));
  EXPECT_EQ(FindCellSizePreset("tomahawk3")->bytes, 254);
  EXPECT_FALSE(FindCellSizePreset("nope"));
  // Sourced values are marked verified; the rest stay marked unverified.
  EXPECT_TRUE(FindCellSizePreset("spectrum2")->verified);
  EXPECT_EQ(FindCellSizePreset("spectrum2")->bytes, 144);
  EXPECT_FALSE(FindCellSizePreset("trident3")->verified);
}

TEST(QosRules, CnpSchedulingChecks) {
  QosConfig c = Healthy();
  c.scheduling[6] = Scheduling::kWeighted;
  EXPECT_EQ(Check(AuditQos(c, {}), "cnp.priority").verdict, Verdict::kWarn);
  c.dscp_to_queue[48] = 3;
  EXPECT_EQ(Check(AuditQos(c, {}), "cnp.priority").verdict, Verdict::kFail);
  c.dscp_to_queue.clear();
  EXPECT_EQ(Check(AuditQos(c, {}), "cnp.priority").verdict, Verdict::kIndeterminate);
}

TEST(QosRules, GlobalPauseFails) {
  QosConfig c = Healthy();
  c.ports[0].link_pause = true;
  EXPECT_EQ(Check(AuditQos(c, {}), "pause.global").verdict, Verdict::kFail);
}

TEST(QosRules, DiscardsOnLosslessQueueFail) {
  QosConfig c = Healthy();
  c.ports[0].queue_drops = {{0, 50}, {3, 0}};
  EXPECT_EQ(Check(AuditQos(c, {}), "drops.lossless").verdict, Verdict::kPass);  // queue 0 is lossy
  c.ports[0].queue_drops[3] = 7;
  QosCheck d = Check(AuditQos(c, {}), "drops.lossless");
  EXPECT_EQ(d.verdict, Verdict::kFail);
  EXPECT_NE(d.message.find("queue 3: 7 dropped"), std::string::npos);
}

TEST(QosRules, IdenticalResultsMergeAcrossPorts) {
  QosConfig c = Healthy();
  c.ports.push_back(c.ports[0]);
  c.ports[1].name = "Ethernet4";
  c.ports[1].link_pause = true;
  QosAudit a = AuditQos(c, {});
  EXPECT_EQ(Check(a, "pfc.roce-priority").ports,
            (std::vector<std::string>{"Ethernet0", "Ethernet4"}));
  int pause_checks = 0;
  for (const QosCheck& k : a.checks) pause_checks += k.id == "pause.global";
  EXPECT_EQ(pause_checks, 2);
}

std::string Fixture(const std::string& name) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/qos/" + name;
}

QosAudit AuditFixture(const std::string& name, const QosAuditOptions& o = {}) {
  std::ifstream in(Fixture(name), std::ios::binary);
  return AuditQos(ParseQosConfig(in, name), o);
}

TEST(QosRules, FixtureVerdicts) {
  EXPECT_EQ(AuditFixture("sonic_healthy.json").verdict, Verdict::kPass);
  EXPECT_EQ(AuditFixture("sonic_broken.json").verdict, Verdict::kFail);
  EXPECT_EQ(AuditFixture("sonic_show_broken.txt").verdict, Verdict::kFail);
  EXPECT_EQ(AuditFixture("nvue_broken.txt").verdict, Verdict::kFail);
  EXPECT_EQ(AuditFixture("onyx_broken.txt").verdict, Verdict::kFail);
  EXPECT_EQ(AuditFixture("eos_broken.txt").verdict, Verdict::kFail);
  EXPECT_EQ(AuditFixture("nxos_broken.txt").verdict, Verdict::kFail);
  // Healthy configs of formats that do not state headroom or buffer limits end
  // indeterminate, never warn or fail.
  for (const char* f : {"sonic_show_healthy.txt", "nvue_healthy.txt", "onyx_healthy.txt",
                        "eos_healthy.txt", "nxos_healthy.txt"}) {
    QosAudit a = AuditFixture(f);
    EXPECT_EQ(a.verdict, Verdict::kIndeterminate) << f;
    for (const QosCheck& c : a.checks)
      EXPECT_LE(c.verdict, Verdict::kIndeterminate) << f << " " << c.id;
  }
}

TEST(QosRules, SonicBrokenFindingsHaveNumbers) {
  QosAudit a = AuditFixture("sonic_broken.json");
  EXPECT_EQ(Check(a, "pfc.headroom").message,
            "headroom 20KiB < 126476B needed for priority 3 at 400 Gb/s, 40 m cable: in-flight "
            "data after XOFF overflows and lossless packets are dropped");
  EXPECT_EQ(Check(a, "ecn.kmin-kmax").verdict, Verdict::kFail);
  EXPECT_EQ(Check(a, "cnp.priority").verdict, Verdict::kFail);
}

// Issue 16 item 18: QoS lint gaps that passed. xon above the profile size
// fails; xon above xoff does not (the Spectrum defaults have it, see CheckXon).
bool HasCheck(const QosAudit& a, const std::string& id) {
  for (const QosCheck& c : a.checks)
    if (c.id == id) return true;
  return false;
}

TEST(QosRules, XonAboveTheProfileSizeFails) {
  QosConfig c = Healthy();
  c.ports[0].pgs[3].xon = BufferAmount::Bytes(150'000);  // above xoff (headroom) 120,000
  EXPECT_FALSE(HasCheck(AuditQos(c, {}), "pfc.xon"));    // no size: not judged
  c.ports[0].pgs[3].reserve = BufferAmount::Bytes(270'000);
  EXPECT_EQ(Check(AuditQos(c, {}), "pfc.xon").verdict, Verdict::kPass);
  c.ports[0].pgs[3].reserve = BufferAmount::Bytes(90'000);
  QosCheck x = Check(AuditQos(c, {}), "pfc.xon");
  EXPECT_EQ(x.verdict, Verdict::kFail);
  EXPECT_NE(x.message.find("xon 150000B above the profile size 90000B"), std::string::npos)
      << x.message;
  c.ports[0].pgs[3].xon.reset();
  EXPECT_FALSE(HasCheck(AuditQos(c, {}), "pfc.xon"));
}

TEST(QosRules, SonicProfileXonIsComparedWithTheSize) {
  auto audit = [](const std::string& profile) {
    const std::string json = R"({"BUFFER_POOL": {"ingress_lossless_pool": {"size": "12000000",
      "type": "ingress", "mode": "dynamic"}},
    "BUFFER_PROFILE": {"pg_lossless_25000_5m_profile": {"pool": "ingress_lossless_pool", )" +
                             profile + R"(, "dynamic_th": "-2"}},
    "BUFFER_PG": {"Ethernet0|3-4": {"profile": "pg_lossless_25000_5m_profile"}},
    "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,4"}}})";
    return AuditQos(ParseQosText(json, "t.json"), {});
  };
  // The Spectrum-1 default (sonic-utilities mellanox_buffer_migrator.py): xon above xoff.
  EXPECT_EQ(Check(audit(R"("size": "34816", "xon": "18432", "xoff": "16384")"), "pfc.xon").verdict,
            Verdict::kPass);
  // Shared headroom pool: size == xon, xoff 0.
  EXPECT_EQ(Check(audit(R"("size": "18432", "xon": "18432", "xoff": "0")"), "pfc.xon").verdict,
            Verdict::kPass);
  EXPECT_EQ(Check(audit(R"("size": "15000", "xon": "18432", "xoff": "56320")"), "pfc.xon").verdict,
            Verdict::kFail);
  // Broadcom-style profile (xon_offset): size is the PG minimum, xon above it is normal (the
  // DellEMC Z9264f real sample: size 1248, xon 2288, xoff 177632): not judged.
  EXPECT_FALSE(
      HasCheck(audit(R"("size": "1248", "xon": "2288", "xon_offset": "2288", "xoff": "177632")"),
               "pfc.xon"));
}

TEST(QosRules, EosLaterNoPriorityFlowControlTurnsPfcOff) {
  const std::string eos =
      "interface Ethernet1/1\n"
      "   priority-flow-control on\n"
      "   priority-flow-control priority 3 no-drop\n"
      "   priority-flow-control pause watchdog\n"
      "   tx-queue 3\n"
      "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes\n"
      "   no priority-flow-control\n";
  QosConfig c = ParseQosText(eos, "t.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  EXPECT_TRUE(c.ports[0].pfc_priorities.empty());
  EXPECT_EQ(Check(AuditQos(c, {}), "pfc.roce-priority").verdict, Verdict::kFail);
  // The same with the enable last: PFC on.
  QosConfig on = ParseQosText(
      "interface Ethernet1/1\n   no priority-flow-control\n   priority-flow-control on\n"
      "   priority-flow-control priority 3 no-drop\n",
      "t.txt");
  EXPECT_EQ(on.ports[0].pfc_priorities, std::set<int>{3});
  // An interface that turns PFC off overrides the profile it applies.
  QosConfig prof = ParseQosText(
      "qos profile ROCE\n   priority-flow-control on\n   priority-flow-control priority 3 "
      "no-drop\ninterface Ethernet1/1\n   service-profile ROCE\n   no priority-flow-control\n"
      "interface Ethernet1/2\n   service-profile ROCE\n",
      "t.txt");
  ASSERT_EQ(prof.ports.size(), 2u);
  EXPECT_TRUE(prof.ports[0].pfc_priorities.empty());
  EXPECT_EQ(prof.ports[1].pfc_priorities, std::set<int>{3});
  // `no priority-flow-control priority 3` drops the priority only.
  QosConfig prio = ParseQosText(
      "interface Ethernet1/1\n   priority-flow-control on\n   priority-flow-control priority 3 "
      "no-drop\n   priority-flow-control priority 4 no-drop\n   no priority-flow-control "
      "priority 3\n",
      "t.txt");
  EXPECT_EQ(prio.ports[0].pfc_priorities, std::set<int>{4});
}

TEST(QosRules, MarkProbabilityOutsideAPercentageFails) {
  const std::string eos =
      "interface Ethernet1/1\n"
      "   priority-flow-control on\n"
      "   priority-flow-control priority 3 no-drop\n"
      "   tx-queue 3\n"
      "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes "
      "max-mark-probability 250\n";
  QosCheck e = Check(AuditQos(ParseQosText(eos, "t.txt"), {}), "ecn.roce-queue");
  EXPECT_EQ(e.verdict, Verdict::kFail);
  EXPECT_NE(e.message.find("marking probability 250% is outside 0-100% (line 5)"),
            std::string::npos)
      << e.message;
  QosConfig c = Healthy();
  c.ports[0].ecn[3].pmax_percent = 100;
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.roce-queue").verdict, Verdict::kPass);
}

TEST(QosRules, WatchdogDeadlockOnTheRoceClassFailsElsewhereWarns) {
  const std::string head =
      "                 operational  applied \n"
      "state            enabled      enabled \n"
      "\n"
      "PFC WD Status \n"
      "    traffic-class  status    deadlock-count \n";
  QosConfig storm = ParseQosText(head + "    3              DEADLOCK  1 \n    7  OK  0\n", "t.txt");
  ASSERT_EQ(storm.format, QosFormat::kNvue);
  EXPECT_EQ(Check(AuditQos(storm, {}), "pfc.watchdog-events").verdict, Verdict::kFail);
  EXPECT_EQ(Check(AuditQos(storm, {}), "pfc.watchdog").verdict, Verdict::kPass);
  QosConfig other = ParseQosText(head + "    3  OK  0\n    7  DEADLOCK  3\n", "t.txt");
  EXPECT_EQ(Check(AuditQos(other, {}), "pfc.watchdog-events").verdict, Verdict::kWarn);
  QosConfig past = ParseQosText(head + "    3  OK  2\n    7  OK  0\n", "t.txt");
  EXPECT_EQ(Check(AuditQos(past, {}), "pfc.watchdog-events").verdict, Verdict::kWarn);
  QosConfig calm = ParseQosText(head + "    3  OK  0\n    7  OK  0\n", "t.txt");
  EXPECT_EQ(Check(AuditQos(calm, {}), "pfc.watchdog-events").verdict, Verdict::kPass);
}

TEST(QosRules, NvueEcnConfigurationsTableIsRead) {
  QosConfig c = ParseQosText(
      "    operational  applied  description\n"
      "ECN Configurations\n"
      "    traffic-class  ECN     RED     Min Th   Max Th    Probability\n"
      "    3              enable  enable  150000 B  1500000 B  100\n",
      "t.txt");
  ASSERT_EQ(c.ports.size(), 1u);
  ASSERT_TRUE(c.ports[0].ecn.count(3));
  EXPECT_EQ(c.ports[0].ecn.at(3).kmin->value, 150000);
  EXPECT_EQ(c.ports[0].ecn.at(3).kmax->value, 1500000);
  EXPECT_EQ(Check(AuditQos(c, {}), "ecn.roce-queue").verdict, Verdict::kPass);
}

TEST(QosReport, JsonHasChecksVerdictAndFormat) {
  QosAudit a = AuditFixture("sonic_broken.json");
  nlohmann::json j = QosAuditToJson(a);
  EXPECT_EQ(j["format"], "sonic-json");
  EXPECT_EQ(j["verdict"], "fail");
  ASSERT_TRUE(j["checks"].is_array());
  EXPECT_EQ(j["checks"][0]["id"], "pfc.roce-priority");
  EXPECT_TRUE(j["checks"][0].contains("verdict"));
  EXPECT_TRUE(j["checks"][0].contains("message"));
  std::string text = FormatQosAuditText(a);
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 14), "verdict: fail\n");
}

}  // namespace rules
}  // namespace
}  // namespace lossless::audit::qos
