// Clos sizing (docs/model/clos-sizing.md) and the builders that lay the same
// counts out as nodes and links.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "topology/topology.hpp"

namespace lossless::topology {
namespace {

constexpr int kMaxRadix = 65536;
// Builders index nodes with uint32_t and hold everything in memory.
constexpr int64_t kMaxBuildHosts = int64_t{1} << 22;
constexpr int64_t kMaxBuildLinks = int64_t{1} << 24;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// where.field is the parameter block ("topology") or one of its fields
// ("topology.gpus"); the error names `field` inside that block.
Location At(const Location& where, const char* field) {
  static constexpr std::string_view kParams[] = {
      "gpus",       "radix",          "oversubscription", "tiers", "gpus_per_node", "link_rate",
      "link_delay", "hosts_per_leaf", "spines",           "kind",  "nodes"};
  std::string_view block = where.field;
  const size_t dot = block.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? block : block.substr(dot + 1);
  for (std::string_view p : kParams) {
    if (last == p) {
      block = dot == std::string_view::npos ? std::string_view() : block.substr(0, dot);
      break;
    }
  }
  Location at = where;
  at.field = block.empty() ? std::string(field) : std::string(block) + "." + field;
  return at;
}

// "non-blocking" or "3:1 oversubscribed".
std::string RatioName(double o) {
  return o == 1.0 ? std::string("non-blocking") : fmt::format("{:g}:1 oversubscribed", o);
}

// The ratio a leaf is built with: "non-blocking" or "7:1 oversubscribed".
std::string RatioName(int64_t down, int64_t up) {
  return RatioName(static_cast<double>(down) / static_cast<double>(up) >= 1
                       ? std::round(100.0 * static_cast<double>(down) / static_cast<double>(up)) /
                             100.0
                       : 1.0);
}

using LeafSplit = LeafPorts;

// Validates everything SizeClos and SizeRailOptimized share and splits a leaf.
LeafSplit CheckCommon(const ClosParams& p, const Location& where) {
  if (p.radix < 2 || p.radix > kMaxRadix || p.radix % 2 != 0) {
    throw InputError(At(where, "radix"),
                     Expected(fmt::format("an even switch radix from 2 to {}", kMaxRadix),
                              std::to_string(p.radix)));
  }
  if (p.gpus < 1) {
    throw InputError(At(where, "gpus"), Expected("at least 1 GPU", std::to_string(p.gpus)));
  }
  const double o = p.oversubscription;
  if (!std::isfinite(o) || o < 1.0) {
    throw InputError(At(where, "oversubscription"),
                     Expected("a ratio o of at least 1 (o:1 down:up; 1 = non-blocking)",
                              fmt::format("{:g}", o)));
  }
  const int64_t k = p.radix;
  const LeafSplit s = SplitLeaf(k, o);
  if (static_cast<double>(s.down) / static_cast<double>(s.up) > o + 1e-9) {
    // Only reachable for tiny radices where even 1 uplink exceeds the ratio.
    throw InputError(At(where, "oversubscription"),
                     fmt::format("a radix-{} leaf cannot be {} (it has {} down and {} up ports at "
                                 "best); use a larger radix or ratio",
                                 k, RatioName(o), s.down, s.up));
  }
  return s;
}

void CheckBuild(const ClosParams& p, const Location& where) {
  if (p.gpus > kMaxBuildHosts) {
    throw InputError(At(where, "gpus"),
                     fmt::format("expected at most {} hosts in a built topology, got {} (sizing "
                                 "alone has no such limit)",
                                 kMaxBuildHosts, p.gpus));
  }
  if (p.link_rate.bps() <= 0) {
    throw InputError(At(where, "link_rate"),
                     Expected("a rate above zero", units::FormatRate(p.link_rate)));
  }
  if (p.link_delay.ps() <= 0) {
    throw InputError(At(where, "link_delay"),
                     Expected("a delay above zero (components talk over links with latency > 0)",
                              units::FormatTime(p.link_delay)));
  }
}

[[noreturn]] void TooMany(const Location& where, int64_t limit, const std::string& what,
                          int64_t gpus) {
  throw InputError(At(where, "gpus"),
                   fmt::format("expected at most {} GPUs for {}, got {}", limit, what, gpus));
}

std::string ClosName(int tiers, int k, double o) {
  if (tiers == 1) return fmt::format("a single radix-{} switch", k);
  return fmt::format("a {}-tier {} fabric of radix-{} switches", tiers, RatioName(o), k);
}

void Finish(Sizing& s, int64_t gpus) {
  s.host_links = gpus;
  s.switches = s.leaves + s.spines + s.cores;
  s.links = s.host_links + s.leaf_spine_links + s.spine_core_links;
  s.switch_ports_used = s.host_links + 2 * (s.leaf_spine_links + s.spine_core_links);
}

// Topology under construction: nodes appended in layers, names from a prefix.
class Builder {
 public:
  Builder(units::Rate rate, units::Time delay) : rate_(rate), delay_(delay) {}

