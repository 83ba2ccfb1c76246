#pragma once
// NCCL's own cost model and choice of algorithm, protocol and channel count
// (docs/model/collectives.md#nccl-tuning-model).
//
// A faithful port of NCCL v2.27.7 (`src/graph/tuning.cc` `ncclTopoTuneModel`,
// `ncclTopoGetAlgoTime`; `src/enqueue.cc` `topoGetAlgoInfo`; channel counts from
// `src/graph/search.cc` `ncclTopoDupChannels` and `src/graph/connect.cc`
// `ncclTopoPostset`) restricted to the Ring and Tree algorithms. The constants of
// 2.27.7 are the default (`Nccl2_27Constants`); they are identical from 2.23 to
// 2.27. NVLS, NVLSTree, CollNet and PAT are not modelled: `OffloadNcclWouldUse`
// says when real NCCL would consider them.
//
// Units as NCCL keeps them: time in microseconds, bandwidth in GB/s (1e9 B/s),
// sizes in bytes. NCCL computes in float; this port computes in double, so
// values agree with NCCL to about 1e-6 relative.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.hpp"
#include "collective/model/collective.hpp"

namespace lossless::collective {

// NCCL's indices: NCCL_ALGO_TREE 0, NCCL_ALGO_RING 1; NCCL_PROTO_LL 0, LL128 1, SIMPLE 2.
// kP2p is lossless's label for alltoall and sendrecv, which NCCL runs as
// point-to-point transfers outside the tuning table (Simple protocol).
enum class Algorithm { kTree, kRing, kP2p };
enum class Protocol { kLL, kLL128, kSimple };
std::string_view AlgorithmName(Algorithm a);  // "Tree", "Ring", "P2P"
std::string_view ProtocolName(Protocol p);    // "LL", "LL128", "Simple"

// Rows of NCCL's per-architecture tables: compute capability >= 100, >= 90, >= 80, else.
enum class GpuArch { kVolta, kAmpere, kHopper, kBlackwell };
std::string_view GpuArchName(GpuArch a);
// The host CPU: selects the llMaxBws row on several nodes and the net overhead.
enum class CpuVendor { kIntel, kAmd, kOther };

// One NCCL version's tuning constants (`src/graph/tuning.cc`, `src/include/comm.h`,
// `src/include/device.h`). Index order [algorithm][protocol] with Tree=0, Ring=1.
struct TuningConstants {
  std::string nccl_version;       // "2.27.7"
  int64_t nccl_version_code = 0;  // NCCL_VERSION_CODE, 22707
  double base_lat_us[2][3];
  double hw_lat_us[3][2][3];  // [NVLINK=0, PCI=1, NET=2][algo][proto]
  double ll_max_bw[4][3];     // [arch on one node / cpu row on several][min(nodes,3)-1]
  double per_ch_max_ring_ll128_bw[4][3];
  double per_ch_max_tree_ll128_bw[4][3];
  double per_ch_max_tree_bw[4][3];
  double tree_correction[3][23];   // [proto][log2(bytes >> 6)], 64 B ... 256 MiB
  double ring_plateau_sm80 = 1.4;  // Ring/Simple all-reduce latency factor on > 1 node
  double ring_plateau_older = 1.9;
  double net_overhead_us[3] = {1.0, 2.0, 1.0};  // Intel x86, AMD x86, other
  int max_channels = 64;                        // MAXCHANNELS
  int thread_threshold[3] = {8, 8, 64};         // NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD
  int max_threads_ll = 512;                     // NCCL_LL_MAX_NTHREADS
  int max_threads_ll128 = 640;                  // NCCL_LL128_MAX_NTHREADS
  int max_threads_simple = 512;                 // NCCL_SIMPLE_MAX_NTHREADS
  int max_threads = 640;                        // NCCL_MAX_NTHREADS
  double pci_bw = 12.0;  // PCI_BW (topo.h): Ring/Simple gets 256 threads below it
};
// The name carries the NCCL release (2.27) the values come from.
const TuningConstants& Nccl2_27Constants();  // NOLINT(readability-identifier-naming)

// The communicator's shape.
struct CommShape {
  int nodes = 1;
  int gpus_per_node = 8;
  GpuArch arch = GpuArch::kHopper;
  CpuVendor cpu = CpuVendor::kIntel;
  int Ranks() const { return nodes * gpus_per_node; }
};

// What NCCL's topology search reports for the ring (and tree) graph, after
// ncclTopoDupChannels. Per-channel bandwidths in GB/s.
struct SearchGraph {
  int channels = 1;
  double bw_intra_gbs = 0;
  double bw_inter_gbs = 0;
  bool intra_nvlink = true;         // typeIntra == LINK_NVL (else PCI latencies)
  double latency_inter_us = 0;      // the net plugin's latency property (IB: 0)
  bool plain_tree_pattern = false;  // maxTreePattern == NCCL_TOPO_PATTERN_TREE (x0.85)
  bool ll128_paths_ok = true;  // the LL128 path rule (typeInter <= PXN on sm90+, typeIntra <= NVB)
};

// A node as the channel derivation needs it.
struct NodeHardware {
  int gpus = 8;
  int nics = 8;               // NICs used by NCCL per node
  double nic_gbs = 50.0;      // per NIC, GB/s (speed_Mbps / 8000): 400 Gb/s -> 50
  double nvlink_gbs = 370.8;  // per GPU NVLink bandwidth as NCCL sees it (links x per-link bw)
  bool nvlink = true;
  GpuArch arch = GpuArch::kHopper;
};

// NCCL's search result, approximated (docs/model/collectives.md#channels): the
// search speed is the largest entry of NCCL's speed array (sm90 arrays on Hopper,
// sm100 on Blackwell) that the NICs (several nodes) or NVLink (one node) can carry;
// one channel per NIC at that speed (several nodes) or as many as NVLink carries
// (one node); then ncclTopoDupChannels doubles the channels and halves the speed
// when the speed is >= 25 GB/s, unless (sm > 80 and speed < 50 and > 4 channels).
SearchGraph DeriveSearchGraph(const NodeHardware& hw, int nodes, int max_channels = 64);

// Overrides, as NCCL's environment variables spell them.
struct TuningOverrides {
  std::string algo;   // NCCL_ALGO: "Ring", "Tree,Ring", "^Tree", "allreduce:Tree;broadcast:Ring"
  std::string proto;  // NCCL_PROTO: "Simple", "^LL128", ...
  int min_channels = -1;                  // NCCL_MIN_NCHANNELS (unset: -1)
  int max_channels = -1;                  // NCCL_MAX_NCHANNELS (unset: -1)
  std::optional<double> net_overhead_us;  // NCCL_NET_OVERHEAD (given in ns to NCCL; here in us)
  // NCCL_BUFFSIZE: the Simple buffer per connection (4 MiB default). Not part of the
  // cost model; it sets the engine's step and chunk sizes (ChunkBytes).
  int64_t buffsize = int64_t{1} << 22;
};

// Choice for one collective call.
struct AlgoChoice {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  int channels = 1;    // nMaxChannels of topoGetAlgoInfo
  int threads = 0;     // threads per channel (nWarps x 32)
  double time_us = 0;  // the model's prediction of the chosen pair
};

class TuningModel {
 public:
  // Throws InputError{"<env>", 0, "NCCL_ALGO" | "NCCL_PROTO" | ...} for an
  // override that NCCL would reject (unknown name, unknown prefix, min/max < 0).
  TuningModel(const CommShape& shape, const SearchGraph& graph,
              const TuningOverrides& overrides = {},
              const TuningConstants& constants = Nccl2_27Constants());

