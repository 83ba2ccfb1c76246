#include "base/error.hpp"

#include <algorithm>
#include <exception>
#include <vector>

#include <fmt/format.h>

namespace lossless {
namespace {
std::string Format(const Location& w, const std::string& message) {
  std::string out = w.file.empty() ? std::string("<input>") : w.file;
  if (w.line > 0) out += fmt::format(":{}", w.line);
  out += ": ";
  if (!w.field.empty()) out += w.field + ": ";
  out += message;
  return out;
}
}  // namespace

InputError::InputError(Location where, const std::string& message)
    : std::runtime_error(Format(where, message)), where_(std::move(where)), message_(message) {}

namespace {
thread_local int context_depth = 0;  // contexts alive
thread_local int failed_depth = 0;   // depth of the context failed_context came from; 0 = none
thread_local std::string failed_context;
}  // namespace

AllocationContext::AllocationContext(std::string what)
    : what_(std::move(what)), depth_(++context_depth), uncaught_(std::uncaught_exceptions()) {
  if (failed_depth >= depth_) {  // a failure recorded at this depth or deeper is over
    failed_depth = 0;
    failed_context.clear();
  }
}

AllocationContext::~AllocationContext() {
  --context_depth;
  if (std::uncaught_exceptions() > uncaught_) {
    // An exception leaves this scope. The innermost context is destroyed
    // first and records; the outer ones see a deeper record and keep it.
    if (failed_depth < depth_) {
      failed_context.swap(what_);  // no allocation while unwinding
      failed_depth = depth_;
    }
  } else if (failed_depth > depth_) {
    failed_depth = 0;  // an exception inside was handled
    failed_context.clear();
  }
}

const std::string& FailedContext() {
  return failed_context;
}

std::string QuoteForMessage(const std::string& s, size_t max_len) {
  std::string out = "\"";
  size_t n = 0;
  for (unsigned char c : s) {
    if (n++ >= max_len) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  out += "\"";
  return out;
}

std::string Expected(const std::string& expected, const std::string& got) {
  return fmt::format("expected {}, got {}", expected, QuoteForMessage(got));
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

NearestName FindNearestName(const std::string& key, const std::vector<std::string>& options) {
  // Dotted names (fabric.dcqcn.rate_ai): only the last component may be
  // abbreviated, the path before it must match.
  auto tail = [](const std::string& s) {
    const size_t dot = s.rfind('.');
    return dot == std::string::npos ? size_t{0} : dot + 1;
  };
  const size_t kt = tail(key);
  auto abbreviates = [&](const std::string& o) {
    const size_t ot = tail(o);
    if (kt != ot || key.compare(0, kt, o, 0, ot) != 0) return false;
    if (key.size() - kt < 2 || key.size() >= o.size() || key[kt] != o[ot]) return false;
    size_t i = kt;
    for (size_t j = ot; j < o.size(); ++j)
      if (i < key.size() && o[j] == key[i]) ++i;
    return i == key.size();
  };
  NearestName best;
  for (const std::string& o : options) {
    const bool abbrev = abbreviates(o);
    const size_t d = EditDistance(key, o);
    if (best.name.empty() || (abbrev && !best.abbreviation) ||
        (abbrev == best.abbreviation && d < best.distance)) {
      best.name = o;
      best.distance = d;
      best.abbreviation = abbrev;
    }
  }
  return best;
}

}  // namespace lossless
