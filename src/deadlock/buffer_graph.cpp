#include "deadlock/buffer_graph.hpp"

#include <algorithm>
#include <cassert>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace lossless::deadlock {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// CSR arrays of `g` from (from << 32 | to) edges; sorts and dedupes them.
void FillCsr(BufferGraph& g, std::vector<uint64_t>& edges) {
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  g.offsets.assign(static_cast<size_t>(g.num_ids()) + 1, 0);
  g.targets.reserve(edges.size());
  for (uint64_t e : edges) {
    ++g.offsets[(e >> 32) + 1];
    g.targets.push_back(static_cast<uint32_t>(e));
  }
  for (uint32_t v = 0; v < g.num_ids(); ++v) g.offsets[v + 1] += g.offsets[v];
}

// Follows the flows of BuildTrafficBufferGraph and FlowsOnCycle.
struct TrafficWalker {
  const fabric::RoutingTable& routes;
  bool global;
  int classes() const { return global ? 1 : fabric::kMaxClasses; }
  uint32_t Vertex(uint32_t port, int cls) const {
    return global ? port : port * fabric::kMaxClasses + static_cast<uint32_t>(cls);
  }
  uint32_t SwitchOfPort(uint32_t p) const { return routes.SwitchOfNode(routes.PortNode(p)); }
  uint32_t SourceIngress(const fabric::FlowSpec& f) const {
    return fabric::RoutingTable::PortPeer(routes.HostPort(f.src));
  }
  uint32_t EdgeSwitchOf(uint32_t host) const {
    return SwitchOfPort(fabric::RoutingTable::PortPeer(routes.HostPort(host)));
  }

  // The buffers an explicit route's packets occupy, in order.
  std::vector<uint32_t> ExplicitBuffers(const fabric::FlowSpec& f) const {
    const auto& route = f.route;
    uint32_t in = SourceIngress(f);
    if (route.front().node != routes.PortNode(in) ||
        route.back().node != routes.PortNode(fabric::RoutingTable::PortPeer(routes.HostPort(f.dst))))
      throw std::invalid_argument(fmt::format(
          "route of {} -> {} does not run from the source's switch to the destination's", f.src,
          f.dst));
    int cls = f.tclass;
    std::vector<uint32_t> out = {Vertex(in, cls)};
    for (size_t i = 0; i + 1 < route.size(); ++i) {
      uint32_t egress = kNone;
      for (uint32_t p : routes.NodePorts(route[i].node)) {
        if (routes.PortNode(fabric::RoutingTable::PortPeer(p)) == route[i + 1].node) {
          egress = p;
          break;
        }
      }
      if (egress == kNone)
        throw std::invalid_argument(fmt::format("route of {} -> {}: hop {} and {} are not linked",
                                                f.src, f.dst, i, i + 1));
      if (route[i].tclass >= 0) cls = route[i].tclass;
      in = fabric::RoutingTable::PortPeer(egress);
      out.push_back(Vertex(in, cls));
    }
    return out;
  }

  // Breadth-first over the minimal next hops toward `dst` from the ingress
  // ports `sources`, on class `cls`: calls edge(a, b) for every ingress port
  // a reached and every candidate egress of its switch whose peer b is a
  // switch port (each (a, b) once). `seen` is scratch of num_ports entries.
  template <typename Edge>
  void Candidates(const std::vector<uint32_t>& sources, uint32_t dst,
                  std::vector<uint32_t>& seen, uint32_t stamp, Edge&& edge) const {
    const uint32_t last = EdgeSwitchOf(dst);
    std::vector<uint32_t> queue;
    for (uint32_t in : sources) {
      if (seen[in] != stamp) {
        seen[in] = stamp;
        queue.push_back(in);
      }
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      const uint32_t a = queue[head];
      const uint32_t sw = SwitchOfPort(a);
      if (sw == last) continue;  // delivered to the destination host
      const fabric::RoutingTable::NextHops h = routes.Next(sw, dst);
      for (uint32_t i = 0; i < h.n; ++i) {
        const uint32_t b = fabric::RoutingTable::PortPeer(h.ports[i]);
        if (SwitchOfPort(b) == kNone) continue;  // toward a host
        edge(a, b);
        if (seen[b] != stamp) {
          seen[b] = stamp;
          queue.push_back(b);
        }
      }
    }
  }
};

}  // namespace

