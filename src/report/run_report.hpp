#pragma once
// Text and JSON renderings of a scenario run (lossless run).
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/runner.hpp"

namespace lossless::report {

// Human-readable summary. With timing = false the wall-clock lines are left
// out, so the text is byte-identical across runs of the same scenario.
std::string RunText(const scenario::RunResult& r, bool timing = true);
// JSON document; wall-clock figures sit under "timing" (omitted if !timing).
nlohmann::ordered_json RunJson(const scenario::RunResult& r, bool timing = true);

}  // namespace lossless::report
