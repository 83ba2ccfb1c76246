#pragma once
// Transceiver readings: the typed result of parsing one capture of one link
// (an `ethtool -m` dump, an `mlxlink` report, or one time step of a telemetry
// stream). Parsers fill what their input carries and leave the rest empty; the
// store keeps a reading whole; the rules turn a link's readings into a state.
//
// Units: optical power in mW (0 = no light; dBm derived), bias in mA,
// temperature in degrees C, voltage in V, time in Unix seconds (UTC).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace lossless::audit::optics {

// The monitored quantities that carry module thresholds.
enum class Quantity { kTemperature = 0, kVoltage, kBias, kTxPower, kRxPower };
inline constexpr size_t kQuantityCount = 5;
inline constexpr std::array<Quantity, kQuantityCount> kAllQuantities = {
    Quantity::kTemperature, Quantity::kVoltage, Quantity::kBias, Quantity::kTxPower,
    Quantity::kRxPower};

// Stable name used in the database and in JSON: "temperature_c", "voltage_v",
// "bias_ma", "tx_power_mw", "rx_power_mw".
std::string_view QuantityName(Quantity q);
// Human label with unit for messages: "rx power", "temperature", ...
std::string_view QuantityLabel(Quantity q);
bool IsPower(Quantity q);

// Alarm and warning limits a module reports for one quantity, in the
// quantity's unit (power in mW). Any of them may be missing.
struct Thresholds {
  std::optional<double> high_alarm;
  std::optional<double> low_alarm;
  std::optional<double> high_warning;
  std::optional<double> low_warning;

  bool Any() const { return high_alarm || low_alarm || high_warning || low_warning; }
  int Count() const;
  bool operator==(const Thresholds&) const = default;
};

// One optical lane (channel). `lane` is 1-based.
struct LaneReading {
  int lane = 0;
  std::optional<double> tx_power_mw;
  std::optional<double> rx_power_mw;
  std::optional<double> bias_ma;
  std::optional<bool> rx_los;
  std::optional<bool> tx_los;
  std::optional<bool> tx_fault;
  std::optional<bool> tx_disabled;
  std::optional<int64_t> raw_errors;  // pre-FEC error counter for this lane
  bool operator==(const LaneReading&) const = default;
};

struct Reading {
  std::string link;               // empty when the input does not name it
  std::optional<int64_t> time_s;  // Unix seconds, when the input carries a time
  std::string format;  // ethtool-sff8472 | ethtool-sff8636 | ethtool-cmis | mlxlink | telemetry |
                       // sonic-eeprom | nxos-transceiver | arista-transceiver
  std::string module_type;  // "SFP", "QSFP28", "QSFP-DD", "OSFP", ... (free text)
  std::string transceiver;  // transceiver / cable technology text
  bool copper = false;      // passive copper / no optics: no DOM by design
  // The port as the capture reports it: "up", "down" (enabled, no link), "admin-down"
  // (disabled by configuration: dark optics expected), or empty when the capture does not say.
  std::string port_state;
  // False when the capture says the module has no diagnostics ("Optical diagnostics support:
  // No", "Digital Diagnostic Monitoring: No", "DOM is not supported"); nullopt when not said.
  std::optional<bool> dom_supported;
  std::optional<double> temperature_c;
  std::optional<double> voltage_v;
  std::array<Thresholds, kQuantityCount> thresholds;  // indexed by Quantity
  std::vector<LaneReading> lanes;                     // sorted by lane, 1..N
  std::optional<double> raw_ber;                      // pre-FEC BER as the device reports it
  std::optional<double> effective_ber;                // post-FEC BER as the device reports it
  std::optional<int64_t> post_fec_errors;  // cumulative uncorrected errors since last clear
  std::optional<double> counters_age_s;    // time since the counters were cleared
  std::optional<int64_t> link_down_count;
  std::string speed;            // e.g. "400G"
  std::string fec;              // e.g. "Standard RS-FEC (544,514)"
  std::string troubleshooting;  // mlxlink recommendation text

  Thresholds& thr(Quantity q) { return thresholds[static_cast<size_t>(q)]; }
  const Thresholds& thr(Quantity q) const { return thresholds[static_cast<size_t>(q)]; }
  // Returns the lane, creating it (and keeping lanes sorted) when missing.
  LaneReading& Lane(int lane);
  bool operator==(const Reading&) const = default;
};

// 10*log10(mw); -inf for mw <= 0.
double MwToDbm(double mw);
double DbmToMw(double dbm);

// Strict number parsing: the whole text (trimmed) must be a finite number.
std::optional<double> ParseNumber(std::string_view text);
std::optional<int64_t> ParseInteger(std::string_view text);

// Timestamps: ISO-8601 "YYYY-MM-DDTHH:MM:SS[.fff](Z|+HH:MM|-HH:MM)" (a space
// instead of T is accepted; the zone is required) or Unix epoch seconds
// (digits only). Fractions of a second are dropped. nullopt when malformed.
std::optional<int64_t> ParseTimestamp(std::string_view text);
// "2026-03-01T12:00:00Z"
std::string FormatTimestamp(int64_t time_s);

// `s` without leading/trailing blanks of a line: space, tab and CR only
// (narrower than text::kWhitespace).
std::string_view Trim(std::string_view s);

// Throws InputError(file:line) when `text` looks binary (NUL or other control
// bytes beside tab/CR/LF/ESC); used by all parsers before they look at a line.
void CheckText(std::string_view text, const std::string& file);

// Splits text into lines (without the newline, CR stripped).
std::vector<std::string_view> SplitLines(std::string_view text);

}  // namespace lossless::audit::optics
