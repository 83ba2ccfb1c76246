#pragma once
// The HTML report of `lossless compare`, rendered from its results.json
// (schema lossless.compare/1, docs/compare-results.md) alone.
#include <string>

#include <nlohmann/json.hpp>

namespace lossless::report {

// One self-contained HTML page: inline CSS and inline SVG, no script, no
// network access. It holds the title and options, the summary and caveats,
// the matrix (one column per profile, best value per row highlighted, null
// shown as an em dash with its note as a tooltip and a footnote), five charts
// (<svg data-chart="busbw|latency_cdf|iterations|incast|tco">, every drawn
// mark has class "mark"; a chart without data says "no data") and the
// operations facts in a table of their own.
//
// Every string from the JSON is HTML-escaped. The same JSON gives the same
// bytes (numbers are printed with fixed precision; no clock is read).
// Throws InputError at {source, 0, "<field path>"} when a field the page
// needs is missing or of the wrong type, or the schema is not
// lossless.compare/1.
std::string RenderCompareReport(const nlohmann::json& results, const std::string& source = "");

// `s` with & < > " ' replaced by entities: safe in element text and in
// quoted attribute values.
std::string HtmlEscape(const std::string& s);

}  // namespace lossless::report
