#include "collective/model/orders.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

namespace lossless::collective {
namespace {

TEST(Orders, EveryRingVisitsEveryRankOnceAndCrossesEachNodeBoundaryOnce) {
  for (int nodes : {1, 2, 3, 16}) {
    for (int g : {1, 2, 8}) {
      const int n = nodes * g;
      auto rings = RingOrders(nodes, g, std::min(g, 8), 16);
      ASSERT_EQ(rings.size(), 16u);
      for (const RingOrder& r : rings) {
        ASSERT_EQ(static_cast<int>(r.ranks.size()), n);
        std::set<int> seen(r.ranks.begin(), r.ranks.end());
        EXPECT_EQ(static_cast<int>(seen.size()), n);
        EXPECT_EQ(*seen.begin(), 0);
        EXPECT_EQ(*seen.rbegin(), n - 1);
        int crossings = 0;
        for (int i = 0; i < n; ++i) {
          const int a = r.ranks[i];
          const int b = r.Next(a);
          EXPECT_EQ(r.Prev(b), a);
          if (a / g != b / g) ++crossings;
        }
        EXPECT_EQ(crossings, nodes > 1 ? nodes : 0);
      }
    }
  }
}

TEST(Orders, RingsEnterEachNodeAtTheRailGpuAndSpreadOverNics) {
  // 8 GPUs, 4 NICs, 8 channels: rail k = c mod 4 enters at GPU 2k.
  auto rings = RingOrders(2, 8, 4, 8);
  std::vector<int> per_nic(4, 0);
  for (size_t c = 0; c < rings.size(); ++c) {
    const RingOrder& r = rings[c];
    EXPECT_EQ(r.nic, static_cast<int>(c % 4));
    ++per_nic[r.nic];
    EXPECT_EQ(r.ranks[0], 2 * r.nic);      // node 0 entry
    EXPECT_EQ(r.ranks[8], 8 + 2 * r.nic);  // node 1 entry, same rail
  }
  EXPECT_EQ(per_nic, std::vector<int>({2, 2, 2, 2}));
  // The second round of channels runs the other way round inside the node.
  EXPECT_EQ(rings[0].ranks[1], 1);
  EXPECT_EQ(rings[4].ranks[1], 7);
  EXPECT_EQ(rings[0].Next(-3), -1);
}

TEST(Orders, NcclBtreeOfFourMatchesTreesCc) {
  // Worked by hand from ncclGetBtree: 0 -> {2}; 2 -> {1, 3}; 1, 3 leaves.
  BtreeLinks r0 = NcclBtree(4, 0);
  EXPECT_EQ(r0.up, -1);
  EXPECT_EQ(r0.down0, -1);
  EXPECT_EQ(r0.down1, 2);
  BtreeLinks r2 = NcclBtree(4, 2);
  EXPECT_EQ(r2.up, 0);
  EXPECT_EQ(r2.child_type, 1);
  EXPECT_EQ(r2.down0, 1);
  EXPECT_EQ(r2.down1, 3);
  BtreeLinks r1 = NcclBtree(4, 1);
  EXPECT_EQ(r1.up, 2);
  EXPECT_EQ(r1.child_type, 0);
  EXPECT_EQ(NcclBtree(4, 3).child_type, 1);
  // Mirror for even n: tree 1 of 4 is rooted at 3.
  EXPECT_EQ(NcclDtree(4, 3)[1].up, -1);
  EXPECT_EQ(NcclDtree(4, 3)[1].down1, 1);
  // Shift for odd n: tree 1 of 5 is rooted at 1.
  EXPECT_EQ(NcclDtree(5, 1)[1].up, -1);
}

TEST(Orders, DoubleBinaryTreesAreTreesWithOneRootAndConsistentLinks) {
  for (int n = 1; n <= 70; ++n) {
    for (int t = 0; t < 2; ++t) {
      int roots = 0;
      for (int r = 0; r < n; ++r) {
        const BtreeLinks l = NcclDtree(n, r)[t];
        if (l.up < 0) ++roots;
        if (l.up >= 0) {
          const BtreeLinks p = NcclDtree(n, l.up)[t];
          EXPECT_TRUE((l.child_type == 0 ? p.down0 : p.down1) == r) << n << " " << t << " " << r;
        }
        for (int d : {l.down0, l.down1}) {
          if (d >= 0) {
            EXPECT_EQ(NcclDtree(n, d)[t].up, r);
          }
        }
        // Every index reaches the root.
        int x = r;
        int steps = 0;
        while (NcclDtree(n, x)[t].up >= 0 && steps <= n) {
          x = NcclDtree(n, x)[t].up;
          ++steps;
        }
        EXPECT_LE(steps, n);
      }
      EXPECT_EQ(roots, 1) << n;
    }
  }
}

TEST(Orders, InteriorNodesOfTheTwoTreesAreDisjoint) {
  for (int n = 2; n <= 70; ++n) {
    int both = 0;
    int leaves_tree0_even = 0;
    for (int r = 0; r < n; ++r) {
      auto l = NcclDtree(n, r);
      const bool interior0 = l[0].down0 >= 0 || l[0].down1 >= 0;
      const bool interior1 = l[1].down0 >= 0 || l[1].down1 >= 0;
      if (interior0 && interior1) ++both;
      if (r % 2 == 1 && interior0) ++leaves_tree0_even;
    }
    // Odd indices are leaves of tree 0; with the mirror (even n) no node is interior in
    // both trees; with the shift (odd n) at most one is.
    EXPECT_EQ(leaves_tree0_even, 0) << n;
    EXPECT_LE(both, n % 2 == 0 ? 0 : 1) << n;
  }
}

TEST(Orders, NodeTreeDepthIsLog2) {
  EXPECT_EQ(NodeTreeDepth(1, 0), 0);
  EXPECT_EQ(NodeTreeDepth(2, 0), 1);
  EXPECT_EQ(NodeTreeDepth(16, 0), 4);
  EXPECT_EQ(NodeTreeDepth(16, 1), 4);
  EXPECT_EQ(NodeTreeDepth(64, 0), 6);
  EXPECT_LE(NodeTreeDepth(17, 1), 5);
  EXPECT_EQ(NodeTreeDepth(3, 0), 2);
  for (int n = 1; n <= 200; ++n) {
    const int ceil_log2 = n == 1 ? 0 : static_cast<int>(std::ceil(std::log2(n)));
    for (int t = 0; t < 2; ++t) {
      EXPECT_LE(NodeTreeDepth(n, t), ceil_log2) << n;
      EXPECT_GE(NodeTreeDepth(n, t), ceil_log2 - 1) << n;
    }
  }
}

TEST(Orders, BalancedTreeAttachPoints) {
  // 4 nodes x 8 GPUs, channel 0 (tree 0: node 0 -> {2}; 2 -> {1, 3}), intra order 0..7.
  // A node's first GPU talks to its parent and to child 1, its second GPU to child 0.
  auto trees = TreeChannels(4, 8, 8, 2, 1);
  const TreeChannel& t0 = trees[0];
  EXPECT_EQ(t0.Root(), 0);
  EXPECT_EQ(t0.ranks[16].up, 0);   // node 2's first GPU hangs below node 0's first GPU (child 1)
  EXPECT_EQ(t0.ranks[8].up, 17);   // node 1 is child 0 of node 2: below node 2's second GPU
  EXPECT_EQ(t0.ranks[24].up, 16);  // node 3 is child 1 of node 2: below node 2's first GPU
  EXPECT_EQ(t0.ranks[17].down, (std::array<int, 3>{18, 8, -1}));
  EXPECT_EQ(t0.ranks[16].down, (std::array<int, 3>{17, 24, -1}));
  EXPECT_EQ(t0.ranks[23].down, (std::array<int, 3>{-1, -1, -1}));  // end of node 2's chain
  // Channel 1 runs tree 1 (mirror): node 3 is its root.
  EXPECT_EQ(trees[1].tree, 1);
  EXPECT_EQ(trees[1].Root() / 8, 3);
}

TEST(Orders, RankTreesPerChannel) {
  for (int nodes : {1, 2, 5, 16}) {
    for (int g : {1, 2, 8}) {
      const int base = 4;
      auto trees = TreeChannels(nodes, g, std::min(g, 4), 2 * base, base);
      ASSERT_EQ(trees.size(), 8u);
      for (size_t c = 0; c < trees.size(); ++c) {
        const TreeChannel& ch = trees[c];
        EXPECT_EQ(ch.tree, c < base ? 0 : 1);
        int roots = 0;
        for (int r = 0; r < nodes * g; ++r) {
          const TreeLinks& l = ch.ranks[r];
          if (l.up < 0) ++roots;
          if (l.up >= 0) {
            const auto& pd = ch.ranks[l.up].down;
            EXPECT_NE(std::find(pd.begin(), pd.end(), r), pd.end())
                << nodes << "x" << g << " c" << c;
          }
          for (int d : l.down) {
            if (d >= 0) {
              EXPECT_EQ(ch.ranks[d].up, r);
            }
          }
          int x = r;
          int steps = 0;
          while (ch.ranks[x].up >= 0 && steps <= nodes * g) {
            x = ch.ranks[x].up;
            ++steps;
          }
          EXPECT_EQ(x, ch.Root());
        }
        EXPECT_EQ(roots, 1);
        // The root rank lives on the node tree's root node.
        const int root_node = ch.tree == 0 ? 0 : (nodes % 2 == 0 ? nodes - 1 : (nodes > 1 ? 1 : 0));
        EXPECT_EQ(ch.Root() / g, root_node) << nodes << "x" << g << " c" << c;
      }
    }
  }
}

}  // namespace
}  // namespace lossless::collective
