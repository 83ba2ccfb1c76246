#pragma once
// Internal: splits what users paste (show output, config fragments and JSON,
// separated by shell prompts, prose, Markdown fences, `...` elisions and
// documentation indentation) into segments of one format each.
//
// Line numbers are kept: each segment is a set of 1-based line numbers of the
// original text, and SegmentText() rebuilds a text of the same length in which
// every other line is blank, so parser error locations stay exact.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/qos/qos_model.hpp"

namespace lossless::audit::qos::internal {

// Formats the segmenter scores and detects: every QosFormat before
// kSwitchConfig (which ParseQosText chooses when none of them is found).
inline constexpr size_t kQosFormatCount = 9;
static_assert(static_cast<size_t>(QosFormat::kSwitchConfig) == kQosFormatCount);

// Evidence for each format in one trimmed line, indexed by QosFormat.
void ScoreQosLine(std::string_view trimmed, std::array<int, kQosFormatCount>& points);

struct Segment {
  std::vector<int64_t> lines;  // 1-based, ascending; blank lines included
  std::array<int, kQosFormatCount> points{};
  std::optional<QosFormat> format;  // nullopt: not recognised
};

struct SegmentedText {
  std::vector<std::string> content;  // per line (index = line - 1): text after
                                     // prompt removal and de-indentation
  std::vector<Segment> segments;
  std::vector<SkippedLine> skipped;  // prompts, fences, elisions, comments
};

// Splits `text` (already checked to be text). With `forced`, every segment is
// given that format.
SegmentedText SegmentQosText(std::string_view text, std::optional<QosFormat> forced);

// Text of the same line count as the input, holding content[] on `lines` and
// blank lines elsewhere.
std::string SegmentText(const SegmentedText& s, const std::vector<int64_t>& lines);

// SegmentText's text, from which a reader's retry blanks one more line in
// place (ParseQosText drops a line a reader cannot interpret and reads the
// group again, up to hundreds of times on a large file: rebuilding the text
// each time cost more than the reading).
class GroupText {
 public:
  GroupText(const SegmentedText& s, const std::vector<int64_t>& lines);
  // Empties 1-based line `line` (out of range: nothing).
  void Blank(int64_t line);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<size_t> starts_;  // offset of each line in text_
};

}  // namespace lossless::audit::qos::internal
