// `lossless audit nccl FILE...`: nccl-tests logs -> per-run verdicts.
// Parsing and rules live in src/audit/nccl; this file is option handling and printing.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/nccl/nccl_log.hpp"
#include "audit/nccl/nccl_rules.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "units/units.hpp"

namespace lossless::cli {
namespace {

using audit::Verdict;
using audit::nccl::NcclRulesConfig;
using audit::nccl::NcclRun;
using audit::nccl::NcclRunReport;

struct Preset {
  const char* name;
  double gbps;
};
constexpr Preset kPresets[] = {
    {"ib-edr", 100},    {"ib-hdr", 200},    {"ib-ndr", 400},    {"ib-xdr", 800},
    {"roce-100g", 100}, {"roce-200g", 200}, {"roce-400g", 400}, {"roce-800g", 800},
};

struct Options {
  std::vector<std::string> files;
  bool json = false;
  std::string preset;
  std::optional<double> nic_gbps;
  std::optional<int64_t> nics_per_node;
  std::string min_efficiency = "92%";
  std::string large_from = "256MiB";
};

double ParseEfficiency(const std::string& text) {
  Location where{"<cli>", 0, "--min-efficiency"};
  std::string t = text;
  bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno != 0)
    throw InputError(where, Expected("a percentage such as 92% or a fraction such as 0.92", text));
  if (percent || v > 1.0) v /= 100.0;
  if (!(v > 0 && v <= 1.0)) throw InputError(where, Expected("a value in (0%, 100%]", text));
  return v;
}

NcclRulesConfig MakeConfig(const Options& o) {
  NcclRulesConfig c;
  if (!o.preset.empty()) {
    const Preset* found = nullptr;
    std::vector<std::string> names;
    for (const auto& p : kPresets) {
      if (o.preset == p.name) found = &p;
      names.emplace_back(p.name);
    }
    const std::string nearest = FindNearestName(o.preset, names).name;
    if (!found)
      throw InputError(
          {"<cli>", 0, "--preset"},
          Expected("ib-edr, ib-hdr, ib-ndr, ib-xdr, roce-100g, roce-200g, roce-400g or "
                   "roce-800g (did you mean " +
                       nearest + "?)",
                   o.preset));
    if (o.nic_gbps && *o.nic_gbps != found->gbps)
      throw InputError({"<cli>", 0, "--nic-gbps"},
                       fmt::format("{:g} contradicts --preset {} ({:g} Gb/s)", *o.nic_gbps,
                                   found->name, found->gbps));
    c.nic_gbps = found->gbps;
  }
  if (o.nic_gbps) c.nic_gbps = o.nic_gbps;
  c.nics_per_node = o.nics_per_node;
  c.min_efficiency = ParseEfficiency(o.min_efficiency);
  c.large_from_bytes = units::ParseBytes(o.large_from, {"<cli>", 0, "--large-from"}).count();
  audit::nccl::ValidateConfig(c);
  return c;
}

std::string Size(int64_t b) {
  return units::FormatBytes(units::Bytes(b));
}

std::string_view SeverityName(Verdict s) {
  switch (s) {
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

std::string Describe(const NcclRunReport& r) {
  std::string coll = std::string(audit::nccl::CollectiveName(r.collective));
  if (r.collective_inferred) coll += " (inferred from the table)";
  std::string who = r.ranks > 0 ? fmt::format("{} ranks", r.ranks) : "ranks unknown";
  if (r.nodes) who += fmt::format(" on {} node{}", *r.nodes, *r.nodes == 1 ? "" : "s");
  return fmt::format("{} [{}], {}", coll, audit::nccl::GenerationName(r.generation), who);
}

void PrintText(const NcclRun& run, const NcclRunReport& r, int64_t index) {
  fmt::print("{}: run {} (line {}): {}\n", r.file, index, r.first_line, Describe(r));
  fmt::print("  {:>12}  {:>8}  {:>8}  {:>10}  {:>10}  {:>10}", "size(B)", "type", "redop",
             "oop busbw", "ip busbw", "#wrong");
  if (r.line_rate_gbs) fmt::print("  {:>7}", "eff");
  fmt::print("\n");
  for (size_t i = 0; i < run.rows.size(); ++i) {
    const auto& row = run.rows[i];
    auto wrong = [](const audit::nccl::NcclHalf& h) {
      return h.wrong ? fmt::format("{:g}", *h.wrong) : std::string("N/A");
    };
    fmt::print("  {:>12}  {:>8}  {:>8}  {:>10.2f}  {:>10.2f}  {:>10}", row.size_bytes, row.type,
               row.redop.empty() ? "-" : row.redop, row.out_of_place.busbw_gbs,
               row.in_place.busbw_gbs, wrong(row.out_of_place) + "/" + wrong(row.in_place));
    const auto& s = r.sizes[i];
    if (s.efficiency) fmt::print("  {:>6.1f}%{}", 100.0 * *s.efficiency, s.judged ? " *" : "");
    fmt::print("\n");
  }
  fmt::print("  peak busbw {:.2f} GB/s at {} ({} B); average busbw {:g} GB/s{}\n", r.peak_busbw_gbs,
             Size(r.peak_size_bytes), r.peak_size_bytes, r.avg_busbw_gbs,
             r.avg_from_footer ? "" : " (computed: no footer)");
  if (r.line_rate_gbs) {
    fmt::print("  line rate {:.1f} GB/s per node; efficiency judged at sizes marked *",
               *r.line_rate_gbs);
    if (r.peak_efficiency) fmt::print(" (best {:.1f}%)", 100.0 * *r.peak_efficiency);
    fmt::print("\n");
  }
  for (const auto& f : r.findings) {
    if (f.line > 0) {
      fmt::print("  {}: line {}: {}\n", SeverityName(f.severity), f.line, f.message);
    } else {
      fmt::print("  {}: {}\n", SeverityName(f.severity), f.message);
    }
  }
  fmt::print("  verdict: {}\n\n", audit::VerdictName(r.verdict));
}

nlohmann::json ToJson(const NcclRun& run, const NcclRunReport& r) {
  nlohmann::json j;
  j["first_line"] = r.first_line;
  j["generation"] = audit::nccl::GenerationName(r.generation);
  j["binary"] = run.binary;
  j["collective"] = audit::nccl::CollectiveName(r.collective);
  j["collective_inferred"] = r.collective_inferred;
  j["ranks"] = r.ranks;
  j["nodes"] = r.nodes ? nlohmann::json(*r.nodes) : nlohmann::json(nullptr);
  j["hosts"] = run.Hosts();
  j["peak_busbw_gbs"] = r.peak_busbw_gbs;
  j["peak_size_bytes"] = r.peak_size_bytes;
  j["avg_busbw_gbs"] = r.avg_busbw_gbs;
  j["avg_from_footer"] = r.avg_from_footer;
  j["line_rate_gbs"] = r.line_rate_gbs ? nlohmann::json(*r.line_rate_gbs) : nlohmann::json(nullptr);
  j["peak_efficiency"] =
      r.peak_efficiency ? nlohmann::json(*r.peak_efficiency) : nlohmann::json(nullptr);
  j["truncated"] = run.truncated;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < run.rows.size(); ++i) {
    const auto& row = run.rows[i];
    const auto& s = r.sizes[i];
    auto half = [](const audit::nccl::NcclHalf& h) {
      return nlohmann::json{
          {"time_us", h.time_us},
          {"algbw_gbs", h.algbw_gbs},
          {"busbw_gbs", h.busbw_gbs},
          {"wrong", h.wrong ? nlohmann::json(*h.wrong) : nlohmann::json(nullptr)}};
    };
    rows.push_back(
        {{"line", row.line},
         {"size_bytes", row.size_bytes},
         {"count", row.count},
         {"type", row.type},
         {"redop", row.redop},
         {"root", row.root},
         {"out_of_place", half(row.out_of_place)},
         {"in_place", half(row.in_place)},
         {"efficiency", s.efficiency ? nlohmann::json(*s.efficiency) : nlohmann::json(nullptr)},
         {"judged", s.judged}});
  }
  j["rows"] = std::move(rows);
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"code", f.code},
                        {"severity", SeverityName(f.severity)},
                        {"line", f.line},
                        {"message", f.message}});
  j["findings"] = std::move(findings);
  j["verdict"] = audit::VerdictName(r.verdict);
  return j;
}

