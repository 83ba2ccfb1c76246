#include "node/node.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include <fmt/format.h>

#include "base/input_file.hpp"
#include "base/text.hpp"

namespace lossless::node {
namespace {

// Datasheet NVLink figures are both directions together; the rate here is
// one direction. NVLink latency: no vendor gives one; 600 ns is NCCL's
// lowest NVLink hop latency (hwLat NVLINK Ring LL, NVIDIA/nccl
// src/graph/tuning.cc), the engine's default since issue 10.
const std::vector<NodePreset> kPresets = {
    {"a100", "A100 SXM4", "NVIDIA A100-SXM4-80GB", 8, units::Rate::Gbps(2400), units::Time::Ns(600),
     12 * 20.0, 80, 4, 16,
     "NVIDIA A100 Tensor Core GPU datasheet: NVLink 600 GB/s (12 third-generation links), PCIe "
     "Gen4 64 GB/s (x16); HGX A100 8-GPU baseboard; NCCL SM80_NVLINK_BW 20.0 per link"},
    {"h100", "H100 SXM5", "NVIDIA H100 80GB HBM3", 8, units::Rate::Gbps(3600), units::Time::Ns(600),
     18 * 20.6, 90, 5, 16,
     "NVIDIA H100 Tensor Core GPU datasheet: NVLink 900 GB/s (18 fourth-generation links), PCIe "
     "Gen5 128 GB/s (x16); HGX H100 8-GPU; NCCL SM90_NVLINK_BW 20.6 per link"},
    {"h200", "H200 SXM", "NVIDIA H200", 8, units::Rate::Gbps(3600), units::Time::Ns(600), 18 * 20.6,
     90, 5, 16,
     "NVIDIA H200 Tensor Core GPU datasheet: NVLink 900 GB/s, PCIe Gen5 128 GB/s (x16); HGX "
     "H200 8-GPU; NCCL SM90_NVLINK_BW 20.6 per link"},
    {"b200", "B200 (HGX B200)", "NVIDIA B200", 8, units::Rate::Gbps(7200), units::Time::Ns(600),
     18 * 40.1, 100, 5, 16,
     "NVIDIA HGX B200 / DGX B200: fifth-generation NVLink 1.8 TB/s per GPU (18 links); the "
     "GPU-to-NIC path is bounded by the node's ConnectX-7 NICs, PCIe Gen5 x16 (NVIDIA ConnectX-7 "
     "datasheet; the GPU's own PCIe Gen6 is not the limit); NCCL SM100_NVLINK_BW 40.1 per link"},
};

}  // namespace

std::string_view PcieHopName(PcieHop h) {
  switch (h) {
    case PcieHop::kPix:
      return "PIX";
    case PcieHop::kPxb:
      return "PXB";
    case PcieHop::kPhb:
      return "PHB";
    case PcieHop::kNode:
      return "NODE";
    case PcieHop::kSys:
      return "SYS";
  }
  return "?";
}

PcieHop HopOf(formats::TopoLink l) {
  switch (l) {
    case formats::TopoLink::kPix:
      return PcieHop::kPix;
    case formats::TopoLink::kPxb:
      return PcieHop::kPxb;
    case formats::TopoLink::kPhb:
      return PcieHop::kPhb;
    case formats::TopoLink::kNode:
      return PcieHop::kNode;
    default:
      return PcieHop::kSys;
  }
}

const std::vector<NodePreset>& NodePresets() {
  return kPresets;
}

std::vector<std::string> NodePresetNames() {
  std::vector<std::string> names;
  names.reserve(kPresets.size());
  for (const NodePreset& p : kPresets) names.emplace_back(p.name);
  return names;
}

const NodePreset& FindNodePreset(std::string_view name, const Location& where) {
  const std::string lower = text::ToLower(text::Trim(name));
  for (const NodePreset& p : kPresets)
    if (p.name == lower) return p;
  throw InputError(where,
                   Expected("a100, h100, h200 or b200 (the node presets)", std::string(name)));
}

units::Rate PciePayloadRate(int gen, int lanes) {
  // Transfer rate per lane (GT/s) and line coding: PCI-SIG base
  // specifications 1.0-6.0 (Gen 1 2.5 GT/s 8b/10b, Gen 2 5, Gen 3 8
  // 128b/130b, Gen 4 16, Gen 5 32, Gen 6 64 PAM4 FLIT).
  static constexpr double kGts[] = {0, 2.5, 5, 8, 16, 32, 64};
  gen = std::clamp(gen, 1, 6);
  const double coding = gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  const double bps = kGts[gen] * 1e9 * lanes * coding * kTlpEfficiency;
  return units::Rate::Bps(static_cast<int64_t>(bps));
}

void NodeConfig::ApplyPreset(const NodePreset& p) {
  preset = std::string(p.name);
  device_name = std::string(p.device_name);
  gpus_per_node = p.gpus_per_node;
  nvlink_rate = p.nvlink_rate;
  nvlink_latency = p.nvlink_latency;
  nccl_nvlink_gbs = p.nccl_nvlink_gbs;
  sm = p.sm;
  pcie_gen = p.pcie_gen;
  pcie_lanes = p.pcie_lanes;
}

std::vector<RailPath> Rails(const NodeConfig& cfg, int gpus) {
  std::vector<RailPath> rails;
  const units::Rate pcie = PciePayloadRate(cfg.pcie_gen, cfg.pcie_lanes);
  std::vector<int> rail_of_nic;
  for (int g = 0; g < gpus; ++g) {
    RailPath r;
    r.gpu = g;
    r.nic = g;
    if (static_cast<size_t>(g) < cfg.nic_of_gpu.size()) {
      r.nic = cfg.nic_of_gpu[static_cast<size_t>(g)];
      r.hop = cfg.hop_of_gpu[static_cast<size_t>(g)];
    }
    if (static_cast<size_t>(r.nic) >= rail_of_nic.size())
      rail_of_nic.resize(static_cast<size_t>(r.nic) + 1, -1);
    if (rail_of_nic[static_cast<size_t>(r.nic)] >= 0) continue;  // its NIC has a rail already
    rail_of_nic[static_cast<size_t>(r.nic)] = static_cast<int>(rails.size());
    r.gdr = cfg.gdr && r.hop <= cfg.gdr_level;
    const bool sys = r.hop == PcieHop::kSys;
    if (r.gdr) {
      r.nic_rate = sys ? std::min(pcie, cfg.cross_socket_rate) : pcie;
      r.latency = sys ? cfg.cross_socket_latency : units::Time::Zero();
    } else {
      const bool shared_uplink = r.hop <= PcieHop::kPxb;
      units::Rate rate = shared_uplink ? units::Rate::Bps(pcie.bps() / 2) : pcie;
      if (sys) rate = std::min(rate, cfg.cross_socket_rate);
      r.nic_rate = rate;
      r.stage_rate = rate;
      r.stage_latency = cfg.host_bounce_latency + (sys ? cfg.cross_socket_latency : units::Time());
    }
    rails.push_back(r);
  }
  return rails;
}

void MapFromTopo(const formats::TopoMatrix& m, NodeConfig& cfg) {
  const std::vector<size_t> gpus = m.Gpus();
  const std::vector<size_t> nics = m.Nics();
  const Location where{m.file, m.header_line, "nvidia-smi topo -m"};
  if (gpus.empty()) throw InputError(where, "expected a matrix with GPU columns, found none");
  if (nics.empty())
    throw InputError(where,
                     "expected a matrix with NIC columns (a node whose GPUs reach the fabric), "
                     "found none");
  if (static_cast<int>(gpus.size()) > cfg.gpus_per_node)
    throw InputError(where, fmt::format("expected at most {} GPUs (the {} preset's node), the "
                                        "matrix has {}",
                                        cfg.gpus_per_node, cfg.preset, gpus.size()));
  cfg.gpus_per_node = static_cast<int>(gpus.size());
  cfg.nics.clear();
  for (size_t n : nics) cfg.nics.push_back(m.devices[n].name);
  cfg.hops.assign(gpus.size(), std::vector<PcieHop>(nics.size(), PcieHop::kSys));
  for (size_t g = 0; g < gpus.size(); ++g)
    for (size_t k = 0; k < nics.size(); ++k) cfg.hops[g][k] = HopOf(m.cells[gpus[g]][nics[k]].link);
  std::vector<int> users(nics.size(), 0);
  cfg.nic_of_gpu.assign(gpus.size(), 0);
  cfg.hop_of_gpu.assign(gpus.size(), PcieHop::kSys);
  for (size_t g = 0; g < gpus.size(); ++g) {
    size_t best = 0;
    for (size_t k = 1; k < nics.size(); ++k) {
      const PcieHop a = cfg.hops[g][k], b = cfg.hops[g][best];
      if (a < b || (a == b && users[k] < users[best])) best = k;
    }
    ++users[best];
    cfg.nic_of_gpu[g] = static_cast<int>(best);
    cfg.hop_of_gpu[g] = cfg.hops[g][best];
  }
  cfg.topo_file = m.file;
}

void MapFromTopoFile(const std::string& path, NodeConfig& cfg) {
  std::istringstream in(ReadTextInput(path, "an nvidia-smi topo -m matrix"));
  MapFromTopo(formats::ParseTopoMatrix(in, path), cfg);
}

void SetNicMap(std::string_view list, NodeConfig& cfg, const Location& where) {
  std::vector<int> map;
  std::string_view rest = text::Trim(list);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = text::Trim(rest.substr(0, comma));
    int v = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 0)
      throw InputError(where, Expected("a comma-separated list of NIC indices (0, 1, ...), one "
                                       "per GPU",
                                       std::string(list)));
    map.push_back(v);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  const int nics = cfg.hops.empty() ? cfg.gpus_per_node : static_cast<int>(cfg.hops[0].size());
  if (static_cast<int>(map.size()) != cfg.gpus_per_node)
    throw InputError(where, fmt::format("expected {} NIC indices (one per GPU of the node), got {}",
                                        cfg.gpus_per_node, map.size()));
  for (int v : map) {
    if (v >= nics)
      throw InputError(
          where,
          fmt::format("expected NIC indices from 0 to {} ({}), got {}", nics - 1,
                      cfg.hops.empty() ? "one NIC per GPU" : "the NICs of " + cfg.topo_file, v));
  }
  cfg.nic_of_gpu = map;
  cfg.hop_of_gpu.assign(map.size(), PcieHop::kPix);
  if (!cfg.hops.empty())
    for (size_t g = 0; g < map.size(); ++g)
      cfg.hop_of_gpu[g] = cfg.hops[g][static_cast<size_t>(map[g])];
}

