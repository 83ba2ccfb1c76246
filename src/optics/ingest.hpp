#pragma once
// Turns one input file of any supported kind into readings ready to store:
// detects the kind from the content (ethtool -m, mlxlink, telemetry JSON/CSV),
// parses it, and resolves every reading's link and time.
//
// Link: options.link, else what the input names, else the file stem.
// Time: options.at, else the input's own time, else InputError: there is no
// silent default clock ("--at now" is the explicit way to say "now").
// For a telemetry file with several links (times), --link (--at) is refused.
// Throws InputError(name:line) for empty, binary, unrecognised or malformed input.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optics/reading.hpp"

namespace lossless::optics {

struct IngestOptions {
  std::optional<int64_t> at;  // Unix seconds
  std::string link;           // empty = not given
};

enum class InputKind { kEthtoolModule, kMlxlink, kTelemetryJson, kTelemetryCsv, kUnknown };

InputKind DetectInputKind(std::string_view text);

std::vector<Reading> ParseInput(std::string_view text, const std::string& name,
                                const IngestOptions& options);

// Reads the file (InputError when it cannot be opened) and calls ParseInput.
std::vector<Reading> ReadInputFile(const std::string& path, const IngestOptions& options);

// "--at" values: ISO-8601 with zone, epoch seconds, or "now" (the clock, explicitly).
int64_t ParseAtOption(const std::string& text);

}  // namespace lossless::optics
