// `lossless audit topo FILE`: nvidia-smi topo -m -> GPU/NIC pairing verdicts.
// Parsing and rules live in src/audit/topo; this file is option handling and printing.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/topo/topo_rules.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "formats/topo_matrix.hpp"

namespace lossless::cli {
namespace {

struct TopoOptions {
  std::string file;
  bool json = false;
};

formats::TopoMatrix Load(const std::string& path) {
  if (path == "-") return formats::ParseTopoMatrix(std::cin, path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError({path, 0, ""}, "is a directory, expected an nvidia-smi topo -m file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, ""}, fmt::format("cannot open: {}", std::strerror(errno)));
  return formats::ParseTopoMatrix(in, path);
}

std::string NumaText(const audit::topo::TopoPair& p) {
  if (!p.numa_match) return "unknown";
  return *p.numa_match ? "yes" : "no";
}

void PrintText(const audit::topo::TopoReport& r) {
  fmt::print("{}: {} GPUs, {} NICs\n", r.file, r.gpus, r.nics);
  if (!r.pairs.empty()) {
    fmt::print("  {:<6} {:<14} {:<6} {:<6} {:<10} {:<14} {}\n", "gpu", "nic", "link", "numa",
               "gpu numa", "verdict", "why");
    for (const auto& p : r.pairs) {
      std::string nic = p.nic;
      if (p.shared_by > 1) nic += fmt::format(" x{}", p.shared_by);
      fmt::print("  {:<6} {:<14} {:<6} {:<6} {:<10} {:<14} {}\n", p.gpu, nic, p.link_text,
                 NumaText(p), p.gpu_numa.empty() ? "-" : p.gpu_numa, audit::VerdictName(p.verdict),
                 p.reason);
    }
  }
  for (const auto& f : r.findings) fmt::print("  {}\n", f);
  if (r.nccl_ib_hca) fmt::print("  suggested: NCCL_IB_HCA={}\n", *r.nccl_ib_hca);
  fmt::print("verdict: {}\n", audit::VerdictName(r.verdict));
}

nlohmann::json ToJson(const formats::TopoMatrix& m, const audit::topo::TopoReport& r) {
  nlohmann::json j;
  j["tool"] = "audit topo";
  j["file"] = r.file;
  j["gpus"] = r.gpus;
  j["nics"] = r.nics;
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : m.devices) {
    nlohmann::json jd{{"column", d.column},
                      {"kind", d.kind == formats::TopoDeviceKind::kGpu ? "gpu" : "nic"},
                      {"name", d.name},
                      {"line", d.line}};
    if (d.kind == formats::TopoDeviceKind::kGpu) {
      jd["cpu_affinity"] = d.cpu_affinity;
      jd["numa_affinity"] = d.numa_affinity;
      jd["gpu_numa_id"] = d.gpu_numa_id;
    }
    devices.push_back(std::move(jd));
  }
  j["devices"] = std::move(devices);
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& p : r.pairs) {
    pairs.push_back(
        {{"gpu", p.gpu},
         {"nic", p.nic},
         {"nic_column", p.nic_column},
         {"link", p.link_text},
         {"numa_match", p.numa_match ? nlohmann::json(*p.numa_match) : nlohmann::json(nullptr)},
         {"gpu_numa", p.gpu_numa},
         {"shared_by", p.shared_by},
         {"verdict", audit::VerdictName(p.verdict)},
         {"reason", p.reason}});
  }
  j["pairs"] = std::move(pairs);
  j["unused_nics"] = r.unused_nics;
  j["findings"] = r.findings;
  j["nccl_ib_hca"] = r.nccl_ib_hca ? nlohmann::json(*r.nccl_ib_hca) : nlohmann::json(nullptr);
  j["verdict"] = audit::VerdictName(r.verdict);
  return j;
}

}  // namespace

void AddAuditTopoCommand(CLI::App& audit, Context& ctx) {
  auto opt = std::make_shared<TopoOptions>();
  CLI::App* cmd = audit.add_subcommand(
      "topo", "Audit nvidia-smi topo -m: pair each GPU with its best NIC and judge the PCIe path");
  cmd->add_option("file", opt->file, "output of nvidia-smi topo -m ('-' = stdin)")->required();
  cmd->add_flag("--json", opt->json, "print one JSON document instead of text");
  cmd->callback([opt, &ctx] {
    formats::TopoMatrix m = Load(opt->file);
    audit::topo::TopoReport r = audit::topo::EvaluateTopo(m);
    if (opt->json) {
      fmt::print("{}\n", ToJson(m, r).dump(2));
    } else {
      PrintText(r);
    }
    // Indeterminate exits 1 here, not 3 (docs/errors.md: to be brought in line).
    ctx.exit_code = r.verdict == audit::Verdict::kPass ? 0 : 1;
  });
}

}  // namespace lossless::cli
