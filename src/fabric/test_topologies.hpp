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

}  // namespace lossless::fabric::testing
