#include "collective/model/orders.hpp"

#include <algorithm>
#include <cassert>

namespace lossless::collective {

int RingOrder::Next(int rank) const {
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end()) return -1;
  ++it;
  return it == ranks.end() ? ranks.front() : *it;
}

int RingOrder::Prev(int rank) const {
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end()) return -1;
  return it == ranks.begin() ? ranks.back() : *(it - 1);
}

namespace {

// The intra-node order of channel c: local GPU indices, entry GPU first.
std::vector<int> IntraOrder(int gpus, int nics, int c) {
  const int nic = c % nics;
  const int entry = static_cast<int>(static_cast<int64_t>(nic) * gpus / nics);
  const bool down = (c / nics) % 2 == 1;
  std::vector<int> order;
  order.reserve(gpus);
  for (int i = 0; i < gpus; ++i) {
    const int step = down ? -i : i;
    order.push_back(((entry + step) % gpus + gpus) % gpus);
  }
  return order;
}

}  // namespace

std::vector<RingOrder> RingOrders(int nodes, int gpus_per_node, int nics_per_node, int channels) {
  assert(nodes >= 1 && gpus_per_node >= 1 && nics_per_node >= 1 && channels >= 1);
  std::vector<RingOrder> rings;
  rings.reserve(channels);
  for (int c = 0; c < channels; ++c) {
    RingOrder r;
    r.nic = c % nics_per_node;
    const std::vector<int> intra = IntraOrder(gpus_per_node, nics_per_node, c);
    r.ranks.reserve(static_cast<size_t>(nodes) * gpus_per_node);
    for (int n = 0; n < nodes; ++n) {
      for (int g : intra) r.ranks.push_back(n * gpus_per_node + g);
    }
    rings.push_back(std::move(r));
  }
  return rings;
}

BtreeLinks NcclBtree(int nranks, int rank) {
  BtreeLinks out;
  int bit = 1;
  for (; bit < nranks; bit <<= 1) {
    if (bit & rank) break;
  }
  if (rank == 0) {
    out.down1 = nranks > 1 ? bit >> 1 : -1;
    return out;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= nranks) up = rank ^ bit;
  out.child_type = rank < up ? 0 : 1;
  out.up = up;
  int lowbit = bit >> 1;
  out.down0 = lowbit == 0 ? -1 : rank - lowbit;
  int down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= nranks) {
    down1 = lowbit == 0 ? -1 : rank + lowbit;
    lowbit >>= 1;
  }
  out.down1 = down1;
  return out;
}

std::array<BtreeLinks, 2> NcclDtree(int n, int r) {
  std::array<BtreeLinks, 2> t;
  t[0] = NcclBtree(n, r);
  BtreeLinks b;
  if (n % 2 == 1) {
    b = NcclBtree(n, (r - 1 + n) % n);
    auto shift = [n](int x) { return x == -1 ? -1 : (x + 1) % n; };
    t[1] = {shift(b.up), shift(b.down0), shift(b.down1), b.child_type};
  } else {
    b = NcclBtree(n, n - 1 - r);
    auto mirror = [n](int x) { return x == -1 ? -1 : n - 1 - x; };
    t[1] = {mirror(b.up), mirror(b.down0), mirror(b.down1), b.child_type};
  }
  return t;
}

int TreeLinks::Children() const {
  return static_cast<int>(std::count_if(down.begin(), down.end(), [](int d) { return d >= 0; }));
}

int TreeChannel::Root() const {
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].up < 0) return static_cast<int>(r);
  }
  return -1;
}

namespace {

void AddChild(TreeLinks& t, int child) {
  for (int& d : t.down) {
    if (d < 0) {
      d = child;
      return;
    }
  }
  assert(false && "more than NCCL_MAX_TREE_ARITY children");
}

}  // namespace

std::vector<TreeChannel> TreeChannels(int nodes, int gpus_per_node, int nics_per_node, int channels,
                                      int base_channels) {
  assert(nodes >= 1 && gpus_per_node >= 1 && nics_per_node >= 1 && channels >= 1 &&
         base_channels >= 1);
  const int g = gpus_per_node;
  std::vector<TreeChannel> out;
  out.reserve(channels);
  for (int c = 0; c < channels; ++c) {
    TreeChannel ch;
    ch.tree = (c % (2 * base_channels)) / base_channels;
    ch.ranks.assign(static_cast<size_t>(nodes) * g, TreeLinks{});
    const std::vector<int> intra = IntraOrder(g, nics_per_node, c % base_channels);
    // Balanced tree pattern: parent and child 1 on intra[0], child 0 on intra[1].
    auto ttp = [&](int node) { return node * g + intra[0]; };
    auto ttc0 = [&](int node) { return node * g + intra[g > 1 ? 1 : 0]; };
    auto ttc1 = [&](int node) { return node * g + intra[0]; };
    for (int node = 0; node < nodes; ++node) {
      for (int i = 0; i < g; ++i) {
        TreeLinks& t = ch.ranks[node * g + intra[i]];
        t.up = i == 0 ? -1 : node * g + intra[i - 1];
        t.down[0] = i == g - 1 ? -1 : node * g + intra[i + 1];
      }
    }
    for (int node = 0; node < nodes; ++node) {
      const BtreeLinks b = NcclDtree(nodes, node)[ch.tree];
      if (b.up >= 0) ch.ranks[ttp(node)].up = b.child_type == 0 ? ttc0(b.up) : ttc1(b.up);
      if (b.down0 >= 0) AddChild(ch.ranks[ttc0(node)], ttp(b.down0));
      if (b.down1 >= 0) AddChild(ch.ranks[ttc1(node)], ttp(b.down1));
    }
    out.push_back(std::move(ch));
  }
  return out;
}

int NodeTreeDepth(int n, int tree) {
  int depth = 0;
  for (int r = 0; r < n; ++r) {
    int d = 0;
    int x = r;
    while (true) {
      const int up = NcclDtree(n, x)[tree].up;
      if (up < 0 || d > n) break;
      x = up;
      ++d;
    }
    depth = std::max(depth, d);
  }
  return depth;
}

}  // namespace lossless::collective
