// The partitioner on the built-in topologies (the partition unit of docs/parallel.md).
#include "parallel/partition.hpp"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lossless::parallel {
namespace {

using ::testing::HasSubstr;
using topology::NodeKind;

const Location kAt{"<cli>", 0, "--ranks"};

topology::ClosParams Clos(int64_t gpus, int radix, int g = 8) {
  topology::ClosParams p;
  p.gpus = gpus;
  p.radix = radix;
  p.gpus_per_node = g;
  return p;
}

// What every partition must satisfy: every rank has a unit, units are whole
// on one rank, no link with a host end is cut, the cut list is exactly the
// links whose ends sit on different ranks, and the lookahead is their
// smallest delay.
void ExpectValid(const topology::Topology& t, const Partition& p) {
  uint32_t units = 0;
  for (const auto& s : p.per_rank) {
    EXPECT_GT(s.units, 0u);
    units += s.units;
  }
  EXPECT_EQ(units, p.units);
  std::vector<int32_t> rank_of_unit(p.units, -1);
  for (size_t v = 0; v < t.nodes.size(); ++v) {
    int32_t& r = rank_of_unit[p.unit_of_node[v]];
    if (r < 0) r = p.rank_of_node[v];
    EXPECT_EQ(r, p.rank_of_node[v]) << "unit split over ranks at node " << t.nodes[v].name;
  }
  std::set<uint32_t> cut(p.cut_links.begin(), p.cut_links.end());
  units::Time smallest = units::Time::Max();
  for (uint32_t i = 0; i < t.links.size(); ++i) {
    const auto& l = t.links[i];
    const bool crosses = p.rank_of_node[l.a] != p.rank_of_node[l.b];
    EXPECT_EQ(crosses, cut.count(i) == 1) << "link " << i;
    if (crosses) {
      EXPECT_EQ(t.nodes[l.a].kind, NodeKind::kSwitch);
      EXPECT_EQ(t.nodes[l.b].kind, NodeKind::kSwitch);
      smallest = std::min(smallest, l.delay);
    }
  }
  EXPECT_EQ(p.lookahead, smallest);
}

TEST(Partition, LeafSpineUnitIsALeafWithItsHostsAndSpinesStandAlone) {
  // 128 GPUs on radix 32: 8 leaves of 16 hosts (2 nodes of 8), 4 spines.
  const auto t = topology::BuildLeafSpine(Clos(128, 32), {});
  const Partition p = PartitionFabric(t, 8, 2, kAt);
  ExpectValid(t, p);
  EXPECT_EQ(p.units, 12u);
  EXPECT_EQ(p.host_units, 8u);
  EXPECT_EQ(p.groups, 0u);
  // Leaves 0-3 (hosts 0-63) on rank 0, 4-7 on rank 1; two spines each.
  EXPECT_EQ(p.rank_of_node[t.hosts[0]], 0);
  EXPECT_EQ(p.rank_of_node[t.hosts[63]], 0);
  EXPECT_EQ(p.rank_of_node[t.hosts[64]], 1);
  EXPECT_EQ(p.per_rank[0].hosts, 64u);
  EXPECT_EQ(p.per_rank[0].switches, 6u);
  EXPECT_EQ(p.per_rank[1].switches, 6u);
  // Each leaf has 4 links to each spine; half its spines are on the other rank.
  EXPECT_EQ(p.switch_links, 128u);
  EXPECT_EQ(p.cut_links.size(), 64u);
  EXPECT_EQ(p.lookahead, units::Time::Ns(1000));
}

TEST(Partition, OneRankCutsNothing) {
  const auto t = topology::BuildLeafSpine(Clos(128, 32), {});
  const Partition p = PartitionFabric(t, 8, 1, kAt);
  ExpectValid(t, p);
  EXPECT_TRUE(p.cut_links.empty());
  EXPECT_EQ(p.lookahead, units::Time::Max());
  EXPECT_THAT(PartitionText(t, p), HasSubstr("lookahead: none"));
}

TEST(Partition, MoreRanksThanUnitsIsBadInputNamingTheCount) {
  const auto t = topology::BuildLeafSpine(Clos(128, 32), {});
  EXPECT_NO_THROW(PartitionFabric(t, 8, 12, kAt));
  try {
    PartitionFabric(t, 8, 13, kAt);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "<cli>: --ranks: expected at most 12 ranks: the fabric has 12 partition units (8 "
              "with hosts, 4 switches alone), got 13");
  }
  EXPECT_THROW(PartitionFabric(t, 8, 0, kAt), InputError);
  // A single switch is one unit.
  const auto one = topology::BuildLeafSpine(Clos(16, 32), {});
  EXPECT_THAT([&] { PartitionFabric(one, 8, 2, kAt); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("at most 1 ranks")));
}

