#include "run/deadlock_check.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "fabric/routing.hpp"
#include "workload/traffic.hpp"

namespace lossless::run {
namespace {

// Whether class `cls` is lossless in the scenario: every data VL under
// InfiniBand's credits, on Ethernet the PFC priorities (every class under
// global 802.3x pause).
bool Lossless(const scenario::Scenario& s, int cls) {
  if (s.preset == "infiniband") return true;
  return s.net.pfc.enabled && (s.net.pfc.global || (s.net.pfc.priorities >> cls & 1u) != 0);
}

// The queue a flow's packets use for class (SL) `cls`: its VL under
// InfiniBand credits, else the class itself.
int QueueOf(const scenario::Scenario& s, int cls) {
  if (!s.net.ib.enabled) return cls;
  const int vl = s.net.ib.sl2vl[static_cast<size_t>(cls) & 15];
  return vl < fabric::kMaxClasses ? vl : cls;
}

// Flows with what is needed to name them (built only for the witness).
struct Traffic {
  enum Kind : uint8_t { kData, kAcks, kCnps, kBecns };
  std::vector<fabric::FlowSpec> flows;
  std::vector<uint32_t> entry;  // traffic entry of each flow
  std::vector<Kind> kind;

  std::string Name(const scenario::Scenario& s, uint32_t f) const {
    static constexpr const char* kWhat[] = {"", "ACKs of ", "CNPs of ", "BECNs of "};
    const auto& t = s.traffic[entry[f]];
    const fabric::FlowSpec& d = flows[f];
    // Reverse flows run dst -> src: name the data flow's pair.
    const uint32_t src = kind[f] == kData ? d.src : d.dst, dst = kind[f] == kData ? d.dst : d.src;
    return fmt::format("{}{} (host{}->host{})", kWhat[kind[f]],
                       t.name.empty() ? fmt::format("traffic.{}", entry[f]) : t.name, src, dst);
  }
};

// The scenario's traffic, entry by entry (each flow with its entry), and the flows of the
// packets the receivers send back on routed paths (RC ACKs on the flow's
// class, DCQCN CNPs on fabric.dcqcn.cnp_class, IB CC BECNs on the flow's VL).
Traffic ExpandNamed(const scenario::Scenario& s, const topology::Topology& t, uint32_t hosts) {
  Traffic out;
  scenario::Scenario one = s;
  for (size_t i = 0; i < s.traffic.size(); ++i) {
    one.traffic = {s.traffic[i]};
    std::vector<fabric::FlowSpec> flows = workload::ExpandTraffic(one, hosts, &t);
    for (fabric::FlowSpec& f : flows) {
      const int sl = f.tclass < 0 ? s.net.nic.data_class : f.tclass;
      f.tclass = QueueOf(s, sl);
      auto add = [&](fabric::FlowSpec g, Traffic::Kind k) {
        out.flows.push_back(std::move(g));
        out.entry.push_back(static_cast<uint32_t>(i));
        out.kind.push_back(k);
      };
      const uint32_t src = f.src, dst = f.dst;
      const units::Time start = f.start;
      const int cls = f.tclass;
      auto reverse = [&](int c, Traffic::Kind k) {
        add(fabric::FlowSpec::Of(dst, src, 1, start, c), k);
      };
      add(std::move(f), Traffic::kData);
      if (s.rc) reverse(cls, Traffic::kAcks);
      if (s.net.dcqcn) reverse(s.net.cnp_class, Traffic::kCnps);
      if (s.net.ib_cc) reverse(cls, Traffic::kBecns);
    }
  }
  return out;
}

}  // namespace

DeadlockCheck CheckDeadlockStatically(const scenario::Scenario& s, const topology::Topology& t,
                                      int priority, bool all_pairs) {
  DeadlockCheck c;
  const fabric::RoutingTable routes(t);  // no engine: the tables the simulator routes on
  const bool global = s.net.pfc.global;
  if (all_pairs) {
    c.why = "--all-pairs";
  } else if (s.traffic.empty()) {
    c.why = "the scenario lists no traffic";
  } else if (s.shared.tenant_load > 0) {
    c.why = "tenants.load adds background traffic between random hosts";
  }
  c.traffic_known = c.why.empty();
  Traffic tr;
  if (c.traffic_known) {
    tr = ExpandNamed(s, t, routes.num_hosts());
    for (size_t f = 0; f < tr.flows.size(); ++f) {
      if (tr.kind[f] != Traffic::kData) {
        ++c.return_flows;
        continue;
      }
      ++c.flows;
      c.explicit_routes += tr.flows[f].route.empty() ? 0 : 1;
    }
    c.priority = priority;
    c.graph = deadlock::BuildTrafficBufferGraph(routes, tr.flows, global, priority);
  } else {
    c.priority = priority < 0 ? s.net.nic.data_class : priority;
    c.graph = deadlock::BuildBufferGraph(routes, c.priority);
  }
  std::set<int> classes;
  if (c.priority >= 0) {
    classes.insert(c.priority);
  } else {
    for (const auto& f : tr.flows) {
      classes.insert(f.tclass);
      for (const auto& h : f.route)
        if (h.tclass >= 0) classes.insert(h.tclass);
    }
  }
  c.classes.assign(classes.begin(), classes.end());
  c.cycle = deadlock::FindBufferCycle(c.graph);
  for (uint32_t v : c.cycle) c.labels.push_back(deadlock::VertexLabel(routes, c.graph, v, global));
  if (c.traffic_known && !c.cycle.empty()) {
    for (const auto& on : deadlock::FlowsOnCycle(routes, tr.flows, c.graph, c.cycle)) {
      std::vector<std::string> names;
      for (size_t k = 0; k < on.size() && k < kMaxNamed; ++k) names.push_back(tr.Name(s, on[k]));
      if (on.size() > kMaxNamed) names.push_back(fmt::format("and {} more", on.size() - kMaxNamed));
      c.cycle_flows.push_back(std::move(names));
    }
  }
  std::set<int> lossy;
  if (c.cycle.empty() || global) {
    for (int cls : c.classes)
      if (!Lossless(s, cls)) lossy.insert(cls);
  } else {
    for (uint32_t v : c.cycle)
      if (!Lossless(s, c.graph.ClassOf(v))) lossy.insert(c.graph.ClassOf(v));
  }
  c.lossy_classes.assign(lossy.begin(), lossy.end());
  c.lossless = lossy.empty();
  return c;
}

}  // namespace lossless::run
