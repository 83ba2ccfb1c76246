#include "audit/optics/parse_util.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::audit::optics {

bool IsNotAvailable(std::string_view value) {
  const std::string v = text::ToLower(Trim(value));
  return v == "n/a" || v == "na" || v == "not supported" || v == "unsupported" ||
         v == "not available" || v == "-";
}

namespace {

// Splits "12.5 mA" into number text and unit text.
std::pair<std::string_view, std::string_view> NumberAndUnit(std::string_view part) {
  part = Trim(part);
  size_t i = 0;
  while (i < part.size() && part[i] != ' ' && part[i] != '\t') ++i;
  return {part.substr(0, i), Trim(part.substr(i))};
}

bool UnitMatches(std::string_view got, std::string_view unit) {
  const std::string g = text::ToLower(got);
  const std::string u = text::ToLower(unit);
  return g.empty() || g == u || g == "degrees " + u || g == "deg " + u || g == "degree " + u;
}

}  // namespace

std::optional<double> ParseValueWithUnit(std::string_view value, std::string_view unit,
                                         const Location& where) {
  if (IsNotAvailable(value)) return std::nullopt;
  std::string_view first = value.substr(0, value.find('/'));
  auto [num, got_unit] = NumberAndUnit(first);
  auto v = ParseNumber(num);
  if (!v || !UnitMatches(got_unit, unit)) {
    throw InputError(where, Expected(fmt::format("a number in {}", unit), std::string(value)));
  }
  return v;
}

