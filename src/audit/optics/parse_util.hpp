#pragma once
// Small helpers shared by the text parsers (ethtool -m, mlxlink). Each throws
// InputError at `where` when the text is present but malformed.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/optics/reading.hpp"
#include "base/error.hpp"

namespace lossless::audit::optics {

// True for the words devices print instead of a value: "N/A", "NA", "Not supported", ...
bool IsNotAvailable(std::string_view value);

// "6.750 mA" with unit "mA" (case-insensitive, unit optional in the text);
// "33.48 degrees C / 92.26 degrees F" with unit "C" takes the part before '/'.
// nullopt when the value is IsNotAvailable.
std::optional<double> ParseValueWithUnit(std::string_view value, std::string_view unit,
                                         const Location& where);

// Power as ethtool prints it: "0.7518 mW / -1.24 dBm", "0.7518 mW", "-1.24 dBm",
// "0.0000 mW / -inf dBm". Returns mW (>= 0). The dBm form wins when finite
// (ethtool derives it from the raw register, so it is the more precise one at
// low power).
std::optional<double> ParsePowerMw(std::string_view value, const Location& where);

// Yes/No, On/Off, True/False, 1/0.
std::optional<bool> ParseFlagWord(std::string_view word);

// Comma-separated list, optionally in [ ]: "[ Yes , No ]", "0,0,1,0", "1.2,3.4".
std::vector<std::string_view> SplitList(std::string_view value);

// A comment or prompt line of a saved capture: "# link: NAME", "# time: ISO",
// "$ ethtool -m eth0", "# mlxlink -d mlx5_0 -p 1 -m -c". Fills r.link / r.time_s
// from them. Returns true when `line` (trimmed) was such a line.
bool ParseCaptureComment(std::string_view line, const Location& where, Reading& r);

// A line a parser read but did not use, and why; `ingest --verbose` prints them so nothing
// in a capture is dropped without a word. `line` is 1-based in the input file.
struct SkippedLine {
  int64_t line = 0;
  std::string text;
  std::string why;
};
using SkippedLines = std::vector<SkippedLine>;

// Appends to `out` when it is not null.
void Skip(SkippedLines* out, int64_t line, std::string_view text, std::string why);

// A line that starts a device's part of a capture made by a loop or pasted from a terminal:
//   a shell prompt with a command   "root@host:~# ethtool -m eth0", "admin@sonic:~$ show ...",
//                                   "switch# show interface transceiver details", "$ mlxlink -d
//                                   mlx5_0 -p 1", or the bare command "ethtool -m eth0"
//   a decorated device name         "==== mlx5_0 ====", "---- /dev/mst/mt4123_pciconf0 ----"
// Returns the device the line names ("eth0", "mlx5_0/p1" for mlxlink -d mlx5_0 -p 1, "mlx5_0"),
// "" when it names none, nullopt when the line is not such a header.
std::optional<std::string> HeaderDevice(std::string_view line);

// "# link: NAME" / "# time: ISO-8601" directives only (see docs/optics.md). Returns true when
// `line` was one; throws InputError at `where` for an empty name or a malformed time.
bool ParseDirective(std::string_view line, const Location& where, Reading& r);

// Text pasted with a comment prefix ("#\tIdentifier : 0x03 (SFP)", "# Temperature ..."):
// the line without its leading '#' characters and blanks. A line without the prefix, or a
// "#!" interpreter line, is returned trimmed and unchanged.
std::string_view StripPastePrefix(std::string_view line);

}  // namespace lossless::audit::optics
