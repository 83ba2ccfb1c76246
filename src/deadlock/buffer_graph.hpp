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

// Dependency graph in CSR form; vertex ids are port ids of the network.
struct BufferGraph {
  int priority = 0;
  uint32_t num_ports = 0;
  uint64_t num_vertices = 0;  // switch ports (ingress buffers)
  std::vector<uint64_t>
      offsets;  // size num_ports + 1; edges of port p in [offsets[p], offsets[p+1])
  std::vector<uint32_t> targets;  // sorted per port, no duplicates

  uint64_t num_edges() const { return targets.size(); }
  // O(log out-degree).
  bool HasEdge(uint32_t from_port, uint32_t to_port) const;
};

// Builds the graph for `priority` (0 .. fabric::kMaxClasses-1; the priority
// only labels the buffers, since routing does not depend on it). Destinations
// on the same edge switch share routes, and an ingress port emits the edges of
// a candidate set once however many destinations use it, so the cost is
// O(edge switches · reached ingress ports · candidates per hop) plus sorting
// the distinct edges: a 1,024-host leaf-spine takes about 20 ms.
BufferGraph BuildBufferGraph(const fabric::RoutingTable& routes, int priority);

// A cycle of buffers, in dependency order: buffer ports[i] waits on
// ports[(i+1) % size]. Empty when the graph is acyclic. Iterative DFS,
// O(V + E), no recursion. Deterministic: the first cycle found scanning
// ports in increasing order, rotated to start at its smallest port.
std::vector<uint32_t> FindBufferCycle(const BufferGraph& g);

// "switch:port:priority" label of the ingress buffer at `port`: the switch's
// node name, the port named by the node at the other end of its link (with
// "#k" when several links join the same pair: the k-th of them in port
// order), e.g. "sw1:sw0:3" or "spine0:leaf2#1:3". Under global pause the
// buffer is the whole port and the priority reads "all" ("sw1:sw0:all").
std::string BufferLabel(const fabric::RoutingTable& routes, uint32_t port, int priority,
                        bool global);

}  // namespace lossless::deadlock
