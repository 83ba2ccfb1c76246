#pragma once
// Ring and tree orders of an N-node x G-GPU communicator, per channel
// (docs/model/collectives.md#ring-and-tree-orders).
//
// Ranks are numbered node-major: rank = node x G + local GPU, as nccl-tests with
// one process per GPU and MPI ranks packed per node.
//
// Rings: channel c uses NIC k = c mod nics (its "rail"); it enters every node at
// the GPU next to NIC k, visits the node's GPUs over NVLink and leaves the node
// through NIC k as well (NCCL's PXN: the last GPU hands its data to the rail
// GPU), to the same GPU position of the next node. The node order is 0..N-1.
// Inside a node the ring goes up from the entry GPU on even rounds of channels
// (c / nics even) and down on odd ones, so both NVLink directions carry traffic.
// This is an approximation of NCCL's topology search (`src/graph/search.cc`),
// which picks the intra-node order from the PCI/NVLink graph; on NVSwitch nodes
// any order has the same cost.
//
// Trees: NCCL's double binary tree over nodes (`src/graph/trees.cc`
// `ncclGetBtree`, `ncclGetDtree`, NCCL v2.27.7) with the intra-node chain of
// `src/graph/connect.cc` `ncclTopoPreset`/`connectTrees` for the balanced-tree
// pattern: the node's chain is the channel's intra-node ring order; its first
// GPU talks to the parent node and to child 1, its second GPU to child 0.
// Channels [0, C) use tree 0, [C, 2C) tree 1, where C = base_channels (NCCL's
// search channels before connect.cc doubles them); further channels repeat.
#include <array>
#include <cstdint>
#include <vector>

namespace lossless::collective {

struct RingOrder {
  std::vector<int> ranks;  // ranks in ring order, starting at node 0's entry GPU
  int nic = 0;             // NIC index (rail) used by every node on this channel
  // Position of `rank` in `ranks` (-1 when absent) and its neighbours.
  int Next(int rank) const;
  int Prev(int rank) const;
};

// One ring per channel. nodes, gpus_per_node, nics_per_node, channels >= 1
// (programmer error otherwise); nics_per_node <= gpus_per_node is not required:
// GPU g is near NIC g x nics / G (the GPU near NIC k is k x G / nics).
std::vector<RingOrder> RingOrders(int nodes, int gpus_per_node, int nics_per_node, int channels);

// NCCL's binary tree over `n` indices for index `r`: parent (-1 for the root),
// children (-1 for none) and whether r is its parent's child 0 or 1.
struct BtreeLinks {
  int up = -1;
  int down0 = -1;
  int down1 = -1;
  int child_type = 0;
};
BtreeLinks NcclBtree(int n, int r);
// The two trees of ncclGetDtree: tree 0 is NcclBtree; tree 1 mirrors it (n even)
// or shifts it by one (n odd).
std::array<BtreeLinks, 2> NcclDtree(int n, int r);

// A rank's links in one channel's tree (NCCL_MAX_TREE_ARITY = 3 children).
struct TreeLinks {
  int up = -1;
  std::array<int, 3> down = {-1, -1, -1};
  int Children() const;
};
struct TreeChannel {
  int tree = 0;                  // 0 or 1: which of the two node trees
  std::vector<TreeLinks> ranks;  // indexed by rank
  int Root() const;              // the rank without a parent
};
// `channels` rank-level trees; base_channels >= 1 is C above.
std::vector<TreeChannel> TreeChannels(int nodes, int gpus_per_node, int nics_per_node, int channels,
                                      int base_channels);

// Largest number of parent-to-leaf edges in NCCL's node tree `tree` (0 or 1) over n nodes.
int NodeTreeDepth(int n, int tree);

}  // namespace lossless::collective
