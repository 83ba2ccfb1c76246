#include "audit/optics/ethtool_module.hpp"

#include <cctype>
#include <iterator>

#include <fmt/format.h>

#include "audit/optics/parse_util.hpp"
#include "base/text.hpp"

namespace lossless::audit::optics {
namespace {

struct KeyLane {
  std::string base;  // lower-case key without the lane suffix
  int lane = 0;      // 0 = no lane suffix
};

// "Rcvr signal avg optical power(Channel 2)" -> {"rcvr signal avg optical power", 2}
KeyLane SplitLane(std::string_view key) {
  KeyLane out{text::ToLower(key), 0};
  if (key.empty() || key.back() != ')') return out;
  size_t open = key.rfind('(');
  if (open == std::string_view::npos) return out;
  std::string inner = text::ToLower(Trim(key.substr(open + 1, key.size() - open - 2)));
  for (std::string_view word : {"channel", "chan", "lane", "ch"}) {
    if (inner.rfind(word, 0) == 0) {
      auto n = ParseInteger(std::string_view(inner).substr(word.size()));
      if (n && *n >= 1 && *n <= 16) {
        out.base = text::ToLower(Trim(key.substr(0, open)));
        out.lane = static_cast<int>(*n);
      }
      break;
    }
  }
  return out;
}

bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::optional<Quantity> ThresholdQuantity(std::string_view prefix) {
  if (prefix == "laser bias current" || prefix == "laser tx bias current") return Quantity::kBias;
  if (prefix == "laser output power" || prefix == "laser tx power") return Quantity::kTxPower;
  if (prefix == "laser rx power" || prefix == "receiver power") return Quantity::kRxPower;
  if (prefix == "module temperature") return Quantity::kTemperature;
  if (prefix == "module voltage") return Quantity::kVoltage;
  return std::nullopt;
}

std::optional<double> ParseQuantity(Quantity q, std::string_view value, const Location& at) {
  switch (q) {
    case Quantity::kTemperature:
      return ParseValueWithUnit(value, "C", at);
    case Quantity::kVoltage:
      return ParseValueWithUnit(value, "V", at);
    case Quantity::kBias:
      return ParseValueWithUnit(value, "mA", at);
    case Quantity::kTxPower:
    case Quantity::kRxPower:
      return ParsePowerMw(value, at);
  }
  return std::nullopt;
}

void SetFlags(Reading& r, int lane, std::string_view value, const Location& at,
              std::optional<bool> LaneReading::*field) {
  if (IsNotAvailable(value)) return;
  if (lane > 0) {
    auto f = ParseFlagWord(value);
    if (!f) throw InputError(at, Expected("Yes/No or On/Off", std::string(value)));
    r.Lane(lane).*field = *f;
    return;
  }
  auto items = SplitList(value);
  if (items.size() == 1) {
    auto f = ParseFlagWord(items[0]);
    if (!f) throw InputError(at, Expected("Yes/No, On/Off or a per-lane list", std::string(value)));
    // One word applies to every lane printed so far (lane 1 when none yet).
    if (r.lanes.empty()) r.Lane(1);
    for (auto& l : r.lanes) l.*field = *f;
    return;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    auto f = ParseFlagWord(items[i]);
    if (!f) throw InputError(at, Expected("Yes/No per lane", std::string(value)));
    r.Lane(static_cast<int>(i) + 1).*field = *f;
  }
}

std::string ModuleName(int code, std::string_view text) {
  switch (code) {
    case 0x03:
      return "SFP";
    case 0x0c:
      return "QSFP";
    case 0x0d:
      return "QSFP+";
    case 0x11:
      return "QSFP28";
    case 0x18:
      return "QSFP-DD";
    case 0x19:
      return "OSFP";
    case 0x1e:
      return "QSFP+ (CMIS)";
    default:
      return std::string(text);
  }
}

}  // namespace

bool LooksLikeEthtoolModule(std::string_view text) {
  size_t n = 0;
  for (std::string_view line : SplitLines(text)) {
    if (++n > 400) break;
    std::string_view content = StripPastePrefix(line);
    size_t colon = content.find(':');
    if (colon == std::string_view::npos) continue;
    if (text::ToLower(Trim(content.substr(0, colon))) == "identifier" &&
        text::StartsWith(Trim(content.substr(colon + 1)), "0x")) {
      return true;
    }
  }
  return false;
}

Reading ParseEthtoolModule(std::istream& in, const std::string& name) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseEthtoolModule(text, name);
}

namespace {

// One module's lines, from its Identifier line to the next module's.
class ModuleBlock {
 public:
  ModuleBlock(const std::string& name, int64_t first_line) : name_(name), last_line_(first_line) {}

  Reading& reading() { return r_; }

