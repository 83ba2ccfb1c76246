#pragma once
// Static PFC deadlock check: the channel (buffer) dependency graph of one
// lossless priority under the fabric's minimal routing, and a search for a
// cyclic buffer dependency (CBD, docs/model/pfc.md#deadlock).
//
// Model:
// - A vertex is the ingress buffer of `priority` at a switch port: the port
//   through which the switch receives (from a host or from another switch).
//   Every switch port is a vertex; host ports are not (hosts always sink).
// - An edge A -> B means a packet may sit in buffer A and next need space in
//   buffer B: some host can send toward some destination host d along
//   minimal next hops (RoutingTable::Candidates) so that the packet enters switch
//   S through port A and leaves through an egress e toward d whose peer B is
//   a switch port. Egresses to a host give no edge.
// - Every host pair is assumed to carry traffic on `priority` (the scenario's
//   traffic list is not consulted), every link is up, and any minimal next hop
//   may be taken (ECMP, adaptive and spraying all choose among them).
// A cycle in this graph is necessary, not sufficient, for a deadlock (Hu et
// al., HotNets 2016). Up/down minimal routing on a Clos gives no cycle.
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/network.hpp"  // kMaxClasses
#include "fabric/routing.hpp"

namespace lossless::deadlock {

// Dependency graph in CSR form. With `classes` 1 a vertex id is a port id
// of the network and `priority` labels every buffer; with `classes`
// kMaxClasses (BuildTrafficBufferGraph) vertex port * kMaxClasses + c is the
// ingress buffer of class c at that port.
struct BufferGraph {
  int priority = 0;
  int classes = 1;
  uint32_t num_ports = 0;
  uint64_t num_vertices = 0;  // ingress buffers (of switch ports) in the graph
  // Size num_ids() + 1; edges of vertex v in [offsets[v], offsets[v+1]).
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> targets;  // sorted per vertex, no duplicates

  uint64_t num_edges() const { return targets.size(); }
  uint32_t num_ids() const { return num_ports * static_cast<uint32_t>(classes); }
  uint32_t PortOf(uint32_t v) const { return v / static_cast<uint32_t>(classes); }
  int ClassOf(uint32_t v) const {
    return classes == 1 ? priority : static_cast<int>(v % static_cast<uint32_t>(classes));
  }
  // O(log out-degree).
  bool HasEdge(uint32_t from, uint32_t to) const;
};

// Builds the graph for `priority` (0 .. fabric::kMaxClasses-1; the priority
// only labels the buffers, since routing does not depend on it). Destinations
// on the same edge switch share routes, and an ingress port emits the edges of
// a candidate set once however many destinations use it, so the cost is
// O(edge switches · reached ingress ports · candidates per hop) plus sorting
// the distinct edges: a 1,024-host leaf-spine takes about 20 ms.
BufferGraph BuildBufferGraph(const fabric::RoutingTable& routes, int priority);

// The graph of the buffers a scenario's traffic can use: every flow of
// `flows` (src and dst host ranks, tclass resolved to 0..7) follows its
// explicit route when it has one (FlowSpec::route: the switches in order,
// the first link between consecutive ones, a class change from a hop on as
// the network applies it) and otherwise every path of the routing's minimal
// next hops (RoutingTable::Candidates) from its source to its destination.
// Vertices are (ingress port, class) pairs, ids port * kMaxClasses + class;
// under global pause (`global`) a buffer is the whole port and `classes` is 1.
// `only_class` >= 0 keeps only the edges between buffers of that class.
// Throws std::invalid_argument for a route whose consecutive switches are not
// linked or that does not run from the source's switch to the destination's
// (scenario loading checks routes first, so this is a programmer error).
// Cost: explicit routes O(hops); candidate routes one breadth-first search
// per (destination edge switch, class) over the ports reached.
BufferGraph BuildTrafficBufferGraph(const fabric::RoutingTable& routes,
                                    const std::vector<fabric::FlowSpec>& flows, bool global,
                                    int only_class = -1);

// For each dependency cycle[i] -> cycle[(i+1) % size] of a cycle found in a
// graph `g` built by BuildTrafficBufferGraph from the same arguments, the
// indices into `flows` of the flows whose routes (explicit, or some candidate
// path) take a packet from the first buffer into the second, in increasing
// order. One search per (source port, destination edge switch, class) among
// the candidate-routed flows.
std::vector<std::vector<uint32_t>> FlowsOnCycle(const fabric::RoutingTable& routes,
                                                const std::vector<fabric::FlowSpec>& flows,
                                                const BufferGraph& g,
                                                const std::vector<uint32_t>& cycle);

// A cycle of buffers, in dependency order: buffer ports[i] waits on
// ports[(i+1) % size] (vertex ids: ports when g.classes is 1). Empty when
// the graph is acyclic. Iterative DFS, O(V + E), no recursion.
// Deterministic: the first cycle found scanning vertex ids in increasing
// order, rotated to start at its smallest id.
std::vector<uint32_t> FindBufferCycle(const BufferGraph& g);

// "switch:port:priority" label of the ingress buffer at `port`: the switch's
// node name, the port named by the node at the other end of its link (with
// "#k" when several links join the same pair: the k-th of them in port
// order), e.g. "sw1:sw0:3" or "spine0:leaf2#1:3". Under global pause the
// buffer is the whole port and the priority reads "all" ("sw1:sw0:all").
std::string BufferLabel(const fabric::RoutingTable& routes, uint32_t port, int priority,
                        bool global);
// The label of vertex `v` of `g` (its port and class).
std::string VertexLabel(const fabric::RoutingTable& routes, const BufferGraph& g, uint32_t v,
                        bool global);

}  // namespace lossless::deadlock