  // comm->nChannels: the search channels x 2 (connect.cc), x 2 again on sm90+ with
  // several nodes when bw_intra > 45 and fewer than 16, then NCCL_MAX_NCHANNELS and
  // NCCL_MIN_NCHANNELS.
  int CommChannels() const { return comm_channels_; }
  const CommShape& shape() const { return shape_; }
  const SearchGraph& graph() const { return graph_; }
  const TuningConstants& constants() const { return *constants_; }

  // comm->bandwidths (algorithm bandwidth, GB/s; 0 = not available or disabled) and
  // comm->latencies (us). kP2p and alltoall/sendrecv give 0.
  double Bandwidth(Collective c, Algorithm a, Protocol p) const;
  double Latency(Collective c, Algorithm a, Protocol p) const;
  // The cap NCCL's model puts on a protocol's bandwidth because the GPU writes
  // its lines (GB/s of payload per GPU, summed over channels; 0 = none):
  // Ring/LL and Tree/LL llMaxBw, Ring/LL128 search channels x
  // perChMaxRingLL128Bw, Tree/LL128 search channels x perChMaxTreeLL128Bw;
  // Simple none. The engines pace each GPU's sends by it
  // (collective/protocol.hpp).
  double ProtocolCapGbs(Algorithm a, Protocol p) const;
  // ncclTopoGetAlgoTime for one operation (numPipeOps = 1); nullopt when bandwidth is 0.
  std::optional<double> Time(Collective c, Algorithm a, Protocol p, int64_t nbytes) const;
  // The fastest enabled pair and its channel and thread counts. `nbytes` is NCCL's
  // size (the `size (B)` column of nccl-tests). alltoall and sendrecv give
  // {kP2p, kSimple, CommChannels()} with time 0; one rank gives {kRing, kSimple, 1}
  // with time 0 (NCCL copies locally). Throws InputError when the
  // overrides disable every pair (NCCL: "no algorithm/protocol available").
  AlgoChoice Choose(Collective c, int64_t nbytes) const;

