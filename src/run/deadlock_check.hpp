#pragma once
// The static PFC deadlock check of a scenario (`lossless deadlock`,
// docs/deadlock.md): the buffer dependency graph of the routes its traffic
// can take, a cyclic buffer dependency if there is one, and the flows whose
// routes close it. No engine: the scenario's traffic is expanded into flows
// (explicit `path:` routes resolved against the topology), and flows without
// a path follow every minimal route the routing may choose.
#include <cstdint>
#include <string>
#include <vector>

#include "deadlock/buffer_graph.hpp"
#include "scenario/scenario.hpp"
#include "topology/topology.hpp"

namespace lossless::run {

struct DeadlockCheck {
  // Whether the traffic was known statically. When it was not (no traffic
  // list, background tenants, or all_pairs asked), every host pair is
  // analysed on `priority` over the routing's candidate routes, and `why`
  // says which reason applied.
  bool traffic_known = false;
  std::string why;
  uint64_t flows = 0;            // data flows followed (known traffic)
  uint64_t explicit_routes = 0;  // of them, on an explicit path
  uint64_t return_flows = 0;     // ACK, CNP or BECN flows back over routed paths
  int priority = 0;              // the one analysed priority, or -1: every class the traffic uses
  std::vector<int> classes;      // classes of the buffers in the graph, increasing
  deadlock::BufferGraph graph;
  std::vector<uint32_t> cycle;      // vertex ids of the witness, empty when acyclic
  std::vector<std::string> labels;  // "switch:from:priority" per witness buffer
  // Per dependency labels[i] -> labels[i+1]: the flows whose routes use it
  // (known traffic only; "C (host0->host1)" style, at most kMaxNamed, then
  // "and N more").
  std::vector<std::vector<std::string>> cycle_flows;
  // Whether every class on the cycle (or, without one, every analysed class)
  // is lossless in the scenario, and the ones that are not.
  bool lossless = true;
  std::vector<int> lossy_classes;
};

inline constexpr size_t kMaxNamed = 8;

// Runs the check. `priority` -1 = every class of the known traffic, or the
// scenario's fabric.data_class when the traffic is not known; 0-7 keeps only
// the buffers of that priority. `all_pairs` ignores the traffic list.
// Throws InputError as scenario loading does (a path that is not linked, a
// rank out of range).
DeadlockCheck CheckDeadlockStatically(const scenario::Scenario& s, const topology::Topology& t,
                                      int priority, bool all_pairs);

}  // namespace lossless::run