bool BufferGraph::HasEdge(uint32_t from, uint32_t to) const {
  if (from >= num_ids()) return false;
  auto first = targets.begin() + static_cast<std::ptrdiff_t>(offsets[from]);
  auto last = targets.begin() + static_cast<std::ptrdiff_t>(offsets[from + 1]);
  return std::binary_search(first, last, to);
}

BufferGraph BuildTrafficBufferGraph(const fabric::RoutingTable& routes,
                                    const std::vector<fabric::FlowSpec>& flows, bool global,
                                    int only_class) {
  const TrafficWalker w{routes, global};
  BufferGraph g;
  g.classes = w.classes();
  g.priority = global || only_class < 0 ? 0 : only_class;
  g.num_ports = static_cast<uint32_t>(routes.num_ports());
  std::vector<uint8_t> used(g.num_ids(), 0);
  std::vector<uint64_t> edges;
  auto add = [&](uint32_t a, uint32_t b) {
    used[a] = used[b] = 1;
    if (!global && only_class >= 0 &&
        (g.ClassOf(a) != only_class || g.ClassOf(b) != only_class))
      return;
    edges.push_back(static_cast<uint64_t>(a) << 32 | b);
  };
  // Candidate-routed flows grouped by (destination edge switch, class):
  // routes toward a host depend only on its edge switch.
  std::map<std::pair<uint32_t, int>, std::pair<uint32_t, std::vector<uint32_t>>> groups;
  for (const fabric::FlowSpec& f : flows) {
    assert(f.tclass >= 0 && f.tclass < fabric::kMaxClasses);
    if (!f.route.empty()) {
      const std::vector<uint32_t> b = w.ExplicitBuffers(f);
      used[b.front()] = 1;
      for (size_t i = 0; i + 1 < b.size(); ++i) add(b[i], b[i + 1]);
      continue;
    }
    auto& grp = groups[{w.EdgeSwitchOf(f.dst), f.tclass}];
    if (grp.second.empty()) grp.first = f.dst;
    grp.second.push_back(w.SourceIngress(f));
  }
  std::vector<uint32_t> seen(g.num_ports, 0);
  uint32_t stamp = 0;
  for (const auto& [key, grp] : groups) {
    const int cls = key.second;
    for (uint32_t in : grp.second) used[w.Vertex(in, cls)] = 1;
    w.Candidates(grp.second, grp.first, seen, ++stamp,
                 [&](uint32_t a, uint32_t b) { add(w.Vertex(a, cls), w.Vertex(b, cls)); });
  }
  for (uint8_t u : used) g.num_vertices += u;
  FillCsr(g, edges);
  return g;
}

std::vector<std::vector<uint32_t>> FlowsOnCycle(const fabric::RoutingTable& routes,
                                                const std::vector<fabric::FlowSpec>& flows,
                                                const BufferGraph& g,
                                                const std::vector<uint32_t>& cycle) {
  const TrafficWalker w{routes, g.classes == 1};
  std::map<uint64_t, size_t> index;  // cycle edge -> its position
  for (size_t i = 0; i < cycle.size(); ++i)
    index[static_cast<uint64_t>(cycle[i]) << 32 | cycle[(i + 1) % cycle.size()]] = i;
  std::vector<std::vector<uint32_t>> out(cycle.size());
  auto hit = [&](uint32_t a, uint32_t b, std::vector<bool>& on) {
    auto it = index.find(static_cast<uint64_t>(a) << 32 | b);
    if (it != index.end()) on[it->second] = true;
  };
  // Candidate searches by (source ingress, destination edge switch, class).
  std::map<std::tuple<uint32_t, uint32_t, int>, std::vector<bool>> memo;
  std::vector<uint32_t> seen(g.num_ports, 0);
  uint32_t stamp = 0;
  for (uint32_t fi = 0; fi < flows.size(); ++fi) {
    const fabric::FlowSpec& f = flows[fi];
    std::vector<bool> on(cycle.size(), false);
    if (!f.route.empty()) {
      const std::vector<uint32_t> b = w.ExplicitBuffers(f);
      for (size_t i = 0; i + 1 < b.size(); ++i) hit(b[i], b[i + 1], on);
    } else {
      const int cls = f.tclass;
      const auto key = std::make_tuple(w.SourceIngress(f), w.EdgeSwitchOf(f.dst), cls);
      auto it = memo.find(key);
      if (it == memo.end()) {
        std::vector<bool> found(cycle.size(), false);
        w.Candidates({w.SourceIngress(f)}, f.dst, seen, ++stamp, [&](uint32_t a, uint32_t b) {
          hit(w.Vertex(a, cls), w.Vertex(b, cls), found);
        });
        it = memo.emplace(key, std::move(found)).first;
      }
      on = it->second;
    }
    for (size_t i = 0; i < cycle.size(); ++i)
      if (on[i]) out[i].push_back(fi);
  }
  return out;
}

