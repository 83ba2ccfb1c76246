#include "audit/optics/rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace lossless::audit::optics {

std::string_view StateName(Verdict state) {
  return state == Verdict::kPass ? "healthy" : SeverityName(state);
}

std::string_view SeverityName(Verdict severity) {
  switch (severity) {
    case Verdict::kPass:
      return "info";
    case Verdict::kWarn:
      return "watch";
    case Verdict::kFail:
      return "quarantine";
    case Verdict::kIndeterminate:
      return "invalid-data";
  }
  return "?";
}

std::optional<Thresholds> DefaultThresholds(Quantity q) {
  Thresholds t;
  switch (q) {
    case Quantity::kTemperature:
      t = {75.0, -5.0, 70.0, 0.0};
      break;
    case Quantity::kVoltage:
      t = {3.63, 2.97, 3.465, 3.135};
      break;
    case Quantity::kTxPower:
      t = {DbmToMw(5.0), DbmToMw(-10.0), DbmToMw(4.0), DbmToMw(-8.0)};
      break;
    case Quantity::kRxPower:
      t = {DbmToMw(3.4), DbmToMw(-13.5), DbmToMw(2.4), DbmToMw(-10.0)};
      break;
    case Quantity::kBias:
      return std::nullopt;
  }
  return t;
}

std::optional<double> Slope(const std::vector<std::pair<double, double>>& points) {
  if (points.size() < 2) return std::nullopt;
  double mx = 0, my = 0;
  for (const auto& [x, y] : points) {
    mx += x;
    my += y;
  }
  mx /= static_cast<double>(points.size());
  my /= static_cast<double>(points.size());
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
  }
  if (sxx <= 0) return std::nullopt;
  return sxy / sxx;
}

namespace {

constexpr double kSecondsPerDay = 86400.0;
// Supply voltages a working module can report (3.3 V nominal, SFF-8472/SFF-8636/CMIS).
constexpr double kPlausibleVoltage[2] = {2.5, 4.0};

// Value in the unit used for comparing and printing: dBm for power.
double Display(Quantity q, double v) {
  return IsPower(q) ? MwToDbm(v) : v;
}

std::string Unit(Quantity q) {
  switch (q) {
    case Quantity::kTemperature:
      return "C";
    case Quantity::kVoltage:
      return "V";
    case Quantity::kBias:
      return "mA";
    case Quantity::kTxPower:
    case Quantity::kRxPower:
      return "dBm";
  }
  return "";
}

std::string Fmt(Quantity q, double v) {
  const double d = Display(q, v);
  if (std::isinf(d)) return "no light (0 mW)";
  const int digits = q == Quantity::kVoltage ? 3 : 2;
  return fmt::format("{:.{}f} {}", d, digits, Unit(q));
}

std::string LanePrefix(int lane) {
  return lane > 0 ? fmt::format("lane {} ", lane) : "";
}

std::string RuleName(Quantity q) {
  switch (q) {
    case Quantity::kTemperature:
      return "temperature";
    case Quantity::kVoltage:
      return "voltage";
    case Quantity::kBias:
      return "bias";
    case Quantity::kTxPower:
      return "tx-power";
    case Quantity::kRxPower:
      return "rx-power";
  }
  return "?";
}

// Why a threshold set cannot be trusted; empty when it is consistent.
std::string Contradiction(Quantity q, const Thresholds& t) {
  struct Pair {
    const std::optional<double>& lo;
    const char* lo_name;
    const std::optional<double>& hi;
    const char* hi_name;
  };
  const Pair pairs[] = {{t.low_alarm, "low alarm", t.high_alarm, "high alarm"},
                        {t.low_warning, "low warning", t.high_warning, "high warning"},
                        {t.low_alarm, "low alarm", t.low_warning, "low warning"},
                        {t.high_warning, "high warning", t.high_alarm, "high alarm"},
                        {t.low_alarm, "low alarm", t.high_warning, "high warning"},
                        {t.low_warning, "low warning", t.high_alarm, "high alarm"}};
  for (const auto& p : pairs) {
    if (p.lo && p.hi && *p.lo > *p.hi) {
      return fmt::format("{} {} above {} {}", p.lo_name, Fmt(q, *p.lo), p.hi_name, Fmt(q, *p.hi));
    }
  }
  return "";
}

bool AllZero(const Thresholds& t) {
  for (const auto* v : {&t.high_alarm, &t.low_alarm, &t.high_warning, &t.low_warning}) {
    if (v->has_value() && **v != 0.0) return false;
  }
  return t.Any();
}

bool AllEqual(const Thresholds& t) {
  std::optional<double> first;
  int n = 0;
  for (const auto* v : {&t.high_alarm, &t.low_alarm, &t.high_warning, &t.low_warning}) {
    if (!v->has_value()) continue;
    ++n;
    if (!first) first = **v;
    if (**v != *first) return false;
  }
  return n >= 2;
}

std::optional<double> AnyValue(const Thresholds& t) {
  for (const auto* v : {&t.high_alarm, &t.low_alarm, &t.high_warning, &t.low_warning}) {
    if (v->has_value()) return *v;
  }
  return std::nullopt;
}

bool HasValue(const Reading& r, Quantity q) {
  switch (q) {
    case Quantity::kTemperature:
      return r.temperature_c.has_value();
    case Quantity::kVoltage:
      return r.voltage_v.has_value();
    default:
      break;
  }
  for (const auto& l : r.lanes) {
    if (q == Quantity::kBias && l.bias_ma) return true;
    if (q == Quantity::kTxPower && l.tx_power_mw) return true;
    if (q == Quantity::kRxPower && l.rx_power_mw) return true;
  }
  return false;
}

std::string DescribeThresholds(Quantity q, const Thresholds& t) {
  return fmt::format("[alarm {} .. {}, warning {} .. {}]", Fmt(q, *t.low_alarm),
                     Fmt(q, *t.high_alarm), Fmt(q, *t.low_warning), Fmt(q, *t.high_warning));
}

class Evaluator {
 public:
  Evaluator(const RuleParams& p, LinkStatus& out) : p_(p), out_(out) {}