  void Identifier(std::string_view value, const Location& field_at) {
    if (!text::StartsWith(value, "0x") || value.size() < 4 ||
        !std::isxdigit(static_cast<unsigned char>(value[2])) ||
        !std::isxdigit(static_cast<unsigned char>(value[3]))) {
      throw InputError(field_at, Expected("'0xNN (module type)'", std::string(value)));
    }
    const int code = std::stoi(std::string(value.substr(2, 2)), nullptr, 16);
    std::string_view text_part;
    size_t open = value.find('(');
    size_t close = value.rfind(')');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
      text_part = value.substr(open + 1, close - open - 1);
    }
    r_.module_type = ModuleName(code, text_part);
    if (code == 0x02 || code == 0x03) {
      r_.format = "ethtool-sff8472";
    } else if (code == 0x0c || code == 0x0d || code == 0x11) {
      r_.format = "ethtool-sff8636";
    } else {
      r_.format = "ethtool-cmis";
    }
  }

  // Returns false when the key is not one the rules use (identity, codes, lengths, ...).
  bool Field(const KeyLane& kl, std::string_view value, const Location& field_at, int64_t line_no) {
    last_line_ = line_no;
    const std::string& k = kl.base;
    const int lane = kl.lane;
    Reading& r = r_;
    if (k == "transceiver type" || k == "transmitter technology" || k == "media type" ||
        k == "module media type" || k == "cable type" || k == "media interface technology") {
      if (!r.transceiver.empty()) r.transceiver += "; ";
      r.transceiver += std::string(value);
      const std::string v = text::ToLower(value);
      if (v.find("copper") != std::string::npos || v.find("base-cr") != std::string::npos ||
          v.find("dac") != std::string::npos) {
        r.copper = true;
      }
      return true;
    }
    if (k == "optical diagnostics support") {
      r.dom_supported = ParseFlagWord(value);
      return true;
    }
    if (k == "alarm/warning flags implemented") {
      flags_implemented_ = ParseFlagWord(value).value_or(false);
      return true;
    }
    if (EndsWith(k, " threshold")) {
      std::string_view stem = std::string_view(k).substr(0, k.size() - 10);
      for (auto [suffix, member] :
           {std::pair{std::string_view(" high alarm"), &Thresholds::high_alarm},
            std::pair{std::string_view(" low alarm"), &Thresholds::low_alarm},
            std::pair{std::string_view(" high warning"), &Thresholds::high_warning},
            std::pair{std::string_view(" low warning"), &Thresholds::low_warning}}) {
        if (EndsWith(stem, suffix)) {
          auto q = ThresholdQuantity(stem.substr(0, stem.size() - suffix.size()));
          if (q) {
            r.thr(*q).*member = ParseQuantity(*q, value, field_at);
            return true;
          }
          return false;
        }
      }
      return false;
    }
    // Alarm/warning flag lines ("... high alarm : Off"): recomputed by the rules.
    if (EndsWith(k, " alarm") || EndsWith(k, " warning")) return true;

    if (k == "module temperature") {
      r.temperature_c = ParseQuantity(Quantity::kTemperature, value, field_at);
    } else if (k == "module voltage") {
      r.voltage_v = ParseQuantity(Quantity::kVoltage, value, field_at);
    } else if (k == "laser bias current" || k == "laser tx bias current") {
      auto v = ParseQuantity(Quantity::kBias, value, field_at);
      if (v) r.Lane(lane > 0 ? lane : 1).bias_ma = v;
    } else if (k == "laser output power" || k == "transmit avg optical power" || k == "tx power") {
      auto v = ParsePowerMw(value, field_at);
      if (v) r.Lane(lane > 0 ? lane : 1).tx_power_mw = v;
    } else if (k == "receiver signal average optical power" ||
               k == "rcvr signal avg optical power" || k == "receiver signal oma" ||
               k == "rcvr signal oma" || k == "rx power") {
      auto v = ParsePowerMw(value, field_at);
      if (v) r.Lane(lane > 0 ? lane : 1).rx_power_mw = v;
    } else if (k == "rx loss of signal" || k == "rx los") {
      SetFlags(r, lane, value, field_at, &LaneReading::rx_los);
    } else if (k == "tx loss of signal" || k == "tx los") {
      SetFlags(r, lane, value, field_at, &LaneReading::tx_los);
    } else if (k == "tx fault" || k == "tx_fault") {
      SetFlags(r, lane, value, field_at, &LaneReading::tx_fault);
    } else if (k == "tx disable" || k == "tx disabled" || k == "tx_disable" ||
               k == "tx output disabled") {
      SetFlags(r, lane, value, field_at, &LaneReading::tx_disabled);
    } else {
      return false;
    }
    return true;
  }

