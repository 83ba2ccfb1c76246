#include "audit/nccl/nccl_report.hpp"

#include <iterator>

#include <fmt/format.h>

#include "units/units.hpp"

namespace lossless::audit::nccl {
namespace {

std::string Size(int64_t b) {
  return units::FormatBytes(units::Bytes(b));
}

std::string Describe(const NcclRunReport& r) {
  std::string coll = std::string(CollectiveName(r.collective));
  if (r.collective_inferred) coll += " (inferred from the table)";
  std::string who = r.ranks > 0 ? fmt::format("{} ranks", r.ranks) : "ranks unknown";
  if (r.nodes) who += fmt::format(" on {} node{}", *r.nodes, *r.nodes == 1 ? "" : "s");
  return fmt::format("{} [{}], {}", coll, GenerationName(r.generation), who);
}

template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string_view FindingLabel(Verdict severity) {
  switch (severity) {
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kIndeterminate:
      return "INDETERMINATE";
    case Verdict::kWarn:
      return "WARN";
    case Verdict::kPass:
      return "note";
  }
  return "?";
}

std::string FormatRunText(const NcclRun& run, const NcclRunReport& r, int64_t index) {
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "{}: run {} (line {}): {}\n", r.file, index, r.first_line, Describe(r));
  fmt::format_to(o, "  {:>12}  {:>8}  {:>8}  {:>10}  {:>10}  {:>10}", "size(B)", "type", "redop",
                 "oop busbw", "ip busbw", "#wrong");
  if (r.line_rate_gbs) fmt::format_to(o, "  {:>7}", "eff");
  out += "\n";
  for (size_t i = 0; i < run.rows.size(); ++i) {
    const auto& row = run.rows[i];
    auto wrong = [](const NcclHalf& h) {
      return h.wrong ? fmt::format("{:g}", *h.wrong) : std::string("N/A");
    };
    fmt::format_to(o, "  {:>12}  {:>8}  {:>8}  {:>10.2f}  {:>10.2f}  {:>10}", row.size_bytes,
                   row.type, row.redop.empty() ? "-" : row.redop, row.out_of_place.busbw_gbs,
                   row.in_place.busbw_gbs, wrong(row.out_of_place) + "/" + wrong(row.in_place));
    const auto& s = r.sizes[i];
    if (s.efficiency)
      fmt::format_to(o, "  {:>6.1f}%{}", 100.0 * *s.efficiency, s.judged ? " *" : "");
    out += "\n";
  }
  fmt::format_to(o, "  peak busbw {:.2f} GB/s at {} ({} B); average busbw {:g} GB/s{}\n",
                 r.peak_busbw_gbs, Size(r.peak_size_bytes), r.peak_size_bytes, r.avg_busbw_gbs,
                 r.avg_from_footer ? "" : " (computed: no footer)");
  if (r.line_rate_gbs) {
    fmt::format_to(o, "  line rate {:.1f} GB/s per node; efficiency judged at sizes marked *",
                   *r.line_rate_gbs);
    if (r.peak_efficiency) fmt::format_to(o, " (best {:.1f}%)", 100.0 * *r.peak_efficiency);
    out += "\n";
  }
  for (const auto& f : r.findings) {
    if (f.line > 0) {
      fmt::format_to(o, "  {}: line {}: {}\n", FindingLabel(f.severity), f.line, f.message);
    } else {
      fmt::format_to(o, "  {}: {}\n", FindingLabel(f.severity), f.message);
    }
  }
  fmt::format_to(o, "  verdict: {}\n\n", VerdictName(r.verdict));
  return out;
}

nlohmann::json RunToJson(const NcclRun& run, const NcclRunReport& r) {
  nlohmann::json j;
  j["first_line"] = r.first_line;
  j["generation"] = GenerationName(r.generation);
  j["binary"] = run.binary;
  j["collective"] = CollectiveName(r.collective);
  j["collective_inferred"] = r.collective_inferred;
  j["ranks"] = r.ranks;
  j["nodes"] = OrNull(r.nodes);
  j["hosts"] = run.Hosts();
  j["peak_busbw_gbs"] = r.peak_busbw_gbs;
  j["peak_size_bytes"] = r.peak_size_bytes;
  j["avg_busbw_gbs"] = r.avg_busbw_gbs;
  j["avg_from_footer"] = r.avg_from_footer;
  j["line_rate_gbs"] = OrNull(r.line_rate_gbs);
  j["peak_efficiency"] = OrNull(r.peak_efficiency);
  j["truncated"] = run.truncated;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < run.rows.size(); ++i) {
    const auto& row = run.rows[i];
    const auto& s = r.sizes[i];
    auto half = [](const NcclHalf& h) {
      return nlohmann::json{{"time_us", h.time_us},
                            {"algbw_gbs", h.algbw_gbs},
                            {"busbw_gbs", h.busbw_gbs},
                            {"wrong", OrNull(h.wrong)}};
    };
    rows.push_back({{"line", row.line},
                    {"size_bytes", row.size_bytes},
                    {"count", row.count},
                    {"type", row.type},
                    {"redop", row.redop},
                    {"root", row.root},
                    {"out_of_place", half(row.out_of_place)},
                    {"in_place", half(row.in_place)},
                    {"efficiency", OrNull(s.efficiency)},
                    {"judged", s.judged}});
  }
  j["rows"] = std::move(rows);
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"code", f.code},
                        {"severity", FindingLabel(f.severity)},
                        {"line", f.line},
                        {"message", f.message}});
  j["findings"] = std::move(findings);
  j["verdict"] = VerdictName(r.verdict);
  return j;
}

nlohmann::json FileToJson(const std::string& file, nlohmann::json runs, Verdict verdict) {
  nlohmann::json j;
  j["file"] = file;
  if (runs.size() == 1) {
    for (const char* k : {"collective", "peak_busbw_gbs", "peak_size_bytes", "avg_busbw_gbs"})
      j[k] = runs[0][k];
  }
  j["runs"] = std::move(runs);
  j["verdict"] = VerdictName(verdict);
  return j;
}

nlohmann::json DocumentHead(const NcclRulesConfig& c) {
  nlohmann::json doc;
  doc["tool"] = "audit nccl";
  doc["min_efficiency"] = c.min_efficiency;
  doc["large_from_bytes"] = c.large_from_bytes;
  doc["nic_gbps"] = OrNull(c.nic_gbps);
  doc["nics_per_node"] = OrNull(c.nics_per_node);
  doc["files"] = nlohmann::json::array();
  return doc;
}

}  // namespace lossless::audit::nccl
