#include "audit/optics/switch_transceiver.hpp"
#include "audit/optics/switch_transceiver_internal.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::audit::optics {
namespace {

using internal::kSniffLines;

bool IsCopperText(std::string_view text) {
  const std::string v = text::ToLower(text);
  if (v.find("copper") != std::string::npos || v.find("twinax") != std::string::npos ||
      v.find("base-cr") != std::string::npos || v.find("dac") != std::string::npos ||
      v.find("base-t") != std::string::npos) {
    return true;
  }
  // Cisco/Arista part names: QSFP-100G-CU3M, SFP-H10GB-CU1M, 100GBASE-CR4.
  for (std::string_view tag : {"-cu", "-cr"}) {
    size_t at = v.find(tag);
    while (at != std::string::npos) {
      const size_t next = at + tag.size();
      if (next >= v.size() || std::isdigit(static_cast<unsigned char>(v[next])) || v[next] == ' ' ||
          v[next] == '-') {
        return true;
      }
      at = v.find(tag, next);
    }
  }
  return false;
}

// "0.3802dBm" -> {0.3802, "dbm"}; "-inf dBm" -> {-inf}; nullopt number for N/A.
struct Measured {
  std::optional<double> value;
  bool minus_inf = false;
  std::string unit;  // lower case
};

std::optional<Measured> SplitMeasured(std::string_view text) {
  text = Trim(text);
  Measured m;
  if (IsNotAvailable(text)) return m;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  if (text.substr(i, 3) == "inf") {
    m.minus_inf = text[0] == '-';
    m.unit = text::ToLower(Trim(text.substr(i + 3)));
    return m;
  }
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                             text[i] == 'e' || text[i] == 'E' ||
                             ((text[i] == '-' || text[i] == '+') && i > 0 &&
                              (text[i - 1] == 'e' || text[i - 1] == 'E')))) {
    ++i;
  }
  // "3.2824Volts": a trailing 'e' belongs to no unit here, but guard "1e" anyway.
  m.value = ParseNumber(text.substr(0, i));
  if (!m.value) return std::nullopt;
  m.unit = text::ToLower(Trim(text.substr(i)));
  return m;
}

// A value in `unit` ("c", "v", "ma", "dbm"); power is returned in mW.
std::optional<double> MeasuredIn(std::string_view text, std::string_view unit, const Location& at,
                                 bool power) {
  auto m = SplitMeasured(text);
  auto unit_ok = [&](const std::string& u) {
    if (u.empty() || u == unit) return true;
    if (unit == "c") return u == "degrees c" || u == "celsius";
    if (unit == "v") return u == "volts" || u == "volt";
    return false;
  };
  if (!m || !unit_ok(m->unit)) {
    throw InputError(at, Expected(fmt::format("a number in {}", unit), std::string(text)));
  }
  if (m->minus_inf) return power ? std::optional<double>(0.0) : std::nullopt;
  if (!m->value) return std::nullopt;
  return power ? DbmToMw(*m->value) : *m->value;
}

bool IsFlagToken(std::string_view w) {
  return w == "++" || w == "+" || w == "-" || w == "--";
}

// ---------------------------------------------------------------- SONiC

struct SonicPort {
  Reading r;
  int64_t line = 0;
};

// "RX3Power" -> {"rx", 3, "power"}
struct LaneKey {
  std::string dir;
  int lane = 0;
  std::string what;
};

std::optional<LaneKey> SonicLaneKey(std::string_view key) {
  const std::string k = text::ToLower(key);
  if (k.size() < 4 || (k.rfind("rx", 0) != 0 && k.rfind("tx", 0) != 0)) return std::nullopt;
  size_t i = 2;
  size_t start = i;
  while (i < k.size() && std::isdigit(static_cast<unsigned char>(k[i]))) ++i;
  if (i == start || i - start > 2) return std::nullopt;
  LaneKey out{k.substr(0, 2), std::stoi(k.substr(start, i - start)), k.substr(i)};
  if (out.lane < 1 || out.lane > 16) return std::nullopt;
  return out;
}

