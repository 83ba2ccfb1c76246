#pragma once
// Parser for `ethtool -m DEV` text output: SFF-8472 (SFP/SFP+), SFF-8636
// (QSFP+/QSFP28) and CMIS (QSFP-DD/OSFP) modules, one module per input.
//
// Reads module temperature and voltage, per-lane tx/rx power (either the mW or
// the dBm form, or both), per-lane bias current, alarm/warning thresholds, rx/tx
// loss of signal, tx fault and tx disable when printed, and detects passive
// copper from "Transceiver type"/"Transmitter technology". Alarm/warning flag
// lines are not used: the rules recompute them from values and thresholds.
// Comment lines "# link: NAME" / "# time: ISO-8601" and a saved prompt line
// "$ ethtool -m eth0" name the link and time (see docs/optics.md).
//
// Throws InputError(name:line) for binary data, a line that is not
// "key : value", a malformed value, no "Identifier" line, or truncated output
// (an incomplete threshold set, lanes missing for one quantity).
#include <istream>
#include <string>
#include <string_view>

#include "optics/reading.hpp"

namespace lossless::optics {

Reading ParseEthtoolModule(std::string_view text, const std::string& name);
Reading ParseEthtoolModule(std::istream& in, const std::string& name);

// Cheap sniff: an "Identifier : 0x.." line within the first lines.
bool LooksLikeEthtoolModule(std::string_view text);

}  // namespace lossless::optics
