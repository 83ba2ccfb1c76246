#include "audit/optics/reading.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::audit::optics {

std::string_view QuantityName(Quantity q) {
  switch (q) {
    case Quantity::kTemperature:
      return "temperature_c";
    case Quantity::kVoltage:
      return "voltage_v";
    case Quantity::kBias:
      return "bias_ma";
    case Quantity::kTxPower:
      return "tx_power_mw";
    case Quantity::kRxPower:
      return "rx_power_mw";
  }
  return "?";
}

std::string_view QuantityLabel(Quantity q) {
  switch (q) {
    case Quantity::kTemperature:
      return "temperature";
    case Quantity::kVoltage:
      return "voltage";
    case Quantity::kBias:
      return "bias current";
    case Quantity::kTxPower:
      return "tx power";
    case Quantity::kRxPower:
      return "rx power";
  }
  return "?";
}

bool IsPower(Quantity q) {
  return q == Quantity::kTxPower || q == Quantity::kRxPower;
}

int Thresholds::Count() const {
  return (high_alarm ? 1 : 0) + (low_alarm ? 1 : 0) + (high_warning ? 1 : 0) +
         (low_warning ? 1 : 0);
}

LaneReading& Reading::Lane(int lane) {
  auto it = std::lower_bound(lanes.begin(), lanes.end(), lane,
                             [](const LaneReading& l, int n) { return l.lane < n; });
  if (it != lanes.end() && it->lane == lane) return *it;
  LaneReading fresh;
  fresh.lane = lane;
  return *lanes.insert(it, fresh);
}

double MwToDbm(double mw) {
  if (mw <= 0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(mw);
}

double DbmToMw(double dbm) {
  return std::pow(10.0, dbm / 10.0);
}

std::string_view Trim(std::string_view s) {
  return text::Trim(s, " \t\r");
}

std::optional<double> ParseNumber(std::string_view text) {
  text = Trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

std::optional<int64_t> ParseTimestamp(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (text.size() > 12) return std::nullopt;  // beyond year 33658: surely not seconds
    return ParseInteger(text);
  }
  int year = 0, mon = 0, day = 0, hh = 0, mm = 0, ss = 0;
  if (!Digits(text, 0, 4, year) || text.size() < 19 || text[4] != '-' || !Digits(text, 5, 2, mon) ||
      text[7] != '-' || !Digits(text, 8, 2, day) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !Digits(text, 11, 2, hh) ||
      text[13] != ':' || !Digits(text, 14, 2, mm) || text[16] != ':' || !Digits(text, 17, 2, ss)) {
    return std::nullopt;
  }
  static constexpr int kDaysIn[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mon < 1 || mon > 12 || day < 1 || day > kDaysIn[mon - 1] || hh > 23 || mm > 59 || ss > 60) {
    return std::nullopt;
  }
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (mon == 2 && day == 29 && !leap) return std::nullopt;
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return std::nullopt;
  }
  int64_t offset_s = 0;
  std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z") {
    offset_s = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    int oh = 0, om = 0;
    if (!Digits(zone, 1, 2, oh) || !Digits(zone, 4, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_s = (int64_t{oh} * 3600 + int64_t{om} * 60) * (zone[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  const int64_t days = DaysFromCivil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  return days * 86400 + int64_t{hh} * 3600 + int64_t{mm} * 60 + ss - offset_s;
}

std::string FormatTimestamp(int64_t time_s) {
  int64_t days = time_s >= 0 ? time_s / 86400 : -((-time_s + 86399) / 86400);
  int64_t secs = time_s - days * 86400;
  // civil_from_days (Howard Hinnant).
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2 ? 1 : 0;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", y, m, d, secs / 3600, (secs / 60) % 60,
                     secs % 60);
}

void CheckText(std::string_view text, const std::string& file) {
  int64_t line = 1;
  for (unsigned char c : text) {
    if (c == '\n') {
      ++line;
    } else if (c < 0x20 && c != '\t' && c != '\r' && c != 0x1b) {
      throw InputError(Location{file, line, ""},
                       fmt::format("binary data (byte 0x{:02x}); expected text output", c));
    }
  }
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace lossless::audit::optics