  void Add(std::string rule, Verdict s, int lane, std::string message) {
    // The same finding from two formats (ethtool and mlxlink) is reported once.
    for (const auto& r : out_.reasons) {
      if (r.rule == rule && r.lane == lane && r.severity == s && r.message == message) return;
    }
    out_.reasons.push_back(Reason{std::move(rule), s, lane, std::move(message)});
  }

  // Checks one value against one valid threshold set.
  void CheckValue(Quantity q, int lane, double v, const Thresholds& t) {
    const double d = Display(q, v);
    const std::string what = fmt::format("{}{} {}", LanePrefix(lane), QuantityLabel(q), Fmt(q, v));
    auto margin = [&](double limit) { return std::abs(d - Display(q, limit)); };
    const bool power = IsPower(q);
    auto margin_text = [&](double limit) {
      if (!power || std::isinf(d)) return std::string();
      return fmt::format(" (margin {:.2f} dB)",
                         d - Display(q, limit) >= 0 ? margin(limit) : -margin(limit));
    };
    if (t.low_alarm && d <= Display(q, *t.low_alarm)) {
      Add(RuleName(q), Verdict::kFail, lane,
          fmt::format("{} at or below low alarm {}", what, Fmt(q, *t.low_alarm)));
      return;
    }
    if (t.high_alarm && d >= Display(q, *t.high_alarm)) {
      Add(RuleName(q), Verdict::kFail, lane,
          fmt::format("{} at or above high alarm {}", what, Fmt(q, *t.high_alarm)));
      return;
    }
    if (t.low_warning && d <= Display(q, *t.low_warning)) {
      std::string extra =
          t.low_alarm ? fmt::format("; {:.2f} {} above low alarm {}", d - Display(q, *t.low_alarm),
                                    power ? "dB" : Unit(q), Fmt(q, *t.low_alarm))
                      : "";
      Add(RuleName(q), Verdict::kWarn, lane,
          fmt::format("{} at or below low warning {}{}", what, Fmt(q, *t.low_warning), extra));
      return;
    }
    if (t.high_warning && d >= Display(q, *t.high_warning)) {
      std::string extra = t.high_alarm ? fmt::format("; {:.2f} {} below high alarm {}",
                                                     Display(q, *t.high_alarm) - d,
                                                     power ? "dB" : Unit(q), Fmt(q, *t.high_alarm))
                                       : "";
      Add(RuleName(q), Verdict::kWarn, lane,
          fmt::format("{} at or above high warning {}{}", what, Fmt(q, *t.high_warning), extra));
      return;
    }
    if (power && t.low_warning && margin(*t.low_warning) < p_.power_margin_watch_db) {
      Add(RuleName(q), Verdict::kWarn, lane,
          fmt::format("{} within {:.2f} dB of low warning {} (margin {:.2f} dB): marginal", what,
                      p_.power_margin_watch_db, Fmt(q, *t.low_warning), margin(*t.low_warning)));
    }
    // High side: only rx (receiver overload); a strong transmitter is not a degradation sign.
    if (q == Quantity::kRxPower && t.high_warning &&
        margin(*t.high_warning) < p_.power_margin_watch_db) {
      Add(RuleName(q), Verdict::kWarn, lane,
          fmt::format("{} within {:.2f} dB of high warning {} (margin {:.2f} dB): marginal", what,
                      p_.power_margin_watch_db, Fmt(q, *t.high_warning), margin(*t.high_warning)));
    }
    if (power && !t.low_warning && t.low_alarm && margin(*t.low_alarm) < p_.power_margin_watch_db) {
      Add(RuleName(q), Verdict::kWarn, lane,
          fmt::format("{} within {:.2f} dB of low alarm {}{}", what, p_.power_margin_watch_db,
                      Fmt(q, *t.low_alarm), margin_text(*t.low_alarm)));
    }
    if (power && !t.high_warning && t.high_alarm &&
        margin(*t.high_alarm) < p_.power_margin_watch_db) {
      Add(RuleName(q), Verdict::kWarn, lane,
          fmt::format("{} within {:.2f} dB of high alarm {}", what, p_.power_margin_watch_db,
                      Fmt(q, *t.high_alarm)));
    }
  }

