#include "workload/traffic.hpp"

#include <algorithm>
#include <climits>
#include <map>

#include <fmt/format.h>

#include "base/error.hpp"

namespace lossless::workload {

std::vector<fabric::RouteHop> ResolvePath(const scenario::TrafficSpec& t,
                                          const topology::Topology& topo) {
  std::map<std::string, uint32_t> by_name;
  for (uint32_t i = 0; i < topo.nodes.size(); ++i) by_name[topo.nodes[i].name] = i;
  auto linked = [&](uint32_t a, uint32_t b) {
    for (const auto& l : topo.links)
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) return true;
    return false;
  };
  std::vector<fabric::RouteHop> out;
  for (const auto& [name, cls] : t.path) {
    auto it = by_name.find(name);
    if (it == by_name.end() || topo.nodes[it->second].kind != topology::NodeKind::kSwitch) {
      throw InputError(t.path_where, Expected("switch names of the topology", name));
    }
    if (!out.empty() && !linked(out.back().node, it->second)) {
      throw InputError(t.path_where,
                       fmt::format("expected consecutive switches to be linked, but {} and {} "
                                   "are not",
                                   topo.nodes[out.back().node].name, name));
    }
    if (out.size() >= 2 && out[out.size() - 2].node == it->second) {
      throw InputError(t.path_where,
                       fmt::format("expected no hop straight back to the previous switch, but "
                                   "{} -> {} -> {} sends back over the link it came in on",
                                   name, topo.nodes[out.back().node].name, name));
    }
    out.push_back({it->second, cls});
  }
  const uint32_t src = topo.hosts[static_cast<size_t>(t.src)];
  const uint32_t dst = topo.hosts[static_cast<size_t>(t.dst)];
  if (!linked(src, out.front().node)) {
    throw InputError(t.path_where, fmt::format("expected the path to start at the switch of "
                                               "host {} ({}), got {}",
                                               t.src, topo.nodes[src].name, t.path.front().first));
  }
  if (!linked(dst, out.back().node)) {
    throw InputError(t.path_where, fmt::format("expected the path to end at the switch of host "
                                               "{} ({}), got {}",
                                               t.dst, topo.nodes[dst].name, t.path.back().first));
  }
  return out;
}

int64_t RepeatsBefore(const scenario::TrafficSpec& t, units::Time stop_time) {
  if (t.start >= stop_time) return 0;
  if (t.every.ps() <= 0) return t.repeat;
  return std::min(t.repeat, (stop_time.ps() - t.start.ps() - 1) / t.every.ps() + 1);
}

int64_t CountFlows(const scenario::TrafficSpec& t, int64_t hosts, units::Time stop_time) {
  const int64_t n = t.hosts < 0 ? hosts : std::min(t.hosts, hosts);
  int64_t per_repeat = 1;
  switch (t.pattern) {
    case scenario::Pattern::kRing:
    case scenario::Pattern::kPermutation:
      per_repeat = n;
      break;
    case scenario::Pattern::kIncast:
      per_repeat = t.senders < 0 ? std::max<int64_t>(hosts - 1, 0) : t.senders;
      break;
    case scenario::Pattern::kAllToAll:
      per_repeat = n * std::max<int64_t>(n - 1, 0);  // n <= 2^32: fits
      break;
    case scenario::Pattern::kFlow:
      per_repeat = 1;
      break;
  }
  const int64_t repeats = RepeatsBefore(t, stop_time);
  if (per_repeat != 0 && repeats > INT64_MAX / per_repeat) return INT64_MAX;
  return per_repeat * repeats;
}

std::vector<fabric::FlowSpec> ExpandTraffic(const scenario::Scenario& s, uint32_t hosts,
                                            const topology::Topology* topo) {
  std::vector<fabric::FlowSpec> flows;
  const int64_t n_hosts = hosts;
  int64_t total = 0;
  for (const auto& t : s.traffic) {
    const int64_t count = CountFlows(t, n_hosts, s.stop_time);
    total = count > INT64_MAX - total ? INT64_MAX : total + count;
    if (total > s.max_flows) {
      throw InputError(
          t.where,
          fmt::format("expands to {} flows{}, above limits.max_flows ({}): expected "
                      "fewer hosts or repeats, an earlier stop_time, or a larger "
                      "limits.max_flows",
                      count,
                      total == count       ? ""
                      : total == INT64_MAX ? ", more with the entries before it"
                                           : fmt::format(", {} with the entries before it", total),
                      s.max_flows));
    }
  }
  const AllocationContext context(
      fmt::format("building the {} flows of {}'s traffic (limits.max_flows)", total, s.file));
  flows.reserve(static_cast<size_t>(total));
  for (const auto& t : s.traffic) {
    int64_t n = t.hosts < 0 ? n_hosts : t.hosts;
    if (n > n_hosts)
      throw InputError(
          t.where, fmt::format("expected hosts <= {} (the topology's hosts), got {}", n_hosts, n));
    units::Time start = t.start;
    auto add = [&](int64_t src, int64_t dst) {
      flows.push_back(fabric::FlowSpec::Of(static_cast<uint32_t>(src), static_cast<uint32_t>(dst),
                                           t.bytes, start, t.tclass));
      flows.back().rate = t.rate;
    };
    const int64_t repeats = RepeatsBefore(t, s.stop_time);
    for (int64_t rep = 0; rep < repeats; ++rep) {
      start = t.start + units::Time::Ps(rep * t.every.ps());
      switch (t.pattern) {
        case scenario::Pattern::kRing:
        case scenario::Pattern::kPermutation:
          if (t.stride % n == 0)
            throw InputError(
                t.where, fmt::format("expected a stride that is not a multiple of {} hosts, got {}",
                                     n, t.stride));
          for (int64_t i = 0; i < n; ++i) add(i, (i + t.stride) % n);
          break;
        case scenario::Pattern::kIncast: {
          if (t.target >= n_hosts)
            throw InputError(t.where,
                             fmt::format("expected target < {}, got {}", n_hosts, t.target));
          int64_t senders = t.senders < 0 ? n_hosts - 1 : t.senders;
          if (senders > n_hosts - 1)
            throw InputError(
                t.where, fmt::format("expected at most {} senders, got {}", n_hosts - 1, senders));
          for (int64_t k = 1; k <= senders; ++k) add((t.target + k) % n_hosts, t.target);
          break;
        }
        case scenario::Pattern::kAllToAll:
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
              if (i != j) add(i, j);
          break;
        case scenario::Pattern::kFlow:
          if (t.src >= n_hosts || t.dst >= n_hosts || t.src == t.dst) {
            throw InputError(
                t.where,
                fmt::format("expected two different host ranks below {}, got src {} dst {}",
                            n_hosts, t.src, t.dst));
          }
          add(t.src, t.dst);
          if (!t.path.empty()) {
            if (topo == nullptr) throw InputError(t.path_where, "expected a topology for 'path'");
            flows.back().route = ResolvePath(t, *topo);
          }
          break;
      }
    }
  }
  return flows;
}

}  // namespace lossless::workload