void SonicThreshold(Reading& r, const std::string& key, std::string_view value,
                    const Location& at) {
  struct Stem {
    const char* prefix;
    Quantity q;
    const char* unit;
  };
  static const Stem kStems[] = {{"rxpower", Quantity::kRxPower, "dbm"},
                                {"txpower", Quantity::kTxPower, "dbm"},
                                {"txbias", Quantity::kBias, "ma"},
                                {"temp", Quantity::kTemperature, "c"},
                                {"vcc", Quantity::kVoltage, "v"}};
  for (const Stem& s : kStems) {
    if (key.rfind(s.prefix, 0) != 0) continue;
    const std::string rest = key.substr(std::string_view(s.prefix).size());
    std::optional<double> Thresholds::*member = nullptr;
    if (rest == "highalarm") member = &Thresholds::high_alarm;
    if (rest == "lowalarm") member = &Thresholds::low_alarm;
    if (rest == "highwarning") member = &Thresholds::high_warning;
    if (rest == "lowwarning") member = &Thresholds::low_warning;
    if (member == nullptr) return;
    r.thr(s.q).*member = MeasuredIn(value, s.unit, at, IsPower(s.q));
    return;
  }
}

// ---------------------------------------------------------------- NX-OS

bool IsPortLine(std::string_view raw) {
  if (raw.empty() || raw[0] == ' ' || raw[0] == '\t') return false;
  std::string_view t = Trim(raw);
  if (t.find(' ') != std::string_view::npos || t.find('/') == std::string_view::npos) return false;
  return std::isalpha(static_cast<unsigned char>(t[0])) && t.find(':') == std::string_view::npos;
}

}  // namespace

bool LooksLikeSonicEeprom(std::string_view text) {
  size_t n = 0;
  for (std::string_view line : SplitLines(text)) {
    if (++n > kSniffLines) break;
    if (line.find(": SFP EEPROM detected") != std::string_view::npos ||
        line.find(": SFP EEPROM Not detected") != std::string_view::npos ||
        Trim(line) == "ChannelMonitorValues:") {
      return true;
    }
  }
  return false;
}

std::vector<Reading> ParseSonicEeprom(std::string_view text, const std::string& name,
                                      SkippedLines* skipped) {
  CheckText(text, name);
  std::vector<SonicPort> ports;
  auto lines = SplitLines(text);
  int64_t last_line = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    last_line = line_no;
    if (HeaderDevice(line)) {
      Skip(skipped, line_no, line, "prompt or header line");
      continue;
    }
    size_t eeprom = line.find(": SFP EEPROM ");
    if (eeprom != std::string_view::npos && lines[i].front() != ' ' && lines[i].front() != '\t') {
      std::string port(Trim(line.substr(0, eeprom)));
      std::string_view status = Trim(line.substr(eeprom + 13));
      if (text::ToLower(status) == "detected") {
        SonicPort p;
        p.r.link = port;
        p.r.format = "sonic-eeprom";
        p.line = line_no;
        ports.push_back(std::move(p));
      } else {
        Skip(skipped, line_no, line, "no module readable in this port");
      }
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      Skip(skipped, line_no, line, "continuation of a multi-line value or prose");
      continue;
    }
    if (ports.empty()) {
      Skip(skipped, line_no, line, "before the first 'PORT: SFP EEPROM detected' line");
      continue;
    }
    Reading& r = ports.back().r;
    const std::string_view key_raw = Trim(line.substr(0, colon));
    const std::string key = text::ToLower(key_raw);
    const std::string_view value = Trim(line.substr(colon + 1));
    const Location at{name, line_no, std::string(key_raw)};
    std::string compact;
    for (char c : key) {
      if (c != ' ') compact += c;
    }
    if (value.empty()) continue;  // a group title: ChannelMonitorValues:, ...
    if (auto lk = SonicLaneKey(compact)) {
      if (lk->what == "power") {
        auto v = MeasuredIn(value, "dbm", at, true);
        if (v) (lk->dir == "rx" ? r.Lane(lk->lane).rx_power_mw : r.Lane(lk->lane).tx_power_mw) = v;
        continue;
      }
      if (lk->what == "bias" && lk->dir == "tx") {
        auto v = MeasuredIn(value, "ma", at, false);
        if (v) r.Lane(lk->lane).bias_ma = v;
        continue;
      }
    }
    if (compact == "temperature") {
      r.temperature_c = MeasuredIn(value, "c", at, false);
    } else if (compact == "vcc") {
      r.voltage_v = MeasuredIn(value, "v", at, false);
    } else if (compact == "identifier") {
      r.module_type = std::string(value);
    } else if (key == "media interface technology" || key == "specification compliance" ||
               key.find("compliance code") != std::string::npos ||
               key.find("ethernet compliance") != std::string::npos) {
      if (!r.transceiver.empty()) r.transceiver += "; ";
      r.transceiver += std::string(value);
      if (IsCopperText(value)) r.copper = true;
    } else if (compact.find("alarm") != std::string::npos ||
               compact.find("warning") != std::string::npos) {
      if (compact.rfind("els", 0) == 0) {
        Skip(skipped, line_no, line, "external laser source value, not a lane reading");
        continue;
      }
      SonicThreshold(r, compact, value, at);
    } else {
      Skip(skipped, line_no, line, "identity or vendor data, not used for health");
    }
  }
  if (ports.empty()) {
    throw InputError(Location{name, last_line, ""},
                     "no port with 'SFP EEPROM detected' in this SONiC transceiver output");
  }
  std::vector<Reading> out;
  out.reserve(ports.size());
  for (auto& p : ports) out.push_back(std::move(p.r));
  return out;
}