  void Instant(const Reading& r) {
    const std::string src = r.format;
    bool laser_off = !r.lanes.empty();
    for (const auto& l : r.lanes) laser_off = laser_off && l.tx_disabled.value_or(false);
    const bool admin_down = r.port_state == "admin-down";
    bool all_zero = r.temperature_c.value_or(0) == 0 && r.voltage_v.value_or(0) == 0;
    bool any_value = r.temperature_c || r.voltage_v;
    for (const auto& l : r.lanes) {
      for (const auto* v : {&l.tx_power_mw, &l.rx_power_mw, &l.bias_ma}) {
        any_value = any_value || v->has_value();
        if (v->has_value() && **v != 0) all_zero = false;
      }
    }
    const bool dom_off = r.dom_supported.has_value() && !*r.dom_supported;
    // A module cannot run on a supply far from 3.3 V: such a reading says the DOM data is
    // garbage (a driver or EEPROM read problem), not that the link is failing.
    const bool implausible =
        !r.copper && r.voltage_v && *r.voltage_v != 0 &&
        (*r.voltage_v < kPlausibleVoltage[0] || *r.voltage_v > kPlausibleVoltage[1]);
    const bool no_dom = r.copper || dom_off || (any_value && all_zero) || implausible;
    const bool link_evidence =
        r.raw_ber || r.effective_ber || r.post_fec_errors || !r.port_state.empty();
    if (r.copper) {
      Add("copper", Verdict::kPass, 0,
          fmt::format("passive copper ({}): no optical monitoring, optical checks skipped; judged "
                      "on link state and BER",
                      r.transceiver.empty() ? "no DOM" : r.transceiver));
    } else if (dom_off && !r.raw_ber && !r.effective_ber && !r.post_fec_errors &&
               r.port_state.empty()) {
      Add("no-dom", Verdict::kIndeterminate, 0,
          fmt::format("{}: the module's diagnostics are not supported or disabled, and the "
                      "capture has no link state or BER: the optics cannot be judged",
                      src));
    } else if (dom_off) {
      Add("no-dom", Verdict::kPass, 0,
          fmt::format("{}: the module's diagnostics are not supported or disabled; optical "
                      "checks skipped, judged on link state and BER",
                      src));
    } else if (implausible) {
      Add("implausible-dom", Verdict::kIndeterminate, 0,
          fmt::format("{}: DOM readings implausible (module voltage {:.3f} V; a module runs on "
                      "3.3 V): the diagnostics data is invalid, never a reason to quarantine; "
                      "optical checks skipped",
                      src, *r.voltage_v));
    } else if (no_dom && !link_evidence) {
      Add("no-dom", Verdict::kIndeterminate, 0,
          fmt::format("{}: all DOM readings are zero (monitoring not working) and the capture "
                      "has no link state or BER: the optics cannot be judged",
                      src));
    } else if (no_dom) {
      Add("no-dom", Verdict::kPass, 0,
          fmt::format("{}: all DOM readings are zero (no monitoring); optical checks skipped",
                      src));
    } else if (!any_value && !r.raw_ber && !r.effective_ber && !r.post_fec_errors) {
      Add("no-data", Verdict::kIndeterminate, 0,
          fmt::format("{}: no DOM readings and no counters in this capture (N/A or not "
                      "supported): the optics cannot be judged",
                      src));
    }
    if (admin_down) {
      Add("admin-down", Verdict::kPass, 0,
          "port administratively down: dark optics expected, optical and BER checks skipped");
      laser_off = true;
    } else if (laser_off) {
      Add("laser-off", Verdict::kPass, 0,
          "laser off (tx disabled on every lane): port is administratively down, optical and "
          "BER checks skipped");
    }
    if (r.port_state == "down" && !laser_off) {
      Add("link-down", Verdict::kFail, 0,
          fmt::format("{}: port enabled but the link is down", src));
    }
    // Threshold sets used for decisions: the module's own when they make sense, else the
    // documented defaults (docs/optics.md), and the report says which.
    std::array<Thresholds, kQuantityCount> limits{};
    std::array<bool, kQuantityCount> usable{};
    for (Quantity q : kAllQuantities) {
      const Thresholds& t = r.thr(q);
      const size_t i = static_cast<size_t>(q);
      if (no_dom) continue;  // copper / no DOM: [0..0] thresholds are expected, nothing to judge
      std::string why;
      if (t.Any()) {
        if (t.Count() >= 3 && AllZero(t)) why = "all zero";
        if (why.empty() && t.Count() >= 3 && AllEqual(t)) {
          why = fmt::format("all equal to {}", Fmt(q, *AnyValue(t)));
        }
        // A low/high pair with one value (IOS-XR prints 0.0/0.0 for warnings it does not
        // set) is a pair not set, not a window of zero width.
        Thresholds kept = t;
        if (why.empty() && kept.low_warning && kept.high_warning &&
            *kept.low_warning == *kept.high_warning) {
          Add("thresholds-not-set", Verdict::kPass, 0,
              fmt::format("{} warning thresholds both {}: taken as not set, alarms used",
                          QuantityLabel(q), Fmt(q, *kept.low_warning)));
          kept.low_warning.reset();
          kept.high_warning.reset();
        }
        if (why.empty() && kept.low_alarm && kept.high_alarm &&
            *kept.low_alarm == *kept.high_alarm) {
          Add("thresholds-not-set", Verdict::kPass, 0,
              fmt::format("{} alarm thresholds both {}: taken as not set", QuantityLabel(q),
                          Fmt(q, *kept.low_alarm)));
          kept.low_alarm.reset();
          kept.high_alarm.reset();
        }
        if (why.empty()) why = Contradiction(q, kept);
        if (why.empty()) {
          limits[i] = kept;
          usable[i] = kept.Any();
          continue;
        }
      }
      auto d = DefaultThresholds(q);
      const bool has_value = HasValue(r, q);
      if (!why.empty()) {
        Add("invalid-thresholds", Verdict::kIndeterminate, 0,
            fmt::format("INVALID {} thresholds ({}): module data invalid, never a reason to "
                        "quarantine; {}",
                        QuantityLabel(q), why,
                        d ? fmt::format("readings judged against default thresholds {}",
                                        DescribeThresholds(q, *d))
                          : std::string("no default exists, not judged")));
      } else if (d && has_value) {
        Add("default-thresholds", Verdict::kPass, 0,
            fmt::format("no module {} thresholds in this capture: judged against default "
                        "thresholds {}",
                        QuantityLabel(q), DescribeThresholds(q, *d)));
      }
      if (d) {
        limits[i] = *d;
        usable[i] = true;
      }
    }
    auto use = [&](Quantity q) { return usable[static_cast<size_t>(q)]; };
    auto lim = [&](Quantity q) -> const Thresholds& { return limits[static_cast<size_t>(q)]; };
    // Lanes that carry no light at all: 0 mA bias and no light out or in.
    const double no_light_mw = DbmToMw(p_.no_light_dbm);
    auto dark = [&](const LaneReading& l) {
      const bool any = l.bias_ma || l.tx_power_mw || l.rx_power_mw;
      return any && (!l.bias_ma || *l.bias_ma < p_.dark_bias_ma) &&
             (!l.tx_power_mw || *l.tx_power_mw <= no_light_mw) &&
             (!l.rx_power_mw || *l.rx_power_mw <= no_light_mw);
    };
    std::vector<int> dark_lanes;
    for (const auto& l : r.lanes) {
      if (dark(l)) dark_lanes.push_back(l.lane);
    }
    const bool module_dark =
        !no_dom && !laser_off && !r.lanes.empty() && dark_lanes.size() == r.lanes.size();
    if (module_dark) {
      Add("no-signal", Verdict::kFail, 0,
          fmt::format("no optical signal: laser bias below {:.1f} mA and no light (<= {:.0f} dBm) "
                      "on every lane{}",
                      p_.dark_bias_ma, p_.no_light_dbm,
                      r.port_state.empty() ? " (port state not in the capture; expected only if "
                                             "the port is administratively down)"
                                           : fmt::format(" on a port that is {}", r.port_state)));
    } else if (!no_dom && !laser_off && !dark_lanes.empty()) {
      std::string list;
      for (int n : dark_lanes) list += (list.empty() ? "" : ",") + std::to_string(n);
      Add("dark-lanes", Verdict::kWarn, 0,
          fmt::format("lanes {} dark (bias below {:.1f} mA, no light) while other lanes carry "
                      "light: unused lanes of a narrower mode or breakout, or failed lanes",
                      list, p_.dark_bias_ma));
    }
    auto is_dark = [&](int lane) {
      return std::find(dark_lanes.begin(), dark_lanes.end(), lane) != dark_lanes.end();
    };
    if (!no_dom) {
      if (r.temperature_c && use(Quantity::kTemperature)) {
        CheckValue(Quantity::kTemperature, 0, *r.temperature_c, lim(Quantity::kTemperature));
      }
      if (r.voltage_v && use(Quantity::kVoltage)) {
        CheckValue(Quantity::kVoltage, 0, *r.voltage_v, lim(Quantity::kVoltage));
      }
      if (!laser_off && !module_dark) {
        for (const auto& l : r.lanes) {
          if (is_dark(l.lane)) continue;
          const bool lane_off = l.tx_disabled.value_or(false);
          if (!lane_off && l.bias_ma && use(Quantity::kBias)) {
            CheckValue(Quantity::kBias, l.lane, *l.bias_ma, lim(Quantity::kBias));
          }
          if (!lane_off && l.tx_power_mw && use(Quantity::kTxPower)) {
            CheckValue(Quantity::kTxPower, l.lane, *l.tx_power_mw, lim(Quantity::kTxPower));
          }
          if (l.rx_power_mw && *l.rx_power_mw <= no_light_mw) {
            Add("no-signal", Verdict::kFail, l.lane,
                fmt::format("lane {} no optical signal received ({})", l.lane,
                            Fmt(Quantity::kRxPower, *l.rx_power_mw)));
          }
          if (l.rx_power_mw && use(Quantity::kRxPower)) {
            const Thresholds& t = lim(Quantity::kRxPower);
            CheckValue(Quantity::kRxPower, l.lane, *l.rx_power_mw, t);
            if (t.low_alarm && *l.rx_power_mw > 0) {
              const double m = MwToDbm(*l.rx_power_mw) - MwToDbm(*t.low_alarm);
              if (!out_.rx_margin_db || m < *out_.rx_margin_db) out_.rx_margin_db = m;
            }
          }
          if (l.rx_los.value_or(false)) {
            Add("los", Verdict::kFail, l.lane, fmt::format("lane {} rx loss of signal", l.lane));
          }
          if (!lane_off && l.tx_fault.value_or(false)) {
            Add("tx-fault", Verdict::kFail, l.lane, fmt::format("lane {} tx fault", l.lane));
          }
          if (!lane_off && l.tx_los.value_or(false)) {
            Add("tx-los", Verdict::kWarn, l.lane,
                fmt::format("lane {} tx loss of signal (host side input)", l.lane));
          }
        }
      }
    }
    if (!laser_off && r.raw_ber) {
      const double ber = *r.raw_ber;
      if (ber > p_.ber_quarantine) {
        Add("raw-ber", Verdict::kFail, 0,
            fmt::format("raw (pre-FEC) BER {:.2e} above quarantine limit {:.1e} (RS(544,514) "
                        "design point ~2.4e-4)",
                        ber, p_.ber_quarantine));
      } else if (ber > p_.ber_watch) {
        Add("raw-ber", Verdict::kWarn, 0,
            fmt::format("raw (pre-FEC) BER {:.2e} above watch limit {:.1e}", ber, p_.ber_watch));
      }
    }
    // One lane with far more pre-FEC errors than its peers: a dirty or damaged fibre or
    // connector on that lane, before the link-wide BER shows it.
    if (!laser_off && r.lanes.size() >= 2) {
      for (const auto& l : r.lanes) {
        if (!l.raw_errors || *l.raw_errors < p_.lane_errors_min) continue;
        std::vector<int64_t> others;
        for (const auto& o : r.lanes) {
          if (o.lane != l.lane && o.raw_errors) others.push_back(*o.raw_errors);
        }
        if (others.empty()) continue;
        std::sort(others.begin(), others.end());
        const double median = static_cast<double>(others[others.size() / 2]);
        if (static_cast<double>(*l.raw_errors) >= p_.lane_errors_skew * std::max(median, 1.0)) {
          Add("lane-errors", Verdict::kWarn, l.lane,
              fmt::format("lane {} raw (pre-FEC) errors {} are {:.0f}x the median of the other "
                          "lanes ({:.0f}): check that lane's fibre and connectors",
                          l.lane, *l.raw_errors,
                          static_cast<double>(*l.raw_errors) / std::max(median, 1.0), median));
        }
      }
    }
    if (!laser_off && r.effective_ber && *r.effective_ber > p_.post_fec_ber_watch) {
      Add("post-fec-ber", Verdict::kWarn, 0,
          fmt::format("device-reported post-FEC BER {:.2e} above target {:.0e}", *r.effective_ber,
                      p_.post_fec_ber_watch));
    }
    if (!r.troubleshooting.empty() && r.troubleshooting.rfind("opcode ", 0) == 0) {
      Add("troubleshooting", Verdict::kPass, 0, fmt::format("mlxlink: {}", r.troubleshooting));
    }
  }

