#pragma once
// The alpha-beta model of NCCL's algorithms and protocols
// (docs/model/collectives.md#alpha-beta-model): the independent expectation the
// packet-level simulation is tested against, and what `perf --model` prints.
//
//   time = launch + sum of per-hop latencies on the critical path
//        + max over link classes (bytes the busiest link of that class carries
//                                 / (its rate x the protocol's payload share))
//
// Per-hop latencies default to NCCL's hwLat table and the launch term to its
// baseLat (NCCL 2.27.7), so small-message times track NCCL's own model; the
// fabric adds its wire and switch latency per inter-node hop (net_hop_us). Byte
// counts come from the algorithm's structure: ring channels spread over the NICs
// (orders.hpp), NCCL's double binary tree across nodes with a chain inside.
// Pipelining is taken as perfect (no fill term beyond the critical-path latency):
// the model is exact in the two limits (latency-bound, bandwidth-bound) and
// optimistic in between. Units: us, GB/s (1e9 B/s), bytes.
#include <cstdint>
#include <string_view>

#include "collective/model/collective.hpp"
#include "collective/model/tuning.hpp"

namespace lossless::collective {

struct AlphaBetaParams {
  int nodes = 1;
  int gpus_per_node = 8;
  int nics_per_node = 8;
  // Payload rate of one NIC in GB/s, after wire framing (the caller's framing model:
  // e.g. 400 Gb/s RoCE v2 with 4096-B payloads ~ 48.6 GB/s).
  double nic_gbs = 50.0;
  // GPU-to-NIC path cap per NIC in GB/s (PCIe, or host bounce without GPUDirect); 0 = none.
  double pcie_gbs = 0;
  // NVLink bandwidth per GPU and direction in GB/s (H100: 18 links x 25 GB/s = 450).
  double nvlink_gbs = 450.0;
  bool intra_nvlink = true;  // NVLink inside the node (else PCI latencies from hwLat)
  double net_hop_us = 0;     // wire + switch latency of one inter-node hop, on top of hwLat
  double nvlink_hop_us = 0;  // extra latency of one intra-node hop, on top of hwLat
  // NCCL's per-step network overhead (us; Intel x86 1.0, AMD 2.0; x3 for Simple),
  // a host cost: the intra-node hop latency of a multi-node ring is at least this.
  double net_overhead_us = 1.0;
  // Payload one GPU writes per second with LL or LL128, over all its channels
  // (NCCL's protocol cap, TuningModel::ProtocolCapGbs); 0 = none. The engines
  // pace each GPU's sends by the same figure (collective/protocol.hpp).
  double gpu_write_gbs = 0;
  int Ranks() const { return nodes * gpus_per_node; }
};

// Share of the wire that is payload: Simple 1, LL 8/16 (a 4-byte flag per 4 bytes
// of data), LL128 120/128 (one 8-byte flag word per 128-byte line).
double PayloadShare(Protocol p);

enum class Bottleneck { kNone, kNetwork, kNvlink, kGpu };
std::string_view BottleneckName(Bottleneck b);  // "none", "network", "nvlink", "gpu"

struct AlphaBetaTime {
  double launch_us = 0;     // NCCL's baseLat for the pair
  double latency_us = 0;    // critical-path hop latencies
  double bandwidth_us = 0;  // the slowest link class's transfer time
  Bottleneck bottleneck = Bottleneck::kNone;
  double nic_bytes = 0;     // bytes the busiest NIC sends (or receives), per direction
  double nvlink_bytes = 0;  // bytes the busiest GPU sends over NVLink
  double gpu_bytes = 0;     // payload one GPU sends in all (what gpu_write_gbs paces)
  int inter_hops = 0;       // inter-node hops on the critical path
  int intra_hops = 0;       // intra-node hops on the critical path
  double TotalUs() const { return launch_us + latency_us + bandwidth_us; }
};

// `bytes` is the nccl-tests size column (CollCounts::size_bytes). Tree is
// all_reduce only (NCCL has no Tree for the others; they are modelled as Ring);
// alltoall and sendrecv are point-to-point whatever `a` says. One rank: 0.
AlphaBetaTime AlphaBeta(Collective c, Algorithm a, Protocol p, int64_t bytes,
                        const AlphaBetaParams& params,
                        const TuningConstants& constants = Nccl2_27Constants());

// algbw and busbw (GB/s) of a time, the nccl-tests way (0 for time 0).
double AlgBwGbs(int64_t bytes, double time_us);
double BusBwGbs(Collective c, int64_t n_ranks, int64_t bytes, double time_us);

}  // namespace lossless::collective