  // Checks that the module's output is complete; throws InputError otherwise.
  Reading Finish() {
    Reading& r = r_;
    const Location end_at{name_, last_line_, ""};
    for (Quantity q : kAllQuantities) {
      const int n = r.thr(q).Count();
      if (n > 0 && n < 4) {
        throw InputError(end_at, fmt::format("truncated output: {} thresholds incomplete ({} of 4)",
                                             QuantityLabel(q), n));
      }
    }
    for (size_t i = 0; i < r.lanes.size(); ++i) {
      if (r.lanes[i].lane != static_cast<int>(i) + 1) {
        throw InputError(end_at, fmt::format("truncated output: lane {} missing", i + 1));
      }
    }
    const size_t n_lanes = r.lanes.size();
    auto count = [&](std::optional<double> LaneReading::*f) {
      size_t c = 0;
      for (const auto& l : r.lanes) c += (l.*f).has_value() ? 1 : 0;
      return c;
    };
    for (auto [label, field] : {std::pair{"tx power", &LaneReading::tx_power_mw},
                                std::pair{"rx power", &LaneReading::rx_power_mw},
                                std::pair{"bias current", &LaneReading::bias_ma}}) {
      const size_t c = count(field);
      if (c > 0 && c < n_lanes) {
        throw InputError(end_at,
                         fmt::format("truncated output: {} for {} of {} lanes", label, c, n_lanes));
      }
    }
    bool any_threshold = false;
    for (Quantity q : kAllQuantities) any_threshold = any_threshold || r.thr(q).Any();
    if (flags_implemented_ && !any_threshold && r.temperature_c && !r.copper) {
      throw InputError(
          end_at, "truncated output: alarm/warning flags implemented but no thresholds printed");
    }
    return r;
  }

 private:
  const std::string& name_;
  int64_t last_line_;
  Reading r_;
  bool flags_implemented_ = false;
};

}  // namespace

std::vector<Reading> ParseEthtoolModules(std::string_view text, const std::string& name,
                                         SkippedLines* skipped) {
  CheckText(text, name);
  std::vector<Reading> out;
  std::optional<ModuleBlock> block;
  // What the lines before a module say about it: "# link:", "# time:", a prompt or a header.
  Reading pending;
  std::string pending_device;
  std::optional<int64_t> file_time;  // a "# time:" line applies to every later module
  bool block_has_content = false;
  int64_t last_line = 0;
  auto finish = [&]() {
    if (!block) return;
    out.push_back(block->Finish());
    block.reset();
  };
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    last_line = line_no;
    const Location at{name, line_no, ""};
    Reading directive;
    if (ParseDirective(line, at, directive)) {
      if (directive.time_s) file_time = directive.time_s;
      // A directive after a module's content belongs to the next module.
      Reading& target = block && !block_has_content ? block->reading() : pending;
      if (!directive.link.empty()) target.link = directive.link;
      if (directive.time_s) target.time_s = directive.time_s;
      continue;
    }
    if (auto device = HeaderDevice(line)) {
      if (block && !block_has_content) {
        if (!device->empty() && block->reading().link.empty()) block->reading().link = *device;
      } else {
        pending_device = *device;
      }
      continue;
    }
    std::string_view content = StripPastePrefix(line);
    size_t colon = content.find(':');
    std::string_view key = colon == std::string_view::npos ? "" : Trim(content.substr(0, colon));
    if (key.empty()) {
      Skip(skipped, line_no, line, "not a 'key : value' line of ethtool -m output");
      continue;
    }
    std::string_view value = Trim(content.substr(colon + 1));
    const Location field_at{name, line_no, std::string(key)};
    KeyLane kl = SplitLane(key);
    if (kl.base == "identifier" && text::StartsWith(value, "0x")) {
      finish();
      block.emplace(name, line_no);
      Reading& r = block->reading();
      r.link = !pending.link.empty() ? pending.link : pending_device;
      r.time_s = pending.time_s ? pending.time_s : file_time;
      pending = Reading();
      pending_device.clear();
      block->Identifier(value, field_at);
      block_has_content = false;
      continue;
    }
    if (!block) {
      Skip(skipped, line_no, line, "before the first module's 'Identifier' line");
      continue;
    }
    block_has_content = true;
    if (!block->Field(kl, value, field_at, line_no)) {
      Skip(skipped, line_no, line, "identity or vendor data, not used for health");
    }
  }
  if (!block && out.empty()) {
    throw InputError(Location{name, last_line, ""},
                     "not ethtool -m output: no 'Identifier : 0x..' line");
  }
  // A trailing "# link:"/"# time:" of a single-module file names that module.
  if (block && out.empty()) {
    if (block->reading().link.empty()) {
      block->reading().link = !pending.link.empty() ? pending.link : pending_device;
    }
    if (!block->reading().time_s && pending.time_s) block->reading().time_s = pending.time_s;
  }
  finish();
  return out;
}

Reading ParseEthtoolModule(std::string_view text, const std::string& name) {
  auto readings = ParseEthtoolModules(text, name, nullptr);
  if (readings.size() != 1) {
    throw InputError(Location{name, 0, ""},
                     fmt::format("{} modules in one input; expected one", readings.size()));
  }
  return std::move(readings.front());
}

}  // namespace lossless::audit::optics