  // Post-FEC errors over the latest interval of one format.
  void PostFec(const std::vector<const Reading*>& rs) {
    std::vector<const Reading*> with;
    for (const Reading* r : rs) {
      if (r->post_fec_errors) with.push_back(r);
    }
    if (with.size() < 2) return;
    const Reading& a = *with[with.size() - 2];
    const Reading& b = *with.back();
    const bool reset =
        *b.post_fec_errors < *a.post_fec_errors ||
        (a.counters_age_s && b.counters_age_s && *b.counters_age_s < *a.counters_age_s);
    const std::string span =
        fmt::format("{} .. {}", FormatTimestamp(*a.time_s), FormatTimestamp(*b.time_s));
    if (reset) {
      Add("counter-reset", Verdict::kPass, 0,
          fmt::format("{} post-FEC error counter reset between {} ({} -> {}): new baseline, no "
                      "errors counted for this interval",
                      b.format, span, *a.post_fec_errors, *b.post_fec_errors));
      return;
    }
    const int64_t delta = *b.post_fec_errors - *a.post_fec_errors;
    if (delta <= 0) return;
    const double hours = std::max<double>(1.0, static_cast<double>(*b.time_s - *a.time_s)) / 3600.0;
    const double per_hour = static_cast<double>(delta) / hours;
    const Verdict s = per_hour > p_.post_fec_quarantine_per_hour ? Verdict::kFail : Verdict::kWarn;
    Add("post-fec", s, 0,
        fmt::format("post-FEC (uncorrected) errors +{} in {:.1f} h ({:.1f}/h, {:.0f}/day; "
                    "quarantine above {}/h), {}",
                    delta, hours, per_hour, per_hour * 24, p_.post_fec_quarantine_per_hour, span));
  }

