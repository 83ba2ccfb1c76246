#pragma once
// GPU nodes (docs/model/node.md): per-generation presets (NVLink, PCIe to
// the NIC, GPUs per node), GPUDirect RDMA, and the GPU-to-NIC map a node is
// built with, from a scenario's `node:` block, `perf` flags or a real
// `nvidia-smi topo -m` matrix. Engine-free: it says what rate and latency
// each rail's GPU-to-NIC path has; the collective engines and the fabric
// apply them (run/perf_run.cpp).
//
// Units: rates units::Rate (bit/s), times units::Time (ps). A "rail" is one
// NIC of a node that carries collective traffic; rails are numbered 0..R-1
// in the order of the first GPU that uses each, and rail k of node n is
// network host n x R + k.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "formats/topo_matrix.hpp"
#include "units/units.hpp"

namespace lossless::node {

// The GPU-to-NIC path as `nvidia-smi topo -m` classes it, nearest first.
// NVIDIA/nccl's PATH_* levels order them the same way (src/graph/topo.h).
enum class PcieHop { kPix, kPxb, kPhb, kNode, kSys };
std::string_view PcieHopName(PcieHop h);  // "PIX", "PXB", "PHB", "NODE", "SYS"
// From a topo -m cell; kSys for NVLink or self (not a GPU-to-NIC path).
PcieHop HopOf(formats::TopoLink l);

// One GPU generation's node (docs/model/node.md#presets says where each
// value comes from).
struct NodePreset {
  std::string_view name;         // "a100", "h100", "h200", "b200"
  std::string_view gpu;          // "A100 SXM4"
  std::string_view device_name;  // as CUDA names the device: "NVIDIA A100-SXM4-80GB"
  int gpus_per_node = 8;         // HGX / DGX baseboard
  units::Rate nvlink_rate;       // per GPU and direction (the datasheet's figure / 2)
  units::Time nvlink_latency;    // per NVLink message
  // NCCL's view of a GPU's NVLink bandwidth, GB/s (links x SMxx_NVLINK_BW of
  // NVIDIA/nccl src/graph/topo.h): what NCCL's channel search sees.
  double nccl_nvlink_gbs = 0;
  int sm = 90;       // compute capability x 10: NCCL's architecture row
  int pcie_gen = 5;  // GPU-to-NIC PCIe generation
  int pcie_lanes = 16;
  std::string_view source;  // where the figures come from
};
// Every preset, in generation order.
const std::vector<NodePreset>& NodePresets();
std::vector<std::string> NodePresetNames();
// The preset named `name` (any case); InputError at `where` listing the
// presets otherwise.
const NodePreset& FindNodePreset(std::string_view name, const Location& where);

// PCIe payload rate of one direction of a link: gen x lanes x the line
// coding (8b/10b for Gen 1-2, 128b/130b for Gen 3-5, Gen 6 counted as Gen 5
// x 2 with FLIT overhead ignored) x the TLP efficiency of 256-byte posted
// writes with a 3-DW header, 256 / (256 + 20) (Intel AN 456, "PCI Express
// High Performance Reference Design", 1.1.2: 92 %; DLLPs and SKP ordered
// sets are not counted, so this is an upper bound). gen 1..6, lanes 1..32.
units::Rate PciePayloadRate(int gen, int lanes);
inline constexpr double kTlpEfficiency = 256.0 / (256.0 + 20.0);

// A node as the simulation builds it.
struct NodeConfig {
  std::string preset = "h100";
  std::string device_name = "NVIDIA H100 80GB HBM3";
  int gpus_per_node = 8;  // the most GPUs (-g) a node of this preset has
  units::Rate nvlink_rate = units::Rate::Gbps(3600);
  units::Time nvlink_latency = units::Time::Ns(600);
  double nccl_nvlink_gbs = 370.8;
  int sm = 90;
  int pcie_gen = 5;
  int pcie_lanes = 16;
  // GPUDirect RDMA available (NCCL uses it on paths up to gdr_level).
  bool gdr = true;
  // NCCL_NET_GDR_LEVEL: NCCL's default PXB (NVIDIA/nccl src/graph/paths.cc
  // ncclTopoCheckGdr, `int netGdrLevel = PATH_PXB`): a NIC across a host
  // bridge or the socket gets no GPUDirect RDMA.
  PcieHop gdr_level = PcieHop::kPxb;
  // Per GPU (index = local GPU): the NIC it uses (an index into `nics`) and
  // the path to it. Empty: one NIC per GPU at PIX (rail-optimized HGX).
  std::vector<int> nic_of_gpu;
  std::vector<PcieHop> hop_of_gpu;
  std::vector<std::string> nics;  // NIC names (topo -m columns), "" when unknown
  // From a topo -m matrix: the path from each GPU to each NIC ([gpu][nic]).
  std::vector<std::vector<PcieHop>> hops;
  std::string topo_file;  // the topo -m file the map came from, if any
  // Without GPUDirect RDMA: the host-memory hop of every message (the
  // proxy seeing the staged data, a host-memory copy's completion) [placeholder].
  units::Time host_bounce_latency = units::Time::Us(1);
  // Across the socket (SYS): the share of the inter-socket link one rail's
  // traffic gets, and its extra latency. Rate: NCCL's own figure for an
  // Intel Skylake-or-later socket link, SKL_QPI_BW 10 GB/s (NVIDIA/nccl
  // src/graph/topo.h) [placeholder for real UPI/xGMI shares]; latency
  // [placeholder].
  units::Rate cross_socket_rate = units::Rate::Gbps(80);
  units::Time cross_socket_latency = units::Time::Ns(200);

