#include "deadlock/buffer_graph.hpp"

#include <algorithm>
#include <cassert>
#include <map>

#include <fmt/format.h>

namespace lossless::deadlock {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

}  // namespace

bool BufferGraph::HasEdge(uint32_t from_port, uint32_t to_port) const {
  if (from_port >= num_ports) return false;
  auto first = targets.begin() + static_cast<std::ptrdiff_t>(offsets[from_port]);
  auto last = targets.begin() + static_cast<std::ptrdiff_t>(offsets[from_port + 1]);
  return std::binary_search(first, last, to_port);
}

BufferGraph BuildBufferGraph(const fabric::RoutingTable& net, int priority) {
  assert(priority >= 0 && priority < fabric::kMaxClasses);
  BufferGraph g;
  g.priority = priority;
  g.num_ports = static_cast<uint32_t>(net.num_ports());
  const uint32_t num_sw = net.num_switches();
  auto switch_of_port = [&](uint32_t p) { return net.SwitchOfNode(net.PortNode(p)); };
  for (uint32_t p = 0; p < g.num_ports; ++p)
    if (switch_of_port(p) != kNone) ++g.num_vertices;

  // Sources: the switch port each host sends into. Destinations: one host per
  // edge switch (routes toward a host depend only on its edge switch).
  std::vector<uint32_t> sources;
  std::vector<uint32_t> representative(num_sw, kNone);
  for (uint32_t r = 0; r < net.num_hosts(); ++r) {
    uint32_t in = net.PortPeer(net.HostPort(r));
    sources.push_back(in);
    uint32_t edge = switch_of_port(in);
    if (representative[edge] == kNone) representative[edge] = r;
  }

  std::vector<uint64_t> edges;  // from << 32 | to
  std::vector<uint32_t> seen(g.num_ports, 0);
  // Candidate sets are interned: an ingress port emits the edges of a given
  // set once, however many destinations share it (a leaf's host ports reach
  // the same uplinks for every remote leaf).
  std::map<std::vector<uint32_t>, uint32_t> set_ids;
  std::vector<const std::vector<uint32_t>*> sets;
  std::vector<uint32_t> cand_seen(num_sw, 0);
  std::vector<uint32_t> cand(num_sw);  // set id at each switch, this destination
  std::vector<std::vector<uint32_t>> emitted(g.num_ports);  // set ids whose edges a port has
  std::vector<uint32_t> queue;
  uint32_t stamp = 0;
  for (uint32_t edge = 0; edge < num_sw; ++edge) {
    const uint32_t dst = representative[edge];
    if (dst == kNone) continue;
    ++stamp;
    queue.clear();
    for (uint32_t in : sources) {
      if (seen[in] != stamp) {
        seen[in] = stamp;
        queue.push_back(in);
      }
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      const uint32_t a = queue[head];
      const uint32_t sw = switch_of_port(a);
      if (sw == edge) continue;  // delivered to the destination host
      if (cand_seen[sw] != stamp) {
        cand_seen[sw] = stamp;
        auto [it, fresh] =
            set_ids.emplace(net.Candidates(sw, dst), static_cast<uint32_t>(sets.size()));
        if (fresh) sets.push_back(&it->first);
        cand[sw] = it->second;
      }
      const uint32_t id = cand[sw];
      auto& done = emitted[a];
      const bool emit = std::find(done.begin(), done.end(), id) == done.end();
      if (emit) done.push_back(id);
      for (uint32_t e : *sets[id]) {
        const uint32_t b = net.PortPeer(e);
        if (switch_of_port(b) == kNone) continue;  // toward a host
        if (emit) edges.push_back(static_cast<uint64_t>(a) << 32 | b);
        if (seen[b] != stamp) {
          seen[b] = stamp;
          queue.push_back(b);
        }
      }
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());

  g.offsets.assign(static_cast<size_t>(g.num_ports) + 1, 0);
  g.targets.reserve(edges.size());
  for (uint64_t e : edges) {
    ++g.offsets[(e >> 32) + 1];
    g.targets.push_back(static_cast<uint32_t>(e));
  }
  for (uint32_t p = 0; p < g.num_ports; ++p) g.offsets[p + 1] += g.offsets[p];
  return g;
}

std::vector<uint32_t> FindBufferCycle(const BufferGraph& g) {
  enum : uint8_t { kWhite, kGray, kBlack };
  std::vector<uint8_t> color(g.num_ports, kWhite);
  struct Frame {
    uint32_t port;
    uint64_t next;  // index into targets of the next edge to follow
  };
  std::vector<Frame> stack;
  for (uint32_t root = 0; root < g.num_ports; ++root) {
    if (color[root] != kWhite || g.offsets[root] == g.offsets[root + 1]) continue;
    color[root] = kGray;
    stack.push_back({root, g.offsets[root]});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next == g.offsets[f.port + 1]) {
        color[f.port] = kBlack;
        stack.pop_back();
        continue;
      }
      const uint32_t w = g.targets[f.next++];
      if (color[w] == kWhite) {
        color[w] = kGray;
        stack.push_back({w, g.offsets[w]});
      } else if (color[w] == kGray) {
        // Back edge: the stack from w to the top is the cycle.
        std::vector<uint32_t> cycle;
        size_t i = stack.size();
        while (stack[i - 1].port != w) --i;
        for (--i; i < stack.size(); ++i) cycle.push_back(stack[i].port);
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        return cycle;
      }
    }
  }
  return {};
}

std::string BufferLabel(const fabric::RoutingTable& net, uint32_t port, int priority, bool global) {
  const auto& nodes = net.topology().nodes;
  const uint32_t node = net.PortNode(port);
  const uint32_t peer_node = net.PortNode(net.PortPeer(port));
  int index = 0, parallel = 0;
  for (uint32_t q : net.NodePorts(node)) {
    if (net.PortNode(net.PortPeer(q)) != peer_node) continue;
    if (q < port) ++index;
    ++parallel;
  }
  std::string label = fmt::format("{}:{}", nodes[node].name, nodes[peer_node].name);
  if (parallel > 1) label += fmt::format("#{}", index);
  // Global pause: the buffer is the whole port (fabric::PfcWaitObserver).
  if (global) return label + ":all";
  return fmt::format("{}:{}", label, priority);
}

}  // namespace lossless::deadlock
