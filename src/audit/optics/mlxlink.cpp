#include "audit/optics/mlxlink.hpp"

#include <iterator>

#include <fmt/format.h>

#include "audit/optics/parse_util.hpp"
#include "base/text.hpp"

namespace lossless::audit::optics {
namespace {

enum class Section {
  kNone,
  kOperational,
  kSupported,
  kTroubleshooting,
  kTool,
  kModule,
  kCounters,
  kOther
};

std::optional<Section> SectionTitle(std::string_view line) {
  const std::string l = text::ToLower(Trim(line));
  if (l == "operational info") return Section::kOperational;
  if (l == "supported info") return Section::kSupported;
  if (l == "troubleshooting info") return Section::kTroubleshooting;
  if (l == "tool information") return Section::kTool;
  if (l == "module info") return Section::kModule;
  if (l == "physical counters and ber info") return Section::kCounters;
  return std::nullopt;
}

bool IsRule(std::string_view line) {
  line = Trim(line);
  if (line.size() < 3) return false;
  for (char c : line) {
    if (c != '-' && c != '=') return false;
  }
  return true;
}

// "48 [-5..75]" -> value "48", range {-5, 75}
struct ValueRange {
  std::string_view value;
  std::optional<double> low;
  std::optional<double> high;
};

ValueRange SplitRange(std::string_view text, const Location& at) {
  const std::string_view t = Trim(text);
  ValueRange out{t, std::nullopt, std::nullopt};
  if (t.empty() || t.back() != ']') return out;
  size_t open = t.rfind('[');
  if (open == std::string_view::npos) return out;
  std::string_view inner = t.substr(open + 1, t.size() - open - 2);
  out.value = Trim(t.substr(0, open));
  size_t dots = inner.find("..");
  if (dots == std::string_view::npos) {
    throw InputError(at, Expected("a range '[low..high]'", std::string(text)));
  }
  if (!IsNotAvailable(inner.substr(0, dots))) {
    out.low = ParseNumber(inner.substr(0, dots));
    if (!out.low) throw InputError(at, Expected("a range '[low..high]'", std::string(text)));
  }
  if (!IsNotAvailable(inner.substr(dots + 2))) {
    out.high = ParseNumber(inner.substr(dots + 2));
    if (!out.high) throw InputError(at, Expected("a range '[low..high]'", std::string(text)));
  }
  return out;
}

double Number(std::string_view text, const Location& at, std::string_view what) {
  auto v = ParseNumber(text);
  if (!v) throw InputError(at, Expected(std::string(what), std::string(text)));
  return *v;
}

int64_t Counter(std::string_view text, const Location& at) {
  auto v = ParseInteger(text);
  if (!v || *v < 0)
    throw InputError(at, Expected("a non-negative integer counter", std::string(text)));
  return *v;
}

// Per-lane numbers "6.750,6.750,6.750,6.750"; N/A entries are skipped.
template <typename Set>
void ForEachLane(std::string_view list, const Location& at, std::string_view what, Set set) {
  auto items = SplitList(list);
  if (items.empty()) throw InputError(at, Expected(std::string(what), std::string(list)));
  for (size_t i = 0; i < items.size(); ++i) {
    if (IsNotAvailable(items[i])) continue;
    set(static_cast<int>(i) + 1, Number(items[i], at, what));
  }
}

// mlxlink prints a BER of zero as "15E-255" (its smallest value): read it as 0.
double Ber(std::string_view text, const Location& at) {
  const double v = Number(text, at, "a BER like 1E-08 or 15E-255");
  return v < 1e-200 ? 0.0 : v;
}

}  // namespace

bool LooksLikeMlxlink(std::string_view text) {
  for (std::string_view line : SplitLines(text)) {
    if (SectionTitle(line)) return true;
  }
  return false;
}

Reading ParseMlxlink(std::istream& in, const std::string& name) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseMlxlink(text, name);
}

