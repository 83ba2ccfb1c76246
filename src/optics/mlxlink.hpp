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
// The link name comes from "# link: NAME" or a saved prompt "mlxlink -d DEV -p N"
// (-> "DEV/pN"); the time from "# time: ISO-8601" (see docs/optics.md).
//
// Throws InputError(name:line) for binary data, a line that is neither a
// section title, a dashed rule nor "key : value", malformed values, no Module
// Info or counters section, or a section cut short (truncated output).
#include <istream>
#include <string>
#include <string_view>

#include "optics/reading.hpp"

namespace lossless::optics {

Reading ParseMlxlink(std::string_view text, const std::string& name);
Reading ParseMlxlink(std::istream& in, const std::string& name);

// Cheap sniff: one of the mlxlink section titles on a line of its own.
bool LooksLikeMlxlink(std::string_view text);

}  // namespace lossless::optics
