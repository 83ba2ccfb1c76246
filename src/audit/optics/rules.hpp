#pragma once
// Health rules: a link's stored readings -> healthy | watch | quarantine |
// invalid-data, with reasons. Pure: no I/O, no clock (trends use the readings'
// own times). Thresholds, defaults and the reasoning behind them are in
// docs/optics.md; every number here is a RuleParams field with a CLI flag.
//
// Instantaneous rules use the latest reading of each input format (so an
// ethtool -m dump and an mlxlink report of the same port both count):
//   power/bias/temperature/voltage against the module's own thresholds
//   (alarm -> quarantine, warning -> watch; power without a warning threshold:
//   within power_margin_watch_db of the alarm -> watch), rx LOS / tx fault ->
//   quarantine, tx LOS -> watch, raw (pre-FEC) BER above ber_quarantine ->
//   quarantine, above ber_watch -> watch, device-reported post-FEC BER above
//   post_fec_ber_watch -> watch.
// History rules: post-FEC errors from counter deltas between the last two
// readings of a format (a counter that went down, or counters younger than
// before, is a reset: new baseline, no errors counted); rx power falling per
// lane and raw BER rising, by least squares over all readings, extrapolated to
// the alarm (resp. ber_quarantine) threshold.
// Not failures by themselves: passive copper, "DOM not supported" or all-zero DOM
// (optical checks skipped: judged on link state and BER), laser off on every lane
// or a port reported administratively down (dark optics expected, checks skipped).
// No optical signal (bias below dark_bias_ma and no light on every lane) on any
// other port -> quarantine; some lanes dark while others carry light -> watch; a
// lane receiving no light -> quarantine; a port enabled with the link down ->
// quarantine. rx power within power_margin_watch_db of its low or high warning, or
// tx power within it of its low warning -> watch (marginal);
// raw BER up ber_rise_factor times between the last two readings of a format -> watch;
// one lane's raw errors >= lane_errors_skew x the other lanes' median (and >=
// lane_errors_min) -> watch.
// Nonsensical module thresholds (low above high, all zero, all equal): an
// invalid-data reason ("INVALID ... thresholds") that never quarantines, and the
// quantity is judged against DefaultThresholds; a quantity without thresholds is
// judged against the defaults too (an info reason says so). A link whose only
// findings are invalid data (or that has no readings to judge) gets state invalid-data.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/optics/reading.hpp"
#include "audit/verdict.hpp"

namespace lossless::audit::optics {

struct RuleParams {
  double ber_watch = 1e-5;                  // raw (pre-FEC) BER
  double ber_quarantine = 1e-4;             // raw BER; FEC design limit is ~2.4e-4
  double post_fec_ber_watch = 1e-12;        // device-reported post-FEC BER
  double post_fec_quarantine_per_hour = 1;  // post-FEC errors per hour (any > 0 is watch)
  double power_margin_watch_db = 1.0;       // only when the module has no warning threshold
  double trend_min_db_per_day = 0.1;        // rx power falling at least this fast -> watch
  double ber_trend_decades_per_day = 0.3;   // raw BER rising at least this fast -> watch
  double trend_quarantine_days = 2.0;       // projected threshold crossing sooner -> quarantine
  int trend_min_readings = 3;
  double trend_min_span_s = 3600;  // readings must span at least this long
  double ber_rise_factor = 10;     // raw BER up this many times between two readings -> watch
  double no_light_dbm = -30;       // optical power at or below this is "no light"
  double dark_bias_ma = 0.5;       // laser bias below this is "laser not driven"
  double lane_errors_skew = 10;    // a lane's raw errors this many times the others' median
  int64_t lane_errors_min = 1000;  //   and at least this many -> watch
};

// Thresholds used when a capture prints none for a quantity, or nonsensical ones
// (low above high, all zero, all equal). Typical vendor limits of SFP+/SFP28/QSFP+/
// QSFP28 short- and long-reach modules (docs/optics.md gives the values and why):
// temperature -5/0/70/75 C, voltage 2.97/3.135/3.465/3.63 V (3.3 V +-5/10%), tx power
// -10/-8/+4/+5 dBm, rx power -13.5/-10/+2.4/+3.4 dBm (low alarm/low warning/high
// warning/high alarm). nullopt for bias current, whose range depends on the laser.
// Power in mW.
std::optional<Thresholds> DefaultThresholds(Quantity q);

// A link's state and a reason's severity are audit verdicts, printed in the
// words of this tool: pass = healthy (a reason: info), warn = watch,
// fail = quarantine, indeterminate = invalid-data.
std::string_view StateName(Verdict state);  // "healthy", "watch", "quarantine", "invalid-data"
std::string_view SeverityName(Verdict severity);  // "info", "watch", "quarantine", "invalid-data"

struct Reason {
  std::string rule;  // "rx-power", "temperature", "los", "raw-ber", "post-fec", "rx-trend", ...
  Verdict severity = Verdict::kPass;
  int lane = 0;  // 0 = module / link level
  std::string message;
};

struct LinkStatus {
  std::string link;
  Verdict state = Verdict::kPass;  // the worst reason
  std::vector<Reason> reasons;
  int64_t readings = 0;
  std::optional<int64_t> last_time_s;
  std::optional<double> rx_margin_db;  // smallest margin of any lane to the rx low alarm
};

// `history` sorted by time (as Store::History returns it); may be empty.
LinkStatus EvaluateLink(const std::string& link, const std::vector<Reading>& history,
                        const RuleParams& params);

// The verdict over several links, for `optics status`: fail when a link is to
// be quarantined, else indeterminate when one cannot be judged, else warn when
// one is on watch, else pass. Unlike Worst(), invalid-data outranks watch here.
Verdict OverallVerdict(const std::vector<LinkStatus>& links);

// Least-squares slope of y over x; nullopt with fewer than 2 points or no x spread.
std::optional<double> Slope(const std::vector<std::pair<double, double>>& points);

}  // namespace lossless::audit::optics
