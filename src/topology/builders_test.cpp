#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "topology/topology.hpp"

namespace lossless::topology {
namespace {

const Location kWhere{"scenario.yaml", 3, "topology"};

ClosParams Params(int64_t gpus, int radix, int tiers = 0, double o = 1.0) {
  ClosParams p;
  p.gpus = gpus;
  p.radix = radix;
  p.tiers = tiers;
  p.oversubscription = o;
  return p;
}

struct Census {
  std::map<Tier, int64_t> nodes;
  std::vector<int64_t> degree;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> pairs;  // (min, max) → parallel links
};

// Checks what every built topology must satisfy and counts what tests compare.
Census Check(const Topology& t, int radix, units::Rate rate, units::Time delay) {
  Census c;
  c.degree.assign(t.nodes.size(), 0);
  for (const Node& n : t.nodes) ++c.nodes[n.tier];
  std::set<std::string> names;
  for (const Node& n : t.nodes) EXPECT_TRUE(names.insert(n.name).second) << n.name;
  for (const Link& l : t.links) {
    EXPECT_LT(l.a, t.nodes.size());
    EXPECT_LT(l.b, t.nodes.size());
    EXPECT_NE(l.a, l.b);
    EXPECT_EQ(l.rate, rate);
    EXPECT_EQ(l.delay, delay);
    ++c.degree[l.a];
    ++c.degree[l.b];
    ++c.pairs[{std::min(l.a, l.b), std::max(l.a, l.b)}];
  }
  for (size_t r = 0; r < t.hosts.size(); ++r) {
    const Node& h = t.nodes[t.hosts[r]];
    EXPECT_EQ(h.name, "host" + std::to_string(r));
    EXPECT_EQ(h.kind, NodeKind::kHost);
    EXPECT_EQ(c.degree[t.hosts[r]], 1) << h.name;
  }
  for (size_t v = 0; v < t.nodes.size(); ++v) {
    if (t.nodes[v].kind == NodeKind::kSwitch) {
      EXPECT_LE(c.degree[v], radix) << t.nodes[v].name;
    }
  }
  EXPECT_FALSE(FindUnreachableHosts(t).has_value());
  EXPECT_FALSE(t.description.empty());
  return c;
}

uint32_t Index(const Topology& t, const std::string& name) {
  for (uint32_t i = 0; i < t.nodes.size(); ++i) {
    if (t.nodes[i].name == name) return i;
  }
  ADD_FAILURE() << "no node " << name;
  return 0;
}

// The leaf a host is cabled to.
uint32_t LeafOf(const Topology& t, uint32_t host) {
  for (const Link& l : t.links) {
    if (l.a == host) return l.b;
    if (l.b == host) return l.a;
  }
  ADD_FAILURE() << "host without link";
  return 0;
}

TEST(BuildLeafSpine, N1024K64TwoParallelLinksPerPair) {
  const ClosParams p = Params(1024, 64);
  const Topology t = BuildLeafSpine(p, kWhere);
  const Census c = Check(t, 64, p.link_rate, p.link_delay);
  EXPECT_EQ(c.nodes.at(Tier::kHost), 1024);
  EXPECT_EQ(c.nodes.at(Tier::kLeaf), 32);
  EXPECT_EQ(c.nodes.at(Tier::kSpine), 16);
  EXPECT_EQ(t.links.size(), 2048u);
  EXPECT_EQ(c.pairs.size(), 1024u + 32 * 16);
  for (const auto& [pair, n] : c.pairs) {
    if (t.nodes[pair.first].tier == Tier::kLeaf) {
      EXPECT_EQ(n, 2);
    }
  }
  EXPECT_EQ(t.nodes[LeafOf(t, 0)].name, "leaf0");
  EXPECT_EQ(t.nodes[LeafOf(t, 31)].name, "leaf0");
  EXPECT_EQ(t.nodes[LeafOf(t, 32)].name, "leaf1");
  EXPECT_EQ(t.nodes[LeafOf(t, 1023)].name, "leaf31");
  for (uint32_t v = 0; v < t.nodes.size(); ++v) {
    if (t.nodes[v].kind == NodeKind::kSwitch) {
      EXPECT_EQ(c.degree[v], 64) << t.nodes[v].name;
    }
  }
  EXPECT_EQ(t.description,
            "2-tier leaf-spine (radix 64, non-blocking), 1024 hosts, 32 leaves, 16 spines, 2048 "
            "links of 400Gbps, 1us delay");
}

TEST(BuildLeafSpine, UnevenCountsStayWithinRadix) {
  // 1,000 hosts: the last leaf has 8 hosts; 2,040 on k = 64 with 64 leaves.
  for (int64_t n : {100, 1000, 2040}) {
    const ClosParams p = Params(n, 64);
    const Topology t = BuildLeafSpine(p, kWhere);
    const Census c = Check(t, 64, p.link_rate, p.link_delay);
    const Sizing s = SizeClos(p, kWhere);
    EXPECT_EQ(c.nodes.at(Tier::kLeaf), s.leaves);
    EXPECT_EQ(c.nodes.at(Tier::kSpine), s.spines);
    EXPECT_EQ(static_cast<int64_t>(t.links.size()), s.links);
  }
  // Oversubscribed 3:1 with 16 uplinks over 16 spines: one link per leaf-spine pair.
  const ClosParams p = Params(3000, 64, 0, 3.0);
  const Census c = Check(BuildLeafSpine(p, kWhere), 64, p.link_rate, p.link_delay);
  EXPECT_EQ(c.nodes.at(Tier::kLeaf), 63);
  EXPECT_EQ(c.nodes.at(Tier::kSpine), 16);
}

// Issue 16: 16 hosts, radix 8 at 64:1 printed "64:1 oversubscribed" but
// built 7:1; 1.5:1 built 1:1. The description gives the ratio built.
TEST(BuildLeafSpine, DescriptionGivesTheRatioBuilt) {
  EXPECT_EQ(SplitLeaf(8, 64).down, 7);
  EXPECT_EQ(SplitLeaf(8, 64).up, 1);
  EXPECT_EQ(SplitLeaf(8, 1.5).down, 4);
  EXPECT_EQ(SplitLeaf(64, 3).down, 48);
  EXPECT_EQ(SplitLeaf(1, 3).down, 0);
  const Location where{"s.yaml", 7, ""};
  EXPECT_NE(BuildLeafSpine(Params(16, 8, 0, 64), where)
                .description.find("(radix 8, 7:1 "
                                  "oversubscribed)"),
            std::string::npos);
  EXPECT_NE(BuildLeafSpine(Params(16, 8, 0, 1.5), where)
                .description.find("(radix 8, "
                                  "non-blocking)"),
            std::string::npos);
  EXPECT_NE(BuildLeafSpine(Params(3000, 64, 0, 3.0), where).description.find("3:1 oversubscribed"),
            std::string::npos);
}

TEST(BuildLeafSpine, SingleSwitchWhenHostsFitOne) {
  const ClosParams p = Params(48, 64);
  const Topology t = BuildLeafSpine(p, kWhere);
  const Census c = Check(t, 64, p.link_rate, p.link_delay);
  EXPECT_EQ(t.nodes.size(), 49u);
  EXPECT_EQ(t.links.size(), 48u);
  EXPECT_EQ(c.nodes.at(Tier::kLeaf), 1);
  EXPECT_EQ(c.nodes.count(Tier::kSpine), 0u);
  EXPECT_EQ(t.nodes[48].name, "leaf0");
  // An explicit 2 still builds two tiers.
  const Topology two = BuildLeafSpine(Params(48, 64, 2), kWhere);
  EXPECT_EQ(two.links.size(), 48u + 2 * 32);  // 2 leaves of 32 hosts, 32 uplinks each
}

TEST(BuildLeafSpine, Errors) {
  try {
    BuildLeafSpine(Params(4096, 64), kWhere);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "scenario.yaml:3: topology.gpus: expected at most 2048 GPUs for a 2-tier "
                 "non-blocking fabric of radix-64 switches, got 4096");
  }
  ClosParams p = Params(128, 64);
  p.link_delay = units::Time::Zero();
  try {
    BuildLeafSpine(p, kWhere);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "scenario.yaml:3: topology.link_delay: expected a delay above zero (components "
                 "talk over links with latency > 0), got \"0ps\"");
  }
  EXPECT_THROW(BuildLeafSpine(Params(128, 64, 3), kWhere), InputError);
}