// Returns the file's verdict; throws InputError when it cannot be read.
Verdict AuditFile(const std::string& path, const NcclRulesConfig& cfg, bool json,
                  nlohmann::json& jfile) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw InputError({path, 0, ""}, "is a directory, expected an nccl-tests log file");
    file.open(path, std::ios::binary);
    if (!file)
      throw InputError({path, 0, ""}, fmt::format("cannot open: {}", std::strerror(errno)));
    in = &file;
  }
  Verdict verdict = Verdict::kPass;
  int64_t index = 0;
  nlohmann::json runs = nlohmann::json::array();
  audit::nccl::StreamNcclLog(*in, path, [&](NcclRun&& run) {
    NcclRunReport rep = audit::nccl::EvaluateNcclRun(run, cfg);
    ++index;
    verdict = audit::Worst(verdict, rep.verdict);
    if (json) {
      runs.push_back(ToJson(run, rep));
    } else {
      PrintText(run, rep, index);
    }
  });
  if (json) {
    jfile["file"] = path;
    if (runs.size() == 1) {
      for (const char* k : {"collective", "peak_busbw_gbs", "peak_size_bytes", "avg_busbw_gbs"})
        jfile[k] = runs[0][k];
    }
    jfile["runs"] = std::move(runs);
    jfile["verdict"] = audit::VerdictName(verdict);
  }
  return verdict;
}

}  // namespace

