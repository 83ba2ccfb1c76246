// A scenario against its topology: building it, and the fields that name its
// hosts, link directions or flows.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/text.hpp"
#include "scenario/scenario.hpp"

namespace lossless::scenario {
namespace {

// Link directions in fabric::Network numbering: port 2l sends from
// links[l].a to links[l].b, port 2l + 1 back; PortName gives the same "a->b".
uint32_t NumPorts(const topology::Topology& t) {
  return static_cast<uint32_t>(2 * t.links.size());
}
uint32_t PortSender(const topology::Topology& t, uint32_t port) {
  const topology::Link& l = t.links[port / 2];
  return port % 2 ? l.b : l.a;
}
std::string PortName(const topology::Topology& t, uint32_t port) {
  const topology::Link& l = t.links[port / 2];
  return t.nodes[PortSender(t, port)].name + "->" + t.nodes[port % 2 ? l.a : l.b].name;
}
// The first few link directions, for error messages.
std::string SomePortNames(const topology::Topology& t) {
  std::vector<std::string> names;
  for (uint32_t port = 0; port < NumPorts(t) && names.size() < 4; ++port)
    names.push_back(PortName(t, port));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

topology::Topology BuildTopology(const Scenario& s) {
  const AllocationContext context(
      fmt::format("building the topology of {}{}", s.file,
                  s.topology_kind == "file" ? " from " + s.topology_file : ""));
  topology::Topology t;
  const Location& where = s.topology_where;
  if (s.topology_kind == "leaf-spine") {
    t = topology::BuildLeafSpine(s.clos, where);
  } else if (s.topology_kind == "fat-tree") {
    t = topology::BuildFatTree(s.clos, where);
  } else if (s.topology_kind == "rail-optimized") {
    t = topology::BuildRailOptimized(s.clos, where);
  } else if (s.topology_kind == "ls-ring") {
    t = topology::BuildLsRing(s.clos.gpus, s.hosts_per_leaf, s.spines, s.clos.link_rate,
                              s.clos.link_delay, where);
  } else {
    try {
      t = topology::ParseTopologyFile(s.topology_file);
    } catch (const InputError& e) {
      // A file that cannot be read at all: say which scenario line named it.
      if (e.where().line != 0 || e.where().file != s.topology_file) throw;
      throw InputError(s.topology_file_where, fmt::format("{}: {}", s.topology_file, e.message()));
    }
  }
  if (auto pair = topology::FindUnreachableHosts(t)) {
    throw InputError(where, fmt::format("disconnected topology: no path from {} to {}",
                                        t.nodes[t.hosts[pair->first]].name,
                                        t.nodes[t.hosts[pair->second]].name));
  }
  return t;
}

uint32_t PauseInjectionPort(const PauseInjection& p, const topology::Topology& t) {
  if (p.host >= 0) {
    if (p.host >= static_cast<int64_t>(t.hosts.size())) {
      throw InputError(p.where, fmt::format("expected a host rank below {} (the topology's hosts), "
                                            "got {}",
                                            t.hosts.size(), p.host));
    }
    for (uint32_t port = 0; port < NumPorts(t); ++port)
      if (PortSender(t, port) == t.hosts[static_cast<size_t>(p.host)]) return port;
  }
  for (uint32_t port = 0; port < NumPorts(t); ++port)
    if (PortName(t, port) == p.port) return port;
  throw InputError(p.where, Expected(fmt::format("a link direction of this topology such as {}",
                                                 SomePortNames(t)),
                                     p.port));
}

std::vector<uint32_t> LinkLossPorts(const LinkLossFault& f, const topology::Topology& t) {
  std::vector<uint32_t> out;
  const size_t both = f.link.find("<->");
  const std::string want =
      both == std::string::npos ? f.link : f.link.substr(0, both) + "->" + f.link.substr(both + 3);
  for (uint32_t port = 0; port < NumPorts(t); ++port) {
    if (PortName(t, port) != want) continue;
    out.push_back(port);
    if (both != std::string::npos) out.push_back(port ^ 1u);  // the other direction of the link
    break;
  }
  if (out.empty()) {
    throw InputError(f.where,
                     Expected(fmt::format("a link direction of this topology such as {} (or "
                                          "a<->b for both directions)",
                                          SomePortNames(t)),
                              f.link));
  }
  return out;
}

void CheckFaults(const Scenario& s, const topology::Topology& t, size_t flows) {
  for (const auto& p : s.pause_inject) PauseInjectionPort(p, t);
  for (const auto& l : s.link_loss) LinkLossPorts(l, t);
  for (const auto& c : s.cnp_inject) {
    if (c.flow >= static_cast<int64_t>(flows)) {
      throw InputError(c.where, fmt::format("expected a flow index below {} (the flows the "
                                            "traffic list expands to), got {}",
                                            flows, c.flow));
    }
  }
}

std::vector<uint32_t> SeriesPorts(const Scenario& s, const topology::Topology& t) {
  return SelectPorts(s.series.ports, s.series.ports_where, t);
}

std::vector<uint32_t> SelectPorts(const std::string& sel, const Location& where,
                                  const topology::Topology& t) {
  std::vector<uint32_t> out;
  if (sel == "none") return out;
  if (sel == "all" || sel == "busy") {
    for (uint32_t p = 0; p < NumPorts(t); ++p) out.push_back(p);
    return out;
  }
  std::stringstream ss(sel);
  for (std::string item; std::getline(ss, item, ',');) {
    const std::string want(text::Trim(item, " \t"));
    const size_t before = out.size();
    for (uint32_t p = 0; p < NumPorts(t); ++p)
      if (PortName(t, p) == want && std::find(out.begin(), out.end(), p) == out.end())
        out.push_back(p);
    if (out.size() == before) {
      throw InputError(
          where, Expected(fmt::format("busy, all, none or comma-separated link directions of this "
                                      "topology such as {}",
                                      SomePortNames(t)),
                          want));
    }
  }
  return out;
}

}  // namespace lossless::scenario
