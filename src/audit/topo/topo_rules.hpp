#pragma once
// Rules over a parsed topo matrix: pair every GPU with its best NIC and judge
// each pair.
//
// Pairing: PIX better than PXB better than PHB better than NODE better than
// SYS (an NVLink path to a NIC counts as best). One NIC per GPU when there are
// at least as many NICs as GPUs; otherwise NICs are shared evenly (at most
// ceil(GPUs / NICs) GPUs each). The pairing minimises total distance (optimal
// assignment), ties going to listing order (GPU i with NIC i).
//
// Verdict per pair: pass for PIX/PXB (and NVLink); fail for PHB or NODE (the
// path crosses a PCIe root complex) and SYS (it crosses the CPU socket link).
// Overall: indeterminate when every GPU-NIC path reads PHB (what a hypervisor
// shows; the real placement is hidden) or when the matrix has no NICs or no
// GPUs; fail when any pair fails; pass otherwise.
//
// NCCL_IB_HCA: when the best pairing differs from listing order (GPU i with
// the i-th NIC) or leaves NICs unused, the report gives the HCA list in GPU
// order that makes the listing order the best pairing, with a leading '='
// (exact match) when one NIC name is a prefix of another (mlx5_1 / mlx5_10).
#include <optional>
#include <string>
#include <vector>

#include "audit/verdict.hpp"
#include "formats/topo_matrix.hpp"

namespace lossless::audit::topo {

struct TopoPair {
  std::string gpu;         // GPU0
  std::string nic;         // NIC legend name, e.g. mlx5_0
  std::string nic_column;  // NIC0
  formats::TopoLink link = formats::TopoLink::kSys;
  std::string link_text;           // as printed
  std::optional<bool> numa_match;  // nullopt when indeterminate
  std::string gpu_numa;            // GPU's NUMA affinity as printed
  int64_t shared_by = 1;           // GPUs on this NIC
  Verdict verdict = Verdict::kPass;
  std::string reason;
};

struct TopoReport {
  std::string file;
  int64_t gpus = 0;
  int64_t nics = 0;
  std::vector<TopoPair> pairs;             // one per GPU, GPU order
  std::vector<std::string> unused_nics;    // legend names
  std::vector<std::string> findings;       // human sentences, worst first
  std::optional<std::string> nccl_ib_hca;  // e.g. "=mlx5_1,mlx5_0,..."
  bool listing_order_differs = false;
  Verdict verdict = Verdict::kPass;
};

TopoReport EvaluateTopo(const formats::TopoMatrix& m);

}  // namespace lossless::audit::topo
