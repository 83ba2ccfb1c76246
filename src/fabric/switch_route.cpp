// Routing at a switch: the routing mode's choice among the minimal next hops
// (ECMP on a hash of the 5-tuple, IB-style destination tables, adaptive on
// the least-loaded egress, per-packet spraying; docs/fabric-model.md), a dead
// next hop skipped for a live one, explicit routes resolved when a flow is
// added, and the control plane's reroute around dead links. The tables
// themselves are engine-free (fabric/routing.hpp).
#include <string>

#include <fmt/format.h>

#include "fabric/network.hpp"

namespace lossless::fabric {

uint32_t Network::Route(uint32_t sw, const Packet& p) {
  uint32_t port = RouteMinimal(sw, p);
  if (port == kNone || !ports_[port].down) return port;
  // The chosen next hop is down: take the next live candidate in table order.
  const RoutingTable::NextHops h = switches_[sw].routes->Next(sw, p.dst);
  uint32_t at = 0;
  while (h.ports[at] != port) ++at;
  for (uint32_t k = 1; k < h.n; ++k) {
    const uint32_t alt = h.ports[(at + k) % h.n];
    if (!ports_[alt].down) return alt;
  }
  return kNone;
}

uint32_t Network::RouteMinimal(uint32_t sw, const Packet& p) {
  Switch& s = switches_[sw];
  const RoutingTable::NextHops next = s.routes->Next(sw, p.dst);
  const uint32_t n = next.n;
  if (n <= 1) return n == 1 ? next.ports[0] : kNone;
  switch (cfg_.routing) {
    case RoutingMode::kEcmp: {
      // 5-tuple: source and destination address, UDP source port (entropy),
      // UDP destination port 4791, protocol 17.
      const uint64_t h =
          sim::Mix(s.salt, (uint64_t{p.src} << 32) | p.dst, (uint64_t{p.entropy} << 16) | 4791, 17);
      return next.ports[h % n];
    }
    case RoutingMode::kDestTable:
      return next.ports[sim::Mix(s.salt, p.dst) % n];
    case RoutingMode::kAdaptive: {
      uint32_t start = static_cast<uint32_t>(sim::Mix(s.salt, p.dst, p.seq) % n);
      uint32_t best = next.ports[start];
      int64_t now = sim_.Now().ps();
      auto load = [&](uint32_t pi) {
        const Port& q = ports_[pi];
        // A dead port holds nothing but is no candidate (Route would move
        // the packet to the next live port in table order).
        if (q.down) [[unlikely]]
          return int64_t{1} << 60;
        int64_t busy = q.busy_until > now ? q.busy_until - now : 0;
        int64_t work = q.queued_bytes * 8'000'000'000'000 / q.rate_bps + busy;  // ps ahead
        // IB: a port without credit for this packet's VL counts as loaded.
        if (ib_on_ && p.tclass != kVl15Queue && IbAvailableCredits(pi, p.tclass) < IbBlocks(p.wire))
          work += int64_t{1} << 50;
        return work;
      };
      int64_t best_load = load(best);
      for (uint32_t k = 1; k < n && best_load > 0; ++k) {
        uint32_t pi = next.ports[(start + k) % n];
        int64_t l = load(pi);
        if (l < best_load) {
          best = pi;
          best_load = l;
        }
      }
      return best;
    }
    case RoutingMode::kSpray:
      return next.ports[s.rng.Below(n)];
  }
  return kNone;
}

void Network::ScheduleReroute(const std::vector<uint32_t>& links_out, Time at) {
  reroute_tables_.push_back(std::make_unique<RoutingTable>(topo_, links_out));
  const uint64_t table = reroute_tables_.size() - 1;
  for (uint32_t sw = 0; sw < switches_.size(); ++sw)
    sim_.Schedule(std::max(at, sim_.Now()), switches_[sw].entity, this, kReroute, sw | table << 32);
}

uint32_t Network::ResolveRoute(uint32_t f, const FlowSpec& spec) {
  // On error nothing of the route is kept (nor of the flow: Nics::AddFlow
  // stores it afterwards).
  const size_t keep = route_hops_.size();
  auto fail = [&](const std::string& why) {
    route_hops_.resize(keep);
    throw std::invalid_argument(
        fmt::format("flow {} ({} -> {}): route: {}", f, spec.src, spec.dst, why));
  };
  const uint32_t first = ports_[ports_[nics_.HostPort(spec.src)].peer].node;
  const uint32_t last = ports_[ports_[nics_.HostPort(spec.dst)].peer].node;
  if (spec.route.front().node != first) {
    fail(fmt::format("expected to start at the source's switch {}, got {}", topo_.nodes[first].name,
                     spec.route.front().node < topo_.nodes.size()
                         ? topo_.nodes[spec.route.front().node].name
                         : std::to_string(spec.route.front().node)));
  }
  if (spec.route.back().node != last) {
    fail(fmt::format("expected to end at the destination's switch {}", topo_.nodes[last].name));
  }
  if (spec.route.size() > 250) fail("expected at most 250 switches");
  for (size_t i = 0; i < spec.route.size(); ++i) {
    const RouteHop& h = spec.route[i];
    if (h.node >= topo_.nodes.size() || routes_.SwitchOfNode(h.node) == kNone)
      fail(fmt::format("hop {} is not a switch", i));
    if (h.tclass >= kMaxClasses) fail(fmt::format("hop {}: class {} out of range", i, h.tclass));
    uint32_t egress = kNone;
    if (i + 1 < spec.route.size()) {
      for (uint32_t pi : routes_.NodePorts(h.node)) {
        if (ports_[ports_[pi].peer].node == spec.route[i + 1].node) {
          egress = pi;
          break;
        }
      }
      if (egress == kNone) {
        fail(fmt::format("{} and {} are not linked", topo_.nodes[h.node].name,
                         spec.route[i + 1].node < topo_.nodes.size()
                             ? topo_.nodes[spec.route[i + 1].node].name
                             : std::to_string(spec.route[i + 1].node)));
      }
    } else {
      egress = routes_.HostEdgePort(spec.dst);
    }
    // A hop may not send the packet back over the link it came in on: the
    // release of its ingress buffer would then act on the port that is
    // transmitting it (and no lossless fabric routes that way).
    if (i > 0 && ports_[egress].peer == route_hops_.back().port) {
      fail(fmt::format("hop {} ({}) sends back over the link it came in on", i,
                       topo_.nodes[h.node].name));
    }
    route_hops_.push_back({egress, static_cast<int8_t>(h.tclass)});
  }
  return static_cast<uint32_t>(keep);
}

}  // namespace lossless::fabric
