#pragma once
// Topologies for fabric unit tests: the LS-RING shape of the topology module
// (hosts first, then leaves, then spines; host links first, then leaf-spine
// links in (leaf, spine) order), which the tests index into.
#include "topology/topology.hpp"

namespace lossless::fabric::testing {

// hosts_per_leaf hosts per leaf, `spines` spines, one link from each leaf to
// each spine; 400 Gb/s and 1 us unless given.
inline topology::Topology LsRing(int hosts, int hosts_per_leaf, int spines,
                                 units::Rate rate = units::Rate::Gbps(400),
                                 units::Time delay = units::Time::Us(1)) {
  return topology::BuildLsRing(hosts, hosts_per_leaf, spines, rate, delay,
                               {"<test>", 0, "topology"});
}

// Hosts A and B (ranks 0 and 1) on one switch: links A-sw and B-sw.
inline topology::Topology TwoHostsOneSwitch(units::Rate rate = units::Rate::Gbps(400),
                                            units::Time delay = units::Time::Us(1)) {
  topology::Topology t;
  t.nodes.push_back({"A", topology::NodeKind::kHost, topology::Tier::kOther, -1});
  t.nodes.push_back({"B", topology::NodeKind::kHost, topology::Tier::kOther, -1});
  t.nodes.push_back({"sw", topology::NodeKind::kSwitch, topology::Tier::kLeaf, -1});
  t.links.push_back({0, 2, rate, delay});
  t.links.push_back({1, 2, rate, delay});
  t.hosts = {0, 1};
  t.description = "A - switch - B";
  return t;
}

}  // namespace lossless::fabric::testing