  // Applies preset `p`'s values (NVLink, PCIe, GPUs per node).
  void ApplyPreset(const NodePreset& p);
};

// What one rail's GPU-to-NIC path costs. Engines and the fabric apply it:
// the NIC injects at most nic_rate of payload (0: no cap beyond its link);
// with stage_rate > 0 every message bounces through host memory: it is
// staged there at stage_rate (store and forward, one message after another
// per rail and direction) plus stage_latency before the NIC sees it, and
// after it has arrived before the GPU sees it.
struct RailPath {
  int gpu = 0;  // the rail's GPU (the first that uses its NIC)
  int nic = 0;  // index into NodeConfig::nics (or the rail itself)
  PcieHop hop = PcieHop::kPix;
  bool gdr = true;  // GPUDirect RDMA used on this path
  units::Rate nic_rate;
  units::Rate stage_rate;
  units::Time stage_latency;
  units::Time latency;  // extra per-message latency of the path (cross-socket)
};

// The rails of a node of `gpus` GPUs (1 <= gpus <= cfg.gpus_per_node):
// distinct NICs in the order of their first GPU; without a map, one rail
// per GPU at PIX. The cost rules (docs/model/node.md#pcie-and-gpudirect-rdma):
// PCIe payload rate P = PciePayloadRate(gen, lanes);
//   GDR (cfg.gdr and hop <= gdr_level): NIC at P; across the socket
//     min(P, cross_socket_rate) and cross_socket_latency per message;
//   no GDR: each byte crosses PCIe twice per direction (GPU <-> host and
//     host <-> NIC). Behind one PCIe switch (PIX, PXB) both crossings share
//     the switch's uplink, so the rail gets P / 2 (NIC and staging); on
//     separate root ports (PHB, NODE) P; across the socket min(P,
//     cross_socket_rate). Staging adds host_bounce_latency (plus
//     cross_socket_latency across the socket).
std::vector<RailPath> Rails(const NodeConfig& cfg, int gpus);

// The map NCCL's topology search would use on the matrix: each GPU its
// nearest NIC (PIX < PXB < PHB < NODE < SYS); among equally near NICs the
// one fewest GPUs use so far, then the first. Fills cfg.nic_of_gpu,
// hop_of_gpu, nics and topo_file; cfg.gpus_per_node becomes the matrix's
// GPU count. InputError (at the matrix's file and header line) for a matrix
// without GPUs or without NICs, or with more GPUs than the preset's node.
void MapFromTopo(const formats::TopoMatrix& m, NodeConfig& cfg);
// Reads and parses `path` (InputError naming it when unreadable or not a
// topo -m matrix), then MapFromTopo.
void MapFromTopoFile(const std::string& path, NodeConfig& cfg);

// An explicit map "0,1,2,3,4,5,6,7" (NIC index per GPU, one entry per GPU
// of the node). With a matrix already read (cfg.hops not empty) indices are
// its NICs in column order and the paths come from it; without one the
// paths are PIX and indices only group GPUs on NICs. InputError at `where`
// for a bad list, a length other than the node's GPUs, or an index outside
// the matrix's NICs (0..gpus_per_node - 1 without a matrix).
void SetNicMap(std::string_view list, NodeConfig& cfg, const Location& where);

// The scenario's `node:` block (node.<name>): its own slice of the
// parameter registry (scenario/params.cpp adds it), as the DCQCN table is
// cc's. def "" = from node.preset.
enum class NodeParamType { kEnum, kInt, kRate, kTime, kBool, kString };
struct NodeParamInfo {
  const char* name;  // "nvlink_rate"
  NodeParamType type;
  const char* def;
  const char* choices;  // kEnum: "a|b"
  const char* help;
  double min = 0, max = -1;  // kInt bounds
};
const std::vector<NodeParamInfo>& NodeParamInfos();
// "PIX", "PXB", ... (any case) as NCCL_NET_GDR_LEVEL names them; InputError at `where`.
PcieHop ParseHop(std::string_view name, const Location& where);

// One line for perf's header: "node: h100 (H100 SXM5), 8 GPUs, NVLink 450 GB/s
// per direction, PCIe Gen5 x16 (57.9 GB/s payload), GPUDirect RDMA on".
std::string Describe(const NodeConfig& cfg, int gpus);

}  // namespace lossless::node
