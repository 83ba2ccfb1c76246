#include "parallel/partition.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace lossless::parallel {
namespace {

using topology::NodeKind;

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
  uint32_t Find(uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  // The smaller index becomes the root, so roots do not depend on the order of unions.
  void Unite(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
  }

 private:
  std::vector<uint32_t> parent_;
};

struct Unit {
  uint32_t first_node = 0;  // smallest node index: the unit's name and order
  int32_t group = -1;       // smallest Node::group >= 0 among its nodes
  uint32_t hosts = 0;
  uint32_t switches = 0;
  uint64_t ports = 0;
  int32_t rank = -1;
};

// Splits items (weights w, in order) into `blocks` contiguous non-empty runs
// of about total/blocks each; returns the index where each block starts.
std::vector<size_t> SplitEvenly(const std::vector<uint64_t>& w, size_t blocks) {
  const uint64_t total = std::accumulate(w.begin(), w.end(), uint64_t{0});
  std::vector<size_t> starts;
  size_t i = 0;
  uint64_t cum = 0;
  for (size_t b = 0; b < blocks; ++b) {
    starts.push_back(i);
    const size_t left_after = blocks - b - 1;
    cum += w[i++];
    // Block b ends near cumulative weight total*(b+1)/blocks: take the next
    // item while its midpoint lies before that, leaving one item per block left.
    // (Weights are port counts: far below 2^32, so twice total x blocks fits.)
    const uint64_t target2 = total * 2 * (b + 1) / blocks;
    while (w.size() - i > left_after && (left_after == 0 || cum * 2 + w[i] <= target2)) {
      cum += w[i++];
    }
  }
  return starts;
}

}  // namespace

Partition PartitionFabric(const topology::Topology& t, int gpus_per_node, int ranks,
                          const Location& where) {
  if (ranks < 1) throw InputError(where, Expected("at least 1 rank", std::to_string(ranks)));
  if (gpus_per_node < 1) gpus_per_node = 1;
  const size_t n = t.nodes.size();
  UnionFind uf(n);
  std::vector<uint64_t> ports(n, 0);
  for (const auto& l : t.links) {
    ++ports[l.a];
    ++ports[l.b];
    // A link with a host at either end is never cut.
    if (t.nodes[l.a].kind == NodeKind::kHost || t.nodes[l.b].kind == NodeKind::kHost)
      uf.Unite(l.a, l.b);
  }
  // The hosts of one node (server) stay together: hosts[r], r in [kG, kG+G).
  const auto g = static_cast<size_t>(gpus_per_node);
  for (size_t r = 0; r < t.hosts.size(); ++r)
    if (r % g != 0) uf.Unite(t.hosts[r - r % g], t.hosts[r]);

  Partition p;
  p.ranks = ranks;
  p.unit_of_node.assign(n, 0);
  p.rank_of_node.assign(n, -1);
  std::vector<Unit> units;
  std::vector<uint32_t> unit_of_root(n, UINT32_MAX);
  std::vector<int32_t> groups;
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t root = uf.Find(v);
    if (unit_of_root[root] == UINT32_MAX) {
      unit_of_root[root] = static_cast<uint32_t>(units.size());
      units.push_back(Unit{v, -1, 0, 0, 0, -1});
    }
    Unit& u = units[unit_of_root[root]];
    p.unit_of_node[v] = unit_of_root[root];
    const auto& node = t.nodes[v];
    (node.kind == NodeKind::kHost ? u.hosts : u.switches) += 1;
    u.ports += ports[v];
    if (node.group >= 0) {
      if (u.group < 0 || node.group < u.group) u.group = node.group;
      groups.push_back(node.group);
    }
  }
  std::sort(groups.begin(), groups.end());
  p.groups = static_cast<uint32_t>(std::unique(groups.begin(), groups.end()) - groups.begin());
  p.units = static_cast<uint32_t>(units.size());
  for (const auto& u : units) p.host_units += u.hosts > 0 ? 1 : 0;
  if (static_cast<uint64_t>(ranks) > units.size()) {
    throw InputError(where, fmt::format("expected at most {} ranks: the fabric has {} partition "
                                        "units ({} with hosts, {} switches alone), got {}",
                                        units.size(), units.size(), p.host_units,
                                        units.size() - p.host_units, ranks));
  }

  // Placed units in (group, first node) order; groups -1 last, each alone.
  std::vector<uint32_t> placed, free;
  for (uint32_t i = 0; i < units.size(); ++i)
    (units[i].hosts > 0 || units[i].group >= 0 ? placed : free).push_back(i);
  std::stable_sort(placed.begin(), placed.end(), [&](uint32_t a, uint32_t b) {
    const auto key = [&](uint32_t u) {
      return std::pair<int64_t, uint32_t>(
          units[u].group >= 0 ? units[u].group : int64_t{INT32_MAX} + 1, units[u].first_node);
    };
    return key(a) < key(b);
  });
  // Bundles: a group's units together, an ungrouped unit alone.
  std::vector<std::vector<uint32_t>> bundles;
  for (uint32_t u : placed) {
    if (!bundles.empty() && units[u].group >= 0 &&
        units[bundles.back().front()].group == units[u].group) {
      bundles.back().push_back(u);
    } else {
      bundles.push_back({u});
    }
  }
  // Within a group, units with hosts (leaves) and without (a pod's spines)
  // are interleaved in proportion, so that a group split over several
  // ranks gives each a share of both: a block of leaves alone would cut
  // every one of its uplinks.
  for (auto& b : bundles) {
    std::vector<uint32_t> with, without;
    for (uint32_t u : b) (units[u].hosts > 0 ? with : without).push_back(u);
    if (with.empty() || without.empty()) continue;
    b.clear();
    size_t i = 0, j = 0;
    while (i < with.size() || j < without.size()) {
      // Take the one whose position (x + 1/2) / n within its kind comes first.
      const bool take_with =
          j == without.size() ||
          (i < with.size() && (2 * i + 1) * without.size() <= (2 * j + 1) * with.size());
      b.push_back(take_with ? with[i++] : without[j++]);
    }
  }
  std::vector<std::vector<uint32_t>> items;  // what SplitEvenly splits
  if (static_cast<size_t>(ranks) <= bundles.size()) {
    items = bundles;
    p.whole_groups = p.groups > 0;
  } else {
    for (const auto& b : bundles)
      for (uint32_t u : b) items.push_back({u});
  }
  std::vector<uint64_t> w;
  for (const auto& it : items) {
    uint64_t s = 0;
    for (uint32_t u : it) s += units[u].ports;
    w.push_back(s);
  }
  const size_t blocks = std::min(static_cast<size_t>(ranks), items.size());
  std::vector<size_t> starts = SplitEvenly(w, blocks);
  starts.push_back(items.size());
  std::vector<uint64_t> load(static_cast<size_t>(ranks), 0);
  for (size_t b = 0; b < blocks; ++b) {
    for (size_t i = starts[b]; i < starts[b + 1]; ++i) {
      for (uint32_t u : items[i]) units[u].rank = static_cast<int32_t>(b);
      load[b] += w[i];
    }
  }
  for (uint32_t u : free) {
    const size_t r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    units[u].rank = static_cast<int32_t>(r);
    load[r] += std::max<uint64_t>(units[u].ports, 1);
  }

  p.per_rank.assign(static_cast<size_t>(ranks), {});
  for (const auto& u : units) {
    RankShare& s = p.per_rank[static_cast<size_t>(u.rank)];
    ++s.units;
    s.hosts += u.hosts;
    s.switches += u.switches;
    s.ports += u.ports;
  }
  for (uint32_t v = 0; v < n; ++v) p.rank_of_node[v] = units[p.unit_of_node[v]].rank;
  for (uint32_t i = 0; i < t.links.size(); ++i) {
    const auto& l = t.links[i];
    if (t.nodes[l.a].kind == NodeKind::kSwitch && t.nodes[l.b].kind == NodeKind::kSwitch)
      ++p.switch_links;
    if (p.rank_of_node[l.a] == p.rank_of_node[l.b]) continue;
    p.cut_links.push_back(i);
    if (l.delay < p.lookahead) {
      p.lookahead = l.delay;
      p.lookahead_link = i;
    }
  }
  if (!p.cut_links.empty() && p.lookahead.ps() <= 0) {
    const auto& l = t.links[p.lookahead_link];
    throw InputError(where, fmt::format("expected every cut link to have a delay above zero (the "
                                        "lookahead), but link {} {}-{} has {}",
                                        p.lookahead_link, t.nodes[l.a].name, t.nodes[l.b].name,
                                        units::FormatTime(l.delay)));
  }
  return p;
}

