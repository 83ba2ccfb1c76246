#include "audit/optics/report.hpp"

#include <array>
#include <iterator>

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

std::string FormatIngestText(const std::string& file, const ParsedInput& p, bool verbose) {
  std::string out;
  auto o = std::back_inserter(out);
  for (size_t k = 0; k < p.readings.size(); ++k) {
    const auto& r = p.readings[k];
    fmt::format_to(o, "stored {} {}{} {} ({} lanes) from {}\n", r.link, FormatTimestamp(*r.time_s),
                   p.ingest_time[k] ? " (ingest time: the capture carries none)" : "", r.format,
                   r.lanes.size(), file);
  }
  if (verbose) {
    for (const auto& s : p.skipped) {
      fmt::format_to(o, "{}:{}: skipped ({}): {}\n", file, s.line, s.why, s.text);
    }
  } else if (!p.skipped.empty()) {
    fmt::format_to(o, "{}: {} line{} not used (--verbose lists them with the reason)\n", file,
                   p.skipped.size(), p.skipped.size() == 1 ? "" : "s");
  }
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