  // Raw BER between the last two readings of one format (zero counts as 1e-15).
  void BerRise(const std::vector<const Reading*>& rs) {
    std::vector<const Reading*> with;
    for (const Reading* r : rs) {
      if (r->raw_ber) with.push_back(r);
    }
    if (with.size() < 2) return;
    const Reading& a = *with[with.size() - 2];
    const Reading& b = *with.back();
    const double before = std::max(*a.raw_ber, 1e-15);
    const double after = std::max(*b.raw_ber, 1e-15);
    if (after < before * p_.ber_rise_factor) return;
    Add("ber-rise", Verdict::kWarn, 0,
        fmt::format("raw (pre-FEC) BER rose {:.0f}x between {} and {} ({:.2e} -> {:.2e})",
                    after / before, FormatTimestamp(*a.time_s), FormatTimestamp(*b.time_s),
                    *a.raw_ber, *b.raw_ber));
  }

  void RxTrend(const std::vector<Reading>& history) {
    // Latest usable rx low alarm.
    std::optional<double> low_alarm;
    for (auto it = history.rbegin(); it != history.rend() && !low_alarm; ++it) {
      const Thresholds& t = it->thr(Quantity::kRxPower);
      if (t.low_alarm && Contradiction(Quantity::kRxPower, t).empty() && !AllZero(t)) {
        low_alarm = t.low_alarm;
      }
    }
    std::map<int, std::vector<std::pair<double, double>>> per_lane;
    std::map<int, double> last;
    for (const Reading& r : history) {
      if (r.copper) continue;
      for (const auto& l : r.lanes) {
        if (!l.rx_power_mw || *l.rx_power_mw <= 0 || l.tx_disabled.value_or(false)) continue;
        per_lane[l.lane].emplace_back(static_cast<double>(*r.time_s), MwToDbm(*l.rx_power_mw));
        last[l.lane] = MwToDbm(*l.rx_power_mw);
      }
    }
    for (auto& [lane, pts] : per_lane) {
      if (static_cast<int>(pts.size()) < p_.trend_min_readings) continue;
      const double span = pts.back().first - pts.front().first;
      if (span < p_.trend_min_span_s) continue;
      auto slope = Slope(pts);
      if (!slope) continue;
      const double per_day = *slope * kSecondsPerDay;
      if (per_day > -p_.trend_min_db_per_day) continue;
      std::string msg =
          fmt::format("lane {} rx power falling {:.2f} dB/day over {} readings ({:.1f} days)", lane,
                      -per_day, pts.size(), span / kSecondsPerDay);
      Verdict s = Verdict::kWarn;
      if (low_alarm) {
        const double to_go = last[lane] - MwToDbm(*low_alarm);
        if (to_go <= 0) {
          msg += fmt::format("; already at or below low alarm {:.2f} dBm", MwToDbm(*low_alarm));
          s = Verdict::kFail;
        } else {
          const double eta = to_go / -per_day;
          msg += fmt::format("; reaches low alarm {:.2f} dBm in ~{:.1f} days", MwToDbm(*low_alarm),
                             eta);
          if (eta <= p_.trend_quarantine_days) s = Verdict::kFail;
        }
      } else {
        msg += "; no rx low alarm threshold to extrapolate to";
      }
      Add("rx-trend", s, lane, msg);
    }
  }

