#pragma once
// Rendering of `lossless optics`: the lines `ingest` prints for what it stored
// and skipped, and the link list of `status` / `quarantine` as text or as one
// JSON document {"links": [...], "summary": {healthy, watch, quarantine,
// invalid-data}} (docs/optics.md).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/optics/ingest.hpp"
#include "audit/optics/rules.hpp"

namespace lossless::audit::optics {

// One "stored ..." line per reading of `input` (read from `file`), then the
// skipped lines: each with its line number and reason when `verbose`, else a
// count.
std::string FormatIngestText(const std::string& file, const ParsedInput& input, bool verbose);

// One line per link and one per reason, then the summary line; "no <what>"
// when `links` is empty.
std::string FormatLinksText(const std::vector<LinkStatus>& links, const std::string& what);
nlohmann::json LinksToJson(const std::vector<LinkStatus>& links);

}  // namespace lossless::audit::optics
