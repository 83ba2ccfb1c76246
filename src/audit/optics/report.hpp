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

// One summary line for `input` (read from `file`): "FILE: stored N readings
// of LINK (or of K links) at T (or from T1 to T2), FORMATS", with the count
// of lines not used. With `verbose`, first one "stored ..." line per reading
// and every skipped line with its line number and reason.
std::string FormatIngestText(const std::string& file, const ParsedInput& input, bool verbose);

// One line per link and one per reason, then the summary line; "no <what>"
// when `links` is empty.
std::string FormatLinksText(const std::vector<LinkStatus>& links, const std::string& what);
nlohmann::json LinksToJson(const std::vector<LinkStatus>& links);

}  // namespace lossless::audit::optics
