#include "audit/optics/ingest.hpp"

#include <chrono>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "audit/optics/ethtool_module.hpp"
#include "audit/optics/mlxlink.hpp"
#include "audit/optics/switch_transceiver.hpp"
#include "audit/optics/telemetry.hpp"
#include "base/input_file.hpp"

namespace lossless::audit::optics {

InputKind DetectInputKind(std::string_view text) {
  if (LooksLikeTelemetryJson(text)) return InputKind::kTelemetryJson;
  if (LooksLikeEthtoolModule(text)) return InputKind::kEthtoolModule;
  if (LooksLikeMlxlink(text)) return InputKind::kMlxlink;
  if (LooksLikeSonicEeprom(text)) return InputKind::kSonicEeprom;
  if (LooksLikeNxosTransceiver(text)) return InputKind::kNxosTransceiver;
  if (LooksLikeAristaTransceiver(text)) return InputKind::kAristaTransceiver;
  if (LooksLikeJunosOptics(text)) return InputKind::kJunosOptics;
  if (LooksLikeIosxrOptics(text)) return InputKind::kIosxrOptics;
  if (LooksLikeTelemetryCsv(text)) return InputKind::kTelemetryCsv;
  return InputKind::kUnknown;
}

ParsedInput ParseInputDetailed(std::string_view text, const std::string& name,
                               const IngestOptions& options) {
  if (Trim(text).empty() || text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw InputError(Location{name, 1, ""},
                     "expected ethtool -m, mlxlink, switch transceiver or telemetry output, got "
                     "an empty file");
  }
  CheckText(text, name);
  ParsedInput parsed;
  std::vector<Reading>& readings = parsed.readings;
  const InputKind kind = DetectInputKind(text);
  switch (kind) {
    case InputKind::kEthtoolModule:
      readings = ParseEthtoolModules(text, name, &parsed.skipped);
      break;
    case InputKind::kMlxlink:
      readings = ParseMlxlinkReports(text, name, &parsed.skipped);
      break;
    case InputKind::kSonicEeprom:
      readings = ParseSonicEeprom(text, name, &parsed.skipped);
      break;
    case InputKind::kNxosTransceiver:
      readings = ParseNxosTransceiver(text, name, &parsed.skipped);
      break;
    case InputKind::kAristaTransceiver:
      readings = ParseAristaTransceiver(text, name, &parsed.skipped);
      break;
    case InputKind::kJunosOptics:
      readings = ParseJunosOptics(text, name, &parsed.skipped);
      break;
    case InputKind::kIosxrOptics:
      readings = ParseIosxrOptics(text, name, &parsed.skipped);
      break;
    case InputKind::kTelemetryJson:
    case InputKind::kTelemetryCsv:
      readings = ParseTelemetry(text, name);
      break;
    case InputKind::kUnknown: {
      int64_t line = 1;
      for (std::string_view l : SplitLines(text)) {
        if (!Trim(l).empty()) {
          throw InputError(
              Location{name, line, ""},
              Expected("ethtool -m, mlxlink, SONiC/NX-OS/Arista transceiver or telemetry "
                       "(CSV/JSON) output",
                       std::string(Trim(l))));
        }
        ++line;
      }
      throw InputError(Location{name, 1, ""}, "unrecognised input");
    }
  }
  {
    std::set<std::string> links;
    std::set<int64_t> times;
    for (const auto& r : readings) {
      links.insert(r.link);
      if (r.time_s) times.insert(*r.time_s);
    }
    if (!options.link.empty() && links.size() > 1) {
      throw InputError(
          Location{name, 0, "--link"},
          fmt::format("the file holds {} links; --link would merge them", links.size()));
    }
    if (options.at && times.size() > 1) {
      throw InputError(Location{name, 0, "--at"},
                       fmt::format("the file holds {} times; --at would merge them", times.size()));
    }
  }
  const std::string stem = std::filesystem::path(name).stem().string();
  for (size_t i = 0; i < readings.size(); ++i) {
    Reading& r = readings[i];
    if (!options.link.empty()) {
      r.link = options.link;
    } else if (r.link.empty() && name == "-") {
      // Standard input has no file name to stand in for the link, and a
      // made-up one would merge unrelated captures.
      throw InputError(Location{name, 0, "link"},
                       "the input names no link and standard input has no file name; give "
                       "--link NAME (or a '# link:' line)");
    } else if (r.link.empty()) {
      // Several unnamed devices in one file: numbered in order.
      r.link = readings.size() == 1 ? stem : fmt::format("{}#{}", stem, i + 1);
    }
    if (r.link.empty()) throw InputError(Location{name, 0, "link"}, "no link name; give --link");
    if (options.at) r.time_s = options.at;
    bool ingest_time = false;
    if (!r.time_s && options.now) {
      r.time_s = options.now;
      ingest_time = true;
    }
    parsed.ingest_time.push_back(ingest_time);
    if (!r.time_s) {
      throw InputError(Location{name, 0, "time"},
                       "the input carries no time; give --at TIME (ISO-8601 with zone, epoch "
                       "seconds, or 'now') or a '# time:' line");
    }
  }
  // Times in the future would outlive every later reading (a 2099 reading
  // kept a link quarantined); values outside what a module can report are
  // corrupt input (rx_power_dbm=1e308).
  constexpr int64_t kClockSkewS = 300;
  for (const auto& r : readings) {
    if (options.now && *r.time_s > *options.now + kClockSkewS) {
      throw InputError(Location{name, 0, "time"},
                       fmt::format("{} for {} is in the future: expected a time up to {} (now, "
                                   "plus 5 minutes of clock skew)",
                                   FormatTimestamp(*r.time_s), r.link,
                                   FormatTimestamp(*options.now + kClockSkewS)));
    }
    for (const LaneReading& l : r.lanes) {
      const auto check = [&](const std::optional<double>& v, const char* field, double max,
                             const char* unit) {
        if (v && !(*v >= 0 && *v <= max)) {
          throw InputError(Location{name, 0, field},
                           fmt::format("{} lane {}: expected 0 to {:g} {}, got {:g}", r.link,
                                       l.lane, max, unit, *v));
        }
      };
      check(l.rx_power_mw, "rx_power", 100, "mW (+20 dBm)");
      check(l.tx_power_mw, "tx_power", 100, "mW (+20 dBm)");
      check(l.bias_ma, "bias", 1000, "mA");
    }
  }
  // Two readings of one link at one time in one file: a port printed twice.
  std::set<std::pair<std::string, int64_t>> seen;
  for (const auto& r : readings) {
    if (!seen.insert({r.link + "\n" + r.format, *r.time_s}).second) {
      throw InputError(Location{name, 0, "link"},
                       fmt::format("{} appears twice in this file at {}; give one capture of "
                                   "each port per file, or a '# link:' line per device",
                                   r.link, FormatTimestamp(*r.time_s)));
    }
  }
  return parsed;
}

std::vector<Reading> ParseInput(std::string_view text, const std::string& name,
                                const IngestOptions& options) {
  return ParseInputDetailed(text, name, options).readings;
}

ParsedInput ReadInputFileDetailed(const std::string& path, const IngestOptions& options) {
  return ParseInputDetailed(
      ReadTextInput(path, "ethtool -m, mlxlink, switch transceiver or telemetry output"), path,
      options);
}

std::vector<Reading> ReadInputFile(const std::string& path, const IngestOptions& options) {
  return ReadInputFileDetailed(path, options).readings;
}

int64_t ParseAtOption(const std::string& text) {
  if (text == "now") {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  auto t = ParseTimestamp(text);
  if (!t) {
    throw InputError(Location{"<cli>", 0, "--at"},
                     Expected("ISO-8601 time with zone (e.g. 2026-03-01T12:00:00Z), epoch "
                              "seconds or 'now'",
                              text));
  }
  return *t;
}

}  // namespace lossless::audit::optics
