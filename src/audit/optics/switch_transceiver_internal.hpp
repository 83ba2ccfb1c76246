#pragma once
// Helpers the switch transceiver readers share (switch_transceiver.cpp,
// switch_transceiver_junos_iosxr.cpp). Not part of the module's interface.
#include <cstddef>
#include <optional>
#include <string_view>

#include "base/error.hpp"

namespace lossless::audit::optics::internal {

// Lines a format sniffer looks at before giving up.
inline constexpr size_t kSniffLines = 400;
// A module type that names a copper (passive or active) cable.
bool IsCopperText(std::string_view text);
// A value in `unit` ("c", "v", "ma", "dbm"; no unit written is accepted),
// converted from dBm to mW when `power` (-inf dBm is 0 mW; for other
// quantities -inf is no value); throws InputError at `at` for text that is
// not a number or is in another unit.
std::optional<double> MeasuredIn(std::string_view text, std::string_view unit, const Location& at,
                                 bool power);

}  // namespace lossless::audit::optics::internal
