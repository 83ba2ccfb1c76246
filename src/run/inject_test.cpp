// Reference experiments E1 (PFC pause timing) and E5 (DCQCN reaction point)
// run from their scenario files (scenarios/experiments/), with the injected
// PFC frame and CNPs of faults.pause_inject / faults.cnp_inject; and the
// errors of those fields.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/tx_record_test_util.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "workload/traffic.hpp"

namespace lossless::run {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace inject {

using report::CnpInjectReport;
using report::PauseInjectReport;
using report::RunResult;
using report::Series;
using scenario::BuildTopology;
using scenario::CheckFaults;
using scenario::LoadScenarioFile;
using scenario::LoadScenarioText;
using scenario::Scenario;
using workload::ExpandTraffic;

const std::string kDir = std::string(LOSSLESS_SOURCE_DIR) + "/scenarios/experiments/";

using fabric::testing::RecordTx;
using fabric::testing::TxRecord;
using namespace fabric::testing::e1;  // kT0, kTa, kTmax, kLowFrame

// Runs the E1 file (with `sets`) and records every frame each port starts.
struct E1Run {
  std::vector<TxRecord> tx;
  uint32_t port_a = 0, port_s = 0;  // host0's NIC port, leaf0's port facing it
  RunResult r;

  // `from` -> `to`: one textual change to the file first (none when empty).
  explicit E1Run(const std::vector<std::string>& sets = {}, const std::string& from = "",
                 const std::string& to = "") {
    std::ifstream in(kDir + "E1-pfc-pause-timing.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (!from.empty()) {
      EXPECT_NE(text.find(from), std::string::npos);
      text.replace(text.find(from), from.size(), to);
    }
    Scenario s = LoadScenarioText(text, "E1-pfc-pause-timing.yaml", sets);
    RunHooks hooks;
    hooks.before_run = [this](fabric::Network& net) {
      port_a = net.HostPort(0);
      port_s = net.PortPeer(port_a);
      net.set_tx_trace(&RecordTx, &tx);
    };
    r = RunScenario(s, hooks);
  }
  std::vector<int64_t> Starts(uint32_t port, int tclass, fabric::PacketKind kind) const {
    return fabric::testing::StartsOf(tx, port, tclass, kind);
  }
  std::vector<int64_t> DataStarts(int tclass) const {
    return Starts(port_a, tclass, fabric::PacketKind::kData);
  }
  int64_t FirstStartAfter(int tclass, int64_t t) const {
    return fabric::testing::FirstAfter(DataStarts(tclass), t);
  }
  int64_t LastStartBefore(int tclass, int64_t t) const {
    return fabric::testing::LastAtOrBefore(DataStarts(tclass), t);
  }
  bool AnyStartIn(int tclass, int64_t lo, int64_t hi) const {  // open interval
    return fabric::testing::AnyIn(DataStarts(tclass), lo, hi);
  }
};

constexpr int64_t kFrame = 83'560;  // one 4,178-B RoCE frame at 400G

TEST(RefE1_PfcPauseTiming, ScenarioInjectionPausesForTMax) {
  E1Run e;
  // The injected frame is a real PFC frame on leaf0's port facing A: 84 B of
  // wire time, starting at t0 on the idle port.
  const auto pauses = e.Starts(e.port_s, -1, fabric::PacketKind::kPause);
  ASSERT_EQ(pauses.size(), 1u);
  EXPECT_EQ(pauses[0], kT0);
  for (const auto& x : e.tx) {
    if (x.kind == fabric::PacketKind::kPause) {
      EXPECT_EQ(x.wire, 84u);
    }
  }
  // Priority 3 was sending up to t_a, is silent for T_max, restarts on time.
  EXPECT_GT(e.LastStartBefore(3, kTa), kTa - 2 * kFrame);
  EXPECT_FALSE(e.AnyStartIn(3, kTa, kTa + kTmax));
  const int64_t first = e.FirstStartAfter(3, kTa);
  EXPECT_GE(first, kTa + kTmax);
  EXPECT_LE(first, kTa + kTmax + kLowFrame);
  // Priority 0 keeps flowing at its 80 Gb/s during the pause (E1 check 7).
  int64_t low = 0;
  for (int64_t x : e.DataStarts(0)) low += (x >= kTa && x < kTa + 80'000'000) ? 1 : 0;
  const double low_gbps = static_cast<double>(low * 4178 * 8) / 80'000.0;
  EXPECT_NEAR(low_gbps, 80.0, 0.8);
  // The report: one frame sent and received, A paused exactly T_max on class 3.
  ASSERT_EQ(e.r.pause_injections.size(), 1u);
  const PauseInjectReport& p = e.r.pause_injections[0];
  EXPECT_EQ(p.port, "leaf0->host0");
  EXPECT_EQ(p.receiver, "host0->leaf0");
  EXPECT_EQ(p.class_enable, 1u << 3);
  EXPECT_EQ(p.quanta, 0xFFFF);
  EXPECT_EQ(p.pause.ps(), kTmax);
  ASSERT_EQ(p.receiver_paused_ps.size(), 1u);
  EXPECT_EQ(p.receiver_paused_ps[0], (std::pair<int, int64_t>{3, kTmax}));
  EXPECT_EQ(e.r.pause_frames, 1u);
}

// Case (c) through --set: an XON frame sent at t0 + 40 us releases at once.
TEST(RefE1_PfcPauseTiming, ScenarioXonEntryByCommandLineReleases) {
  E1Run e({"faults.pause_inject.1.port=leaf0->host0", "faults.pause_inject.1.at=50us",
           "faults.pause_inject.1.class_enable=3", "faults.pause_inject.1.quanta=0"});
  const int64_t tx = kT0 + 40'051'680;  // end of the XON frame's reception at A
  EXPECT_FALSE(e.AnyStartIn(3, kTa, tx));
  const int64_t first = e.FirstStartAfter(3, kTa);
  EXPECT_GE(first, tx);
  EXPECT_LE(first, tx + kLowFrame);
  ASSERT_EQ(e.r.pause_injections.size(), 2u);
  EXPECT_EQ(e.r.pause_injections[0].receiver_paused_ps[0].second, tx - kTa);
  EXPECT_EQ(e.r.pause_frames, 2u);
}

// `host: N`: host N's NIC sends the frame to its switch, whose egress to it
// stops serving the class for T_max.
TEST(RefE1_PfcPauseTiming, ScenarioHostSendsToItsSwitch) {
  E1Run e({}, "port: leaf0->host0", "host: 1");
  ASSERT_EQ(e.r.pause_injections.size(), 1u);
  const PauseInjectReport& p = e.r.pause_injections[0];
  EXPECT_EQ(p.port, "host1->leaf0");
  EXPECT_EQ(p.receiver, "leaf0->host1");
  ASSERT_EQ(p.receiver_paused_ps.size(), 1u);
  EXPECT_EQ(p.receiver_paused_ps[0], (std::pair<int, int64_t>{3, kTmax}));
  // host1 sends nothing else: its frame starts at t0 on the idle port.
  for (const auto& x : e.tx) {
    if (x.kind == fabric::PacketKind::kPause && x.start <= kT0) {
      EXPECT_EQ(x.start, kT0);
    }
  }
}

// E5 case A: one CNP at t0 = 110 us; series every 55 us from 55 us.
TEST(RefE5_DcqcnReactionPoint, ScenarioCnpInjectionMatchesCaseA) {
  RunResult r = RunScenario(LoadScenarioFile(kDir + "E5-dcqcn-reaction-point.yaml"));
  auto find = [&](const std::string& kind) -> const Series* {
    for (const auto& x : r.series.list)
      if (x.kind == kind && x.subject == "flow 0 host0->host1") return &x;
    return nullptr;
  };
  const Series* rc = find("dcqcn_rate_gbps");
  const Series* rt = find("dcqcn_target_gbps");
  const Series* alpha = find("dcqcn_alpha");
  ASSERT_NE(rc, nullptr);
  ASSERT_NE(rt, nullptr);
  ASSERT_NE(alpha, nullptr);
  ASSERT_EQ(r.series.samples, 20);  // 55 us .. 1100 us
  auto rel = [](double actual, double expected, size_t k) {
    EXPECT_NEAR(actual, expected, 1e-9 * std::abs(expected)) << "sample " << k;
  };
  rel(rc->values[0], 400, 0);  // before the CNP
  const double fast[] = {200, 300, 350, 375, 387.5, 393.75, 396.875, 398.4375};
  for (size_t k = 1; k < 20; ++k) {
    // Sample k is at t0 + 55 (k - 1) us: k - 1 increase and alpha events.
    const int events = static_cast<int>(k) - 1;
    if (k <= 8) rel(rc->values[k], fast[k - 1], k);
    rel(rc->values[k], 400 - 200 / std::pow(2.0, events), k);
    rel(rt->values[k], 400, k);
    rel(alpha->values[k], std::pow(255.0 / 256, events), k);
  }
  EXPECT_NEAR(alpha->values[19], 0.931974, 5e-7);  // E5: after the 18th update
  ASSERT_EQ(r.cnp_injections.size(), 1u);
  const CnpInjectReport& c = r.cnp_injections[0];
  EXPECT_EQ(c.cnps, 1u);
  EXPECT_EQ(c.first, units::Time::Us(110));
  EXPECT_EQ(c.cuts, 1);
  EXPECT_EQ(c.increase_events, 18);
  rel(c.alpha, std::pow(255.0 / 256, 18), 19);
  EXPECT_EQ(r.cnps, 0u);  // the carrier flow is not congested: no real CNPs
  EXPECT_EQ(r.ecn_marks, 0u);
}

// E5 case D through --set: 20 CNPs 1 us apart halve rc down to R_MIN.
TEST(RefE5_DcqcnReactionPoint, ScenarioCnpTrainClampsAtMinRate) {
  RunResult r = RunScenario(LoadScenarioFile(
      kDir + "E5-dcqcn-reaction-point.yaml",
      {"faults.cnp_inject.0.count=20", "faults.cnp_inject.0.every=1us", "stop_time=130us"}));
  ASSERT_EQ(r.cnp_injections.size(), 1u);
  const CnpInjectReport& c = r.cnp_injections[0];
  EXPECT_EQ(c.cnps, 20u);
  EXPECT_EQ(c.last, units::Time::Us(129));
  EXPECT_EQ(c.cuts, 20);
  EXPECT_NEAR(c.rc_gbps, 0.1, 1e-9 * 0.1);  // R_MIN = 100 Mb/s
  EXPECT_EQ(c.alpha, 1.0);
}

std::string ErrorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    Scenario s = LoadScenarioText(text, "s.yaml", sets);
    topology::Topology t = BuildTopology(s);
    CheckFaults(s, t, ExpandTraffic(s, static_cast<uint32_t>(t.hosts.size()), &t).size());
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

constexpr const char* kPfc = R"(name: t
fabric:
  pfc: {enabled: true}
topology: {kind: leaf-spine, gpus: 2}
traffic:
  - {pattern: flow, src: 0, dst: 1, bytes: 1MB}
faults:
  pause_inject:
    - {port: leaf0->host0, at: 10us, class_enable: [3], quanta: 65535}
)";

TEST(ScenarioPauseInject, BadFieldsNameFileLineAndField) {
  EXPECT_EQ(ErrorOf(kPfc), "no error");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.quanta=0xffff"}), "no error");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.class_enable=0x18"}), "no error");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.quanta=65536"}),
            "<--set>: faults.pause_inject.0.quanta: expected pause quanta from 0 (XON) to 65535 "
            "(0xffff), got \"65536\"");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.quanta=-1"}),
            "<--set>: faults.pause_inject.0.quanta: expected pause quanta from 0 (XON) to 65535 "
            "(0xffff), got \"-1\"");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.class_enable=8"}),
            "<--set>: faults.pause_inject.0.class_enable: expected a list of priorities from 0 to "
            "7, or a bit vector 0x01..0xff, got \"8\"");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.class_enable=0x100"}),
            "<--set>: faults.pause_inject.0.class_enable: expected a list of priorities from 0 to "
            "7, or a bit vector 0x01..0xff, got \"0x100\"");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.at=-1us"}),
            "<--set>: faults.pause_inject.0.at: expected a time such as 1.5us (not negative), got "
            "\"-1us\"");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.port=leaf0->host7"}),
            "<--set>: faults.pause_inject.0.port: expected a link direction of this topology such "
            "as host0->leaf0, leaf0->host0, host1->leaf0, leaf0->host1 (a->b#k for one of "
            "parallel links; lossless links lists the links), got \"leaf0->host7\"");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.host=0"}),
            "s.yaml:9: faults.pause_inject.0: expected exactly one of 'host' (a host rank: its NIC "
            "sends) or 'port' (a link direction such as leaf0->host0: its sender sends)");
  EXPECT_EQ(
      ErrorOf(kPfc, {"faults.pause_inject.1.host=2", "faults.pause_inject.1.at=0s",
                     "faults.pause_inject.1.class_enable=3", "faults.pause_inject.1.quanta=1"}),
      "<--set>: faults.pause_inject.1.host: expected a host rank below 2 (the topology's hosts), "
      "got 2");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.1.host=1"}),
            "<--set>: faults.pause_inject.1: expected 'at'");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.0.quanta_=1"}),
            "<--set>: faults.pause_inject.0.quanta_: unknown field; did you mean 'quanta'? (valid: "
            "host, port, at, class_enable, quanta)");
  EXPECT_EQ(ErrorOf(kPfc, {"faults.pause_inject.3.host=1"}),
            "<--set>: faults.pause_inject.3.host: expected faults.pause_inject.<0..1>.<field>, got "
            "\"faults.pause_inject.3.host\"");
  EXPECT_EQ(ErrorOf(kPfc, {"fabric.pfc.enabled=false"}),
            "s.yaml:9: faults.pause_inject.0: expected fabric.pfc.enabled true along with an "
            "injected PFC frame (ports with PFC off ignore PFC frames), got false");
  std::string t = kPfc;
  t.replace(t.find("at: 10us"), 8, "at: 10");
  EXPECT_EQ(ErrorOf(t),
            "s.yaml:9: faults.pause_inject.0.at: expected a time such as 1.5us (a unit is "
            "required), got \"10\"");
  t = kPfc;
  t.replace(t.find("pause_inject:"), 13, "pause_injct:");
  EXPECT_EQ(ErrorOf(t),
            "s.yaml:8: faults.pause_injct: unknown field; did you mean 'pause_inject'? (valid "
            "here: nic_stall, reroute, pause_inject, cnp_inject, link_loss, link_down)");
}

