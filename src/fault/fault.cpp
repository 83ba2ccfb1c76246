#include "fault/fault.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.hpp"

namespace lossless::fault {

namespace {

void AddLinkLoss(const scenario::Scenario& s, const topology::Topology& t, Plan& plan) {
  if (s.ber > 0) {
    fabric::LinkLossConfig every_link;
    every_link.ber = s.ber;
    for (uint32_t p = 0; p < 2 * t.links.size(); ++p) plan.link_loss.push_back({p, every_link});
  }
  for (const auto& l : s.link_loss)
    for (uint32_t p : scenario::LinkLossPorts(l, t)) plan.link_loss.push_back({p, l.loss});
}

void AddNicStall(const scenario::Scenario& s, const topology::Topology& t, Plan& plan) {
  if (s.nic_stall.host < 0) return;
  if (s.nic_stall.host >= static_cast<int64_t>(t.hosts.size())) {
    throw InputError(s.nic_stall.where, fmt::format("expected a host rank below {}, got {}",
                                                    t.hosts.size(), s.nic_stall.host));
  }
  plan.nic_stall = NicStall{static_cast<uint32_t>(s.nic_stall.host), s.nic_stall.at,
                            s.nic_stall.until};
}

void AddLinkDown(const scenario::Scenario& s, const topology::Topology& t, Plan& plan) {
  for (const auto& d : s.link_down)
    plan.link_state.push_back({scenario::FindLink(d.link, t, d.where), d.at, d.up_at});
  if (!s.link_down.empty()) plan.reroute = s.RerouteTime();
}

}  // namespace

std::vector<std::pair<Time, std::vector<uint32_t>>> Plan::Reroutes() const {
  std::vector<std::pair<Time, std::vector<uint32_t>>> out;
  if (!reroute) return out;
  // Every change of state in time order; all changes at one instant are
  // counted before that instant's reroute.
  struct Change {
    Time at;
    uint32_t link;
    bool up;
  };
  std::vector<Change> changes;
  for (const LinkState& l : link_state) {
    changes.push_back({l.down_at, l.link, false});
    if (l.up_at != Time::Max()) changes.push_back({l.up_at, l.link, true});
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.at < b.at; });
  std::map<uint32_t, int> down;  // link -> how many faults hold it down
  for (size_t i = 0; i < changes.size(); ++i) {
    const Change& c = changes[i];
    if (c.up) {
      if (--down[c.link] == 0) down.erase(c.link);
    } else {
      ++down[c.link];
    }
    if (i + 1 < changes.size() && changes[i + 1].at == c.at) continue;  // same instant
    std::vector<uint32_t> links;
    links.reserve(down.size());
    for (const auto& [l, n] : down) links.push_back(l);
    const Time at = c.at.ps() > Time::Max().ps() - reroute->ps() ? Time::Max() : c.at + *reroute;
    out.emplace_back(at, std::move(links));
  }
  return out;
}

Plan FromScenario(const scenario::Scenario& s, const topology::Topology& t, size_t flows) {
  Plan plan;
  AddNicStall(s, t, plan);
  scenario::CheckFaults(s, t, flows);
  for (const auto& p : s.pause_inject)
    plan.pause.push_back({scenario::PauseInjectionPort(p, t), p.class_enable, p.quanta, p.at});
  AddLinkLoss(s, t, plan);
  for (const auto& c : s.cnp_inject) plan.cnp.push_back({static_cast<uint32_t>(c.flow), c.at});
  AddLinkDown(s, t, plan);
  return plan;
}

Plan LinkAndNicFaults(const scenario::Scenario& s, const topology::Topology& t) {
  Plan plan;
  AddLinkLoss(s, t, plan);
  AddNicStall(s, t, plan);
  AddLinkDown(s, t, plan);
  return plan;
}

void Apply(const Plan& plan, fabric::Network& net) {
  // The order of the seams' events on one owner follows this order (NIC
  // stall, PAUSE, CNP, link state), which keeps runs byte-identical to the
  // order `run` always used.
  if (plan.nic_stall)
    net.StallNicReceive(plan.nic_stall->host, plan.nic_stall->from, plan.nic_stall->until);
  for (const PauseInjection& p : plan.pause) net.InjectPause(p.port, p.class_enable, p.quanta, p.at);
  for (const LinkLoss& l : plan.link_loss) net.SetLinkLoss(l.port, l.loss);
  for (const CnpInjection& c : plan.cnp)
    for (Time at : c.at) net.InjectCnp(c.flow, at);
  for (const LinkState& l : plan.link_state) {
    if (l.up_at <= l.down_at)
      throw std::invalid_argument(fmt::format("link {}: expected up_at after down_at", l.link));
    net.ScheduleLinkState(l.link, false, l.down_at);
    if (l.up_at != Time::Max()) net.ScheduleLinkState(l.link, true, l.up_at);
  }
  for (const auto& [at, links] : plan.Reroutes())
    if (at != Time::Max()) net.ScheduleReroute(links, at);
}

}  // namespace lossless::fault
