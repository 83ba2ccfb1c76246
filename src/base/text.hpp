#pragma once
// Small text helpers shared by the input parsers (audit, optics, topology).
// All work on bytes: ASCII only, no locale, no allocation unless a
// std::string is returned. Views returned point into the argument.
#include <string>
#include <string_view>
#include <vector>

namespace lossless::text {

// The white space of std::isspace in the "C" locale: space \t \n \v \f \r.
inline constexpr std::string_view kWhitespace = " \t\n\v\f\r";
// White space inside one line (kWhitespace without \n).
inline constexpr std::string_view kLineBlanks = " \t\v\f\r";

// True when `c` is one of `blanks` (default kWhitespace).
bool IsSpace(char c, std::string_view blanks = kWhitespace);

// `s` without leading and trailing characters from `blanks`; empty when `s`
// is all blanks.
std::string_view Trim(std::string_view s, std::string_view blanks = kWhitespace);

// The non-empty runs of `s` between characters from `blanks`, in order.
// Empty or all-blank input gives an empty vector.
std::vector<std::string_view> SplitWhitespace(std::string_view s,
                                              std::string_view blanks = kWhitespace);

// True when `s` begins with `prefix` (always true for an empty prefix).
bool StartsWith(std::string_view s, std::string_view prefix);

// `s` with ASCII A-Z mapped to a-z; every other byte unchanged.
std::string ToLower(std::string_view s);

// `s` without ANSI CSI colour sequences: ESC '[' digits-or-';' and one final
// byte. An unterminated sequence at the end is kept as it is.
std::string StripAnsi(std::string_view s);

// `s` on one line, for an error message that quotes input: every control
// character (below 0x20, and 0x7f) becomes a visible escape (\n, \r, \t,
// \xHH), so a message stays one line whatever the input held.
std::string OneLine(std::string_view s);

// `s` (a report of several lines) safe for a terminal: as OneLine, but line
// feeds stay line feeds. Every report that may quote input (scenario and link
// names, node names from a topology file, audit findings) goes through it
// before it is printed, so an ANSI escape or a CR in an input file shows as
// \x1b or \r instead of acting on the terminal.
std::string ForTerminal(std::string_view s);

}  // namespace lossless::text
