#pragma once
// Routing tables of a topology, with no engine: the port structure (which
// node owns which port, which port is at the other end of a link) and, per
// (switch, destination host), the set of minimal next hops. The network's
// packet path picks one of them per packet (ECMP hash, destination table,
// adaptive or spraying: fabric/switch_route.cpp); the static deadlock check
// (deadlock/buffer_graph.hpp) reads every set. Both see the same tables, so
// what the checker proves is what the simulator routes.
//
// Port numbering: link l of the topology has ports 2l (its end `a`) and
// 2l + 1 (its end `b`); a port sends on its link and receives from it.
// Minimal paths are the shortest in the switch graph, which on Clos fabrics
// are the up/down paths.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace lossless::fabric {

enum class RoutingMode : uint8_t { kEcmp, kDestTable, kAdaptive, kSpray };
const char* RoutingModeName(RoutingMode m);

inline constexpr uint32_t kNoPort = UINT32_MAX;

class RoutingTable {
 public:
  // Builds the port structure and the minimal next-hop sets. Throws
  // InputError (field "links") for a link without rate or propagation delay
  // and (field "hosts") if a host is not attached by exactly one link to a
  // switch. `topo` must outlive the table.
  explicit RoutingTable(const topology::Topology& topo);
  // The same port structure with next-hop sets computed as if the links in
  // `links_out` (topology link indices) were absent: the tables a control
  // plane installs once it has rerouted around them (shortest paths in what
  // remains, so some may no longer be up/down paths). A switch cut off from a
  // destination has no next hop toward it. Throws std::invalid_argument for a
  // link index the topology lacks.
  RoutingTable(const topology::Topology& topo, const std::vector<uint32_t>& links_out);

  const topology::Topology& topology() const { return *topo_; }
  uint32_t num_ports() const { return static_cast<uint32_t>(port_node_.size()); }
  uint32_t num_switches() const { return static_cast<uint32_t>(switch_node_.size()); }
  uint32_t num_hosts() const { return static_cast<uint32_t>(host_port_.size()); }
  // The topology node that owns port `p`, and the port at the other end of its link.
  uint32_t PortNode(uint32_t p) const { return port_node_[p]; }
  static uint32_t PortPeer(uint32_t p) { return p ^ 1u; }
  const std::vector<uint32_t>& NodePorts(uint32_t node) const { return node_ports_[node]; }
  // Index of the switch record for topology node `node`, or kNoPort.
  uint32_t SwitchOfNode(uint32_t node) const { return node_switch_[node]; }
  uint32_t NodeOfSwitch(uint32_t sw) const { return switch_node_[sw]; }
  // The port of host rank `rank` (its NIC's), and the switch port facing it.
  uint32_t HostPort(uint32_t rank) const { return host_port_[rank]; }
  uint32_t HostEdgePort(uint32_t rank) const { return host_edge_port_[rank]; }

  // The minimal next hops at switch `sw` toward host rank `dst`: `n` ports
  // from `ports`. At the destination's edge switch, the one port facing it.
  struct NextHops {
    const uint32_t* ports;
    uint32_t n;
  };
  NextHops Next(uint32_t sw, uint32_t dst) const {
    const uint32_t e = host_edge_[dst];
    if (edge_switch_[e] == sw) return {&host_edge_port_[dst], 1};
    const uint32_t set = route_table_[static_cast<size_t>(sw) * edge_switch_.size() + e];
    const uint32_t off = set_offset_[set];
    return {set_ports_.data() + off, set_offset_[set + 1] - off};
  }
  // The same as a vector (tests, the deadlock check).
  std::vector<uint32_t> Candidates(uint32_t sw, uint32_t dst) const {
    const NextHops h = Next(sw, dst);
    return {h.ports, h.ports + h.n};
  }
  // "leaf3->spine1" style name of the link direction port `p` sends on.
  std::string PortName(uint32_t p) const;

 private:
  void Build();  // the port structure, then BuildSets
  void BuildSets();

  const topology::Topology* topo_;
  std::vector<bool> link_out_;  // per topology link: left out of the next-hop sets
  std::vector<uint32_t> port_node_;                // port -> owning node
  std::vector<std::vector<uint32_t>> node_ports_;  // node -> its ports
  std::vector<uint32_t> node_switch_;              // node -> switch index, kNoPort for hosts
  std::vector<uint32_t> switch_node_;              // switch index -> node
  std::vector<uint32_t> host_port_;                // host rank -> its port
  // Per host, its edge switch (interned as an edge index) and the edge port
  // facing it; per (switch, edge) an interned candidate-set id.
  std::vector<uint32_t> host_edge_;       // host rank -> edge index
  std::vector<uint32_t> host_edge_port_;  // host rank -> port at the edge switch
  std::vector<uint32_t> edge_switch_;     // edge index -> switch index
  std::vector<uint32_t> route_table_;     // [switch * num_edges + edge] -> set id
  std::vector<uint32_t> set_offset_;      // set id -> offset in set_ports_ (size + 1)
  std::vector<uint32_t> set_ports_;
};

}  // namespace lossless::fabric