TEST(Partition, FatTreePodsStayWholeWhileRanksAreAtMostPods) {
  // Radix 8, 32 GPUs: 2 pods of 4 leaves and 4 spines, 4 cores.
  const auto t = topology::BuildFatTree(Clos(32, 8, 4), {});
  const Partition p = PartitionFabric(t, 4, 2, kAt);
  ExpectValid(t, p);
  EXPECT_EQ(p.groups, 2u);
  EXPECT_TRUE(p.whole_groups);
  EXPECT_EQ(p.units, 8u + 8u + 4u);
  for (size_t v = 0; v < t.nodes.size(); ++v) {
    if (t.nodes[v].group >= 0) {
      EXPECT_EQ(p.rank_of_node[v], t.nodes[v].group) << t.nodes[v].name;
    }
  }
  // Only spine-core links are cut: the cores' half that sits on the other rank.
  for (uint32_t i : p.cut_links) {
    const auto& l = t.links[i];
    EXPECT_TRUE(t.nodes[l.a].tier == topology::Tier::kCore ||
                t.nodes[l.b].tier == topology::Tier::kCore);
  }
  EXPECT_EQ(p.cut_links.size(), 16u);  // 32 spine-core links, half cross
  // Four ranks: each pod split in two halves of 2 leaves (8 hosts) and 2
  // spines, one core each. Cut: each leaf's uplinks to the other half's 2
  // spines (8 x 2) and each spine's links to the 3 cores elsewhere (8 x 3).
  // Leaves in one half and spines in the other would cut all 32 leaf-spine
  // links instead of 16.
  const Partition p4 = PartitionFabric(t, 4, 4, kAt);
  ExpectValid(t, p4);
  EXPECT_FALSE(p4.whole_groups);
  for (const auto& s : p4.per_rank) {
    EXPECT_EQ(s.hosts, 8u);
    EXPECT_EQ(s.switches, 5u);
  }
  EXPECT_EQ(p4.cut_links.size(), 16u + 24u);
}

TEST(Partition, RailOptimizedScalableUnitIsOneUnit) {
  // Radix 16, 8 GPUs per node, 128 GPUs: 2 scalable units of 8 nodes on 8 leaves each, 8 spines.
  const auto t = topology::BuildRailOptimized(Clos(128, 16, 8), {});
  const Partition p = PartitionFabric(t, 8, 2, kAt);
  ExpectValid(t, p);
  EXPECT_EQ(p.units, 2u + 8u);  // each node's NICs reach all 8 leaves of its SU
  EXPECT_EQ(p.host_units, 2u);
  EXPECT_TRUE(p.whole_groups);
  EXPECT_EQ(p.per_rank[0].hosts, 64u);
  EXPECT_EQ(p.per_rank[1].hosts, 64u);
  EXPECT_EQ(p.per_rank[0].switches, 8u + 4u);
  // Three ranks: two SUs and spines alone; three SUs' worth is not possible.
  EXPECT_THAT([&] { PartitionFabric(t, 8, 11, kAt); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("expected at most 10 ranks")));
  // Without servers (one host per node) each rail leaf is its own unit.
  EXPECT_EQ(PartitionFabric(t, 1, 2, kAt).units, 16u + 8u);
}

TEST(Partition, IsAPureFunctionOfTopologyAndRanks) {
  const auto t = topology::BuildFatTree(Clos(32, 8, 4), {});
  for (int k = 1; k <= 5; ++k) {
    const Partition a = PartitionFabric(t, 4, k, kAt), b = PartitionFabric(t, 4, k, kAt);
    EXPECT_EQ(a.rank_of_node, b.rank_of_node);
    EXPECT_EQ(a.cut_links, b.cut_links);
    EXPECT_EQ(PartitionText(t, a), PartitionText(t, b));
  }
}

TEST(Partition, ACutLinkWithoutDelayIsBadInput) {
  // Two switches, a host each; the switch link has no delay (the builders and
  // the topology file reader refuse that; a hand-made topology can hold it).
  topology::Topology t;
  t.nodes = {{"h0", NodeKind::kHost},
             {"h1", NodeKind::kHost},
             {"s0", NodeKind::kSwitch},
             {"s1", NodeKind::kSwitch}};
  t.hosts = {0, 1};
  const auto r = units::Rate::Gbps(400);
  t.links = {{0, 2, r, units::Time::Ns(100)}, {1, 3, r, units::Time::Ns(100)}, {2, 3, r, {}}};
  EXPECT_NO_THROW(PartitionFabric(t, 1, 1, kAt));
  EXPECT_THAT([&] { PartitionFabric(t, 1, 2, kAt); },
              ::testing::ThrowsMessage<InputError>(
                  HasSubstr("expected every cut link to have a delay above zero (the lookahead), "
                            "but link 2 s0-s1 has 0")));
}

}  // namespace
}  // namespace lossless::parallel