const std::vector<NodeParamInfo>& NodeParamInfos() {
  using T = NodeParamType;
  static const std::vector<NodeParamInfo> kInfos = {
      {"preset", T::kEnum, "h100", "a100|h100|h200|b200",
       "GPU node generation (docs/model/node.md#presets): NVLink rate and latency, PCIe to the "
       "NIC and GPUs per node of an HGX baseboard."},
      {"gpus_per_node", T::kInt, "", "",
       "GPUs of one node: the most `perf -g` may ask for. Default: the preset's (8).", 1, 64},
      {"nvlink_rate", T::kRate, "", "",
       "NVLink bandwidth per GPU and direction. Default: the preset's (a100 2400Gbps, h100 and "
       "h200 3600Gbps, b200 7200Gbps)."},
      {"nvlink_latency", T::kTime, "", "",
       "Latency of one NVLink message. Default: the preset's (600ns, NCCL's NVLink hwLat)."},
      {"pcie_gen", T::kInt, "", "",
       "PCIe generation of the GPU-to-NIC path. Default: the preset's (a100 4, others 5).", 1, 6},
      {"pcie_lanes", T::kInt, "", "", "PCIe lanes of the GPU-to-NIC path. Default: 16.", 1, 32},
      {"gdr", T::kBool, "true", "",
       "GPUDirect RDMA: the NIC reads and writes GPU memory (on paths up to node.gdr_level); "
       "off, every message bounces through host memory."},
      {"gdr_level", T::kEnum, "PXB", "PIX|PXB|PHB|NODE|SYS",
       "NCCL_NET_GDR_LEVEL: the farthest GPU-to-NIC path that still uses GPUDirect RDMA (NCCL's "
       "default PXB, src/graph/paths.cc)."},
      {"topo", T::kString, "", "",
       "An `nvidia-smi topo -m` matrix of one node: each GPU uses its nearest NIC, and pays for "
       "the path to it (docs/model/node.md#nic-map). Default: one NIC per GPU at PIX."},
      {"nic_map", T::kString, "", "",
       "NIC index per GPU, comma-separated (\"0,1,2,3,4,5,6,7\"); indices of node.topo's NICs "
       "when given. Default: node.topo's nearest NICs, else NIC g for GPU g."},
      {"host_bounce_latency", T::kTime, "1us", "",
       "Without GPUDirect RDMA, the host-memory hop each message adds at both ends "
       "[placeholder]."},
      {"cross_socket_rate", T::kRate, "80Gbps", "",
       "A rail's share of the inter-socket link when its NIC is across the socket (SYS): NCCL's "
       "SKL_QPI_BW 10 GB/s (src/graph/topo.h) [placeholder]."},
      {"cross_socket_latency", T::kTime, "200ns", "",
       "Extra latency per message across the socket [placeholder]."},
  };
  return kInfos;
}

PcieHop ParseHop(std::string_view name, const Location& where) {
  const std::string up = text::ToLower(text::Trim(name));
  for (PcieHop h : {PcieHop::kPix, PcieHop::kPxb, PcieHop::kPhb, PcieHop::kNode, PcieHop::kSys})
    if (text::ToLower(PcieHopName(h)) == up) return h;
  throw InputError(where, Expected("PIX, PXB, PHB, NODE or SYS", std::string(name)));
}

std::string Describe(const NodeConfig& cfg, int gpus) {
  return fmt::format(
      "node: {}, {} GPUs, NVLink {:g} GB/s per direction, PCIe Gen{} x{} ({:.1f} GB/s payload), "
      "GPUDirect RDMA {}",
      cfg.preset, gpus, static_cast<double>(cfg.nvlink_rate.bps()) / 8e9, cfg.pcie_gen,
      cfg.pcie_lanes,
      static_cast<double>(PciePayloadRate(cfg.pcie_gen, cfg.pcie_lanes).bps()) / 8e9,
      cfg.gdr ? "on" : "off");
}

}  // namespace lossless::node
