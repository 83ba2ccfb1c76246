// `lossless audit nccl FILE...`: nccl-tests logs -> per-run verdicts.
// Parsing, rules and rendering live in src/audit/nccl; this file is option handling
// and wiring.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/nccl/nccl_log.hpp"
#include "audit/nccl/nccl_report.hpp"
#include "audit/nccl/nccl_rules.hpp"
#include "audit/verdict.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "units/units.hpp"

namespace lossless::cli {
namespace {

namespace nccl = audit::nccl;

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

// The --json document written as the runs arrive: the bytes doc.dump(2)
// would give for the whole document (nlohmann's sorted keys put "files"
// first), holding at most one run's JSON, so memory follows the largest run
// and not the file (a 200 MB log of 72,920 runs took 2.3 GB). A file's first
// run is held until the second arrives, because a file of one run carries
// that run's summary before "runs" (FileToJson).
class JsonStream {
 public:
  explicit JsonStream(nlohmann::json head) : head_(std::move(head)) {
    std::fputs("{\n  \"files\": [", stdout);
  }

  void BeginFile(const std::string& path) {
    path_ = path;
    held_ = nlohmann::json();
    runs_ = 0;
  }

  void Run(nlohmann::json run) {
    if (++runs_ == 1) {
      held_ = std::move(run);
      return;
    }
    if (runs_ == 2) {
      Element(4, nullptr);
      std::fputs("{\n", stdout);
      fmt::print("      \"file\": {},\n      \"runs\": [", Dump(path_, 0));
      Element(8, &held_);
      held_ = nlohmann::json();
    }
    Element(8, &run);
  }

  void EndFile(Verdict verdict) { Close(nlohmann::json(audit::VerdictName(verdict)), nullptr); }

  // The file ended in bad input: its runs so far stay, "error" follows them.
  void FileError(const std::string& message) {
    const nlohmann::json error = message;
    Close(nlohmann::json("error"), &error);
  }

  void Finish(const std::string& verdict) {
    head_.erase("files");
    head_["verdict"] = verdict;
    const std::string rest = Dump(head_, 0);  // "{\n  \"large_from_bytes\": ...\n}"
    fmt::print("\n  ],\n{}\n", rest.substr(2));
    // A full disk shows here for a small document: keep the reason (main
    // reports "<stdout>: cannot write: REASON").
    if (std::fflush(stdout) != 0)
      throw std::system_error(errno, std::generic_category(), "cannot write to file");
  }

 private:
  static std::string Dump(const nlohmann::json& j, int indent) {
    std::string s = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::string pad(static_cast<size_t>(indent), ' ');
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    for (char c : s) {
      out += c;
      if (c == '\n') out += pad;
    }
    return out;
  }

  // The separator before an element of an array at `indent`, then `j` (if any).
  void Element(int indent, const nlohmann::json* j) {
    bool& first = indent == 4 ? first_file_ : first_run_;
    fmt::print("{}\n{}", first ? "" : ",", std::string(static_cast<size_t>(indent), ' '));
    first = false;
    if (indent == 4) first_run_ = true;
    if (j != nullptr) std::fputs(Dump(*j, indent).c_str(), stdout);
  }

  void Close(const nlohmann::json& verdict, const nlohmann::json* error) {
    if (runs_ <= 1) {
      nlohmann::json file;
      if (error != nullptr) {
        file = {{"file", path_}, {"error", *error}, {"verdict", verdict}};
      } else {
        nlohmann::json runs = nlohmann::json::array();
        if (runs_ == 1) runs.push_back(std::move(held_));
        file = nccl::FileToJson(path_, std::move(runs), Verdict::kPass);
        file["verdict"] = verdict;
      }
      Element(4, &file);
    } else {
      std::fputs("\n      ],\n", stdout);
      if (error != nullptr) fmt::print("      \"error\": {},\n", Dump(*error, 0));
      fmt::print("      \"verdict\": {}\n    }}", Dump(verdict, 0));
    }
    held_ = nlohmann::json();
    runs_ = 0;
  }

  nlohmann::json head_;
  std::string path_;
  nlohmann::json held_;
  int64_t runs_ = 0;
  bool first_file_ = true;
  bool first_run_ = true;
};

// Returns the file's verdict; throws InputError when it cannot be read. With
// `json`, its runs go there, else to stdout as text.
Verdict AuditFile(const std::string& path, const NcclRulesConfig& cfg, JsonStream* json) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw InputError({path, 0, ""}, "is a directory: expected an nccl-tests log");
    file.open(path, std::ios::binary);
    if (!file)
      throw InputError({path, 0, ""}, fmt::format("cannot open: {}", std::strerror(errno)));
    in = &file;
  }
  const AllocationContext context("auditing the nccl-tests log " + path);
  Verdict verdict = Verdict::kPass;
  int64_t index = 0;
  nccl::StreamNcclLog(*in, path, [&](NcclRun&& run) {
    NcclRunReport rep = nccl::EvaluateNcclRun(run, cfg);
    ++index;
    verdict = audit::Worst(verdict, rep.verdict);
    if (json != nullptr) {
      json->Run(nccl::RunToJson(run, rep));
    } else {
      fmt::print("{}", text::ForTerminal(nccl::FormatRunText(run, rep, index)));
    }
  });
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
    std::optional<JsonStream> json;
    if (opt->json) json.emplace(audit::nccl::DocumentHead(cfg));
    Verdict overall = Verdict::kPass;
    bool bad_input = false;
    for (const auto& path : opt->files) {
      if (json) json->BeginFile(path);
      try {
        const Verdict v = AuditFile(path, cfg, json ? &*json : nullptr);
        overall = audit::Worst(overall, v);
        if (json) json->EndFile(v);
      } catch (const InputError& e) {
        std::fflush(stdout);
        fmt::print(stderr, "error: {}\n", text::OneLine(e.what()));
        bad_input = true;
        if (json) json->FileError(e.what());
      }
    }
    if (json) {
      json->Finish(bad_input ? "error" : std::string(audit::VerdictName(overall)));
    } else if (!bad_input || opt->files.size() > 1) {
      fmt::print("overall verdict: {}\n", bad_input ? "error" : audit::VerdictName(overall));
    }
    // docs/errors.md: 0 pass, 1 fail, 2 bad input (any file), 3 indeterminate.
    ctx.exit_code = bad_input ? 2 : audit::ExitCode(overall, /*strict=*/false);
  });
}

}  // namespace lossless::cli
