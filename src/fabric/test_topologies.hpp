#pragma once
// Small hand-built topologies for fabric unit tests (no dependency on the
// topology builders, so the two modules are tested independently).
#include <string>

#include "topology/topology.hpp"

namespace lossless::fabric::testing {

// LS-RING shape: hosts_per_leaf hosts per leaf, `spines` spines, one link from
// each leaf to each spine; 400 Gb/s and 1 us everywhere.
inline topology::Topology LsRing(int hosts, int hosts_per_leaf, int spines,
                                 units::Rate rate = units::Rate::Gbps(400),
                                 units::Time delay = units::Time::Us(1)) {
  using topology::Node;
  using topology::NodeKind;
  using topology::Tier;
  topology::Topology t;
  int leaves = hosts / hosts_per_leaf;
  for (int h = 0; h < hosts; ++h) {
    t.hosts.push_back(static_cast<uint32_t>(t.nodes.size()));
    t.nodes.push_back(Node{"host" + std::to_string(h), NodeKind::kHost, Tier::kHost, -1});
  }
  uint32_t leaf0 = static_cast<uint32_t>(t.nodes.size());
  for (int l = 0; l < leaves; ++l)
    t.nodes.push_back(Node{"leaf" + std::to_string(l), NodeKind::kSwitch, Tier::kLeaf, -1});
  uint32_t spine0 = static_cast<uint32_t>(t.nodes.size());
  for (int s = 0; s < spines; ++s)
    t.nodes.push_back(Node{"spine" + std::to_string(s), NodeKind::kSwitch, Tier::kSpine, -1});
  for (int h = 0; h < hosts; ++h)
    t.links.push_back({t.hosts[h], leaf0 + h / hosts_per_leaf, rate, delay});
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < spines; ++s) t.links.push_back({leaf0 + l, spine0 + s, rate, delay});
  return t;
}

}  // namespace lossless::fabric::testing
