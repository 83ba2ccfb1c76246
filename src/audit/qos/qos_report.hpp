#pragma once
// Rendering of a QosAudit: human text and one JSON document
// {"file", "format", "ports", "verdict", "checks": [{id, verdict, message, ports}], "notes"}.
#include <string>

#include <nlohmann/json.hpp>

#include "audit/qos/qos_rules.hpp"

namespace lossless::audit::qos {

// Multi-line text ending in "verdict: <overall>\n". Port lists longer than four
// names are shortened to "a, b, c, d (+N more)".
std::string FormatQosAuditText(const QosAudit& audit);
nlohmann::json QosAuditToJson(const QosAudit& audit);
// --verbose: one line per skipped input line, "  skipped line N: REASON: TEXT".
std::string FormatQosSkippedText(const std::vector<SkippedLine>& skipped);
// [{"line": N, "reason": "...", "text": "..."}, ...]
nlohmann::json QosSkippedToJson(const std::vector<SkippedLine>& skipped);

}  // namespace lossless::audit::qos
