// A scenario against its topology: building it, and the fields that name its
// hosts, link directions or flows.
#include <algorithm>
#include <map>
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
  return FindLinkDirection(p.port, t, p.where);
}

std::vector<std::string> LinkNames(const topology::Topology& t) {
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> bundle;  // unordered node pair -> links
  auto key = [](const topology::Link& l) { return std::minmax(l.a, l.b); };
  for (const topology::Link& l : t.links) ++bundle[key(l)];
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> seen;
  std::vector<std::string> out;
  out.reserve(t.links.size());
  for (const topology::Link& l : t.links) {
    std::string name = t.nodes[l.a].name + "-" + t.nodes[l.b].name;
    if (bundle[key(l)] > 1) name += fmt::format("#{}", seen[key(l)]++);
    out.push_back(std::move(name));
  }
  return out;
}

namespace {

// The link `want` names (FindLink's forms), or UINT32_MAX; `parallel` gets
// the bundle's names when `want` names a bundle without its "#k".
uint32_t LookUpLink(std::string want, const topology::Topology& t,
                    const std::vector<std::string>& names, std::vector<std::string>& parallel) {
  if (const size_t both = want.find("<->"); both != std::string::npos)
    want = want.substr(0, both) + "-" + want.substr(both + 3);
  for (uint32_t l = 0; l < names.size(); ++l) {
    const topology::Link& link = t.links[l];
    const std::string& a = t.nodes[link.a].name;
    const std::string& b = t.nodes[link.b].name;
    const std::string suffix = names[l].substr(a.size() + 1 + b.size());  // "" or "#k"
    if (want == names[l] || want == b + "-" + a + suffix) return l;
    if (!suffix.empty() && (want == a + "-" + b || want == b + "-" + a))
      parallel.push_back(names[l]);
  }
  return UINT32_MAX;
}

[[noreturn]] void ThrowBundle(const std::string& want, const std::vector<std::string>& parallel,
                              const Location& where) {
  throw InputError(where, fmt::format("\"{}\" is a bundle of {} parallel links: expected one of "
                                      "them by its number, {} ... {}",
                                      want, parallel.size(), parallel.front(), parallel.back()));
}

}  // namespace

uint32_t FindLink(const std::string& name, const topology::Topology& t, const Location& where) {
  const std::string want(text::Trim(name));
  const std::vector<std::string> names = LinkNames(t);
  std::vector<std::string> parallel;
  const uint32_t l = LookUpLink(want, t, names, parallel);
  if (l != UINT32_MAX) return l;
  if (!parallel.empty()) ThrowBundle(want, parallel, where);
  std::vector<std::string> some(names.begin(), names.begin() + std::min<size_t>(names.size(), 3));
  const NearestName near = FindNearestName(want, names);
  if (near.Close(3) && std::find(some.begin(), some.end(), near.name) == some.end())
    some.push_back(near.name);
  throw InputError(where, Expected(fmt::format("a link of this topology such as {} (lossless links "
                                               "lists them)",
                                               fmt::join(some, ", ")),
                                   want));
}

uint32_t FindLinkDirection(const std::string& name, const topology::Topology& t,
                           const Location& where) {
  const std::string want(text::Trim(name));
  const size_t arrow = want.find("->");
  const std::vector<std::string> names = LinkNames(t);
  std::vector<std::string> parallel;
  uint32_t l = UINT32_MAX;
  std::string from, to;
  if (arrow != std::string::npos && arrow > 0 && want.find("<->") == std::string::npos) {
    from = want.substr(0, arrow);
    to = want.substr(arrow + 2);
    l = LookUpLink(from + "-" + to, t, names, parallel);
  }
  if (l != UINT32_MAX) return t.nodes[t.links[l].a].name == from ? 2 * l : 2 * l + 1;
  if (!parallel.empty()) ThrowBundle(want, parallel, where);
  throw InputError(where, Expected(fmt::format("a link direction of this topology such as {} "
                                               "(a->b#k for one of parallel links; lossless "
                                               "links lists the links)",
                                               SomePortNames(t)),
                                   want));
}

std::vector<uint32_t> LinkLossPorts(const LinkLossFault& f, const topology::Topology& t) {
  const std::string& name = f.link;
  if (name.find("<->") == std::string::npos && name.find("->") != std::string::npos)
    return {FindLinkDirection(name, t, f.where)};
  const uint32_t l = FindLink(name, t, f.where);
  return {2 * l, 2 * l + 1};
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
