// Junos (`show interfaces diagnostics optics`) and IOS-XR (`show controllers
// optics`) transceiver readers; the SONiC, NX-OS and Arista ones and the
// format detection are in switch_transceiver.cpp.
#include "audit/optics/switch_transceiver.hpp"
#include "audit/optics/switch_transceiver_internal.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::audit::optics {

using internal::IsCopperText;
using internal::kSniffLines;
using internal::MeasuredIn;

namespace {

// "Module temperature high alarm threshold" -> (temperature, high_alarm).
std::optional<std::pair<Quantity, std::optional<double> Thresholds::*>> JunosThreshold(
    const std::string& key) {
  const std::string suffix = " threshold";
  if (key.size() <= suffix.size() || key.substr(key.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  std::string stem = key.substr(0, key.size() - suffix.size());
  std::optional<double> Thresholds::*member = nullptr;
  for (auto [word, m] : {std::pair{" high alarm", &Thresholds::high_alarm},
                         std::pair{" low alarm", &Thresholds::low_alarm},
                         std::pair{" high warning", &Thresholds::high_warning},
                         std::pair{" low warning", &Thresholds::low_warning}}) {
    const std::string w(word);
    if (stem.size() > w.size() && stem.substr(stem.size() - w.size()) == w) {
      member = m;
      stem = stem.substr(0, stem.size() - w.size());
      break;
    }
  }
  if (member == nullptr) return std::nullopt;
  if (stem == "laser bias current") return std::pair{Quantity::kBias, member};
  if (stem == "laser output power") return std::pair{Quantity::kTxPower, member};
  if (stem == "laser rx power" || stem == "laser receiver power") {
    return std::pair{Quantity::kRxPower, member};
  }
  if (stem == "module temperature") return std::pair{Quantity::kTemperature, member};
  if (stem == "module voltage") return std::pair{Quantity::kVoltage, member};
  return std::nullopt;
}

}  // namespace

bool LooksLikeJunosOptics(std::string_view text) {
  size_t n = 0;
  bool iface = false;
  for (std::string_view line : SplitLines(text)) {
    if (++n > kSniffLines) break;
    std::string_view t = Trim(line);
    if (text::StartsWith(t, "Physical interface:")) iface = true;
    if (iface && (text::StartsWith(t, "Module temperature") || text::StartsWith(t, "Laser "))) {
      return true;
    }
  }
  return false;
}

std::vector<Reading> ParseJunosOptics(std::string_view text, const std::string& name,
                                      SkippedLines* skipped) {
  CheckText(text, name);
  std::vector<Reading> out;
  std::vector<bool> los;  // per port: "Rx loss of signal alarm : On" somewhere
  int lane = 0;
  int64_t last_line = 0;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    last_line = line_no;
    if (text::StartsWith(line, "Physical interface:")) {
      Reading r;
      r.link = std::string(Trim(line.substr(19)));
      r.format = "junos-optics";
      out.push_back(std::move(r));
      los.push_back(false);
      lane = 0;
      continue;
    }
    if (out.empty()) {
      Skip(skipped, line_no, line, "before the first 'Physical interface:' line");
      continue;
    }
    Reading& r = out.back();
    if (text::StartsWith(line, "Lane ") && line.find(':') == std::string_view::npos) {
      auto n = ParseInteger(line.substr(5));
      if (n && *n >= 0 && *n < 16) {
        lane = static_cast<int>(*n) + 1;  // Junos numbers lanes from 0
        continue;
      }
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      Skip(skipped, line_no, line, "not a 'key : value' line");
      continue;
    }
    const std::string key = text::ToLower(Trim(line.substr(0, colon)));
    const std::string_view value = Trim(line.substr(colon + 1));
    const Location at{name, line_no, std::string(Trim(line.substr(0, colon)))};
    const int use_lane = lane > 0 ? lane : 1;
    if (auto th = JunosThreshold(key)) {
      const Quantity q = th->first;
      r.thr(q).*(th->second) = IsPower(q)                    ? ParsePowerMw(value, at)
                               : q == Quantity::kBias        ? ParseValueWithUnit(value, "mA", at)
                               : q == Quantity::kTemperature ? ParseValueWithUnit(value, "C", at)
                                                             : ParseValueWithUnit(value, "V", at);
    } else if (key == "laser bias current") {
      if (auto v = ParseValueWithUnit(value, "mA", at)) r.Lane(use_lane).bias_ma = v;
    } else if (key == "laser output power") {
      if (auto v = ParsePowerMw(value, at)) r.Lane(use_lane).tx_power_mw = v;
    } else if (key == "laser receiver power" || key == "receiver signal average optical power" ||
               key == "laser rx power") {
      if (auto v = ParsePowerMw(value, at)) r.Lane(use_lane).rx_power_mw = v;
    } else if (key == "module temperature") {
      r.temperature_c = ParseValueWithUnit(value, "C", at);
    } else if (key == "module voltage") {
      r.voltage_v = ParseValueWithUnit(value, "V", at);
    } else if (key == "rx loss of signal alarm") {
      if (ParseFlagWord(value).value_or(false)) los.back() = true;
    } else {
      Skip(skipped, line_no, line, "alarm flag or identity; flags are recomputed from values");
    }
  }
  if (out.empty()) {
    throw InputError(Location{name, last_line, ""},
                     "no 'Physical interface:' in this Junos diagnostics output");
  }
  for (size_t k = 0; k < out.size(); ++k) {
    if (!los[k]) continue;
    if (out[k].lanes.empty()) out[k].Lane(1);
    for (auto& l : out[k].lanes) l.rx_los = true;
  }
  return out;
}

bool LooksLikeIosxrOptics(std::string_view text) {
  size_t n = 0;
  bool controller = false;
  for (std::string_view line : SplitLines(text)) {
    if (++n > kSniffLines) break;
    std::string_view t = Trim(line);
    if (text::StartsWith(t, "Controller State:")) controller = true;
    if (controller &&
        (text::StartsWith(t, "Optics Type") || text::StartsWith(t, "Transport Admin State") ||
         text::StartsWith(t, "Optics not present"))) {
      return true;
    }
  }
  return false;
}

std::vector<Reading> ParseIosxrOptics(std::string_view text, const std::string& name,
                                      SkippedLines* skipped) {
  CheckText(text, name);
  struct Port {
    Reading r;
    bool present = true;
    bool los = false;
    bool has_state = false;
  };
  std::vector<Port> ports;
  std::string pending_device;
  bool lane_table = false;
  int64_t last_line = 0;
  auto cur = [&]() -> Port& {
    if (ports.empty()) {
      Port p;
      p.r.link = pending_device;
      p.r.format = "iosxr-optics";
      ports.push_back(std::move(p));
    }
    return ports.back();
  };
  auto measured = [&](std::string_view v, std::string_view unit, const Location& at,
                      bool power) -> std::optional<double> {
    if (text::ToLower(Trim(v)) == "unavailable") return std::nullopt;
    auto m = MeasuredIn(v, unit, at, power);
    if (m && power && *m <= DbmToMw(-40.0)) return 0.0;  // -40 dBm: the floor, no light
    return m;
  };
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty()) {
      lane_table = false;
      continue;
    }
    last_line = line_no;
    if (auto device = HeaderDevice(line)) {
      if (!device->empty() && *device != "*") pending_device = *device;
      continue;
    }
    if (text::StartsWith(line, "Port:")) {
      Port p;
      p.r.link = std::string(Trim(line.substr(5)));
      p.r.format = "iosxr-optics";
      ports.push_back(std::move(p));
      continue;
    }
    const std::string lower = text::ToLower(line);
    if (text::StartsWith(line, "Controller State:")) {
      if (!ports.empty() && ports.back().has_state) {
        Port p;
        p.r.format = "iosxr-optics";
        ports.push_back(std::move(p));
      }
      Port& p = cur();
      p.has_state = true;
      const std::string v = text::ToLower(Trim(line.substr(17)));
      p.r.port_state = v == "up"                              ? "up"
                       : v.find("admin") != std::string::npos ? "admin-down"
                                                              : "down";
      continue;
    }
    if (ports.empty() && !text::StartsWith(line, "Transport Admin State")) {
      Skip(skipped, line_no, line, "before the first controller");
      continue;
    }
    Port& p = cur();
    Reading& r = p.r;
    const Location at{name, line_no, ""};
    if (text::StartsWith(line, "Transport Admin State:")) {
      const std::string v = text::ToLower(Trim(line.substr(22)));
      if (v.find("out of service") != std::string::npos ||
          v.find("maintenance") != std::string::npos) {
        r.port_state = "admin-down";
      }
      continue;
    }
    if (lower == "optics not present") {
      p.present = false;
      continue;
    }
    if (text::StartsWith(line, "Optics Type:")) {
      r.module_type = std::string(Trim(line.substr(12)));
      r.transceiver = r.module_type;
      if (IsCopperText(r.module_type)) r.copper = true;
      continue;
    }
    if (text::StartsWith(line, "Detected LOS/LOL/FAULT:")) {
      p.los = lower.find("rx-los") != std::string::npos;
      continue;
    }
    if (text::StartsWith(line, "Lane") && lower.find("laser bias") != std::string::npos) {
      lane_table = true;
      continue;
    }
    auto words = text::SplitWhitespace(line, " \t");
    if (lane_table && !words.empty() && ParseInteger(words[0])) {
      // "0      0.0 mA  -40.00 dBm  -40.00 dBm       N/A"
      const int lane = static_cast<int>(*ParseInteger(words[0])) + 1;  // IOS-XR counts from 0
      std::vector<std::string> cells;
      for (size_t w = 1; w + 1 < words.size(); w += 2) {
        cells.push_back(std::string(words[w]) + std::string(words[w + 1]));
      }
      if (cells.size() < 3 || lane < 1 || lane > 16) {
        throw InputError(at, Expected("lane, bias mA, tx dBm, rx dBm", std::string(line)));
      }
      const Location lat{name, line_no, fmt::format("lane {}", lane - 1)};
      if (auto v = measured(cells[0], "ma", lat, false)) r.Lane(lane).bias_ma = v;
      if (auto v = measured(cells[1], "dbm", lat, true)) r.Lane(lane).tx_power_mw = v;
      if (auto v = measured(cells[2], "dbm", lat, true)) r.Lane(lane).rx_power_mw = v;
      continue;
    }
    // Threshold rows: "Rx Power Threshold(dBm)  3.4  -18.4  0.4  -14.4" (high/low alarm,
    // high/low warning); the (mW) rows repeat the dBm ones rounded and are not read.
    size_t th = lower.find(" threshold(");
    if (th != std::string::npos && words.size() >= 5) {
      std::optional<Quantity> q;
      if (text::StartsWith(lower, "rx power threshold(dbm)")) q = Quantity::kRxPower;
      if (text::StartsWith(lower, "tx power threshold(dbm)")) q = Quantity::kTxPower;
      if (text::StartsWith(lower, "lbc threshold(ma)")) q = Quantity::kBias;
      if (text::StartsWith(lower, "temp. threshold(celsius)")) q = Quantity::kTemperature;
      if (text::StartsWith(lower, "voltage threshold(volt)")) q = Quantity::kVoltage;
      if (!q) {
        Skip(skipped, line_no, line, "threshold row in another unit, not read");
        continue;
      }
      std::vector<std::optional<double>> v;
      for (size_t w = words.size() - 4; w < words.size(); ++w) {
        if (IsNotAvailable(words[w])) {
          v.emplace_back(std::nullopt);
          continue;
        }
        auto num = ParseNumber(words[w]);
        if (!num) throw InputError(at, Expected("four thresholds", std::string(line)));
        v.emplace_back(IsPower(*q) ? DbmToMw(*num) : *num);
      }
      Thresholds& t = r.thr(*q);
      t.high_alarm = v[0];
      t.low_alarm = v[1];
      t.high_warning = v[2];
      t.low_warning = v[3];
      continue;
    }
    size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      const std::string key = text::ToLower(Trim(line.substr(0, eq)));
      const std::string_view value = Trim(line.substr(eq + 1));
      const Location fat{name, line_no, std::string(Trim(line.substr(0, eq)))};
      if (key == "tx power" || key == "actual tx power") {
        if (auto v = measured(value, "dbm", fat, true)) r.Lane(1).tx_power_mw = v;
        continue;
      }
      if (key == "rx power") {
        if (auto v = measured(value, "dbm", fat, true)) r.Lane(1).rx_power_mw = v;
        continue;
      }
      if (key == "laser bias current" && text::ToLower(value).find("ma") != std::string::npos) {
        if (auto v = measured(value, "ma", fat, false)) r.Lane(1).bias_ma = v;
        continue;
      }
      if (key == "temperature") {
        r.temperature_c = measured(value, "c", fat, false);
        continue;
      }
      if (key == "voltage") {
        r.voltage_v = measured(value, "v", fat, false);
        continue;
      }
    }
    Skip(skipped, line_no, line, "status, configuration or identity line; not a reading");
  }
  std::vector<Reading> out;
  for (auto& p : ports) {
    if (!p.present) {
      Skip(skipped, 0, p.r.link, "optics not present in this port");
      continue;
    }
    if (p.los) {
      if (p.r.lanes.empty()) p.r.Lane(1);
      for (auto& l : p.r.lanes) l.rx_los = true;
    }
    out.push_back(std::move(p.r));
  }
  if (out.empty()) {
    throw InputError(Location{name, last_line, ""},
                     "no controller with optics present in this IOS-XR output");
  }
  return out;
}

}  // namespace lossless::audit::optics