std::optional<double> ParsePowerMw(std::string_view value, const Location& where) {
  if (IsNotAvailable(value)) return std::nullopt;
  std::optional<double> mw;
  std::optional<double> dbm;
  bool minus_inf = false;
  bool bad = false;
  std::string_view rest = value;
  while (true) {
    size_t slash = rest.find('/');
    auto [num, unit] = NumberAndUnit(rest.substr(0, slash));
    const std::string u = text::ToLower(unit);
    const std::string n = text::ToLower(num);
    if (u == "mw") {
      mw = ParseNumber(num);
      if (!mw || *mw < 0) bad = true;
    } else if (u == "dbm") {
      if (n == "-inf") {
        minus_inf = true;
      } else {
        dbm = ParseNumber(num);
        if (!dbm) bad = true;
      }
    } else {
      bad = true;
    }
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  if (bad || (!mw && !dbm && !minus_inf)) {
    throw InputError(where, Expected("power as '<mW> mW / <dBm> dBm'", std::string(value)));
  }
  if (dbm) return DbmToMw(*dbm);
  if (mw) return *mw;
  return 0.0;  // "-inf dBm" alone: no light
}

std::optional<bool> ParseFlagWord(std::string_view word) {
  const std::string w = text::ToLower(Trim(word));
  if (w == "yes" || w == "on" || w == "true" || w == "1") return true;
  if (w == "no" || w == "off" || w == "false" || w == "0" || w == "none") return false;
  return std::nullopt;
}

std::vector<std::string_view> SplitList(std::string_view value) {
  value = Trim(value);
  if (!value.empty() && value.front() == '[' && value.back() == ']') {
    value = Trim(value.substr(1, value.size() - 2));
  }
  std::vector<std::string_view> out;
  if (value.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    out.push_back(Trim(value.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool ParseCaptureComment(std::string_view line, const Location& where, Reading& r) {
  line = Trim(line);
  if (line.empty() || (line.front() != '#' && line.front() != '$')) return false;
  std::string_view body = Trim(line.substr(1));
  const std::string lower = text::ToLower(body);
  if (lower.rfind("link:", 0) == 0) {
    std::string_view name = Trim(body.substr(5));
    if (name.empty()) throw InputError(where, "empty '# link:' directive");
    r.link = std::string(name);
    return true;
  }
  if (lower.rfind("time:", 0) == 0) {
    auto t = ParseTimestamp(body.substr(5));
    if (!t) {
      throw InputError(where, Expected("ISO-8601 time with zone or epoch seconds",
                                       std::string(Trim(body.substr(5)))));
    }
    r.time_s = *t;
    return true;
  }
  // A shell prompt with the command that produced the capture.
  auto words = text::SplitWhitespace(body, " \t");
  for (size_t i = 0; i < words.size(); ++i) {
    const bool ethtool = words[i] == "ethtool";
    const bool mlxlink = words[i] == "mlxlink";
    if (!ethtool && !mlxlink) continue;
    std::string device;
    std::string port;
    for (size_t j = i + 1; j + 1 < words.size(); ++j) {
      if (ethtool &&
          (words[j] == "-m" || words[j] == "--module-info" || words[j] == "--dump-module-eeprom")) {
        device = std::string(words[j + 1]);
      }
      if (mlxlink && (words[j] == "-d" || words[j] == "--device"))
        device = std::string(words[j + 1]);
      if (mlxlink && (words[j] == "-p" || words[j] == "--port")) port = std::string(words[j + 1]);
    }
    if (!device.empty() && r.link.empty()) r.link = port.empty() ? device : device + "/p" + port;
    break;
  }
  return true;
}

void Skip(SkippedLines* out, int64_t line, std::string_view text, std::string why) {
  if (out == nullptr) return;
  out->push_back(SkippedLine{line, std::string(Trim(text)), std::move(why)});
}

namespace {

bool IsPromptEnd(char c) {
  return c == '$' || c == '#' || c == '>';
}

bool IsCommandWord(std::string_view w) {
  return w == "ethtool" || w == "mlxlink" || w == "show" || w == "sfputil" || w == "sudo" ||
         w == "nv" || w == "net";
}

bool IsDecoration(char c) {
  return c == '=' || c == '-' || c == '#' || c == '*' || c == '~';
}

std::string DeviceFromCommand(const std::vector<std::string_view>& words, size_t i) {
  const bool ethtool = words[i] == "ethtool";
  const bool mlxlink = words[i] == "mlxlink";
  std::string device;
  std::string port;
  for (size_t j = i + 1; j + 1 < words.size(); ++j) {
    if (ethtool &&
        (words[j] == "-m" || words[j] == "--module-info" || words[j] == "--dump-module-eeprom")) {
      device = std::string(words[j + 1]);
    }
    if (mlxlink && (words[j] == "-d" || words[j] == "--device")) device = std::string(words[j + 1]);
    if (mlxlink && (words[j] == "-p" || words[j] == "--port")) port = std::string(words[j + 1]);
  }
  if (words[i] == "show") {
    // "show controllers optics 0/0/1/2", "show interfaces diagnostics optics xe-0/1/7"
    for (size_t j = i + 1; j + 1 < words.size(); ++j) {
      if (words[j] == "optics" && words[j + 1] != "|") return std::string(words[j + 1]);
    }
  }
  if (device.empty()) return "";
  return port.empty() ? device : device + "/p" + port;
}

}  // namespace

std::optional<std::string> HeaderDevice(std::string_view line) {
  line = Trim(line);
  if (line.empty()) return std::nullopt;
  auto words = text::SplitWhitespace(line, " \t");
  if (words.empty()) return std::nullopt;
  // A prompt ending in $ # > directly followed by the command ("switch#show ...").
  std::string_view first = words[0];
  size_t glued = first.find_last_of("$#>");
  if (glued != std::string_view::npos && glued + 1 < first.size() &&
      IsCommandWord(first.substr(glued + 1))) {
    std::vector<std::string_view> rest = {first.substr(glued + 1)};
    rest.insert(rest.end(), words.begin() + 1, words.end());
    size_t at = rest[0] == "sudo" && rest.size() > 1 ? 1 : 0;
    return DeviceFromCommand(rest, at);
  }
  size_t cmd = std::string_view::npos;
  if (IsCommandWord(words[0])) {
    cmd = 0;
  } else if (words.size() > 1 && IsPromptEnd(words[0].back()) && IsCommandWord(words[1])) {
    cmd = 1;
  }
  if (cmd != std::string_view::npos) {
    if (words[cmd] == "sudo" && cmd + 1 < words.size()) ++cmd;
    // A bare "show ..." is a command only when the next word is what switch CLIs take.
    if (cmd == 0 && words[0] == "show" &&
        (words.size() < 2 || (words[1].rfind("interface", 0) != 0 && words[1] != "controllers"))) {
      return std::nullopt;
    }
    if (cmd == 0 && words.size() < 2) return std::nullopt;
    return DeviceFromCommand(words, cmd);
  }
  // "==== mlx5_0 ====": at least three decoration characters on both sides.
  size_t lead = 0;
  while (lead < line.size() && IsDecoration(line[lead])) ++lead;
  size_t trail = 0;
  while (trail < line.size() - lead && IsDecoration(line[line.size() - 1 - trail])) ++trail;
  if (lead >= 3 && trail >= 3 && lead + trail < line.size()) {
    auto middle = text::SplitWhitespace(Trim(line.substr(lead, line.size() - lead - trail)), " \t");
    if (middle.empty()) return std::nullopt;
    std::string device(middle[0]);
    if (device.rfind("/dev/mst/", 0) == 0) device = device.substr(9);
    return device;
  }
  return std::nullopt;
}

bool ParseDirective(std::string_view line, const Location& where, Reading& r) {
  line = Trim(line);
  if (line.empty() || line.front() != '#') return false;
  std::string_view body = Trim(line.substr(1));
  const std::string lower = text::ToLower(body);
  if (lower.rfind("link:", 0) != 0 && lower.rfind("time:", 0) != 0) return false;
  return ParseCaptureComment(line, where, r);
}

std::string_view StripPastePrefix(std::string_view line) {
  line = Trim(line);
  if (line.size() >= 2 && line[0] == '#' && line[1] == '!') return line;
  size_t i = 0;
  while (i < line.size() && line[i] == '#') ++i;
  if (i == 0) return line;
  return Trim(line.substr(i));
}

}  // namespace lossless::audit::optics
