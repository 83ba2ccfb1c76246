#include "deadlock/wait_for_graph.hpp"

#include <algorithm>
#include <cassert>
#include <deque>

namespace lossless::deadlock {

void WaitForGraph::SetWait(uint32_t port, int priority, uint32_t on_port, int on_priority,
                           bool waiting, units::Time at) {
  assert(priority >= 0 && priority < 8 && on_priority >= 0 && on_priority < 8);
  const Key from = MakeKey(port, priority), to = MakeKey(on_port, on_priority);
  if (waiting) {
    if (FindEdge(from, to) != nullptr) return;
    out_[from].push_back({to, at});
    ++num_edges_;
    added_.emplace_back(from, to);
    return;
  }
  auto it = out_.find(from);
  if (it == out_.end()) return;
  auto& edges = it->second;
  auto e = std::find_if(edges.begin(), edges.end(), [&](const Edge& x) { return x.to == to; });
  if (e == edges.end()) return;
  edges.erase(e);
  --num_edges_;
  if (edges.empty()) out_.erase(it);
  for (size_t i = 0; i < last_.size(); ++i) {
    if (last_[i] == from && last_[(i + 1) % last_.size()] == to) {
      last_.clear();
      rescan_ = true;
      break;
    }
  }
}

bool WaitForGraph::IsPaused(uint32_t port, int priority, uint32_t paused_by_port) const {
  return FindEdge(MakeKey(port, priority), MakeKey(paused_by_port, priority)) != nullptr;
}

const WaitForGraph::Edge* WaitForGraph::FindEdge(Key from, Key to) const {
  auto it = out_.find(from);
  if (it == out_.end()) return nullptr;
  for (const Edge& e : it->second)
    if (e.to == to) return &e;
  return nullptr;
}

std::optional<Cycle> WaitForGraph::MakeCycle(const std::vector<Key>& keys) const {
  if (keys.empty()) return std::nullopt;
  std::vector<Key> k = keys;
  std::rotate(k.begin(), std::min_element(k.begin(), k.end()), k.end());
  Cycle c;
  for (size_t i = 0; i < k.size(); ++i) {
    const Edge* e = FindEdge(k[i], k[(i + 1) % k.size()]);
    assert(e != nullptr);
    c.hops.push_back({static_cast<uint32_t>(k[i] >> 8), static_cast<int>(k[i] & 0xff), e->since});
    c.formed = std::max(c.formed, e->since);
  }
  return c;
}

std::optional<Cycle> WaitForGraph::SearchFrom(Key tail, Key head) const {
  // Shortest path head ~> tail; with the edge tail -> head it closes a cycle.
  if (head == tail) return MakeCycle({tail});
  std::unordered_map<Key, Key> parent{{head, head}};
  std::deque<Key> queue{head};
  while (!queue.empty()) {
    const Key v = queue.front();
    queue.pop_front();
    auto it = out_.find(v);
    if (it == out_.end()) continue;
    for (const Edge& e : it->second) {
      if (!parent.emplace(e.to, v).second) continue;
      if (e.to == tail) {
        // Walk parents back from tail to head, then put the waits in order:
        // tail -> head -> ... -> tail.
        std::vector<Key> path;
        for (Key x = tail; x != head; x = parent[x]) path.push_back(x);
        path.push_back(head);
        std::reverse(path.begin() + 1, path.end());
        return MakeCycle(path);
      }
      queue.push_back(e.to);
    }
  }
  return std::nullopt;
}

std::optional<Cycle> WaitForGraph::FullScan() const {
  std::vector<Key> roots;
  roots.reserve(out_.size());
  for (const auto& [k, edges] : out_) roots.push_back(k);
  std::sort(roots.begin(), roots.end());
  enum : uint8_t { kGray = 1, kBlack = 2 };
  std::unordered_map<Key, uint8_t> color;
  struct Frame {
    Key v;
    size_t next;
  };
  std::vector<Frame> stack;
  static const std::vector<Edge> kNoEdges;
  auto edges_of = [&](Key v) -> const std::vector<Edge>& {
    auto it = out_.find(v);
    return it == out_.end() ? kNoEdges : it->second;
  };
  for (Key root : roots) {
    if (color.count(root)) continue;
    color[root] = kGray;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& edges = edges_of(f.v);
      if (f.next == edges.size()) {
        color[f.v] = kBlack;
        stack.pop_back();
        continue;
      }
      const Key w = edges[f.next++].to;
      auto c = color.find(w);
      if (c == color.end()) {
        color[w] = kGray;
        stack.push_back({w, 0});
      } else if (c->second == kGray) {
        size_t i = stack.size();
        while (stack[i - 1].v != w) --i;
        std::vector<Key> keys;
        for (--i; i < stack.size(); ++i) keys.push_back(stack[i].v);
        return MakeCycle(keys);
      }
    }
  }
  return std::nullopt;
}

std::optional<Cycle> WaitForGraph::FindCycle() {
  std::optional<Cycle> found;
  if (!last_.empty()) {
    found = MakeCycle(last_);  // still intact: clearing one of its edges resets last_
  } else if (rescan_) {
    found = FullScan();
  } else {
    for (const auto& [tail, head] : added_) {
      if (FindEdge(tail, head) == nullptr) continue;  // cleared again since
      if ((found = SearchFrom(tail, head))) break;
    }
  }
  added_.clear();
  rescan_ = false;
  last_.clear();
  if (found)
    for (const WaitHop& h : found->hops) last_.push_back(MakeKey(h.port, h.priority));
  return found;
}

}  // namespace lossless::deadlock
