#pragma once
// Parsers for the switch-side transceiver reports, several ports per input, one
// reading per port (link = the port's name as the switch prints it):
//
//   SONiC `show interfaces transceiver eeprom --dom` (and `sfputil show eeprom --dom`):
//     "Ethernet0: SFP EEPROM detected" starts a port; ChannelMonitorValues (RXnPower,
//     TXnBias, TXnPower), ChannelThresholdValues (RxPower/TxBias/TxPower High/Low
//     Alarm/Warning), ModuleMonitorValues (Temperature, Vcc), ModuleThresholdValues
//     (Temp*, Vcc*); "SFP EEPROM Not detected" is an empty port (listed as skipped).
//   Cisco NX-OS `show interface transceiver details`:
//     "Ethernet1/1" starts a port; "type is ..." names the module; each diagnostics
//     table row "Temperature|Voltage|Current|Tx Power|Rx Power  <value> [flag]
//     <high alarm> <low alarm> <high warning> <low warning>"; "Lane Number:N Network
//     Lane" starts a lane (numbered 1.. in order of appearance), a "Common" lane
//     holds module values; "DOM is not supported" marks a module without DOM.
//   Arista EOS `show interfaces transceiver` (one row per interface: temperature,
//     voltage, bias, tx and rx power) and `show interfaces transceiver detail` (one
//     table per quantity with the four thresholds, column order read from the header).
//   Junos `show interfaces diagnostics optics`: "Physical interface: et-0/0/0" starts a
//     port; "Lane N" (0-based) starts a lane; ethtool-like "key : value" lines with
//     values and "... high/low alarm/warning threshold" lines.
//   Cisco IOS-XR `show controllers optics`: "Port: Optics0/0/0/1" (or the prompt's port,
//     or the file name) names a controller; Controller State (Up / Down /
//     Administratively Down) and Transport Admin State (Out Of Service: admin-down);
//     "Optics Type"; "TX/RX Power = ..", "Laser Bias Current = .. mA", "Temperature",
//     "Voltage"; the THRESHOLD VALUES table (dBm rows); the "Lane  Laser Bias  TX Power
//     RX Power" table (0-based lanes); "Detected LOS/LOL/FAULT: RX-LOS"; "Optics not
//     present" (port skipped).
//
// Values are in the units printed (power dBm -> mW). "N/A" is "not given". Copper
// is recognised from the module type/compliance text (copper, CR, CU, DAC, Twinax).
// These captures carry no time; ingest gives them one. Lines that carry no health
// data are listed in `skipped` with why. Throws InputError(name:line) for binary
// data, a malformed number in a field that is read, or no port at all.
#include <string>
#include <string_view>
#include <vector>

#include "audit/optics/parse_util.hpp"
#include "audit/optics/reading.hpp"

namespace lossless::audit::optics {

std::vector<Reading> ParseSonicEeprom(std::string_view text, const std::string& name,
                                      SkippedLines* skipped);
std::vector<Reading> ParseNxosTransceiver(std::string_view text, const std::string& name,
                                          SkippedLines* skipped);
std::vector<Reading> ParseAristaTransceiver(std::string_view text, const std::string& name,
                                            SkippedLines* skipped);

std::vector<Reading> ParseJunosOptics(std::string_view text, const std::string& name,
                                      SkippedLines* skipped);
std::vector<Reading> ParseIosxrOptics(std::string_view text, const std::string& name,
                                      SkippedLines* skipped);

// Cheap sniffs on the first few hundred lines.
bool LooksLikeSonicEeprom(std::string_view text);
bool LooksLikeNxosTransceiver(std::string_view text);
bool LooksLikeAristaTransceiver(std::string_view text);
bool LooksLikeJunosOptics(std::string_view text);
bool LooksLikeIosxrOptics(std::string_view text);

}  // namespace lossless::audit::optics
