#pragma once
// Internal helpers shared by the QoS parsers: line splitting, tokenising and
// number / size parsing with error locations. Not API outside audit/qos.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "audit/qos/qos_model.hpp"
#include "base/error.hpp"
#include "base/text.hpp"

namespace lossless::audit::qos::internal {

struct TextLine {
  int64_t number = 0;  // 1-based
  std::string_view text;  // into the split text; CR and trailing blanks removed
  size_t indent = 0;   // leading spaces (a tab counts as one)
};

// Split into lines; drops the CR of CRLF and trailing blanks. The lines view
// `text`, which must outlive them (no copy per line: the format readers
// re-split a group at each retry, ParseQosText).
std::vector<TextLine> SplitLines(std::string_view text);
// Trim (C-locale white space) and StartsWith are the shared ones.
using text::StartsWith;
using text::Trim;
// Split on runs of blanks.
std::vector<std::string> Words(std::string_view s);
// Split on runs of two or more blanks (columns of CLI tables).
std::vector<std::string> Columns(std::string_view s);

// Strict integer (optional leading '-'); throws InputError at `where`.
int64_t ParseInt(std::string_view s, const Location& where, const std::string& what);
// Decimal number, e.g. "146.48"; throws InputError.
double ParseDecimal(std::string_view s, const Location& where, const std::string& what);
// Priority / queue number 0..7.
int ParsePriority(std::string_view s, const Location& where);
// "3", "3,4", "0-2,5", "3 4" -> set of 0..7. Empty or "none" -> empty set.
std::set<int> ParsePriorityList(std::string_view s, const Location& where);
// Integer list with ranges, values in [lo, hi] (e.g. DSCP 0..63).
std::set<int> ParseIntList(std::string_view s, int lo, int hi, const Location& where,
                           const std::string& what);
// "<number> <unit>" buffer amount. Units (case-insensitive): b bytes, kb kbytes
// kilobytes (x1000 unless kib_for_kb), mb mbytes megabytes, kib, mib, cells
// segments. `kib_for_kb` reads KB/MB as 1024-based (NVUE prints KiB as "KB").
BufferAmount ParseAmount(std::string_view number, std::string_view unit, const Location& where,
                         bool kib_for_kb = false);

// First 1-based line of `text` containing `needle`, or 0.
int64_t FindLine(std::string_view text, std::string_view needle);

}  // namespace lossless::audit::qos::internal