namespace {

// Parses lines [begin, end) of one device's report. `r` arrives with the link and time the
// lines before it named. Returns nullopt when the part has neither Module Info nor counters
// (e.g. a device whose -m/-c query failed with an -E- line).
std::optional<Reading> ParseReport(const std::vector<std::string_view>& lines, size_t begin,
                                   size_t end, const std::string& name, Reading r,
                                   SkippedLines* skipped) {
  r.format = "mlxlink";
  Section section = Section::kNone;
  bool saw_module = false;
  bool saw_counters = false;
  bool ddm = true;
  std::optional<int64_t> effective_errors;
  std::optional<int64_t> symbol_errors;
  std::string opcode;
  int64_t last_line = 0;
  int64_t counters_line = 0;
  int64_t module_line = 0;
  for (size_t i = begin; i < end; ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty() || IsRule(line)) continue;
    const Location at{name, line_no, ""};
    if (ParseDirective(line, at, r)) continue;
    if (auto device = HeaderDevice(line)) {
      if (!device->empty() && r.link.empty()) r.link = *device;
      continue;
    }
    last_line = line_no;
    if (text::StartsWith(line, "-E-") || text::StartsWith(line, "-W-") ||
        text::StartsWith(line, "-I-")) {
      Skip(skipped, line_no, line, "mlxlink message (error, warning or note), not a reading");
      continue;
    }
    if (auto s = SectionTitle(line)) {
      section = *s;
      if (section == Section::kModule) {
        saw_module = true;
        module_line = line_no;
      }
      if (section == Section::kCounters) {
        saw_counters = true;
        counters_line = line_no;
      }
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      // Other section titles (e.g. "Eye Opening Info") are skipped with their body.
      if (i + 1 < lines.size() && IsRule(lines[i + 1])) {
        section = Section::kOther;
        continue;
      }
      Skip(skipped, line_no, line, "not a section title or 'key : value' line of mlxlink output");
      continue;
    }
    const std::string key = text::ToLower(Trim(line.substr(0, colon)));
    const std::string_view raw_value = Trim(line.substr(colon + 1));
    const Location f{name, line_no, std::string(Trim(line.substr(0, colon)))};
    if (section == Section::kNone) {
      Skip(skipped, line_no, line, "a key before any mlxlink section title");
      continue;
    }
    if (section == Section::kOperational) {
      if (key != "speed" && key != "fec" && key != "state")
        Skip(skipped, line_no, line, "identity or status data, not used for health");
      if (key == "speed") r.speed = std::string(raw_value);
      if (key == "fec") r.fec = std::string(raw_value);
      if (key == "state") {
        const std::string v = text::ToLower(raw_value);
        if (v == "active" || v == "linkup") {
          r.port_state = "up";
        } else if (v.rfind("disable", 0) == 0) {
          r.port_state = "admin-down";
        } else if (!v.empty() && v != "n/a") {
          r.port_state = "down";
        }
      }
      continue;
    }
    if (section == Section::kTroubleshooting) {
      if (key != "status opcode" && key != "recommendation")
        Skip(skipped, line_no, line, "identity or status data, not used for health");
      if (key == "status opcode") opcode = std::string(raw_value);
      if (key == "recommendation") r.troubleshooting = std::string(raw_value);
      continue;
    }
    if (section == Section::kModule) {
      if (key == "identifier") {
        r.module_type = std::string(raw_value);
        continue;
      }
      if (key == "cable type" || key == "cable technology") {
        if (!r.transceiver.empty()) r.transceiver += "; ";
        r.transceiver += std::string(raw_value);
        const std::string v = text::ToLower(raw_value);
        if (v.find("copper") != std::string::npos && v.find("active") == std::string::npos) {
          r.copper = true;
        }
        continue;
      }
      if (key == "digital diagnostic monitoring") {
        ddm = ParseFlagWord(raw_value).value_or(true);
        r.dom_supported = ddm;
        continue;
      }
      const bool is_value = key == "temperature [c]" || key == "voltage [mv]" ||
                            key == "bias current [ma]" || key == "rx power current [dbm]" ||
                            key == "tx power current [dbm]";
      if (is_value) {
        if (IsNotAvailable(raw_value)) continue;
        ValueRange vr = SplitRange(raw_value, f);
        if (IsNotAvailable(vr.value)) continue;
        if (key == "temperature [c]") {
          r.temperature_c = Number(vr.value, f, "a temperature in C");
          r.thr(Quantity::kTemperature).low_alarm = vr.low;
          r.thr(Quantity::kTemperature).high_alarm = vr.high;
        } else if (key == "voltage [mv]") {
          r.voltage_v = Number(vr.value, f, "a voltage in mV") / 1000.0;
          if (vr.low) r.thr(Quantity::kVoltage).low_alarm = *vr.low / 1000.0;
          if (vr.high) r.thr(Quantity::kVoltage).high_alarm = *vr.high / 1000.0;
        } else if (key == "bias current [ma]") {
          ForEachLane(vr.value, f, "per-lane bias in mA",
                      [&](int lane, double v) { r.Lane(lane).bias_ma = v; });
          r.thr(Quantity::kBias).low_alarm = vr.low;
          r.thr(Quantity::kBias).high_alarm = vr.high;
        } else {
          const bool rx = key == "rx power current [dbm]";
          const Quantity q = rx ? Quantity::kRxPower : Quantity::kTxPower;
          ForEachLane(vr.value, f, "per-lane power in dBm", [&](int lane, double dbm) {
            (rx ? r.Lane(lane).rx_power_mw : r.Lane(lane).tx_power_mw) = DbmToMw(dbm);
          });
          if (vr.low) r.thr(q).low_alarm = DbmToMw(*vr.low);
          if (vr.high) r.thr(q).high_alarm = DbmToMw(*vr.high);
        }
        continue;
      }
      std::optional<bool> LaneReading::*flag = nullptr;
      if (key.rfind("rx los", 0) == 0) flag = &LaneReading::rx_los;
      if (key.rfind("tx los", 0) == 0) flag = &LaneReading::tx_los;
      if (key.rfind("tx fault", 0) == 0) flag = &LaneReading::tx_fault;
      if (key.rfind("tx disable", 0) == 0) flag = &LaneReading::tx_disabled;
      if (flag && !IsNotAvailable(raw_value)) {
        auto items = SplitList(raw_value);
        for (size_t k = 0; k < items.size(); ++k) {
          if (IsNotAvailable(items[k])) continue;
          auto b = ParseFlagWord(items[k]);
          if (!b) throw InputError(f, Expected("0/1 or Yes/No per lane", std::string(raw_value)));
          r.Lane(static_cast<int>(k) + 1).*flag = *b;
        }
      }
      if (!flag) Skip(skipped, line_no, line, "identity or status data, not used for health");
      continue;
    }
    if (section == Section::kCounters) {
      if (IsNotAvailable(raw_value)) continue;
      if (key == "time since last clear [min]") {
        const double minutes = Number(raw_value, f, "minutes");
        if (minutes < 0) throw InputError(f, Expected("minutes >= 0", std::string(raw_value)));
        r.counters_age_s = minutes * 60.0;
      } else if (key == "effective physical errors") {
        effective_errors = Counter(raw_value, f);
      } else if (key == "effective physical ber") {
        r.effective_ber = Ber(raw_value, f);
      } else if (key == "raw physical ber") {
        r.raw_ber = Ber(raw_value, f);
      } else if (key == "raw physical errors per lane") {
        auto items = SplitList(raw_value);
        for (size_t k = 0; k < items.size(); ++k) {
          r.Lane(static_cast<int>(k) + 1).raw_errors = Counter(items[k], f);
        }
      } else if (key == "link down counter") {
        r.link_down_count = Counter(raw_value, f);
      } else if (key == "symbol errors") {
        symbol_errors = Counter(raw_value, f);
      } else {
        Skip(skipped, line_no, line, "counter not used by the rules");
      }
      if (r.raw_ber && (*r.raw_ber < 0 || *r.raw_ber > 1)) {
        throw InputError(f, Expected("a BER between 0 and 1", std::string(raw_value)));
      }
      continue;
    }
    Skip(skipped, line_no, line,
         "Supported Info, Tool Information or another section: identity only");
  }