  void Reserve(int64_t hosts, int64_t nodes, int64_t links) {
    t_.hosts.reserve(static_cast<size_t>(hosts));
    t_.nodes.reserve(static_cast<size_t>(nodes));
    t_.links.reserve(static_cast<size_t>(links));
  }
  // Appends n nodes named <prefix><0..n-1>; returns the index of the first.
  uint32_t AddLayer(int64_t n, const char* prefix, NodeKind kind, Tier tier) {
    const auto first = static_cast<uint32_t>(t_.nodes.size());
    for (int64_t i = 0; i < n; ++i) {
      Node node;
      node.name = prefix + std::to_string(i);
      node.kind = kind;
      node.tier = tier;
      t_.nodes.push_back(std::move(node));
      if (kind == NodeKind::kHost) t_.hosts.push_back(first + static_cast<uint32_t>(i));
    }
    return first;
  }
  void SetGroup(uint32_t node, int64_t group) {
    t_.nodes[node].group = static_cast<int32_t>(group);
  }
  void Link(uint32_t a, uint32_t b) { t_.links.push_back({a, b, rate_, delay_}); }
  Topology Take(std::string description) {
    t_.description = std::move(description);
    return std::move(t_);
  }

 private:
  units::Rate rate_;
  units::Time delay_;
  Topology t_;
};

std::string LinkName(const ClosParams& p) {
  return fmt::format("{}, {} delay", units::FormatRate(p.link_rate),
                     units::FormatTime(p.link_delay));
}

}  // namespace

LeafPorts SplitLeaf(int64_t radix, double o) {
  if (radix < 2 || !std::isfinite(o) || o < 1.0) return {};
  LeafPorts s;
  const int64_t k = radix;
  s.down = static_cast<int64_t>(std::floor(static_cast<double>(k) * o / (o + 1.0) + 1e-9));
  if (s.down > k - 1) s.down = k - 1;
  if (s.down < 1) s.down = 1;
  s.up = k - s.down;
  return s;
}

Sizing SizeClos(const ClosParams& p, const Location& where) {
  const LeafSplit split = CheckCommon(p, where);
  if (p.tiers < 0 || p.tiers > 3) {
    throw InputError(At(where, "tiers"),
                     Expected("0 (smallest that fits), 1, 2 or 3", std::to_string(p.tiers)));
  }
  const int64_t k = p.radix;
  const int64_t n = p.gpus;
  const int64_t d = split.down;
  const int64_t u = split.up;
  const int64_t half = k / 2;
  const int64_t cap[4] = {0, k, k * d, k * half * d};

  int tiers = p.tiers;
  if (tiers == 0) {
    tiers = n <= cap[1] ? 1 : n <= cap[2] ? 2 : 3;
  }
  if (n > cap[tiers]) TooMany(where, cap[tiers], ClosName(tiers, p.radix, p.oversubscription), n);

  Sizing s;
  s.tiers = tiers;
  if (tiers == 1) {
    s.leaves = 1;
    s.down_per_leaf = k;
  } else {
    s.down_per_leaf = d;
    s.up_per_leaf = u;
    s.leaves = CeilDiv(n, d);
    s.leaf_spine_links = s.leaves * u;
    if (tiers == 2) {
      s.spines = CeilDiv(s.leaves * u, k);
    } else {
      s.pods = CeilDiv(s.leaves, half);
      const int64_t last_pod_leaves = s.leaves - (s.pods - 1) * half;
      s.spines = (s.pods - 1) * CeilDiv(half * u, half) + CeilDiv(last_pod_leaves * u, half);
      s.cores = CeilDiv(s.spines, 2);
      s.spine_core_links = s.spines * half;
    }
  }
  Finish(s, n);
  return s;
}

Sizing SizeRailOptimized(const ClosParams& p, const Location& where) {
  const LeafSplit split = CheckCommon(p, where);
  if (p.tiers != 0 && p.tiers != 2) {
    throw InputError(At(where, "tiers"),
                     Expected("0 or 2 for a rail-optimized fabric", std::to_string(p.tiers)));
  }
  const int64_t k = p.radix;
  const int64_t g = p.gpus_per_node;
  if (g < 1 || g > k) {
    throw InputError(
        At(where, "gpus_per_node"),
        Expected(fmt::format("1 to {} GPUs per node (one leaf per rail)", k), std::to_string(g)));
  }
  if (p.gpus % g != 0) {
    throw InputError(At(where, "gpus"), Expected(fmt::format("a multiple of gpus_per_node ({})", g),
                                                 std::to_string(p.gpus)));
  }
  const int64_t d = split.down;
  const int64_t u = split.up;
  const int64_t max_units = k / g;  // every leaf reaches every spine: L ≤ k
  const int64_t cap = max_units * d * g;
  if (p.gpus > cap) {
    TooMany(where, cap,
            fmt::format("a 2-tier {} rail-optimized fabric of radix-{} switches with {} GPUs per "
                        "node",
                        RatioName(p.oversubscription), k, g),
            p.gpus);
  }
  Sizing s;
  s.tiers = 2;
  s.down_per_leaf = d;
  s.up_per_leaf = u;
  const int64_t nodes = p.gpus / g;
  const int64_t units = CeilDiv(nodes, d);
  s.leaves = units * g;
  s.leaf_spine_links = s.leaves * u;
  int64_t spines = CeilDiv(s.leaves * u, k);
  while (u % spines != 0) ++spines;  // terminates: spines ≤ u because leaves ≤ k
  s.spines = spines;
  Finish(s, p.gpus);
  return s;
}

Topology BuildLeafSpine(const ClosParams& p, const Location& where) {
  if (p.tiers == 3) {
    throw InputError(At(where, "tiers"),
                     Expected("0, 1 or 2 for a leaf-spine (use a fat tree for 3)", "3"));
  }
  CheckBuild(p, where);
  ClosParams q = p;
  if (q.tiers == 0 && q.gpus > q.radix) q.tiers = 2;
  const Sizing s = SizeClos(q, where);
  Builder b(p.link_rate, p.link_delay);
  b.Reserve(s.host_links, s.host_links + s.switches, s.links);
  const uint32_t host0 = b.AddLayer(s.host_links, "host", NodeKind::kHost, Tier::kHost);
  const uint32_t leaf0 = b.AddLayer(s.leaves, "leaf", NodeKind::kSwitch, Tier::kLeaf);
  const uint32_t spine0 = b.AddLayer(s.spines, "spine", NodeKind::kSwitch, Tier::kSpine);
  for (int64_t r = 0; r < s.host_links; ++r) {
    b.Link(host0 + static_cast<uint32_t>(r), leaf0 + static_cast<uint32_t>(r / s.down_per_leaf));
  }
  int64_t next = 0;
  for (int64_t l = 0; l < s.leaves; ++l) {
    for (int64_t i = 0; i < s.up_per_leaf; ++i, ++next) {
      b.Link(leaf0 + static_cast<uint32_t>(l), spine0 + static_cast<uint32_t>(next % s.spines));
    }
  }
  if (s.tiers == 1) {
    return b.Take(
        fmt::format("single switch (radix {}), {} hosts, {}", p.radix, s.host_links, LinkName(p)));
  }
  return b.Take(
      fmt::format("2-tier leaf-spine (radix {}, {}), {} hosts, {} leaves, {} spines, "
                  "{} links of {}",
                  p.radix, RatioName(s.down_per_leaf, s.up_per_leaf), s.host_links, s.leaves,
                  s.spines, s.links, LinkName(p)));
}

Topology BuildFatTree(const ClosParams& p, const Location& where) {
  if (p.tiers != 0 && p.tiers != 3) {
    throw InputError(
        At(where, "tiers"),
        Expected("0 or 3 for a fat tree (use a leaf-spine for 1 or 2)", std::to_string(p.tiers)));
  }
  CheckBuild(p, where);
  ClosParams q = p;
  q.tiers = 3;
  const Sizing s = SizeClos(q, where);
  const int64_t half = p.radix / 2;
  Builder b(p.link_rate, p.link_delay);
  b.Reserve(s.host_links, s.host_links + s.switches, s.links);
  const uint32_t host0 = b.AddLayer(s.host_links, "host", NodeKind::kHost, Tier::kHost);
  const uint32_t leaf0 = b.AddLayer(s.leaves, "leaf", NodeKind::kSwitch, Tier::kLeaf);
  const uint32_t spine0 = b.AddLayer(s.spines, "spine", NodeKind::kSwitch, Tier::kSpine);
  const uint32_t core0 = b.AddLayer(s.cores, "core", NodeKind::kSwitch, Tier::kCore);
  const int64_t hosts_per_pod = half * s.down_per_leaf;
  for (int64_t r = 0; r < s.host_links; ++r) {
    const auto host = host0 + static_cast<uint32_t>(r);
    b.SetGroup(host, r / hosts_per_pod);
    b.Link(host, leaf0 + static_cast<uint32_t>(r / s.down_per_leaf));
  }
  int64_t first_spine = 0;
  for (int64_t pod = 0; pod < s.pods; ++pod) {
    const int64_t first_leaf = pod * half;
    const int64_t leaves = std::min(half, s.leaves - first_leaf);
    const int64_t spines = CeilDiv(leaves * s.up_per_leaf, half);
    int64_t next = 0;
    for (int64_t l = first_leaf; l < first_leaf + leaves; ++l) {
      b.SetGroup(leaf0 + static_cast<uint32_t>(l), pod);
      for (int64_t i = 0; i < s.up_per_leaf; ++i, ++next) {
        b.Link(leaf0 + static_cast<uint32_t>(l),
               spine0 + static_cast<uint32_t>(first_spine + next % spines));
      }
    }
    for (int64_t j = 0; j < spines; ++j)
      b.SetGroup(spine0 + static_cast<uint32_t>(first_spine + j), pod);
    first_spine += spines;
  }
  for (int64_t sp = 0; sp < s.spines; ++sp) {
    for (int64_t i = 0; i < half; ++i) {
      b.Link(spine0 + static_cast<uint32_t>(sp),
             core0 + static_cast<uint32_t>((sp * half + i) % s.cores));
    }
  }
  return b.Take(
      fmt::format("3-tier fat tree (radix {}, {}), {} hosts, {} pods, {} leaves, "
                  "{} spines, {} cores, {} links of {}",
                  p.radix, RatioName(s.down_per_leaf, s.up_per_leaf), s.host_links, s.pods,
                  s.leaves, s.spines, s.cores, s.links, LinkName(p)));
}

Topology BuildRailOptimized(const ClosParams& p, const Location& where) {
  CheckBuild(p, where);
  const Sizing s = SizeRailOptimized(p, where);
  const int64_t g = p.gpus_per_node;
  const int64_t d = s.down_per_leaf;
  Builder b(p.link_rate, p.link_delay);
  b.Reserve(s.host_links, s.host_links + s.switches, s.links);
  const uint32_t host0 = b.AddLayer(s.host_links, "host", NodeKind::kHost, Tier::kHost);
  const uint32_t leaf0 = b.AddLayer(s.leaves, "leaf", NodeKind::kSwitch, Tier::kLeaf);
  const uint32_t spine0 = b.AddLayer(s.spines, "spine", NodeKind::kSwitch, Tier::kSpine);
  for (int64_t r = 0; r < s.host_links; ++r) {
    const int64_t node = r / g;
    const int64_t unit = node / d;
    const auto host = host0 + static_cast<uint32_t>(r);
    b.SetGroup(host, unit);
    b.Link(host, leaf0 + static_cast<uint32_t>(unit * g + r % g));
  }
  // S divides u, so dealing leaf l's uplinks from spine 0 gives u/S links to each spine.
  for (int64_t l = 0; l < s.leaves; ++l) {
    b.SetGroup(leaf0 + static_cast<uint32_t>(l), l / g);
    for (int64_t i = 0; i < s.up_per_leaf; ++i) {
      b.Link(leaf0 + static_cast<uint32_t>(l), spine0 + static_cast<uint32_t>(i % s.spines));
    }
  }
  return b.Take(
      fmt::format("2-tier rail-optimized (radix {}, {}, {} GPUs per node), {} hosts, "
                  "{} scalable units, {} leaves, {} spines, {} links of {}",
                  p.radix, RatioName(s.down_per_leaf, s.up_per_leaf), g, s.host_links, s.leaves / g,
                  s.leaves, s.spines, s.links, LinkName(p)));
}

Topology BuildLsRing(int64_t hosts, int hosts_per_leaf, int spines, units::Rate rate,
                     units::Time delay, const Location& where) {
  if (hosts_per_leaf < 1) {
    throw InputError(At(where, "hosts_per_leaf"),
                     Expected("at least 1 host per leaf", std::to_string(hosts_per_leaf)));
  }
  if (hosts < 1 || hosts % hosts_per_leaf != 0) {
    throw InputError(
        At(where, "gpus"),
        Expected(fmt::format("a positive multiple of hosts_per_leaf ({})", hosts_per_leaf),
                 std::to_string(hosts)));
  }
  if (spines < 1) {
    throw InputError(At(where, "spines"), Expected("at least 1 spine", std::to_string(spines)));
  }
  ClosParams link;
  link.gpus = hosts;
  link.link_rate = rate;
  link.link_delay = delay;
  CheckBuild(link, where);
  const int64_t leaves = hosts / hosts_per_leaf;
  if (leaves * spines > kMaxBuildLinks) {
    throw InputError(At(where, "spines"),
                     fmt::format("expected at most {} leaf-spine links, got {} leaves x {} spines",
                                 kMaxBuildLinks, leaves, spines));
  }
  Builder b(rate, delay);
  b.Reserve(hosts, hosts + leaves + spines, hosts + leaves * spines);
  const uint32_t host0 = b.AddLayer(hosts, "host", NodeKind::kHost, Tier::kHost);
  const uint32_t leaf0 = b.AddLayer(leaves, "leaf", NodeKind::kSwitch, Tier::kLeaf);
  const uint32_t spine0 = b.AddLayer(spines, "spine", NodeKind::kSwitch, Tier::kSpine);
  for (int64_t r = 0; r < hosts; ++r) {
    b.Link(host0 + static_cast<uint32_t>(r), leaf0 + static_cast<uint32_t>(r / hosts_per_leaf));
  }
  for (int64_t l = 0; l < leaves; ++l) {
    for (int64_t j = 0; j < spines; ++j) {
      b.Link(leaf0 + static_cast<uint32_t>(l), spine0 + static_cast<uint32_t>(j));
    }
  }
  return b.Take(
      fmt::format("LS-RING leaf-spine, {} hosts, {} hosts per leaf, {} leaves, {} "
                  "spines, {} links of {}",
                  hosts, hosts_per_leaf, leaves, spines, hosts + leaves * spines,
                  fmt::format("{}, {} delay", units::FormatRate(rate), units::FormatTime(delay))));
}

}  // namespace lossless::topology