TEST(BuildFatTree, FullPodsHave3NLinks) {
  const ClosParams p = Params(4096, 64);
  const Topology t = BuildFatTree(p, kWhere);
  const Census c = Check(t, 64, p.link_rate, p.link_delay);
  EXPECT_EQ(c.nodes.at(Tier::kLeaf), 128);
  EXPECT_EQ(c.nodes.at(Tier::kSpine), 128);
  EXPECT_EQ(c.nodes.at(Tier::kCore), 64);
  EXPECT_EQ(t.links.size(), 3u * 4096);
  for (uint32_t v = 0; v < t.nodes.size(); ++v) {
    if (t.nodes[v].kind == NodeKind::kSwitch) {
      EXPECT_EQ(c.degree[v], 64) << t.nodes[v].name;
    }
  }
  // Every core reaches all 4 pods; leaves and spines carry their pod.
  const uint32_t core0 = Index(t, "core0");
  std::vector<std::set<int32_t>> pods_of_core(64);
  for (const Link& l : t.links) {
    if (t.nodes[l.b].tier == Tier::kCore) pods_of_core[l.b - core0].insert(t.nodes[l.a].group);
  }
  for (const auto& pods : pods_of_core) EXPECT_EQ(pods.size(), 4u);
  EXPECT_EQ(t.nodes[Index(t, "leaf40")].group, 1);
  EXPECT_EQ(t.nodes[Index(t, "spine127")].group, 3);
  EXPECT_EQ(t.nodes[Index(t, "host1024")].group, 1);
}

