#include "audit/topo/topo_report.hpp"

#include <iterator>

#include <fmt/format.h>

namespace lossless::audit::topo {
namespace {

std::string NumaText(const TopoPair& p) {
  if (!p.numa_match) return "unknown";
  return *p.numa_match ? "yes" : "no";
}

}  // namespace

std::string FormatTopoText(const TopoReport& r) {
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "{}: {} GPUs, {} NICs\n", r.file, r.gpus, r.nics);
  if (!r.pairs.empty()) {
    fmt::format_to(o, "  {:<6} {:<14} {:<6} {:<6} {:<10} {:<14} {}\n", "gpu", "nic", "link", "numa",
                   "gpu numa", "verdict", "why");
    for (const auto& p : r.pairs) {
      std::string nic = p.nic;
      if (p.shared_by > 1) nic += fmt::format(" x{}", p.shared_by);
      fmt::format_to(o, "  {:<6} {:<14} {:<6} {:<6} {:<10} {:<14} {}\n", p.gpu, nic, p.link_text,
                     NumaText(p), p.gpu_numa.empty() ? "-" : p.gpu_numa, VerdictName(p.verdict),
                     p.reason);
    }
  }
  for (const auto& f : r.findings) fmt::format_to(o, "  {}\n", f);
  if (r.nccl_ib_hca) fmt::format_to(o, "  suggested: NCCL_IB_HCA={}\n", *r.nccl_ib_hca);
  fmt::format_to(o, "verdict: {}\n", VerdictName(r.verdict));
  return out;
}

nlohmann::json TopoToJson(const formats::TopoMatrix& m, const TopoReport& r) {
  using formats::TopoDeviceKind;
  nlohmann::json j;
  j["tool"] = "audit topo";
  j["file"] = r.file;
  j["gpus"] = r.gpus;
  j["nics"] = r.nics;
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : m.devices) {
    nlohmann::json jd{{"column", d.column},
                      {"kind", d.kind == TopoDeviceKind::kGpu ? "gpu" : "nic"},
                      {"name", d.name},
                      {"line", d.line}};
    if (d.kind == TopoDeviceKind::kGpu) {
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
         {"verdict", VerdictName(p.verdict)},
         {"reason", p.reason}});
  }
  j["pairs"] = std::move(pairs);
  j["unused_nics"] = r.unused_nics;
  j["findings"] = r.findings;
  j["nccl_ib_hca"] = r.nccl_ib_hca ? nlohmann::json(*r.nccl_ib_hca) : nlohmann::json(nullptr);
  j["verdict"] = VerdictName(r.verdict);
  return j;
}

}  // namespace lossless::audit::topo