  if (!saw_module && !saw_counters) return std::nullopt;
  if (saw_counters && (!r.raw_ber || (!effective_errors && !symbol_errors))) {
    throw InputError(
        Location{name, last_line, ""},
        fmt::format("truncated output: the counters section (line {}) lacks {}", counters_line,
                    !r.raw_ber ? "'Raw Physical BER'" : "'Effective Physical Errors'"));
  }
  if (saw_module && ddm && !r.copper && !r.temperature_c) {
    bool any_lane_power = false;
    for (const auto& l : r.lanes) any_lane_power = any_lane_power || l.rx_power_mw.has_value();
    if (!any_lane_power && !saw_counters) {
      throw InputError(Location{name, last_line, ""},
                       fmt::format("truncated output: 'Module Info' (line {}) has no temperature "
                                   "or power readings",
                                   module_line));
    }
  }
  r.post_fec_errors = symbol_errors ? symbol_errors : effective_errors;
  if (!opcode.empty() && opcode != "0" && !r.troubleshooting.empty()) {
    r.troubleshooting = fmt::format("opcode {}: {}", opcode, r.troubleshooting);
  }
  return r;
}

bool StartsReport(std::string_view line) {
  return text::ToLower(Trim(line)) == "operational info";
}

}  // namespace

std::vector<Reading> ParseMlxlinkReports(std::string_view text, const std::string& name,
                                         SkippedLines* skipped) {
  CheckText(text, name);
  auto lines = SplitLines(text);
  // Cut the file into one part per device: at a header or prompt line that follows a section,
  // and at an "Operational Info" title that follows another section.
  std::vector<size_t> starts = {0};
  bool saw_section = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    const bool header = HeaderDevice(line).has_value() && !IsRule(line);
    if ((header || StartsReport(line)) && saw_section) {
      // Directives, prompts and blank lines just before a report belong to it.
      size_t cut = i;
      while (cut > starts.back() + 1) {
        std::string_view prev = Trim(lines[cut - 1]);
        const bool lead =
            prev.empty() || (HeaderDevice(prev).has_value() && !IsRule(prev)) ||
            (prev.front() == '#' && (text::ToLower(prev).find("link:") != std::string::npos ||
                                     text::ToLower(prev).find("time:") != std::string::npos));
        if (!lead) break;
        --cut;
      }
      starts.push_back(cut);
      saw_section = false;
    }
    if (SectionTitle(line)) saw_section = true;
  }
  starts.push_back(lines.size());
  std::vector<Reading> out;
  std::optional<int64_t> file_time;
  int64_t last_line = 0;
  for (size_t k = 0; k + 1 < starts.size(); ++k) {
    Reading seed;
    seed.time_s = file_time;
    auto r = ParseReport(lines, starts[k], starts[k + 1], name, seed, skipped);
    for (size_t i = starts[k]; i < starts[k + 1]; ++i) {
      if (!Trim(lines[i]).empty()) last_line = static_cast<int64_t>(i) + 1;
    }
    if (!r) {
      if (starts.size() > 2) {
        Skip(skipped, static_cast<int64_t>(starts[k]) + 1, Trim(lines[starts[k]]),
             "this device's part has no 'Module Info' or counters section");
      }
      continue;
    }
    if (r->time_s) file_time = r->time_s;
    out.push_back(std::move(*r));
  }
  if (out.empty()) {
    throw InputError(Location{name, last_line, ""},
                     "not usable mlxlink output: no 'Module Info' or 'Physical Counters and BER "
                     "Info' section (run mlxlink with -m -c)");
  }
  return out;
}

Reading ParseMlxlink(std::string_view text, const std::string& name) {
  auto readings = ParseMlxlinkReports(text, name, nullptr);
  if (readings.size() != 1) {
    throw InputError(Location{name, 0, ""},
                     fmt::format("{} ports in one input; expected one", readings.size()));
  }
  return std::move(readings.front());
}

}  // namespace lossless::audit::optics