void AddAuditNcclCommand(CLI::App& audit, Context& ctx) {
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = audit.add_subcommand(
      "nccl",
      "Audit nccl-tests *_perf logs: bus bandwidth, efficiency against NIC line rate, anomalies");
  cmd->add_option("files", opt->files, "nccl-tests output files ('-' = stdin)")->required();
  cmd->add_flag("--json", opt->json, "print one JSON document instead of text");
  cmd->add_option("--preset", opt->preset,
                  "NIC line rate by name: ib-edr, ib-hdr, ib-ndr, ib-xdr, roce-100g, roce-200g, "
                  "roce-400g, roce-800g");
  cmd->add_option("--nic-gbps", opt->nic_gbps, "line rate of one NIC in Gb/s");
  cmd->add_option("--nics-per-node", opt->nics_per_node, "NICs per node used by the run");
  cmd->add_option("--min-efficiency", opt->min_efficiency,
                  "busbw / line rate needed at large sizes (default 92%)");
  cmd->add_option("--large-from", opt->large_from,
                  "smallest size the efficiency verdict applies to (default 256MiB)");
  cmd->callback([opt, &ctx] {
    NcclRulesConfig cfg = MakeConfig(*opt);
    nlohmann::json doc;
    doc["tool"] = "audit nccl";
    doc["min_efficiency"] = cfg.min_efficiency;
    doc["large_from_bytes"] = cfg.large_from_bytes;
    doc["nic_gbps"] = cfg.nic_gbps ? nlohmann::json(*cfg.nic_gbps) : nlohmann::json(nullptr);
    doc["nics_per_node"] =
        cfg.nics_per_node ? nlohmann::json(*cfg.nics_per_node) : nlohmann::json(nullptr);
    doc["files"] = nlohmann::json::array();
    Verdict overall = Verdict::kPass;
    bool bad_input = false;
    for (const auto& path : opt->files) {
      nlohmann::json jfile;
      try {
        overall = audit::Worst(overall, AuditFile(path, cfg, opt->json, jfile));
      } catch (const InputError& e) {
        std::fflush(stdout);
        fmt::print(stderr, "error: {}\n", e.what());
        bad_input = true;
        jfile = {{"file", path}, {"error", e.what()}, {"verdict", "error"}};
      }
      if (opt->json) doc["files"].push_back(std::move(jfile));
    }
    doc["verdict"] = bad_input ? "error" : audit::VerdictName(overall);
    if (opt->json) {
      fmt::print("{}\n", doc.dump(2));
    } else if (!bad_input || opt->files.size() > 1) {
      fmt::print("overall verdict: {}\n", bad_input ? "error" : audit::VerdictName(overall));
    }
    // Indeterminate exits 1 here, not 3 (docs/errors.md: to be brought in line).
    ctx.exit_code = bad_input ? 2 : (overall == Verdict::kPass ? 0 : 1);
  });
}

}  // namespace lossless::cli
