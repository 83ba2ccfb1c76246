#pragma once
// Rendering of `lossless audit nccl`: the text report of each run and the one
// JSON document (schema in docs/audit-nccl.md).
//
// Text per run: a header line, the size table (efficiency column when a line
// rate is known, '*' on judged sizes), peak and average busbw, the line rate,
// one line per finding ("FAIL", "INDETERMINATE" or "note") and the run's
// verdict, then a blank line.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "audit/nccl/nccl_log.hpp"
#include "audit/nccl/nccl_rules.hpp"
#include "audit/verdict.hpp"

namespace lossless::audit::nccl {

// A finding's label: "FAIL", "INDETERMINATE", "WARN", or "note" for a pass.
std::string_view FindingLabel(Verdict severity);

// `index` is the run's 1-based position in its file.
std::string FormatRunText(const NcclRun& run, const NcclRunReport& report, int64_t index);
nlohmann::json RunToJson(const NcclRun& run, const NcclRunReport& report);

// {"file", "runs", "verdict"}; a file with one run also carries that run's
// collective, peak_busbw_gbs, peak_size_bytes and avg_busbw_gbs at the top.
nlohmann::json FileToJson(const std::string& file, nlohmann::json runs, Verdict verdict);

// The document's settings: tool, min_efficiency, large_from_bytes, nic_gbps,
// nics_per_node, and an empty "files" array.
nlohmann::json DocumentHead(const NcclRulesConfig& config);

}  // namespace lossless::audit::nccl
