#pragma once
// Parser for the lossless optics telemetry stream, CSV or JSON (schema in
// docs/optics.md). Both carry the same flat field names:
//   time, link                      required; time ISO-8601 with zone or epoch s
//   lane                            1-based; lane fields need it (CSV: column
//                                   absent = lane 1)
//   lane fields     rx_power_dbm|rx_power_mw, tx_power_dbm|tx_power_mw, bias_ma,
//                   raw_errors, rx_los, tx_los, tx_fault, tx_disabled
//   module fields   temperature_c, voltage_v, raw_ber, effective_ber,
//                   post_fec_errors, link_down_count, counters_age_s, copper,
//                   module_type, speed, fec
//   thresholds      <q>_<high|low>_<alarm|warning>, q one of temperature_c,
//                   voltage_v, bias_ma, tx_power_dbm, tx_power_mw, rx_power_dbm,
//                   rx_power_mw (e.g. rx_power_dbm_low_alarm)
// CSV: a header row, then one row per (time, link[, lane]); no quoting, '#'
// lines are comments, an empty cell means "not given".
// JSON: {"readings": [ {time, link, <module fields>, "lanes": [ {lane, <lane
// fields>} ]} ]} or the bare array.
// Rows with the same (link, time) form one Reading, in order of first
// appearance. A field given twice for the same reading with different values,
// an unknown field, or a malformed value throws InputError(name:line[, field]).
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "audit/optics/reading.hpp"

namespace lossless::audit::optics {

std::vector<Reading> ParseTelemetry(std::string_view text, const std::string& name);
std::vector<Reading> ParseTelemetry(std::istream& in, const std::string& name);

bool LooksLikeTelemetryJson(std::string_view text);
bool LooksLikeTelemetryCsv(std::string_view text);

}  // namespace lossless::audit::optics
