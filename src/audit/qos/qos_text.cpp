#include "audit/qos/qos_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace lossless::audit::qos::internal {

std::vector<TextLine> SplitLines(std::string_view text) {
  std::vector<TextLine> out;
  out.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  int64_t number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    ++number;
    while (!raw.empty() && (raw.back() == '\r' || raw.back() == ' ' || raw.back() == '\t'))
      raw.remove_suffix(1);
    size_t indent = 0;
    while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) ++indent;
    out.push_back(TextLine{number, raw, indent});
    if (end == text.size()) break;
    pos = end + 1;
  }
  return out;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string_view> words = text::SplitWhitespace(s);
  return std::vector<std::string>(words.begin(), words.end());
}

std::vector<std::string> Columns(std::string_view s) {
  std::vector<std::string> out;
  s = Trim(s);
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    // A column ends at two blanks in a row (or a tab).
    while (j < s.size() && !(s[j] == '\t' || (s[j] == ' ' && j + 1 < s.size() && s[j + 1] == ' ')))
      ++j;
    std::string_view col = Trim(s.substr(i, j - i));
    if (!col.empty()) out.emplace_back(col);
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    i = j;
  }
  return out;
}

int64_t ParseInt(std::string_view s, const Location& where, const std::string& what) {
  std::string_view t = Trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size())
    throw InputError(where, Expected(what, std::string(s)));
  return v;
}

double ParseDecimal(std::string_view s, const Location& where, const std::string& what) {
  std::string_view t = Trim(s);
  // Digits with at most one dot; no exponent, no sign.
  bool ok = !t.empty();
  int dots = 0;
  int digits = 0;
  for (char c : t) {
    if (c == '.') {
      ++dots;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      ++digits;
    } else {
      ok = false;
    }
  }
  if (!ok || dots > 1 || digits == 0 || t.size() > 30)
    throw InputError(where, Expected(what, std::string(s)));
  return std::stod(std::string(t));
}

int ParsePriority(std::string_view s, const Location& where) {
  int64_t v = ParseInt(s, where, "a priority 0-7");
  if (v < 0 || v > 7) throw InputError(where, Expected("a priority 0-7", std::string(s)));
  return static_cast<int>(v);
}

std::set<int> ParseIntList(std::string_view s, int lo, int hi, const Location& where,
                           const std::string& what) {
  std::set<int> out;
  std::string text(Trim(s));
  if (text.empty() || text::ToLower(text) == "none" || text == "-") return out;
  for (char& c : text)
    if (c == ',' || c == ' ') c = ' ';
  for (const std::string& item : Words(text)) {
    size_t dash = item.find('-', 1);
    int64_t a = 0;
    int64_t b = 0;
    if (dash == std::string::npos) {
      a = b = ParseInt(item, where, what);
    } else {
      a = ParseInt(item.substr(0, dash), where, what);
      b = ParseInt(item.substr(dash + 1), where, what);
    }
    if (a < lo || b > hi || a > b) throw InputError(where, Expected(what, item));
    for (int64_t v = a; v <= b; ++v) out.insert(static_cast<int>(v));
  }
  return out;
}

std::set<int> ParsePriorityList(std::string_view s, const Location& where) {
  return ParseIntList(s, 0, 7, where, "priorities 0-7 like \"3\" or \"3,4\"");
}

BufferAmount ParseAmount(std::string_view number, std::string_view unit, const Location& where,
                         bool kib_for_kb) {
  double v = ParseDecimal(number, where, "a buffer size");
  std::string u = text::ToLower(Trim(unit));
  double mult = 1;
  bool cells = false;
  if (u.empty() || u == "b" || u == "bytes" || u == "byte") {
    mult = 1;
  } else if (u == "kb" || u == "kbytes" || u == "kilobytes" || u == "k") {
    mult = kib_for_kb ? 1024 : 1000;
  } else if (u == "mb" || u == "mbytes" || u == "megabytes" || u == "m") {
    mult = kib_for_kb ? 1024.0 * 1024 : 1e6;
  } else if (u == "kib") {
    mult = 1024;
  } else if (u == "mib") {
    mult = 1024.0 * 1024;
  } else if (u == "cells" || u == "cell" || u == "segments" || u == "segment") {
    cells = true;
  } else {
    throw InputError(where, Expected("a size unit (bytes, kbytes, mbytes, KB, MB, cells, segments)",
                                     std::string(unit)));
  }
  double total = std::round(v * mult);
  if (total > 1e15)
    throw InputError(where, Expected("a buffer size below 1 PB", std::string(number)));
  int64_t n = static_cast<int64_t>(total);
  return cells ? BufferAmount::Cells(n) : BufferAmount::Bytes(n);
}

int64_t FindLine(std::string_view text, std::string_view needle) {
  size_t pos = text.find(needle);
  if (pos == std::string_view::npos) return 0;
  int64_t line = 1;
  for (size_t i = 0; i < pos; ++i)
    if (text[i] == '\n') ++line;
  return line;
}

}  // namespace lossless::audit::qos::internal