 private:
  CommShape shape_;
  SearchGraph graph_;
  const TuningConstants* constants_;
  int comm_channels_ = 1;
  std::string algo_env_, proto_env_;
  // [function: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce][algo][proto]
  double bw_[5][2][3] = {};
  double lat_[5][2][3] = {};
  int max_threads_[2][3] = {};
  int64_t thread_threshold_[2][3] = {};
};

// NCCL's chunk of one step for the engine: Simple buffsize/NCCL_STEPS x chunkSteps
// (all-reduce, all-gather, reduce-scatter on Ring: 4 steps; others 1); LL
// buffsize_ll/NCCL_STEPS/2 of payload; LL128 step x 15/16 of payload
// (`src/include/collectives.h`, `src/enqueue.cc`, NCCL 2.27). Bytes.
int64_t ChunkBytes(Collective c, Algorithm a, Protocol p,
                   int64_t simple_buffsize = int64_t{1} << 22);

// Whether real NCCL (2.27) would consider an algorithm lossless does not model.
struct OffloadVerdict {
  bool nvls = false;       // NVLink SHARP inside the node (NVSwitch, sm90+)
  bool nvls_tree = false;  // NVLS inside + tree across nodes (NVSwitch, sm90+, > 1 node)
  bool collnet = false;    // CollNet (SHARP in InfiniBand switches), NCCL_COLLNET_ENABLE=1
  bool Any() const { return nvls || nvls_tree || collnet; }
  // One line for the perf header, e.g. "real NCCL would consider NVLSTree (NVSwitch
  // nodes); lossless runs Ring/Tree". Empty when none applies.
  std::string HeaderNote() const;
};
// nvswitch: the GPUs of a node sit on third-generation NVSwitch with multicast
// (DGX/HGX H100, H200, B200). sharp: the fabric is InfiniBand with SHARP and the
// CollNet plugin enabled. Only all_reduce (NVLS, NVLSTree, CollNet) and, on one
// node, all_gather / reduce_scatter with registered buffers (NVLS) qualify; this
// function answers for all_reduce and the single-node NVLS case.
OffloadVerdict OffloadNcclWouldUse(Collective c, const CommShape& shape, bool nvswitch, bool sharp);

}  // namespace lossless::collective