std::string PartitionText(const topology::Topology& t, const Partition& p) {
  std::string o;
  const uint32_t alone = p.units - p.host_units;
  o += fmt::format("partition: {} rank{}, {} partition units ({} with hosts, {} switch{} alone)",
                   p.ranks, p.ranks == 1 ? "" : "s", p.units, p.host_units, alone,
                   alone == 1 ? "" : "es");
  if (p.groups > 0) {
    o += fmt::format(", {} group{} (pod or scalable unit) {}", p.groups, p.groups == 1 ? "" : "s",
                     p.whole_groups ? "each whole on one rank" : "split over ranks");
  }
  o += "\n";
  for (size_t r = 0; r < p.per_rank.size(); ++r) {
    const RankShare& s = p.per_rank[r];
    // The first and last node names of the rank's hosts, for orientation.
    std::string span;
    uint32_t first = UINT32_MAX, last = 0;
    for (uint32_t h : t.hosts) {
      if (p.rank_of_node[h] != static_cast<int32_t>(r)) continue;
      first = std::min(first, h);
      last = std::max(last, h);
    }
    if (first != UINT32_MAX)
      span = fmt::format(" ({} .. {})", t.nodes[first].name, t.nodes[last].name);
    o += fmt::format("rank {}: {} units, {} switches, {} hosts{}, {} ports\n", r, s.units,
                     s.switches, s.hosts, span, s.ports);
  }
  const double share = p.switch_links == 0 ? 0.0
                                           : 100.0 * static_cast<double>(p.cut_links.size()) /
                                                 static_cast<double>(p.switch_links);
  o += fmt::format(
      "cut links: {} of {} switch-to-switch links ({:.1f}%); host links are never cut\n",
      p.cut_links.size(), p.switch_links, share);
  if (p.cut_links.empty()) {
    o += "lookahead: none (nothing is cut: one rank)\n";
  } else {
    const auto& l = t.links[p.lookahead_link];
    o += fmt::format("lookahead: {} (the smallest delay of a cut link, e.g. {}-{})\n",
                     units::FormatTime(p.lookahead), t.nodes[l.a].name, t.nodes[l.b].name);
  }
  return o;
}

}  // namespace lossless::parallel
