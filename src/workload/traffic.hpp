#pragma once
// Traffic of a scenario as flows: expands the `traffic:` entries (patterns,
// repeat / every, pacing rate) and resolves explicit routes (`path`) against
// the topology.
#include <cstdint>
#include <vector>

#include "fabric/network.hpp"
#include "scenario/scenario.hpp"
#include "topology/topology.hpp"

namespace lossless::workload {

// Expands the traffic list into flows for `hosts` hosts, entry by entry and,
// within an entry, repeat by repeat (throws InputError naming the traffic
// entry when a rank is out of range). Flows with a `path` need the topology:
// pass it (else InputError on the path).
std::vector<fabric::FlowSpec> ExpandTraffic(const scenario::Scenario& s, uint32_t hosts,
                                            const topology::Topology* topo = nullptr);

// The switches of flow entry `t`'s path, checked to be linked in order from
// the source's switch to the destination's (throws InputError at t.path_where).
std::vector<fabric::RouteHop> ResolvePath(const scenario::TrafficSpec& t,
                                          const topology::Topology& topo);

}  // namespace lossless::workload
