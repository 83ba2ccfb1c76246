#pragma once
// Parser for `ethtool -m DEV` text output: SFF-8472 (SFP/SFP+), SFF-8636
// (QSFP+/QSFP28) and CMIS (QSFP-DD/OSFP) modules; one file may hold several modules
// (a loop over devices), each starting at its "Identifier : 0x.." line.
//
// Reads module temperature and voltage, per-lane tx/rx power (either the mW or
// the dBm form, or both), per-lane bias current, alarm/warning thresholds, rx/tx
// loss of signal, tx fault and tx disable when printed, and detects passive
// copper from "Transceiver type"/"Transmitter technology". Alarm/warning flag
// lines are not used: the rules recompute them from values and thresholds.
// Comment lines "# link: NAME" / "# time: ISO-8601", a saved prompt line
// "root@host:~# ethtool -m eth0" and a header "==== eth0 ====" name the link (and
// time) of the module that follows (see docs/optics.md). Lines pasted with a '#'
// prefix are read as if it were not there. Lines that are not "key : value", and
// keys that carry no health data, are skipped and listed in `skipped` with why.
//
// Throws InputError(name:line) for binary data, a malformed value of a key that is
// read, no "Identifier" line, or truncated output (an incomplete threshold set,
// lanes missing for one quantity).
#include <istream>
#include <string>
#include <string_view>

#include <vector>

#include "audit/optics/parse_util.hpp"
#include "audit/optics/reading.hpp"

namespace lossless::audit::optics {

std::vector<Reading> ParseEthtoolModules(std::string_view text, const std::string& name,
                                         SkippedLines* skipped);
// Exactly one module; InputError when the input holds several.
Reading ParseEthtoolModule(std::string_view text, const std::string& name);
Reading ParseEthtoolModule(std::istream& in, const std::string& name);

// Cheap sniff: an "Identifier : 0x.." line within the first lines.
bool LooksLikeEthtoolModule(std::string_view text);

}  // namespace lossless::audit::optics