BufferGraph BuildBufferGraph(const fabric::RoutingTable& routes, int priority) {
  assert(priority >= 0 && priority < fabric::kMaxClasses);
  BufferGraph g;
  g.priority = priority;
  g.num_ports = static_cast<uint32_t>(routes.num_ports());
  const uint32_t num_sw = routes.num_switches();
  auto switch_of_port = [&](uint32_t p) { return routes.SwitchOfNode(routes.PortNode(p)); };
  for (uint32_t p = 0; p < g.num_ports; ++p)
    if (switch_of_port(p) != kNone) ++g.num_vertices;

  // Sources: the switch port each host sends into. Destinations: one host per
  // edge switch (routes toward a host depend only on its edge switch).
  std::vector<uint32_t> sources;
  std::vector<uint32_t> representative(num_sw, kNone);
  for (uint32_t r = 0; r < routes.num_hosts(); ++r) {
    uint32_t in = fabric::RoutingTable::PortPeer(routes.HostPort(r));
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
            set_ids.emplace(routes.Candidates(sw, dst), static_cast<uint32_t>(sets.size()));
        if (fresh) sets.push_back(&it->first);
        cand[sw] = it->second;
      }
      const uint32_t id = cand[sw];
      auto& done = emitted[a];
      const bool emit = std::find(done.begin(), done.end(), id) == done.end();
      if (emit) done.push_back(id);
      for (uint32_t e : *sets[id]) {
        const uint32_t b = fabric::RoutingTable::PortPeer(e);
        if (switch_of_port(b) == kNone) continue;  // toward a host
        if (emit) edges.push_back(static_cast<uint64_t>(a) << 32 | b);
        if (seen[b] != stamp) {
          seen[b] = stamp;
          queue.push_back(b);
        }
      }
    }
  }
  FillCsr(g, edges);
  return g;
}

std::vector<uint32_t> FindBufferCycle(const BufferGraph& g) {
  enum : uint8_t { kWhite, kGray, kBlack };
  const uint32_t n = g.num_ids();
  std::vector<uint8_t> color(n, kWhite);
  struct Frame {
    uint32_t port;
    uint64_t next;  // index into targets of the next edge to follow
  };
  std::vector<Frame> stack;
  for (uint32_t root = 0; root < n; ++root) {
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

std::string BufferLabel(const fabric::RoutingTable& routes, uint32_t port, int priority, bool global) {
  const auto& nodes = routes.topology().nodes;
  const uint32_t node = routes.PortNode(port);
  const uint32_t peer_node = routes.PortNode(fabric::RoutingTable::PortPeer(port));
  int index = 0, parallel = 0;
  for (uint32_t q : routes.NodePorts(node)) {
    if (routes.PortNode(fabric::RoutingTable::PortPeer(q)) != peer_node) continue;
    if (q < port) ++index;
    ++parallel;
  }
  std::string label = fmt::format("{}:{}", nodes[node].name, nodes[peer_node].name);
  if (parallel > 1) label += fmt::format("#{}", index);
  // Global pause: the buffer is the whole port (fabric::PfcWaitObserver).
  if (global) return label + ":all";
  return fmt::format("{}:{}", label, priority);
}

std::string VertexLabel(const fabric::RoutingTable& routes, const BufferGraph& g, uint32_t v,
                        bool global) {
  return BufferLabel(routes, g.PortOf(v), g.ClassOf(v), global);
}

}  // namespace lossless::deadlock
