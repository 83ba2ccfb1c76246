#pragma once
// Text, JSON and CSV renderings of a scenario run (lossless run).
#include <string>

#include <nlohmann/json.hpp>

#include "report/result.hpp"

namespace lossless::report {

// Human-readable summary. With timing = false the wall-clock lines are left
// out, so the text is byte-identical across runs of the same scenario.
std::string RunText(const RunResult& r, bool timing = false);
// JSON document; wall-clock figures sit under "timing" (omitted if !timing).
nlohmann::ordered_json RunJson(const RunResult& r, bool timing = false);
// The sampled series as CSV: a header `time_ps,<kind>:<subject>,...`, then one
// row per sample (docs/series.md).
std::string SeriesCsv(const SeriesResult& s);

}  // namespace lossless::report
