#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "audit/nccl/nccl_log_internal.hpp"
#include "base/text.hpp"

namespace lossless::audit::nccl::internal {

using text::StartsWith;

std::string_view Trim(std::string_view s) {
  return text::Trim(s, text::kLineBlanks);
}
std::vector<std::string_view> Split(std::string_view s) {
  return text::SplitWhitespace(s, text::kLineBlanks);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// OpenMPI --timestamp-output is not stripped (it is rare and changes the row).
std::string_view StripLauncherPrefix(std::string_view s) {
  std::string_view t = s;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  size_t colon = t.find(':');
  if (colon != std::string_view::npos && colon > 0 && colon <= 6 && AllDigits(t.substr(0, colon))) {
    std::string_view rest = t.substr(colon + 1);
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return rest;
  }
  if (StartsWith(t, "[")) {
    size_t close = t.find(']');
    if (close < 16) {  // npos is never < 16
      std::string_view inside = t.substr(1, close - 1);
      size_t comma = inside.find(',');
      if (comma != std::string_view::npos && AllDigits(inside.substr(0, comma)) &&
          AllDigits(inside.substr(comma + 1))) {
        std::string_view rest = t.substr(close + 1);
        for (std::string_view tag : {"<stdout>:", "<stderr>:", ":"}) {
          if (StartsWith(rest, tag)) {
            rest.remove_prefix(tag.size());
            if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
            return rest;
          }
        }
      }
    }
  }
  return s;
}

std::optional<int64_t> ToInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool neg = s.front() == '-';
  std::string_view d = neg ? s.substr(1) : s;
  // 18 digits always fit int64_t; a 19-digit value may not.
  if (d.size() > 18 || !AllDigits(d)) return std::nullopt;
  int64_t v = 0;
  for (char c : d) v = v * 10 + (c - '0');
  return neg ? -v : v;
}

std::optional<double> ToDouble(std::string_view s) {
  if (s.empty() || s.size() > 40) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  // strtod accepts hex floats and "infinity"; nccl-tests prints neither.
  for (char c : tmp) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
      return std::nullopt;
  }
  return v;
}

bool IsDate(std::string_view s) {
  return s.size() == 10 && s[4] == '-' && s[7] == '-' && AllDigits(s.substr(0, 4));
}
bool IsClock(std::string_view s) {
  return s.size() == 8 && s[2] == ':' && s[5] == ':' && AllDigits(s.substr(0, 2));
}

bool IsHeaderNamesLine(const std::vector<std::string_view>& t) {
  if (t.size() < 5 || t[0] != "size" || t[1] != "count") return false;
  return std::find(t.begin(), t.end(), "algbw") != t.end();
}

Layout ParseHeader(const std::vector<std::string_view>& t, const Location& where) {
  Layout l;
  size_t i = 0;
  for (; i < t.size() && t[i] != "time" && t[i] != "cputime"; ++i) {
    if (t[i] == "size") {
      l.preamble.push_back(Col::kSize);
    } else if (t[i] == "count") {
      l.preamble.push_back(Col::kCount);
    } else if (t[i] == "type") {
      l.preamble.push_back(Col::kType);
    } else if (t[i] == "redop") {
      l.preamble.push_back(Col::kRedop);
    } else if (t[i] == "root") {
      l.preamble.push_back(Col::kRoot);
    } else {
      throw InputError(
          where, Expected("a column name size, count, type, redop or root", std::string(t[i])));
    }
  }
  if (l.Index(Col::kType) < 0) throw InputError(where, "header has no 'type' column");
  std::vector<std::vector<Col>> halves;
  for (; i < t.size(); ++i) {
    std::string_view n = t[i];
    if (n == "time" || n == "cputime") {
      if (halves.size() == 2) throw InputError(where, "header has more than two result halves");
      halves.push_back({Col::kTime});
    } else if (halves.empty()) {
      break;
    } else if (n == "algbw") {
      halves.back().push_back(Col::kAlgbw);
    } else if (n == "busbw") {
      halves.back().push_back(Col::kBusbw);
    } else if (n == "#wrong") {
      halves.back().push_back(Col::kWrong);
    } else if (n == "error") {
      halves.back().push_back(Col::kWrong);
      l.has_error_column = true;
    } else if (n == "i_min" || n == "i_max" || n == "i_p99" || n == "i_cv%") {
      halves.back().push_back(Col::kExtra);
    } else if (halves.size() == 2 && (n == "timestamp" || n == "time_stamp")) {
      continue;  // trailing -S column; its two row tokens are dropped by pattern
    } else {
      throw InputError(
          where, Expected("a column name time, algbw, busbw, #wrong or error", std::string(n)));
    }
  }
  const std::vector<Col> core = {Col::kTime, Col::kAlgbw, Col::kBusbw, Col::kWrong};
  if (halves.size() != 2 || halves[0] != halves[1] ||
      !std::equal(core.begin(), core.end(), halves[0].begin(),
                  halves[0].begin() + std::min(core.size(), halves[0].size())) ||
      halves[0].size() < core.size()) {
    throw InputError(where,
                     "header must have out-of-place and in-place halves of "
                     "'time algbw busbw #wrong' (or 'error')");
  }
  l.half = halves[0];
  return l;
}

}  // namespace lossless::audit::nccl::internal