constexpr const char* kCnp = R"(name: t
fabric:
  ecn: {enabled: true}
  cc: dcqcn-paper
topology: {kind: leaf-spine, gpus: 2}
traffic:
  - {pattern: flow, src: 0, dst: 1, bytes: 1MB}
faults:
  cnp_inject: {flow: 0, at: [1us, 2us]}
)";

TEST(ScenarioCnpInject, BadFieldsNameFileLineAndField) {
  EXPECT_EQ(ErrorOf(kCnp), "no error");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.flow=1"}),
            "<--set>: faults.cnp_inject.0.flow: expected a flow index below 1 (the flows the "
            "traffic list expands to), got 1");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.flow=-1"}),
            "<--set>: faults.cnp_inject.0.flow: expected an integer from 0 to 1e+09, got \"-1\"");
  EXPECT_EQ(ErrorOf(kCnp, {"fabric.cc=none"}),
            "s.yaml:9: faults.cnp_inject.0: expected fabric.cc dcqcn-paper or dcqcn-firmware along "
            "with an injected CNP, got \"none\"");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.count=3"}),
            "<--set>: faults.cnp_inject.0.count: expected 'count' only with a single 'at' time");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.at=1us", "faults.cnp_inject.0.count=3"}),
            "<--set>: faults.cnp_inject.0.count: expected 'every' (time between CNPs) with count");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.at=1us", "faults.cnp_inject.0.every=1us"}),
            "<--set>: faults.cnp_inject.0.every: expected 'count' with 'every'");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.at=1us", "faults.cnp_inject.0.count=3",
                           "faults.cnp_inject.0.every=0s"}),
            "<--set>: faults.cnp_inject.0.every: expected a time above zero, got \"0s\"");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.at=1us,-2us"}),
            "<--set>: faults.cnp_inject.0.at: expected a time such as 1.5us (not negative), got "
            "\"-2us\"");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.1.at=1us"}),
            "<--set>: faults.cnp_inject.1: expected 'flow' (index of a traffic flow)");
  EXPECT_EQ(ErrorOf(kCnp, {"faults.cnp_inject.0.count=0"}),
            "<--set>: faults.cnp_inject.0.count: expected an integer from 1 to 1e+06, got \"0\"");
}

// traffic `rate` (E1's paced priority 0): a rate, and not with DCQCN.
TEST(ScenarioTrafficRate, BadRatesNameTheEntry) {
  EXPECT_EQ(ErrorOf(kPfc, {"traffic.0.rate=80Gbps"}), "no error");
  EXPECT_EQ(ErrorOf(kPfc, {"traffic.0.rate=0"}),
            "<--set>: traffic.0.rate: expected a rate above zero, got \"0\"");
  EXPECT_EQ(
      ErrorOf(kCnp, {"traffic.0.rate=80Gbps"}),
      "<--set>: traffic.0.rate: expected no 'rate' with DCQCN (fabric.cc): the reaction point "
      "sets each flow's rate");
}

}  // namespace inject
}  // namespace
}  // namespace lossless::run
