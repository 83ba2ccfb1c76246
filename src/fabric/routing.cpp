#include "fabric/routing.hpp"

#include <algorithm>
#include <unordered_map>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.hpp"

namespace lossless::fabric {

const char* RoutingModeName(RoutingMode m) {
  switch (m) {
    case RoutingMode::kEcmp:
      return "ecmp";
    case RoutingMode::kDestTable:
      return "dest-table";
    case RoutingMode::kAdaptive:
      return "adaptive";
    case RoutingMode::kSpray:
      return "spray";
  }
  return "?";
}

RoutingTable::RoutingTable(const topology::Topology& topo, const std::vector<uint32_t>& links_out)
    : topo_(&topo) {
  link_out_.assign(topo.links.size(), false);
  for (uint32_t l : links_out) {
    if (l >= topo.links.size()) throw std::invalid_argument(fmt::format("no link {}", l));
    link_out_[l] = true;
  }
  Build();
}

RoutingTable::RoutingTable(const topology::Topology& topo) : topo_(&topo) {
  link_out_.assign(topo.links.size(), false);
  Build();
}

void RoutingTable::Build() {
  const topology::Topology& topo = *topo_;
  const size_t n_nodes = topo.nodes.size();
  node_switch_.assign(n_nodes, kNoPort);
  node_ports_.assign(n_nodes, {});
  for (uint32_t i = 0; i < n_nodes; ++i) {
    if (topo.nodes[i].kind == topology::NodeKind::kSwitch) {
      node_switch_[i] = static_cast<uint32_t>(switch_node_.size());
      switch_node_.push_back(i);
    }
  }
  port_node_.resize(topo.links.size() * 2);
  for (size_t l = 0; l < topo.links.size(); ++l) {
    const topology::Link& link = topo.links[l];
    if (link.a >= n_nodes || link.b >= n_nodes)
      throw std::invalid_argument("link endpoint out of range");
    if (link.rate.bps() <= 0) {
      throw InputError({"<topology>", 0, "links"},
                       fmt::format("link {} - {}: expected a rate above zero",
                                   topo.nodes[link.a].name, topo.nodes[link.b].name));
    }
    if (link.delay.ps() <= 0) {
      throw InputError(
          {"<topology>", 0, "links"},
          fmt::format("link {} - {}: expected a propagation delay above zero (components "
                      "talk only through links with latency)",
                      topo.nodes[link.a].name, topo.nodes[link.b].name));
    }
    port_node_[2 * l] = link.a;
    port_node_[2 * l + 1] = link.b;
    node_ports_[link.a].push_back(static_cast<uint32_t>(2 * l));
    node_ports_[link.b].push_back(static_cast<uint32_t>(2 * l + 1));
  }
  host_port_.resize(topo.hosts.size());
  for (uint32_t r = 0; r < topo.hosts.size(); ++r) {
    const uint32_t node = topo.hosts[r];
    const auto& np = node_ports_.at(node);
    if (np.size() != 1 || node_switch_[port_node_[PortPeer(np[0])]] == kNoPort) {
      throw InputError({"<topology>", 0, "hosts"},
                       fmt::format("host {} must have exactly one link, to a switch (has {} links)",
                                   topo.nodes[node].name, np.size()));
    }
    host_port_[r] = np[0];
  }
  BuildSets();
}

void RoutingTable::BuildSets() {
  const uint32_t n_sw = num_switches();
  std::vector<uint32_t> switch_edge(n_sw, kNoPort);
  host_edge_.resize(host_port_.size());
  host_edge_port_.resize(host_port_.size());
  for (uint32_t r = 0; r < host_port_.size(); ++r) {
    const uint32_t edge_port = PortPeer(host_port_[r]);
    const uint32_t sw = node_switch_[port_node_[edge_port]];
    if (switch_edge[sw] == kNoPort) {
      switch_edge[sw] = static_cast<uint32_t>(edge_switch_.size());
      edge_switch_.push_back(sw);
    }
    host_edge_[r] = switch_edge[sw];
    host_edge_port_[r] = edge_port;
  }
  const uint32_t n_edge = static_cast<uint32_t>(edge_switch_.size());
  route_table_.assign(static_cast<size_t>(n_sw) * n_edge, 0);
  // Candidate sets are interned in the order first seen (set 0: no route).
  // A hash of the ports finds a set again: at 8,192 hosts there are a
  // million (switch, edge) pairs and a few thousand distinct sets.
  struct SetHash {
    size_t operator()(const std::vector<uint32_t>& v) const {
      uint64_t h = v.size();
      for (uint32_t x : v) h = (h ^ x) * 0x9E3779B97F4A7C15ULL;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::vector<uint32_t>, uint32_t, SetHash> interned;
  set_offset_.clear();
  set_ports_.clear();
  auto intern = [&](const std::vector<uint32_t>& ports) {
    const auto found = interned.find(ports);
    if (found != interned.end()) return found->second;
    const uint32_t id = static_cast<uint32_t>(set_offset_.size());
    interned.emplace(ports, id);
    set_offset_.push_back(static_cast<uint32_t>(set_ports_.size()));
    set_ports_.insert(set_ports_.end(), ports.begin(), ports.end());
    return id;
  };
  intern({});  // set 0: no route
  // Each switch's ports with the switch beyond each (kNoPort: a host or a
  // link left out), flat, so the breadth-first searches below (one per edge
  // switch over the whole fabric) read two arrays.
  std::vector<uint32_t> sw_first(n_sw + 1), sw_port, sw_beyond;
  for (uint32_t s = 0; s < n_sw; ++s) {
    sw_first[s] = static_cast<uint32_t>(sw_port.size());
    for (uint32_t pi : node_ports_[switch_node_[s]]) {
      sw_port.push_back(pi);
      sw_beyond.push_back(link_out_[pi / 2] ? kNoPort : node_switch_[port_node_[PortPeer(pi)]]);
    }
  }
  sw_first[n_sw] = static_cast<uint32_t>(sw_port.size());
  std::vector<uint32_t> dist(n_sw);
  std::vector<uint32_t> frontier;
  frontier.reserve(n_sw);
  std::vector<uint32_t> cands;
  for (uint32_t e = 0; e < n_edge; ++e) {
    std::fill(dist.begin(), dist.end(), kNoPort);
    dist[edge_switch_[e]] = 0;
    frontier.assign(1, edge_switch_[e]);
    for (size_t head = 0; head < frontier.size(); ++head) {
      const uint32_t s = frontier[head];
      for (uint32_t k = sw_first[s]; k < sw_first[s + 1]; ++k) {
        const uint32_t v = sw_beyond[k];
        if (v != kNoPort && dist[v] == kNoPort) {
          dist[v] = dist[s] + 1;
          frontier.push_back(v);
        }
      }
    }
    for (uint32_t s = 0; s < n_sw; ++s) {
      cands.clear();
      if (dist[s] != kNoPort && dist[s] > 0) {
        for (uint32_t k = sw_first[s]; k < sw_first[s + 1]; ++k) {
          const uint32_t v = sw_beyond[k];
          if (v != kNoPort && dist[v] + 1 == dist[s]) cands.push_back(sw_port[k]);
        }
      }
      route_table_[static_cast<size_t>(s) * n_edge + e] = intern(cands);
    }
  }
  set_offset_.push_back(static_cast<uint32_t>(set_ports_.size()));
}

std::string RoutingTable::PortName(uint32_t p) const {
  return fmt::format("{}->{}", topo_->nodes[port_node_[p]].name,
                     topo_->nodes[port_node_[PortPeer(p)]].name);
}

}  // namespace lossless::fabric