TEST(BuildFatTree, ClassicK4) {
  // k = 4, 16 hosts: 4 pods of 2 leaves + 2 spines, 4 cores; core j·2+i is
  // wired to spine j of every pod, once.
  const ClosParams p = Params(16, 4, 3);
  const Topology t = BuildFatTree(p, kWhere);
  const Census c = Check(t, 4, p.link_rate, p.link_delay);
  EXPECT_EQ(c.nodes.at(Tier::kLeaf), 8);
  EXPECT_EQ(c.nodes.at(Tier::kSpine), 8);
  EXPECT_EQ(c.nodes.at(Tier::kCore), 4);
  EXPECT_EQ(t.links.size(), 48u);
  for (int pod = 0; pod < 4; ++pod) {
    for (int j = 0; j < 2; ++j) {
      const uint32_t spine = Index(t, "spine" + std::to_string(pod * 2 + j));
      for (int i = 0; i < 2; ++i) {
        const uint32_t core = Index(t, "core" + std::to_string(j * 2 + i));
        EXPECT_EQ(c.pairs.at({spine, core}), 1) << pod << " " << j << " " << i;
      }
    }
  }
  EXPECT_EQ(t.description,
            "3-tier fat tree (radix 4, non-blocking), 16 hosts, 4 pods, 8 leaves, 8 spines, 4 "
            "cores, 48 links of 400Gbps, 1us delay");
}

TEST(BuildFatTree, PartialPodsAndOversubscriptionAreValid) {
  for (const ClosParams& p :
       {Params(2080, 64), Params(3000, 64), Params(8192 + 100, 64), Params(100, 64, 3),
        Params(20000, 64, 0, 3.0), Params(7, 4, 3), Params(65536, 64)}) {
    const Topology t = BuildFatTree(p, kWhere);
    const Census c = Check(t, p.radix, p.link_rate, p.link_delay);
    ClosParams q = p;
    q.tiers = 3;
    const Sizing s = SizeClos(q, kWhere);
    EXPECT_EQ(c.nodes.at(Tier::kLeaf), s.leaves) << p.gpus;
    EXPECT_EQ(c.nodes.at(Tier::kSpine), s.spines) << p.gpus;
    EXPECT_EQ(c.nodes.at(Tier::kCore), s.cores) << p.gpus;
    EXPECT_EQ(static_cast<int64_t>(t.links.size()), s.links) << p.gpus;
  }
}

