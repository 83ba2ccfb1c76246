#include "collective/model/alpha_beta.hpp"

#include <algorithm>

#include "collective/model/orders.hpp"

namespace lossless::collective {
namespace {

constexpr int kHwNvlink = 0;
constexpr int kHwPci = 1;
constexpr int kHwNet = 2;

// Most inter-node edges among `len` consecutive edges of a ring whose nodes each
// contribute (g - 1) intra edges then one inter edge; 0 on one node.
int MaxInterHops(int nodes, int g, int len) {
  if (nodes <= 1 || len <= 0) return 0;
  int best = 0;
  for (int s = 0; s < g; ++s) {
    // Inter edges are those with (k + 1) % g == 0: multiples of g in (s, s + len].
    best = std::max(best, (s + len) / g - s / g);
  }
  return best;
}

}  // namespace

double PayloadShare(Protocol p) {
  switch (p) {
    case Protocol::kSimple:
      return 1.0;
    case Protocol::kLL:
      return 0.5;
    case Protocol::kLL128:
      return 120.0 / 128.0;
  }
  return 1.0;
}

std::string_view BottleneckName(Bottleneck b) {
  switch (b) {
    case Bottleneck::kNone:
      return "none";
    case Bottleneck::kNetwork:
      return "network";
    case Bottleneck::kNvlink:
      return "nvlink";
    case Bottleneck::kGpu:
      return "gpu";
  }
  return "?";
}

AlphaBetaTime AlphaBeta(Collective c, Algorithm a, Protocol p, int64_t bytes,
                        const AlphaBetaParams& params, const TuningConstants& constants) {
  AlphaBetaTime t;
  const int nodes = params.nodes;
  const int g = params.gpus_per_node;
  const int n = params.Ranks();
  if (n <= 1 || bytes <= 0) return t;
  const double s = static_cast<double>(bytes);
  const double dn = n;
  const int pi = static_cast<int>(p);
  const bool p2p = c == Collective::kAllToAll || c == Collective::kSendRecv;
  if (p2p) {
    a = Algorithm::kRing;
  } else if (c != Collective::kAllReduce) {
    a = Algorithm::kRing;  // NCCL has Tree for all-reduce only
  }
  const int ai = a == Algorithm::kTree ? 0 : 1;
  const int intra_hw = params.intra_nvlink ? kHwNvlink : kHwPci;
  const double ppn = g;
  double alpha_intra = constants.hw_lat_us[intra_hw][ai][pi] + params.nvlink_hop_us;
  const double alpha_inter = constants.hw_lat_us[kHwNet][ppn == 1 ? 0 : ai][pi] + params.net_hop_us;
  t.launch_us = constants.base_lat_us[ai][pi];

  double nic_bytes = 0;     // per NIC, per direction
  double nvlink_bytes = 0;  // per GPU, sent
  double gpu_bytes = 0;     // per GPU, sent in all (the protocol cap paces it)
  if (p2p) {
    if (c == Collective::kAllToAll) {
      // Each rank sends S/n to every rank; (n - g) of those shares leave the node.
      nic_bytes = nodes > 1 ? g * s * (dn - g) / dn / params.nics_per_node : 0;
      nvlink_bytes = s * (g - 1) / dn;
    } else {
      // sendrecv: rank r sends S to r + 1; one GPU per node sends across nodes.
      nic_bytes = nodes > 1 ? s : 0;
      nvlink_bytes = g > 1 ? s : 0;
    }
    if (nodes > 1) {
      t.inter_hops = 1;
    } else {
      t.intra_hops = 1;
    }
  } else if (a == Algorithm::kRing) {
    int len = 0;
    double per_rank = 0;  // bytes each rank sends over its outgoing ring edges
    switch (c) {
      case Collective::kAllReduce:
        len = 2 * (n - 1);
        per_rank = 2 * (dn - 1) / dn * s;
        break;
      case Collective::kAllGather:
      case Collective::kReduceScatter:
        len = n - 1;
        per_rank = (dn - 1) / dn * s;
        break;
      default:  // broadcast, reduce: a pipelined chain from the root
        len = n - 1;
        per_rank = s;
        break;
    }
    gpu_bytes = per_rank;
    // Every channel leaves each node once; channels spread evenly over the NICs.
    nic_bytes = nodes > 1 ? per_rank / params.nics_per_node : 0;
    // A GPU's outgoing edge is intra-node except on the channels it exits the node.
    nvlink_bytes = nodes > 1 ? per_rank * (g - 1) / g : per_rank;
    t.inter_hops = MaxInterHops(nodes, g, len);
    t.intra_hops = len - t.inter_hops;
    if (nodes > 1 && (c == Collective::kAllReduce || c == Collective::kAllGather ||
                      c == Collective::kReduceScatter)) {
      const double overhead = params.net_overhead_us * (p == Protocol::kSimple ? 3 : 1);
      alpha_intra = std::max(alpha_intra, overhead);
    }
  } else {
    // Tree all-reduce: S/2 per tree, reduce up and broadcast down at once.
    double worst_node = 0;
    for (int node = 0; node < nodes && nodes > 1; ++node) {
      const auto links = NcclDtree(nodes, node);
      double b = 0;
      for (const BtreeLinks& l : links) {
        const int degree = (l.up >= 0) + (l.down0 >= 0) + (l.down1 >= 0);
        b += s / 2 * degree;
      }
      worst_node = std::max(worst_node, b);
    }
    nic_bytes = worst_node / params.nics_per_node;
    // Chain inside the node: a middle GPU sends S_t up and S_t down; averaged over
    // the channels' rotations a GPU sends 2 S (g - 1) / g over both trees.
    nvlink_bytes = g > 1 ? 2 * s * (g - 1) / g : 0;
    // A GPU in the middle of the chains sends S/2 up and S/2 down per tree.
    gpu_bytes = 2 * s;
    const int depth = nodes > 1 ? std::max(NodeTreeDepth(nodes, 0), NodeTreeDepth(nodes, 1)) : 0;
    t.inter_hops = 2 * depth;
    t.intra_hops = 2 * (g - 1);
  }
  t.latency_us = t.intra_hops * alpha_intra + t.inter_hops * alpha_inter;

  const double share = PayloadShare(p);
  double nic_rate = params.nic_gbs;
  if (params.pcie_gbs > 0) nic_rate = std::min(nic_rate, params.pcie_gbs);
  // bytes / (GB/s x 1e9) s = bytes / (GB/s x 1e3) us
  const double t_net = nic_bytes > 0 ? nic_bytes / (nic_rate * share * 1e3) : 0;
  const double t_nvl = nvlink_bytes > 0 ? nvlink_bytes / (params.nvlink_gbs * share * 1e3) : 0;
  t.nic_bytes = nic_bytes;
  t.nvlink_bytes = nvlink_bytes;
  if (t_net >= t_nvl && t_net > 0) {
    t.bandwidth_us = t_net;
    t.bottleneck = Bottleneck::kNetwork;
  } else if (t_nvl > 0) {
    t.bandwidth_us = t_nvl;
    t.bottleneck = Bottleneck::kNvlink;
  }
  t.gpu_bytes = gpu_bytes;
  if (p != Protocol::kSimple && params.gpu_write_gbs > 0 &&
      gpu_bytes / (params.gpu_write_gbs * 1e3) > t.bandwidth_us) {
    t.bandwidth_us = gpu_bytes / (params.gpu_write_gbs * 1e3);
    t.bottleneck = Bottleneck::kGpu;
  }
  return t;
}

double AlgBwGbs(int64_t bytes, double time_us) {
  if (time_us <= 0) return 0;
  return static_cast<double>(bytes) / 1e9 / (time_us * 1e-6);
}

double BusBwGbs(Collective c, int64_t n_ranks, int64_t bytes, double time_us) {
  return AlgBwGbs(bytes, time_us) * BusBwFactor(c, n_ranks);
}

}  // namespace lossless::collective
