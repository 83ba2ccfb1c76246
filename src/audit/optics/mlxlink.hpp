#pragma once
// Parser for `mlxlink -d DEV [-p PORT] -m -c` text output (NVIDIA ConnectX /
// Quantum / Spectrum). Reads, when present:
//   Operational Info       Speed, FEC
//   Troubleshooting Info   Status Opcode, Recommendation
//   Module Info            Identifier, Cable Type/Technology (passive copper),
//                          Temperature [C], Voltage [mV], Bias Current [mA],
//                          Rx/Tx Power Current [dBm] (per-lane lists), Rx/Tx LOS,
//                          Tx Fault; a trailing "[lo..hi]" range is taken as the
//                          module's low/high ALARM thresholds (mlxlink prints no
//                          warning thresholds)
//   Physical Counters and BER Info
//                          Time Since Last Clear [Min], Effective Physical Errors,
//                          Effective Physical BER, Raw Physical Errors Per Lane,
//                          Raw Physical BER, Link Down Counter, Symbol Errors
// Post-FEC errors are "Symbol Errors" when printed (IB HDR/NDR: symbol errors
// are what is left after FEC), else "Effective Physical Errors".
// "Effective/Raw Physical BER" of 15E-255 (mlxlink's smallest value) is read as 0.
// Operational Info "State" gives the port state (Active: up, Disable: admin-down).
// A file may hold several devices (a loop over HCAs or switch ports): a prompt or
// header line ("root@host:~# mlxlink -d mlx5_1", "==== mlx5_1 ====") or a repeated
// "Operational Info" starts the next device's report. The link name comes from
// "# link: NAME" or the prompt "mlxlink -d DEV -p N" (-> "DEV/pN"); the time from
// "# time: ISO-8601" (see docs/optics.md). "-E-"/"-W-" lines, keys before any
// section and lines that are not "key : value" are skipped and listed in `skipped`.
//
// Throws InputError(name:line) for binary data, malformed values, no Module Info
// or counters section anywhere, or a section cut short (truncated output).
#include <istream>
#include <string>
#include <string_view>

#include <vector>

#include "audit/optics/parse_util.hpp"
#include "audit/optics/reading.hpp"

namespace lossless::audit::optics {

std::vector<Reading> ParseMlxlinkReports(std::string_view text, const std::string& name,
                                         SkippedLines* skipped);
// Exactly one port; InputError when the input holds several.
Reading ParseMlxlink(std::string_view text, const std::string& name);
Reading ParseMlxlink(std::istream& in, const std::string& name);

// Cheap sniff: one of the mlxlink section titles on a line of its own.
bool LooksLikeMlxlink(std::string_view text);

}  // namespace lossless::audit::optics