TEST(BuildRailOptimized, SuperPodH100) {
  const int64_t spines[] = {4, 8, 16, 16};
  for (int64_t su = 1; su <= 4; ++su) {
    const ClosParams p = Params(256 * su, 64);
    const Topology t = BuildRailOptimized(p, kWhere);
    const Census c = Check(t, 64, p.link_rate, p.link_delay);
    EXPECT_EQ(c.nodes.at(Tier::kLeaf), 8 * su);
    EXPECT_EQ(c.nodes.at(Tier::kSpine), spines[su - 1]);
    EXPECT_EQ(static_cast<int64_t>(t.links.size()), 512 * su);
    // Each leaf's 32 uplinks divide evenly: 32 / S links to every spine.
    int64_t leaf_spine_pairs = 0;
    for (const auto& [pair, n] : c.pairs) {
      if (t.nodes[pair.first].tier != Tier::kLeaf) continue;
      EXPECT_EQ(n, 32 / spines[su - 1]);
      ++leaf_spine_pairs;
    }
    EXPECT_EQ(leaf_spine_pairs, 8 * su * spines[su - 1]);
  }
}

TEST(BuildRailOptimized, NicJOfNodeNInSuSOnLeafSGPlusJ) {
  const Topology t = BuildRailOptimized(Params(768, 64), kWhere);
  // Node 40 is in SU 1 (32 nodes per SU); its NIC 5 is host 325.
  EXPECT_EQ(t.nodes[LeafOf(t, 40 * 8 + 5)].name, "leaf13");
  EXPECT_EQ(t.nodes[LeafOf(t, 0)].name, "leaf0");
  EXPECT_EQ(t.nodes[LeafOf(t, 7)].name, "leaf7");
  EXPECT_EQ(t.nodes[LeafOf(t, 8)].name, "leaf0");
  EXPECT_EQ(t.nodes[LeafOf(t, 767)].name, "leaf23");
  EXPECT_EQ(t.nodes[325].group, 1);
  EXPECT_EQ(t.nodes[Index(t, "leaf13")].group, 1);
}

TEST(BuildLsRing, N64) {
  const Topology t = BuildLsRing(64, 8, 8, units::Rate::Gbps(400), units::Time::Us(1), kWhere);
  const Census c = Check(t, 16, units::Rate::Gbps(400), units::Time::Us(1));
  EXPECT_EQ(c.nodes.at(Tier::kHost), 64);
  EXPECT_EQ(c.nodes.at(Tier::kLeaf), 8);
  EXPECT_EQ(c.nodes.at(Tier::kSpine), 8);
  EXPECT_EQ(t.links.size(), 64u + 64);
  for (const auto& [pair, n] : c.pairs) EXPECT_EQ(n, 1);
  EXPECT_EQ(t.nodes[LeafOf(t, 9)].name, "leaf1");
  EXPECT_EQ(t.description,
            "LS-RING leaf-spine, 64 hosts, 8 hosts per leaf, 8 leaves, 8 spines, 128 links of "
            "400Gbps, 1us delay");
}

TEST(BuildLsRing, Errors) {
  try {
    BuildLsRing(60, 8, 8, units::Rate::Gbps(400), units::Time::Us(1), kWhere);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "scenario.yaml:3: topology.gpus: expected a positive multiple of hosts_per_leaf "
                 "(8), got \"60\"");
  }
  EXPECT_THROW(BuildLsRing(64, 8, 0, units::Rate::Gbps(400), units::Time::Us(1), kWhere),
               InputError);
  EXPECT_THROW(BuildLsRing(64, 0, 8, units::Rate::Gbps(400), units::Time::Us(1), kWhere),
               InputError);
  EXPECT_THROW(BuildLsRing(64, 8, 8, units::Rate::Gbps(400), units::Time::Zero(), kWhere),
               InputError);
}

}  // namespace
}  // namespace lossless::topology