  void BerTrend(const std::vector<Reading>& history) {
    std::vector<std::pair<double, double>> pts;
    for (const Reading& r : history) {
      if (r.raw_ber && *r.raw_ber > 0) {
        pts.emplace_back(static_cast<double>(*r.time_s), std::log10(*r.raw_ber));
      }
    }
    if (static_cast<int>(pts.size()) < p_.trend_min_readings) return;
    const double span = pts.back().first - pts.front().first;
    if (span < p_.trend_min_span_s) return;
    auto slope = Slope(pts);
    if (!slope) return;
    const double per_day = *slope * kSecondsPerDay;
    if (per_day < p_.ber_trend_decades_per_day) return;
    const double now = pts.back().second;
    const double limit = std::log10(p_.ber_quarantine);
    std::string msg = fmt::format(
        "raw BER rising {:.2f} decades/day (x{:.1f} per day) over {} readings ({:.1f} days)",
        per_day, std::pow(10.0, per_day), pts.size(), span / kSecondsPerDay);
    Verdict s = Verdict::kWarn;
    if (now < limit) {
      const double eta = (limit - now) / per_day;
      msg +=
          fmt::format("; reaches quarantine limit {:.1e} in ~{:.1f} days", p_.ber_quarantine, eta);
      if (eta <= p_.trend_quarantine_days) s = Verdict::kFail;
    }
    Add("ber-trend", s, 0, msg);
  }

