#include "audit/optics/rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/optics/ingest.hpp"
#include "audit/optics/test_util.hpp"

namespace lossless::audit::optics {
namespace {

using ::testing::HasSubstr;
using testing::ReadFixture;

std::vector<Reading> Load(const std::string& fixture, int64_t at = 1772366400) {
  IngestOptions o;
  o.at = at;
  return ParseInput(ReadFixture(fixture), fixture, o);
}

LinkStatus Eval(const std::vector<Reading>& rs, const RuleParams& p = {}) {
  return EvaluateLink(rs.empty() ? "x" : rs[0].link, rs, p);
}

// The message of the first reason of `rule` ("" when none).
std::string Message(const LinkStatus& s, const std::string& rule) {
  for (const auto& r : s.reasons) {
    if (r.rule == rule) return r.message;
  }
  return "";
}

// Reasons that change the state (info reasons left out).
size_t Findings(const LinkStatus& s) {
  size_t n = 0;
  for (const auto& r : s.reasons) n += r.severity == Verdict::kPass ? 0 : 1;
  return n;
}

bool HasReason(const LinkStatus& s, const std::string& rule, Verdict sev) {
  for (const auto& r : s.reasons) {
    if (r.rule == rule && r.severity == sev) return true;
  }
  return false;
}

TEST(Rules, HealthyModulesAreHealthyWithMargin) {
  for (const char* f :
       {"sfp_healthy.txt", "qsfp28_healthy.txt", "qsfpdd_healthy.txt", "mlxlink_healthy.txt"}) {
    auto s = Eval(Load(f));
    EXPECT_EQ(s.state, Verdict::kPass) << f;
    EXPECT_TRUE(s.reasons.empty()) << f;
  }
  auto s = Eval(Load("qsfp28_healthy.txt"));
  // Weakest lane -1.08 dBm vs low alarm -13.10 dBm.
  EXPECT_NEAR(*s.rx_margin_db, 12.02, 0.01);
}

TEST(Rules, RxPowerAlarmQuarantinesWarningWatches) {
  auto alarm = Eval(Load("qsfp28_rx_low_alarm.txt"));
  EXPECT_EQ(alarm.state, Verdict::kFail);
  ASSERT_FALSE(alarm.reasons.empty());
  EXPECT_EQ(alarm.reasons[0].lane, 3);
  EXPECT_THAT(alarm.reasons[0].message, HasSubstr("-13.98 dBm at or below low alarm -13.10 dBm"));
  EXPECT_NEAR(*alarm.rx_margin_db, -0.88, 0.01);
  auto warn = Eval(Load("qsfp28_rx_low_warning.txt"));
  EXPECT_EQ(warn.state, Verdict::kWarn);
  EXPECT_THAT(warn.reasons[0].message, HasSubstr("2.13 dB above low alarm"));
  EXPECT_EQ(Eval(Load("sfp_rx_low_warning.txt")).state, Verdict::kWarn);
  EXPECT_EQ(Eval(Load("qsfpdd_rx_low_alarm.txt")).reasons[0].lane, 8);
}

TEST(Rules, TemperatureLosCopperLaserOff) {
  auto hot = Eval(Load("qsfp28_high_temp.txt"));
  EXPECT_EQ(hot.state, Verdict::kFail);
  EXPECT_TRUE(HasReason(hot, "temperature", Verdict::kFail));
  auto los = Eval(Load("qsfp28_los.txt"));
  EXPECT_EQ(los.state, Verdict::kFail);
  EXPECT_TRUE(HasReason(los, "los", Verdict::kFail));
  for (const char* f : {"qsfp28_copper.txt", "sfp_copper.txt", "mlxlink_copper.txt"}) {
    auto cu = Eval(Load(f));
    EXPECT_EQ(cu.state, Verdict::kPass) << f;
    EXPECT_TRUE(HasReason(cu, "copper", Verdict::kPass)) << f;
  }
  auto off = Eval(Load("qsfp28_laser_off.txt"));
  EXPECT_EQ(off.state, Verdict::kPass);
  EXPECT_TRUE(HasReason(off, "laser-off", Verdict::kPass));
}

TEST(Rules, ContradictoryThresholdsAreInvalidDataNotADecision) {
  auto s = Eval(Load("qsfp28_bad_thresholds.txt"));
  EXPECT_EQ(s.state, Verdict::kIndeterminate);
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_THAT(s.reasons[0].message, HasSubstr("low alarm 5.40 dBm above high alarm -13.10 dBm"));
  // A real finding elsewhere still decides.
  auto rs = Load("qsfp28_bad_thresholds.txt");
  rs[0].temperature_c = 80;
  EXPECT_EQ(Eval(rs).state, Verdict::kFail);
}

TEST(Rules, RawBerLimitsAreParameters) {
  EXPECT_EQ(Eval(Load("mlxlink_high_ber.txt")).state, Verdict::kFail);
  EXPECT_EQ(Eval(Load("mlxlink_ber_watch.txt")).state, Verdict::kWarn);
  RuleParams p;
  p.ber_watch = 1e-4;
  EXPECT_EQ(Eval(Load("mlxlink_ber_watch.txt"), p).state, Verdict::kPass);
  p.ber_quarantine = 1e-3;
  EXPECT_EQ(Eval(Load("mlxlink_high_ber.txt"), p).state, Verdict::kWarn);
}

TEST(Rules, PostFecErrorsFromDeltasAndCounterReset) {
  auto t0 = Load("mlxlink_errors_t0.txt", 0);
  auto t1 = Load("mlxlink_errors_t1.txt", 7200);
  auto t2 = Load("mlxlink_reset_t2.txt", 14400);
  std::vector<Reading> h = {t0[0], t1[0]};
  auto s = Eval(h);
  EXPECT_EQ(s.state, Verdict::kFail);
  ASSERT_TRUE(HasReason(s, "post-fec", Verdict::kFail));
  EXPECT_THAT(s.reasons[0].message, HasSubstr("+240 in 2.0 h (120.0/h"));
  RuleParams lenient;
  lenient.post_fec_quarantine_per_hour = 1000;
  EXPECT_EQ(Eval(h, lenient).state, Verdict::kWarn);
  // The counter went 250 -> 3: a reset, a new baseline, no negative errors.
  h.push_back(t2[0]);
  auto r = Eval(h);
  EXPECT_EQ(r.state, Verdict::kPass);
  EXPECT_TRUE(HasReason(r, "counter-reset", Verdict::kPass));
  // Counters younger than before are a reset even when the count went up.
  Reading t3 = t2[0];
  t3.time_s = 21600;
  t3.post_fec_errors = 300;
  t3.counters_age_s = 60;
  h.push_back(t3);
  EXPECT_TRUE(HasReason(Eval(h), "counter-reset", Verdict::kPass));
}

TEST(Rules, FallingRxPowerTrendWithTimeToAlarm) {
  IngestOptions none;
  auto h = ParseInput(ReadFixture("telemetry_trend.csv"), "t.csv", none);
  auto s = Eval(h);
  EXPECT_EQ(s.state, Verdict::kWarn);
  ASSERT_EQ(Findings(s), 1u);  // plus info: temperature/tx power judged against defaults
  EXPECT_EQ(s.reasons[0].rule, "rx-trend");
  EXPECT_EQ(s.reasons[0].lane, 2);
  EXPECT_THAT(s.reasons[0].message, HasSubstr("falling 0.60 dB/day over 6 readings"));
  EXPECT_THAT(s.reasons[0].message, HasSubstr("reaches low alarm -9.00 dBm in ~5.0 days"));
  RuleParams p;
  p.trend_quarantine_days = 6;
  EXPECT_EQ(Eval(h, p).state, Verdict::kFail);
  // Two readings are not a trend.
  EXPECT_EQ(Eval({h[0], h[1]}).state, Verdict::kPass);
}

TEST(Rules, RisingRawBerTrend) {
  auto base = Load("mlxlink_healthy.txt");
  std::vector<Reading> h;
  for (int d = 0; d < 3; ++d) {
    Reading r = base[0];
    r.time_s = d * 86400;
    r.raw_ber = 1e-9 * std::pow(10.0, d);  // one decade per day
    h.push_back(r);
  }
  auto s = Eval(h);
  ASSERT_TRUE(HasReason(s, "ber-trend", Verdict::kWarn));
  EXPECT_THAT(Message(s, "ber-trend"), HasSubstr("rising 1.00 decades/day"));
  EXPECT_THAT(Message(s, "ber-trend"), HasSubstr("in ~3.0 days"));
  // Ten times up between the last two readings is itself a finding.
  EXPECT_THAT(Message(s, "ber-rise"), HasSubstr("rose 10x"));
}

TEST(Rules, DarkModuleOnUpPortIsNoOpticalSignal) {
  Reading r = Load("qsfp28_healthy.txt")[0];
  for (auto& l : r.lanes) {
    l.bias_ma = 0.0;
    l.tx_power_mw = 0.0;
    l.rx_power_mw = 0.0;
  }
  r.port_state = "up";
  auto s = Eval({r});
  EXPECT_EQ(s.state, Verdict::kFail);
  EXPECT_THAT(Message(s, "no-signal"), HasSubstr("no optical signal"));
  EXPECT_THAT(Message(s, "no-signal"), HasSubstr("port that is up"));
  // The same module on an administratively down port: expected, not a fault.
  r.port_state = "admin-down";
  auto down = Eval({r});
  EXPECT_EQ(down.state, Verdict::kPass);
  EXPECT_TRUE(HasReason(down, "admin-down", Verdict::kPass));
  // Some lanes dark, the others lit: watch.
  Reading partial = Load("qsfp28_healthy.txt")[0];
  partial.lanes[3].bias_ma = 0.0;
  partial.lanes[3].tx_power_mw = 0.0;
  partial.lanes[3].rx_power_mw = 0.0;
  auto p = Eval({partial});
  EXPECT_EQ(p.state, Verdict::kWarn);
  EXPECT_THAT(Message(p, "dark-lanes"), HasSubstr("lanes 4 dark"));
}

TEST(Rules, NonsensicalThresholdsAreInvalidAndDefaultsJudge) {
  Reading r = Load("qsfp28_healthy.txt")[0];
  Thresholds& rx = r.thr(Quantity::kRxPower);
  rx.high_alarm = rx.low_alarm = rx.high_warning = rx.low_warning = DbmToMw(-3.0);  // all equal
  auto s = Eval({r});
  EXPECT_EQ(s.state, Verdict::kIndeterminate);  // never a quarantine from bad thresholds
  EXPECT_THAT(Message(s, "invalid-thresholds"), HasSubstr("INVALID rx power thresholds"));
  EXPECT_THAT(Message(s, "invalid-thresholds"), HasSubstr("judged against default thresholds"));
  // All zero; the default rx low alarm (-13.5 dBm) then catches a weak lane.
  rx.high_alarm = rx.low_alarm = rx.high_warning = rx.low_warning = 0.0;
  r.lanes[0].rx_power_mw = DbmToMw(-14.0);
  auto weak = Eval({r});
  EXPECT_EQ(weak.state, Verdict::kFail);
  EXPECT_THAT(Message(weak, "rx-power"), HasSubstr("at or below low alarm -13.50 dBm"));
  EXPECT_THAT(Message(weak, "invalid-thresholds"), HasSubstr("all zero"));
}

TEST(Rules, MarginalPowerNearWarningIsWatch) {
  Reading r = Load("qsfp28_healthy.txt")[0];
  const Thresholds& t = r.thr(Quantity::kRxPower);
  r.lanes[1].rx_power_mw = DbmToMw(MwToDbm(*t.low_warning) + 0.5);
  auto s = Eval({r});
  EXPECT_EQ(s.state, Verdict::kWarn);
  EXPECT_THAT(Message(s, "rx-power"), HasSubstr("within 1.00 dB of low warning"));
}

TEST(Rules, PowerNearALowAlarmWithoutWarningThresholdIsWatch) {
  // Modules that publish alarms but no warnings: the watch margin applies to
  // the alarm itself (1 dB by default).
  Reading r = Load("qsfp28_healthy.txt")[0];
  Thresholds& t = r.thr(Quantity::kRxPower);
  t.low_warning.reset();
  t.high_warning.reset();
  r.lanes[1].rx_power_mw = DbmToMw(MwToDbm(*t.low_alarm) + 0.5);
  auto s = Eval({r});
  EXPECT_EQ(s.state, Verdict::kWarn);
  EXPECT_THAT(Message(s, "rx-power"), HasSubstr("within 1.00 dB of low alarm"));
  r.lanes[1].rx_power_mw = DbmToMw(MwToDbm(*t.low_alarm) + 1.5);
  EXPECT_EQ(Eval({r}).state, Verdict::kPass);
}

TEST(Rules, CopperIsJudgedOnBerAndLinkStateAndOneBadLaneIsWatched) {
  Reading cu = Load("mlxlink_copper.txt")[0];
  ASSERT_TRUE(cu.copper);
  cu.raw_ber = 3e-4;
  EXPECT_EQ(Eval({cu}).state, Verdict::kFail);  // BER still counts on copper
  cu.raw_ber = 1e-9;
  cu.port_state = "down";
  EXPECT_TRUE(HasReason(Eval({cu}), "link-down", Verdict::kFail));
  Reading skew = Load("mlxlink_healthy.txt")[0];
  skew.lanes[2].raw_errors = 50000;  // others 980..1200
  auto s = Eval({skew});
  EXPECT_EQ(s.state, Verdict::kWarn);
  EXPECT_THAT(Message(s, "lane-errors"), HasSubstr("lane 3 raw (pre-FEC) errors 50000"));
}

TEST(Rules, SlopeIsLeastSquares) {
  EXPECT_DOUBLE_EQ(*Slope({{0, 1}, {1, 3}, {2, 5}}), 2.0);
  EXPECT_FALSE(Slope({{1, 1}, {1, 2}}).has_value());
  EXPECT_FALSE(Slope({{1, 1}}).has_value());
  EXPECT_EQ(EvaluateLink("x", {}, RuleParams{}).state, Verdict::kPass);
}

}  // namespace
}  // namespace lossless::audit::optics
