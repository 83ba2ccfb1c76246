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

// Repeats of entry `t` that start before `stop_time` (the ones built).
int64_t RepeatsBefore(const scenario::TrafficSpec& t, units::Time stop_time);

// Flows entry `t` expands to on `hosts` hosts, repeats before `stop_time`
// included; computed without building them and saturating at INT64_MAX.
int64_t CountFlows(const scenario::TrafficSpec& t, int64_t hosts, units::Time stop_time);

// Expands the traffic list into flows for `hosts` hosts, entry by entry and,
// within an entry, repeat by repeat; repeats that start at or after
// s.stop_time are not built. First counts the flows (CountFlows) and throws
// InputError at the entry that takes the total above s.max_flows
// (limits.max_flows), before building any. Also throws InputError naming the
// traffic entry when a rank is out of range. Flows with a `path` need the
// topology: pass it (else InputError on the path).
std::vector<fabric::FlowSpec> ExpandTraffic(const scenario::Scenario& s, uint32_t hosts,
                                            const topology::Topology* topo = nullptr);

// The switches of flow entry `t`'s path, checked to be linked in order from
// the source's switch to the destination's (throws InputError at t.path_where).
std::vector<fabric::RouteHop> ResolvePath(const scenario::TrafficSpec& t,
                                          const topology::Topology& topo);

}  // namespace lossless::workload