 private:
  const RuleParams& p_;
  LinkStatus& out_;
};

}  // namespace

LinkStatus EvaluateLink(const std::string& link, const std::vector<Reading>& history,
                        const RuleParams& params) {
  LinkStatus out;
  out.link = link;
  out.readings = static_cast<int64_t>(history.size());
  if (history.empty()) return out;
  out.last_time_s = history.back().time_s;
  Evaluator ev(params, out);
  std::map<std::string, std::vector<const Reading*>> by_format;
  for (const Reading& r : history) by_format[r.format].push_back(&r);
  for (const auto& [format, rs] : by_format) ev.Instant(*rs.back());
  for (const auto& [format, rs] : by_format) ev.PostFec(rs);
  for (const auto& [format, rs] : by_format) ev.BerRise(rs);
  ev.RxTrend(history);
  ev.BerTrend(history);

  out.state = Verdict::kPass;
  for (const auto& r : out.reasons) out.state = Worst(out.state, r.severity);
  // Most severe first (quarantine, watch, invalid-data, info), stable otherwise.
  std::stable_sort(out.reasons.begin(), out.reasons.end(),
                   [](const Reason& a, const Reason& b) { return a.severity > b.severity; });
  return out;
}

Verdict OverallVerdict(const std::vector<LinkStatus>& links) {
  bool quarantine = false, invalid = false, watch = false;
  for (const auto& s : links) {
    quarantine = quarantine || s.state == Verdict::kFail;
    invalid = invalid || s.state == Verdict::kIndeterminate;
    watch = watch || s.state == Verdict::kWarn;
  }
  return quarantine ? Verdict::kFail
         : invalid  ? Verdict::kIndeterminate
         : watch    ? Verdict::kWarn
                    : Verdict::kPass;
}

}  // namespace lossless::audit::optics
