#pragma once
// Turns one input file of any supported kind into readings ready to store:
// detects the kind from the content (ethtool -m, mlxlink, SONiC / NX-OS / Arista
// transceiver output, telemetry JSON/CSV), parses it, and resolves every
// reading's link and time.
//
// Link: options.link, else what the input names, else the file stem.
// Time: options.at, else the input's own time, else options.now (the ingest
// time: `ethtool -m` and the switch commands print none), else InputError.
// For a file with several links (times), --link (--at) is refused.
// Throws InputError(name:line) for empty, binary, unrecognised or malformed input.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/optics/parse_util.hpp"
#include "audit/optics/reading.hpp"

namespace lossless::audit::optics {

struct IngestOptions {
  std::optional<int64_t> at;   // Unix seconds
  std::string link;            // empty = not given
  std::optional<int64_t> now;  // Unix seconds: the time of a reading whose input carries none
};

enum class InputKind {
  kEthtoolModule,
  kMlxlink,
  kSonicEeprom,
  kNxosTransceiver,
  kAristaTransceiver,
  kJunosOptics,
  kIosxrOptics,
  kTelemetryJson,
  kTelemetryCsv,
  kUnknown
};

// The readings of one file, which of them got the ingest time, and the lines skipped.
struct ParsedInput {
  std::vector<Reading> readings;
  std::vector<bool> ingest_time;  // parallel to readings
  SkippedLines skipped;
};

InputKind DetectInputKind(std::string_view text);

ParsedInput ParseInputDetailed(std::string_view text, const std::string& name,
                               const IngestOptions& options);
std::vector<Reading> ParseInput(std::string_view text, const std::string& name,
                                const IngestOptions& options);

// Reads the file (InputError when it cannot be opened) and calls ParseInputDetailed.
ParsedInput ReadInputFileDetailed(const std::string& path, const IngestOptions& options);
std::vector<Reading> ReadInputFile(const std::string& path, const IngestOptions& options);

// "--at" values: ISO-8601 with zone, epoch seconds, or "now" (the clock, explicitly).
int64_t ParseAtOption(const std::string& text);

}  // namespace lossless::audit::optics
