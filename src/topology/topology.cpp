// Graph queries on a Topology.
#include <vector>

#include "topology/topology.hpp"

namespace lossless::topology {

std::optional<std::pair<uint32_t, uint32_t>> FindUnreachableHosts(const Topology& t) {
  if (t.hosts.size() < 2) return std::nullopt;
  const size_t n = t.nodes.size();
  // Compressed adjacency: neighbours of v are adj[start[v] .. start[v+1]).
  std::vector<uint32_t> start(n + 1, 0);
  for (const Link& l : t.links) {
    ++start[l.a + 1];
    ++start[l.b + 1];
  }
  for (size_t v = 0; v < n; ++v) start[v + 1] += start[v];
  std::vector<uint32_t> adj(start[n]);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (const Link& l : t.links) {
    adj[fill[l.a]++] = l.b;
    adj[fill[l.b]++] = l.a;
  }
  std::vector<bool> seen(n, false);
  std::vector<uint32_t> queue;
  queue.reserve(n);
  queue.push_back(t.hosts[0]);
  seen[t.hosts[0]] = true;
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t v = queue[head];
    for (uint32_t i = start[v]; i < start[v + 1]; ++i) {
      if (!seen[adj[i]]) {
        seen[adj[i]] = true;
        queue.push_back(adj[i]);
      }
    }
  }
  for (size_t r = 1; r < t.hosts.size(); ++r) {
    if (!seen[t.hosts[r]]) return std::make_pair(uint32_t{0}, static_cast<uint32_t>(r));
  }
  return std::nullopt;
}

}  // namespace lossless::topology
