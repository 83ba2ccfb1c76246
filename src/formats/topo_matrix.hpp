#pragma once
// Parser for `nvidia-smi topo -m` output (the GPU/NIC connection matrix),
// shared by the topo audit and node builders; it depends on base only.
//
// Layout read: optional lines before the matrix (a shell prompt), a header row
// whose first device column is GPU0 (cells separated by tabs, or by runs of
// spaces when copied from a web page; ANSI underline codes are stripped), one
// row per device in header order, then the link legend and the optional NIC
// legend (`  NIC0: mlx5_0`). Device columns are GPU<n>, NIC<n>, or - with older
// drivers - the NIC device name itself (mlx5_0). Trailing columns CPU Affinity,
// NUMA Affinity, GPU NUMA ID (or NUMA) are read on GPU rows.
//
// Link tokens: X (self), NV<n> (n bonded NVLinks), PIX, PXB, PHB, NODE, SYS
// (SOC is the older name of SYS).
//
// Errors (InputError naming file and line): empty or binary input, no header,
// an unknown link token, a row whose cells do not line up with the header,
// rows missing or out of order, a diagonal cell that is not X, a matrix that
// is not symmetric, input of another kind (nccl-tests output).
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lossless::formats {

enum class TopoLink { kSelf, kNvLink, kPix, kPxb, kPhb, kNode, kSys };
std::string_view TopoLinkName(TopoLink l);  // "X", "NV", "PIX", ...

struct TopoCell {
  TopoLink link = TopoLink::kSys;
  int64_t nvlinks = 0;  // for kNvLink
  std::string text;     // as printed, e.g. "NV18"
};

enum class TopoDeviceKind { kGpu, kNic };

struct TopoDevice {
  std::string column;  // header label: GPU0, NIC3, mlx5_0
  TopoDeviceKind kind = TopoDeviceKind::kGpu;
  std::string name;           // NIC legend name (mlx5_bond_0) or the column label
  int64_t line = 0;           // line of this device's row
  std::string cpu_affinity;   // GPU rows; "" when absent
  std::string numa_affinity;  // GPU rows; "N/A" when unknown, "" when absent
  std::string gpu_numa_id;    // GPU rows; "" when the column is absent
};

struct TopoMatrix {
  std::string file;
  int64_t header_line = 0;
  std::vector<TopoDevice> devices;           // header order
  std::vector<std::vector<TopoCell>> cells;  // [row][column], same order as devices
  bool nic_legend = false;                   // a NIC Legend section was present

  std::vector<size_t> Gpus() const;  // indices into devices
  std::vector<size_t> Nics() const;
};

TopoMatrix ParseTopoMatrix(std::istream& in, const std::string& file);

}  // namespace lossless::formats
