#include "audit/optics/report.hpp"

#include <array>
#include <iterator>
#include <set>
#include <string>

#include <fmt/format.h>

#include "audit/optics/reading.hpp"

namespace lossless::audit::optics {
namespace {

// Links per state, indexed by Verdict.
std::array<int, 4> CountStates(const std::vector<LinkStatus>& links) {
  std::array<int, 4> counts{};
  for (const auto& s : links) ++counts[static_cast<size_t>(s.state)];
  return counts;
}

int Count(const std::array<int, 4>& counts, Verdict v) {
  return counts[static_cast<size_t>(v)];
}

nlohmann::json LinkToJson(const LinkStatus& s) {
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& r : s.reasons) {
    nlohmann::json j = {{"rule", r.rule},
                        {"severity", std::string(SeverityName(r.severity))},
                        {"message", r.message}};
    if (r.lane > 0) j["lane"] = r.lane;
    reasons.push_back(j);
  }
  nlohmann::json j = {{"link", s.link},
                      {"state", std::string(StateName(s.state))},
                      {"reasons", reasons},
                      {"readings", s.readings}};
  j["last_time"] =
      s.last_time_s ? nlohmann::json(FormatTimestamp(*s.last_time_s)) : nlohmann::json(nullptr);
  j["rx_margin_db"] = s.rx_margin_db ? nlohmann::json(*s.rx_margin_db) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

std::string FormatIngestText(const std::string& file, const ParsedInput& input, bool verbose) {
  std::string out;
  auto o = std::back_inserter(out);
  if (verbose) {
    for (size_t k = 0; k < input.readings.size(); ++k) {
      const auto& r = input.readings[k];
      fmt::format_to(o, "stored {} {}{} {} ({} lanes) from {}\n", r.link,
                     FormatTimestamp(*r.time_s),
                     input.ingest_time[k] ? " (ingest time: the capture carries none)" : "", r.format,
                     r.lanes.size(), file);
    }
    for (const auto& s : input.skipped) {
      fmt::format_to(o, "{}:{}: skipped ({}): {}\n", file, s.line, s.why, s.text);
    }
  }
  // One summary line per file, whatever its size (a 12.7 MB telemetry CSV
  // printed 50,000 lines).
  std::set<std::string> links;
  std::set<std::string> formats;
  int64_t first = 0;
  int64_t last = 0;
  size_t at_ingest_time = 0;
  for (size_t k = 0; k < input.readings.size(); ++k) {
    const auto& r = input.readings[k];
    links.insert(r.link);
    formats.insert(r.format);
    if (k == 0 || *r.time_s < first) first = *r.time_s;
    if (k == 0 || *r.time_s > last) last = *r.time_s;
    if (input.ingest_time[k]) ++at_ingest_time;
  }
  const size_t n = input.readings.size();
  std::string what = links.size() == 1 ? fmt::format("of {}", *links.begin())
                                       : fmt::format("of {} links", links.size());
  std::string when =
      first == last ? fmt::format("at {}", FormatTimestamp(first))
                    : fmt::format("from {} to {}", FormatTimestamp(first), FormatTimestamp(last));
  if (at_ingest_time == n && n > 0) {
    when += " (ingest time: the capture carries none)";
  } else if (at_ingest_time > 0) {
    when += fmt::format(" ({} at the ingest time: their capture carries none)", at_ingest_time);
  }
  std::string fmts;
  for (const auto& f : formats) fmts += (fmts.empty() ? "" : ",") + f;
  fmt::format_to(o, "{}: stored {} reading{} {} {}, {}", file, n, n == 1 ? "" : "s", what, when,
                 fmts);
  if (!verbose && !input.skipped.empty()) {
    fmt::format_to(o, "; {} line{} not used (--verbose lists them with the reason)",
                   input.skipped.size(), input.skipped.size() == 1 ? "" : "s");
  }
  out += "\n";
  return out;
}

std::string FormatLinksText(const std::vector<LinkStatus>& links, const std::string& what) {
  std::string out;
  auto o = std::back_inserter(out);
  if (links.empty()) fmt::format_to(o, "no {}\n", what);
  for (const auto& s : links) {
    std::string extra;
    if (s.rx_margin_db) extra = fmt::format(", rx margin {:.2f} dB to low alarm", *s.rx_margin_db);
    fmt::format_to(o, "{:<12} {}  ({} reading{}, last {}{})\n", StateName(s.state), s.link,
                   s.readings, s.readings == 1 ? "" : "s",
                   s.last_time_s ? FormatTimestamp(*s.last_time_s) : "-", extra);
    for (const auto& r : s.reasons) {
      fmt::format_to(o, "    [{}] {}\n", SeverityName(r.severity), r.message);
    }
  }
  const auto counts = CountStates(links);
  fmt::format_to(o, "summary: {} quarantine, {} watch, {} invalid-data, {} healthy\n",
                 Count(counts, Verdict::kFail), Count(counts, Verdict::kWarn),
                 Count(counts, Verdict::kIndeterminate), Count(counts, Verdict::kPass));
  return out;
}

nlohmann::json LinksToJson(const std::vector<LinkStatus>& links) {
  nlohmann::json doc;
  doc["links"] = nlohmann::json::array();
  for (const auto& s : links) doc["links"].push_back(LinkToJson(s));
  const auto counts = CountStates(links);
  doc["summary"] = {{"healthy", Count(counts, Verdict::kPass)},
                    {"watch", Count(counts, Verdict::kWarn)},
                    {"quarantine", Count(counts, Verdict::kFail)},
                    {"invalid-data", Count(counts, Verdict::kIndeterminate)}};
  return doc;
}

}  // namespace lossless::audit::optics