bool LooksLikeNxosTransceiver(std::string_view text) {
  size_t n = 0;
  bool port = false;
  for (std::string_view line : SplitLines(text)) {
    if (++n > kSniffLines) break;
    if (IsPortLine(line)) port = true;
    std::string_view t = Trim(line);
    if (port && (t == "transceiver is present" || t == "transceiver is not present")) return true;
  }
  return false;
}

std::vector<Reading> ParseNxosTransceiver(std::string_view text, const std::string& name,
                                          SkippedLines* skipped) {
  CheckText(text, name);
  std::vector<Reading> out;
  std::optional<Reading> cur;
  int lane = 0;           // current lane (1-based), 0 = module level / single lane
  int network_lanes = 0;  // lanes seen so far in this port
  bool common_lane = false;
  int64_t last_line = 0;
  auto finish = [&]() {
    if (cur) out.push_back(std::move(*cur));
    cur.reset();
  };
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    last_line = line_no;
    if (IsPortLine(lines[i])) {
      finish();
      cur.emplace();
      cur->link = std::string(line);
      cur->format = "nxos-transceiver";
      lane = 0;
      network_lanes = 0;
      common_lane = false;
      continue;
    }
    if (HeaderDevice(line)) {
      Skip(skipped, line_no, line, "prompt or header line");
      continue;
    }
    if (!cur) {
      Skip(skipped, line_no, line, "before the first port line (e.g. 'Ethernet1/1')");
      continue;
    }
    Reading& r = *cur;
    const std::string lower = text::ToLower(line);
    if (lower == "transceiver is not present" || lower == "transceiver is not applicable") {
      Skip(skipped, line_no, line, fmt::format("{}: no module in the port", r.link));
      cur.reset();
      continue;
    }
    if (lower.rfind("type is", 0) == 0) {
      r.transceiver = std::string(Trim(line.substr(7)));
      r.module_type = r.transceiver;
      if (IsCopperText(r.transceiver)) r.copper = true;
      continue;
    }
    if (lower.find("dom is not supported") != std::string::npos ||
        lower.find("dom not supported") != std::string::npos ||
        lower.find("dom is disabled") != std::string::npos) {
      r.dom_supported = false;
      continue;
    }
    if (lower.rfind("lane number", 0) == 0) {
      common_lane = lower.find("common") != std::string::npos;
      if (!common_lane) lane = ++network_lanes;
      continue;
    }
    auto words = text::SplitWhitespace(line, " \t");
    // Row label: the words before the first number or N/A.
    size_t first = 0;
    while (first < words.size() && !ParseNumber(words[first]) && !IsNotAvailable(words[first])) {
      ++first;
    }
    std::string label;
    for (size_t w = 0; w < first; ++w) label += (w ? " " : "") + text::ToLower(words[w]);
    std::optional<Quantity> q;
    if (label == "temperature") q = Quantity::kTemperature;
    if (label == "voltage") q = Quantity::kVoltage;
    if (label == "current") q = Quantity::kBias;
    if (label == "tx power") q = Quantity::kTxPower;
    if (label == "rx power") q = Quantity::kRxPower;
    if (!q || first == words.size()) {
      Skip(skipped, line_no, line, "identity, table heading or note; not a diagnostics row");
      continue;
    }
    const Location at{name, line_no, label};
    const bool power = IsPower(*q);
    // Value tokens: number [unit] or N/A, each optionally followed by a flag.
    std::vector<std::optional<double>> values;
    for (size_t w = first; w < words.size(); ++w) {
      if (IsFlagToken(words[w])) continue;
      if (IsNotAvailable(words[w])) {
        values.emplace_back(std::nullopt);
        continue;
      }
      auto num = ParseNumber(words[w]);
      if (!num) throw InputError(at, Expected("a number or N/A", std::string(words[w])));
      if (power && *num <= -40.0) {
        values.emplace_back(0.0);  // NX-OS prints its floor for no light
      } else {
        values.emplace_back(power ? DbmToMw(*num) : *num);
      }
      if (w + 1 < words.size() && !ParseNumber(words[w + 1]) && !IsFlagToken(words[w + 1]) &&
          !IsNotAvailable(words[w + 1])) {
        ++w;  // unit
      }
    }
    if (values.size() != 5) {
      throw InputError(at, Expected("a value and four thresholds (high/low alarm, high/low "
                                    "warning)",
                                    std::string(line)));
    }
    Thresholds& t = r.thr(*q);
    t.high_alarm = values[1];
    t.low_alarm = values[2];
    t.high_warning = values[3];
    t.low_warning = values[4];
    const int use_lane = lane > 0 && !common_lane ? lane : 1;
    switch (*q) {
      case Quantity::kTemperature:
        r.temperature_c = values[0];
        break;
      case Quantity::kVoltage:
        r.voltage_v = values[0];
        break;
      case Quantity::kBias:
        if (values[0]) r.Lane(use_lane).bias_ma = values[0];
        break;
      case Quantity::kTxPower:
        if (values[0]) r.Lane(use_lane).tx_power_mw = values[0];
        break;
      case Quantity::kRxPower:
        if (values[0]) r.Lane(use_lane).rx_power_mw = values[0];
        break;
    }
  }
  finish();
  if (out.empty()) {
    throw InputError(Location{name, last_line, ""},
                     "no port with a transceiver present in this NX-OS output");
  }
  return out;
}

