#include "audit/optics/telemetry.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/optics/parse_util.hpp"
#include "base/text.hpp"

namespace lossless::audit::optics {
namespace {

const std::vector<std::string>& LaneNumberFields() {
  static const std::vector<std::string> kNames = {"rx_power_dbm", "rx_power_mw", "tx_power_dbm",
                                             "tx_power_mw",  "bias_ma",     "raw_errors"};
  return kNames;
}
const std::vector<std::string>& LaneBoolFields() {
  static const std::vector<std::string> kNames = {"rx_los", "tx_los", "tx_fault", "tx_disabled"};
  return kNames;
}
const std::vector<std::string>& ModuleNumberFields() {
  static const std::vector<std::string> kNames = {"temperature_c", "voltage_v",       "raw_ber",
                                             "effective_ber", "post_fec_errors", "link_down_count",
                                             "counters_age_s"};
  return kNames;
}
const std::vector<std::string>& ThresholdQuantities() {
  static const std::vector<std::string> kNames = {"temperature_c", "voltage_v",   "bias_ma",
                                             "tx_power_dbm",  "tx_power_mw", "rx_power_dbm",
                                             "rx_power_mw"};
  return kNames;
}
const std::vector<std::string>& ThresholdKinds() {
  static const std::vector<std::string> kNames = {"high_alarm", "low_alarm", "high_warning",
                                             "low_warning"};
  return kNames;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::vector<std::string> AllFieldNames() {
  std::vector<std::string> out = {"time", "link", "lane", "copper", "module_type", "speed", "fec"};
  for (const auto& v : {LaneNumberFields(), LaneBoolFields(), ModuleNumberFields()}) {
    out.insert(out.end(), v.begin(), v.end());
  }
  for (const auto& q : ThresholdQuantities()) {
    for (const auto& k : ThresholdKinds()) out.push_back(q + "_" + k);
  }
  return out;
}

std::string Suggest(const std::string& name) {
  const NearestName best = FindNearestName(name, AllFieldNames());
  return best.Close(3) ? fmt::format(" (did you mean '{}'?)", best.name) : "";
}

void CheckKnown(const std::string& name, const Location& at) {
  if (!Contains(AllFieldNames(), name)) {
    throw InputError(at, fmt::format("unknown field '{}'{}", name, Suggest(name)));
  }
}

template <typename T>
void SetOnce(std::optional<T>& slot, T value, const Location& at) {
  if (slot && *slot != value) {
    throw InputError(
        at, fmt::format("conflicting values for the same reading ({} and {})", *slot, value));
  }
  slot = value;
}

void SetText(std::string& slot, const std::string& value, const Location& at) {
  if (!slot.empty() && slot != value) {
    throw InputError(
        at, fmt::format("conflicting values for the same reading ('{}' and '{}')", slot, value));
  }
  slot = value;
}

double NumberOf(std::string_view text, const Location& at) {
  auto v = ParseNumber(text);
  if (!v) throw InputError(at, Expected("a number", std::string(text)));
  return *v;
}

int64_t CounterOf(std::string_view text, const Location& at) {
  auto v = ParseInteger(text);
  if (!v) {
    // JSON may print whole numbers as 12.0.
    auto d = ParseNumber(text);
    if (d && *d >= 0 && std::floor(*d) == *d && *d < 9e18) v = static_cast<int64_t>(*d);
  }
  if (!v || *v < 0) throw InputError(at, Expected("a non-negative integer", std::string(text)));
  return *v;
}

bool BoolOf(std::string_view text, const Location& at) {
  auto b = ParseFlagWord(text);
  if (!b) throw InputError(at, Expected("true/false", std::string(text)));
  return *b;
}

Quantity QuantityOf(const std::string& q) {
  if (q == "temperature_c") return Quantity::kTemperature;
  if (q == "voltage_v") return Quantity::kVoltage;
  if (q == "bias_ma") return Quantity::kBias;
  if (q.rfind("tx_power", 0) == 0) return Quantity::kTxPower;
  return Quantity::kRxPower;
}

// Applies one named field (already known to exist) to a reading.
void Apply(Reading& r, std::optional<int> lane, const std::string& name, std::string_view value,
           const Location& at) {
  if (value.empty() || name == "time" || name == "link" || name == "lane") return;
  if (Contains(LaneNumberFields(), name) || Contains(LaneBoolFields(), name)) {
    if (!lane) throw InputError(at, "a lane field needs a 'lane' value");
    LaneReading& l = r.Lane(*lane);
    if (name == "rx_power_dbm") SetOnce(l.rx_power_mw, DbmToMw(NumberOf(value, at)), at);
    if (name == "tx_power_dbm") SetOnce(l.tx_power_mw, DbmToMw(NumberOf(value, at)), at);
    if (name == "rx_power_mw" || name == "tx_power_mw") {
      const double mw = NumberOf(value, at);
      if (mw < 0) throw InputError(at, Expected("power >= 0 mW", std::string(value)));
      SetOnce(name == "rx_power_mw" ? l.rx_power_mw : l.tx_power_mw, mw, at);
    }
    if (name == "bias_ma") SetOnce(l.bias_ma, NumberOf(value, at), at);
    if (name == "raw_errors") SetOnce(l.raw_errors, CounterOf(value, at), at);
    if (name == "rx_los") SetOnce(l.rx_los, BoolOf(value, at), at);
    if (name == "tx_los") SetOnce(l.tx_los, BoolOf(value, at), at);
    if (name == "tx_fault") SetOnce(l.tx_fault, BoolOf(value, at), at);
    if (name == "tx_disabled") SetOnce(l.tx_disabled, BoolOf(value, at), at);
    return;
  }
  if (name == "temperature_c") SetOnce(r.temperature_c, NumberOf(value, at), at);
  if (name == "voltage_v") SetOnce(r.voltage_v, NumberOf(value, at), at);
  if (name == "raw_ber" || name == "effective_ber") {
    const double ber = NumberOf(value, at);
    if (ber < 0 || ber > 1)
      throw InputError(at, Expected("a BER between 0 and 1", std::string(value)));
    SetOnce(name == "raw_ber" ? r.raw_ber : r.effective_ber, ber, at);
  }
  if (name == "post_fec_errors") SetOnce(r.post_fec_errors, CounterOf(value, at), at);
  if (name == "link_down_count") SetOnce(r.link_down_count, CounterOf(value, at), at);
  if (name == "counters_age_s") SetOnce(r.counters_age_s, NumberOf(value, at), at);
  if (name == "copper") {
    const bool c = BoolOf(value, at);
    if (r.copper && !c) throw InputError(at, "conflicting values for the same reading");
    r.copper = r.copper || c;
  }
  if (name == "module_type") SetText(r.module_type, std::string(value), at);
  if (name == "speed") SetText(r.speed, std::string(value), at);
  if (name == "fec") SetText(r.fec, std::string(value), at);
  for (const auto& q : ThresholdQuantities()) {
    for (const auto& k : ThresholdKinds()) {
      if (name != q + "_" + k) continue;
      double v = NumberOf(value, at);
      if (q.size() > 4 && q.substr(q.size() - 4) == "_dbm") v = DbmToMw(v);
      if (q.size() > 3 && q.substr(q.size() - 3) == "_mw" && v < 0) {
        throw InputError(at, Expected("power >= 0 mW", std::string(value)));
      }
      Thresholds& t = r.thr(QuantityOf(q));
      std::optional<double>& slot = k == "high_alarm"     ? t.high_alarm
                                    : k == "low_alarm"    ? t.low_alarm
                                    : k == "high_warning" ? t.high_warning
                                                          : t.low_warning;
      SetOnce(slot, v, at);
    }
  }
}

// Collects readings keyed by (link, time) in order of first appearance.
class Collector {
 public:
  Reading& Get(const std::string& link, int64_t time_s) {
    auto key = std::make_pair(link, time_s);
    auto it = index_.find(key);
    if (it != index_.end()) return readings_[it->second];
    index_[key] = readings_.size();
    Reading r;
    r.format = "telemetry";
    r.link = link;
    r.time_s = time_s;
    readings_.push_back(std::move(r));
    return readings_.back();
  }
  std::vector<Reading> Take() { return std::move(readings_); }

 private:
  std::map<std::pair<std::string, int64_t>, size_t> index_;
  std::vector<Reading> readings_;
};

int64_t TimeOf(std::string_view text, const Location& at) {
  auto t = ParseTimestamp(text);
  if (!t) {
    throw InputError(
        at, Expected("ISO-8601 time with zone (Z or +hh:mm) or epoch seconds", std::string(text)));
  }
  return *t;
}

int LaneOf(std::string_view text, const Location& at) {
  auto n = ParseInteger(text);
  if (!n || *n < 1 || *n > 16)
    throw InputError(at, Expected("a lane number 1..16", std::string(text)));
  return static_cast<int>(*n);
}

void CheckLanes(const std::vector<Reading>& readings, const std::string& name) {
  for (const auto& r : readings) {
    for (size_t i = 0; i < r.lanes.size(); ++i) {
      if (r.lanes[i].lane != static_cast<int>(i) + 1) {
        throw InputError(Location{name, 0, r.link},
                         fmt::format("reading at {}: lane {} missing (lanes must be 1..N)",
                                     FormatTimestamp(*r.time_s), i + 1));
      }
    }
  }
}

std::vector<Reading> ParseCsv(std::string_view text, const std::string& name) {
  auto lines = SplitLines(text);
  std::vector<std::string> header;
  int64_t header_line = 0;
  Collector out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line_no = static_cast<int64_t>(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    auto cells = SplitList(line);
    if (header.empty()) {
      header_line = line_no;
      for (auto c : cells) {
        std::string h = text::ToLower(c);
        CheckKnown(h, Location{name, line_no, h});
        if (Contains(header, h)) throw InputError(Location{name, line_no, h}, "duplicate column");
        header.push_back(h);
      }
      if (!Contains(header, "time") || !Contains(header, "link")) {
        throw InputError(Location{name, line_no, ""},
                         "telemetry CSV header needs 'time' and 'link' columns");
      }
      continue;
    }
    if (cells.size() != header.size()) {
      throw InputError(Location{name, line_no, ""},
                       fmt::format("expected {} cells (header on line {}), got {}", header.size(),
                                   header_line, cells.size()));
    }
    std::map<std::string, std::string_view> row;
    for (size_t c = 0; c < header.size(); ++c) row[header[c]] = cells[c];
    const Location at_time{name, line_no, "time"};
    if (row["time"].empty()) throw InputError(at_time, "empty time");
    if (row["link"].empty()) throw InputError(Location{name, line_no, "link"}, "empty link");
    const int64_t t = TimeOf(row["time"], at_time);
    Reading& r = out.Get(std::string(row["link"]), t);
    std::optional<int> lane;
    if (!Contains(header, "lane")) {
      lane = 1;
    } else if (!row["lane"].empty()) {
      lane = LaneOf(row["lane"], Location{name, line_no, "lane"});
    }
    for (size_t c = 0; c < header.size(); ++c) {
      Apply(r, lane, header[c], cells[c], Location{name, line_no, header[c]});
    }
  }
  if (header.empty()) throw InputError(Location{name, 0, ""}, "empty telemetry CSV");
  auto readings = out.Take();
  if (readings.empty()) {
    throw InputError(Location{name, header_line, ""}, "telemetry CSV has a header but no rows");
  }
  CheckLanes(readings, name);
  return readings;
}

std::string ScalarText(const nlohmann::json& v, const Location& at) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  throw InputError(at, "expected a number, string or boolean");
}

int64_t LineOfOffset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
}

std::vector<Reading> ParseJson(std::string_view text, const std::string& name) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(Location{name, LineOfOffset(text, e.byte > 0 ? e.byte - 1 : 0), ""},
                     "malformed JSON");
  }
  const nlohmann::json* list = &doc;
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (it.key() != "readings" && it.key() != "schema") {
        throw InputError(Location{name, 0, it.key()}, "unknown top-level key; expected 'readings'");
      }
    }
    if (!doc.contains("readings")) {
      throw InputError(Location{name, 0, "readings"}, "missing 'readings' array");
    }
    list = &doc["readings"];
  }
  if (!list->is_array()) throw InputError(Location{name, 0, "readings"}, "expected an array");
  if (list->empty()) throw InputError(Location{name, 0, "readings"}, "no readings");
  Collector out;
  for (size_t i = 0; i < list->size(); ++i) {
    const auto& obj = (*list)[i];
    const std::string path = fmt::format("readings[{}]", i);
    if (!obj.is_object()) throw InputError(Location{name, 0, path}, "expected an object");
    if (!obj.contains("time") || !obj.contains("link") || !obj["link"].is_string() ||
        obj["link"].get<std::string>().empty()) {
      throw InputError(Location{name, 0, path}, "each reading needs 'time' and a non-empty 'link'");
    }
    const Location at_time{name, 0, path + ".time"};
    Reading& r =
        out.Get(obj["link"].get<std::string>(), TimeOf(ScalarText(obj["time"], at_time), at_time));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const Location at{name, 0, path + "." + it.key()};
      if (it.key() == "lanes") {
        if (!it->is_array()) throw InputError(at, "expected an array of lanes");
        for (size_t j = 0; j < it->size(); ++j) {
          const auto& lo = (*it)[j];
          const std::string lpath = fmt::format("{}.lanes[{}]", path, j);
          if (!lo.is_object() || !lo.contains("lane")) {
            throw InputError(Location{name, 0, lpath}, "expected an object with 'lane'");
          }
          const Location at_lane{name, 0, lpath + ".lane"};
          const int lane = LaneOf(ScalarText(lo["lane"], at_lane), at_lane);
          for (auto lt = lo.begin(); lt != lo.end(); ++lt) {
            const Location lat{name, 0, lpath + "." + lt.key()};
            CheckKnown(lt.key(), lat);
            if (lt.key() != "lane" && !Contains(LaneNumberFields(), lt.key()) &&
                !Contains(LaneBoolFields(), lt.key())) {
              throw InputError(lat, "not a lane field");
            }
            Apply(r, lane, lt.key(), ScalarText(*lt, lat), lat);
          }
        }
        continue;
      }
      CheckKnown(it.key(), at);
      if (Contains(LaneNumberFields(), it.key()) || Contains(LaneBoolFields(), it.key())) {
        throw InputError(at, "a lane field; put it in 'lanes'");
      }
      Apply(r, std::nullopt, it.key(), ScalarText(*it, at), at);
    }
  }
  auto readings = out.Take();
  CheckLanes(readings, name);
  return readings;
}

}  // namespace

bool LooksLikeTelemetryJson(std::string_view text) {
  std::string_view t = Trim(text);
  while (!t.empty() && (t.front() == '\n' || t.front() == ' ')) t.remove_prefix(1);
  return !t.empty() && (t.front() == '{' || t.front() == '[');
}

bool LooksLikeTelemetryCsv(std::string_view text) {
  for (std::string_view line : SplitLines(text)) {
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    auto cells = SplitList(line);
    bool time = false, link = false;
    for (auto c : cells) {
      time = time || text::ToLower(c) == "time";
      link = link || text::ToLower(c) == "link";
    }
    return time && link;
  }
  return false;
}

std::vector<Reading> ParseTelemetry(std::istream& in, const std::string& name) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseTelemetry(text, name);
}

std::vector<Reading> ParseTelemetry(std::string_view text, const std::string& name) {
  CheckText(text, name);
  if (LooksLikeTelemetryJson(text)) return ParseJson(text, name);
  return ParseCsv(text, name);
}

}  // namespace lossless::audit::optics
