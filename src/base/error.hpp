#pragma once
// Errors that end an operation because the user's input is wrong.
//
// Policy (see docs/errors.md): bad input throws InputError, which the CLI
// prints as one line `file:line: field: message` and turns into exit code 2.
// Expected failures inside a computation are return values; asserts are for
// programmer errors only and are never reachable from user input.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lossless {

// Where in the user's input something is. `line` is 1-based; 0 = unknown.
struct Location {
  std::string file;  // path as given, or "<--set>", "<cli>", "<builtin>"
  int64_t line = 0;
  std::string field;  // dotted path of the field, e.g. "topology.gpus"; may be empty
};

class InputError : public std::runtime_error {
 public:
  // message: free text, usually "expected X, got Y".
  InputError(Location where, const std::string& message);
  const Location& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  Location where_;
  std::string message_;
};

// "expected <expected>, got <got>" with `got` quoted and shortened to 60 chars.
std::string Expected(const std::string& expected, const std::string& got);

// Quote a user string for messages: printable ASCII kept, others as \xNN, cut at max_len.
std::string QuoteForMessage(const std::string& s, size_t max_len = 60);

// Names what the program is building while it lives, so that an allocation
// failure inside can end in one line that says what was too large: when an
// exception leaves the scope, the innermost context's text is kept
// (FailedContext) for main() to print "out of memory while <what>" instead
// of "std::bad_alloc". Cheap: one string per scope, no allocation on the
// way out. Not thread-safe by design (one per thread).
class AllocationContext {
 public:
  explicit AllocationContext(std::string what);
  ~AllocationContext();
  AllocationContext(const AllocationContext&) = delete;
  AllocationContext& operator=(const AllocationContext&) = delete;

 private:
  std::string what_;
  int depth_;
  int uncaught_;
};
// The innermost context an exception left last; empty when none did.
const std::string& FailedContext();

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(const std::string& a, const std::string& b);

// The option a mistyped `key` most likely meant, for "did you mean": an
// option that `key` abbreviates (two or more of its letters in order, the
// first one first, as "rai" for "rate_ai"; in dotted names only the last
// component, the path before it equal) ranks before any other, then the
// smaller edit distance, then the earlier option. `name` is empty when
// `options` is.
struct NearestName {
  std::string name;
  size_t distance = SIZE_MAX;  // edit distance from key to name
  bool abbreviation = false;   // key's letters appear in name in order
  // A suggestion worth making: an abbreviation, or at most `max_distance` edits.
  bool Close(size_t max_distance) const {
    return !name.empty() && (abbreviation || distance <= max_distance);
  }
};
NearestName FindNearestName(const std::string& key, const std::vector<std::string>& options);

}  // namespace lossless