bool LooksLikeAristaTransceiver(std::string_view text) {
  size_t n = 0;
  for (std::string_view line : SplitLines(text)) {
    if (++n > kSniffLines) break;
    const std::string l = text::ToLower(line);
    if (l.rfind("port", 0) == 0 &&
        (l.find("(celsius)") != std::string::npos || l.find("(dbm)") != std::string::npos ||
         l.find("(ma)") != std::string::npos || l.find("(volts)") != std::string::npos)) {
      return true;
    }
  }
  return false;
}

std::vector<Reading> ParseAristaTransceiver(std::string_view text, const std::string& name,
                                            SkippedLines* skipped) {
  CheckText(text, name);
  std::map<std::string, Reading> ports;
  std::vector<std::string> order;
  auto port = [&](const std::string& p) -> Reading& {
    auto it = ports.find(p);
    if (it == ports.end()) {
      order.push_back(p);
      Reading r;
      r.link = p;
      r.format = "arista-transceiver";
      it = ports.emplace(p, std::move(r)).first;
    }
    return it->second;
  };
  // Detail tables: the quantity of the current table and its threshold columns in order.
  // (a plain value and a flag: GCC 12 without LTO misreads an optional enum as uninitialised)
  Quantity table_q = Quantity::kTemperature;
  bool in_table = false;
  std::vector<std::optional<double> Thresholds::*> columns;
  bool values_table = false;
  int64_t last_line = 0;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    last_line = line_no;
    const std::string l = text::ToLower(line);
    if (l.find("high alarm") != std::string::npos) {
      // Threshold column order as printed.
      std::vector<std::pair<size_t, std::optional<double> Thresholds::*>> found;
      for (auto [word, member] : {std::pair{"high alarm", &Thresholds::high_alarm},
                                  std::pair{"high warn", &Thresholds::high_warning},
                                  std::pair{"low alarm", &Thresholds::low_alarm},
                                  std::pair{"low warn", &Thresholds::low_warning}}) {
        size_t at = l.find(word);
        if (at != std::string::npos) found.emplace_back(at, member);
      }
      std::sort(found.begin(), found.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      columns.clear();
      for (auto& f : found) columns.push_back(f.second);
      values_table = false;
      in_table = false;
      continue;
    }
    if (l.find("threshold") != std::string::npos && !columns.empty()) {
      // The last quantity the title names wins (as a sequence of ifs would).
      for (auto [word, q] :
           {std::pair{"temperature", Quantity::kTemperature},
            std::pair{"voltage", Quantity::kVoltage}, std::pair{"current", Quantity::kBias},
            std::pair{"tx power", Quantity::kTxPower}, std::pair{"rx power", Quantity::kRxPower}}) {
        if (l.find(word) != std::string::npos) {
          table_q = q;
          in_table = true;
        }
      }
      continue;
    }
    if (l.find("last update") != std::string::npos) {
      values_table = true;
      columns.clear();
      in_table = false;
      continue;
    }
    auto words = text::SplitWhitespace(line, " \t");
    const bool row = words.size() >= 2 && std::isalpha(static_cast<unsigned char>(words[0][0])) &&
                     words[0].find('/') != std::string_view::npos &&
                     (ParseNumber(words[1]) || IsNotAvailable(words[1]));
    if (!row) {
      Skip(skipped, line_no, line, "legend or table heading");
      continue;
    }
    const std::string p(words[0]);
    const Location at{name, line_no, p};
    std::vector<std::optional<double>> values;
    for (size_t w = 1; w < words.size(); ++w) {
      if (IsFlagToken(words[w])) continue;
      if (IsNotAvailable(words[w])) {
        values.emplace_back(std::nullopt);
        continue;
      }
      auto num = ParseNumber(words[w]);
      if (!num) break;  // "0:00:06 ago" and the like end the numbers
      values.push_back(num);
    }
    if (values_table) {
      if (values.size() < 5) {
        throw InputError(
            at, Expected("temperature, voltage, bias, tx and rx power", std::string(line)));
      }
      Reading& r = port(p);
      r.temperature_c = values[0];
      r.voltage_v = values[1];
      if (values[2]) r.Lane(1).bias_ma = values[2];
      if (values[3]) r.Lane(1).tx_power_mw = *values[3] <= -40.0 ? 0.0 : DbmToMw(*values[3]);
      if (values[4]) r.Lane(1).rx_power_mw = *values[4] <= -40.0 ? 0.0 : DbmToMw(*values[4]);
      continue;
    }
    if (!in_table || values.size() != columns.size() + 1) {
      Skip(skipped, line_no, line, "a row outside a recognised table");
      continue;
    }
    Reading& r = port(p);
    const Quantity q = table_q;
    const bool power = IsPower(q);
    auto conv = [&](std::optional<double> v) -> std::optional<double> {
      if (!v || !power) return v;
      return *v <= -40.0 ? 0.0 : DbmToMw(*v);
    };
    Thresholds& t = r.thr(q);
    for (size_t c = 0; c < columns.size(); ++c) t.*columns[c] = conv(values[c + 1]);
    switch (q) {
      case Quantity::kTemperature:
        r.temperature_c = values[0];
        break;
      case Quantity::kVoltage:
        r.voltage_v = values[0];
        break;
      case Quantity::kBias:
        if (values[0]) r.Lane(1).bias_ma = values[0];
        break;
      case Quantity::kTxPower:
        if (values[0]) r.Lane(1).tx_power_mw = conv(values[0]);
        break;
      case Quantity::kRxPower:
        if (values[0]) r.Lane(1).rx_power_mw = conv(values[0]);
        break;
    }
  }
  if (order.empty()) {
    throw InputError(Location{name, last_line, ""}, "no interface rows in this Arista output");
  }
  std::vector<Reading> out;
  out.reserve(order.size());
  for (const auto& p : order) out.push_back(std::move(ports[p]));
  return out;
}

namespace internal {
// Shared with switch_transceiver_junos_iosxr.cpp (switch_transceiver_internal.hpp).
bool IsCopperText(std::string_view text) {
  return optics::IsCopperText(text);
}
std::optional<double> MeasuredIn(std::string_view text, std::string_view unit, const Location& at,
                                 bool power) {
  return optics::MeasuredIn(text, unit, at, power);
}
}  // namespace internal

}  // namespace lossless::audit::optics
