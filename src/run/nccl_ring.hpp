#pragma once
// NCCL's ring as the collective engine runs it, shared by `perf`
// (run/perf_run.cpp) and `train` (train/fabric_comm.cpp): the per-step
// software latencies of NCCL's tuning model (baseLat, hwLat; NVIDIA/nccl
// src/graph/tuning.cc) and a RingSpec with NCCL's ring orders, steps and
// protocol for a group of GPUs (docs/perf.md).
#include <cstdint>

#include "collective/model/tuning.hpp"
#include "collective/protocol.hpp"
#include "collective/ring_engine.hpp"
#include "units/units.hpp"

namespace lossless::run {

// NCCL's latencies of one algorithm and protocol: the launch (baseLat), a
// network hop and an NVLink hop (hwLat), the NVLink hop as NCCL counts it
// (the link's own latency included).
struct NcclLatencies {
  units::Time launch, net_hop, nvlink_hop;
};
// `gpus_per_node`: GPUs of the communicator per node (1: the network hop of
// Ring is NCCL's Tree row, as tuning.cc takes it for one GPU per node).
// `net_overhead`: NCCL adds its per-step network overhead (`net_overhead_us`,
// x3 for Simple) to the intra-node hop of multi-node ring all_reduce,
// all_gather and reduce_scatter.
NcclLatencies NcclLatenciesFor(const collective::TuningConstants& k, collective::Algorithm a,
                               collective::Protocol p, int gpus_per_node, bool net_overhead,
                               double net_overhead_us);

// What the engine adds to an NVLink hop on top of the link's latency so that
// the hop costs NCCL's hwLat (not hwLat + the link's): max(0, hw_lat - link).
units::Time NvlinkHopExtra(units::Time hw_lat, units::Time link_latency);

// The group a ring runs over: `nodes` nodes of `gpus_per_node` GPUs of the
// communicator, on nodes with `nics_per_node` NICs; the ring on channel c
// uses rail (NCCL's NIC for c) x rail_stride (a tensor-parallel group's
// data-parallel GPUs use every t-th rail).
// `order_nics`: the NICs per node NCCL's ring orders spread the channels
// over (0: gpus_per_node). `nvlink_latency`: the NVLink link's own latency
// (zero: the engine's default), what NvlinkHopExtra subtracts.
struct NcclRingGroup {
  int nodes = 1;
  int gpus_per_node = 1;
  int nics_per_node = 1;
  int order_nics = 0;
  int rail_stride = 1;
  int channels = 1;
  units::Time nvlink_latency;
};

// The ring engine's spec of `plan` under protocol `p` (NCCL's steps for it,
// GPU write cap `gpu_rate`, Simple buffer `buffsize`), with latencies `l`,
// NVLink at `nvlink_rate` per direction, over NCCL's ring orders of `g`.
collective::RingSpec NcclRingSpec(collective::RingPlan plan, collective::Protocol p,
                                  units::Rate gpu_rate, int64_t buffsize, const NcclLatencies& l,
                                  units::Rate nvlink_rate, const NcclRingGroup& g);

}  // namespace lossless::run
