// Arista EOS running-config:
//   qos map dscp 48 to traffic-class 6
//   qos map traffic-class 3 to tx-queue 3
//   interface Ethernet1/1
//      speed 400g
//      flowcontrol receive on
//      priority-flow-control on
//      priority-flow-control priority 3 no-drop
//      priority-flow-control pause watchdog
//      tx-queue 3
//         random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes
//         max-mark-probability 20
//      tx-queue 6
//         priority strict
//   qos profile NAME            (same statements; interfaces apply it with
//      ...                       `service-profile NAME`)
// `no priority-flow-control [on | mode on]` later in a block turns PFC off
// again (the running-config keeps the last statement that took effect), `no
// priority-flow-control priority N` drops N, `no priority-flow-control pause
// watchdog` the watchdog. An interface that turns PFC off keeps it off
// whatever its service-profile says (interface configuration takes
// precedence over the QoS profile).
// `!` starts a comment. Thresholds in segments are cells. DSCP maps to
// traffic class DSCP/8 and traffic class to tx-queue identically unless
// stated (EOS defaults).
#include <algorithm>
#include <map>
#include <set>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

QosConfig ParseEos(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::map<int, int> dscp_tc;
  std::map<int, int> tc_queue;
  std::vector<PortQos> ports;
  std::vector<PortQos> profiles;               // "qos profile NAME" blocks
  std::map<std::string, std::string> applied;  // interface -> service-profile
  std::map<std::string, bool> pfc_on;          // by port or "profile NAME"
  std::set<std::string> pfc_off;               // ports that say `no priority-flow-control`
  std::string section;                         // top-level line owning the current block
  PortQos* cur = nullptr;
  int tx_queue = -1;
  size_t tx_indent = 0;
  bool any = false;
  auto skip = [&](const TextLine& l, const char* why) {
    cfg.skipped.push_back({l.number, std::string(l.text), why});
  };
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty() || t.front() == '!' || t.front() == '#') continue;
    std::vector<std::string> w = Words(t);
    Location where{file, l.number, ""};
    if (l.indent == 0) {
      section = std::string(t);
      tx_queue = -1;
      cur = nullptr;
      if (w[0] == "interface" && w.size() >= 2) {
        PortQos p;
        p.name = w[1];
        p.line = l.number;
        ports.push_back(p);
        cur = &ports.back();
      } else if (w.size() >= 3 && w[0] == "qos" && w[1] == "profile") {
        PortQos p;
        p.name = "profile " + w[2];
        p.line = l.number;
        profiles.push_back(p);
        cur = &profiles.back();
        any = true;
      } else if (w.size() >= 6 && w[0] == "qos" && w[1] == "map" && w[2] == "dscp") {
        // qos map dscp D [D ...] to traffic-class T
        size_t to = 3;
        while (to < w.size() && w[to] != "to") ++to;
        if (to + 2 >= w.size() || w[to + 1] != "traffic-class")
          throw InputError(where, Expected("qos map dscp D... to traffic-class T", std::string(t)));
        int tc = ParsePriority(w[to + 2], {file, l.number, "qos.map.traffic-class"});
        for (size_t i = 3; i < to; ++i)
          for (int d : ParseIntList(w[i], 0, 63, {file, l.number, "qos.map.dscp"}, "DSCP 0-63"))
            dscp_tc[d] = tc;
        any = true;
      } else if (w.size() >= 7 && w[0] == "qos" && w[1] == "map" && w[2] == "traffic-class" &&
                 w[5] == "tx-queue") {
        int q = ParsePriority(w[6], {file, l.number, "qos.map.tx-queue"});
        for (int tc : ParsePriorityList(w[3], {file, l.number, "qos.map.traffic-class"}))
          tc_queue[tc] = q;
        any = true;
      } else {
        skip(l, "not a QoS statement this tool reads (eos)");
      }
      continue;
    }
    if (cur == nullptr) {
      skip(l, "outside an interface or qos profile block (eos)");
      continue;
    }
    PortQos& p = *cur;
    std::string field = "interface." + p.name;
    if (tx_queue >= 0 && l.indent <= tx_indent) tx_queue = -1;
    if ((w[0] == "tx-queue" || w[0] == "uc-tx-queue") && w.size() >= 2) {
      tx_queue = ParsePriority(w[1], {file, l.number, field + "." + w[0]});
      tx_indent = l.indent;
      any = true;
      continue;
    }
    if (tx_queue >= 0) {
      if (w.size() >= 2 && w[0] == "random-detect" && w[1] == "ecn" && w.size() >= 3 &&
          w[2] == "count") {
        continue;  // ECN mark counting, no threshold
      }
      if (w.size() >= 2 && w[0] == "random-detect" && w[1] == "ecn") {
        EcnQueue e;
        e.enabled = true;
        e.line = l.number;
        e.source = "tx-queue " + std::to_string(tx_queue);
        for (size_t i = 2; i + 1 < w.size(); ++i) {
          if ((w[i] == "minimum-threshold" || w[i] == "maximum-threshold") && i + 2 < w.size()) {
            BufferAmount a = ParseAmount(w[i + 1], w[i + 2], {file, l.number, field + "." + w[i]});
            (w[i] == "minimum-threshold" ? e.kmin : e.kmax) = a;
          } else if (w[i] == "max-mark-probability") {
            e.pmax_percent = ParseDecimal(
                w[i + 1], {file, l.number, field + ".max-mark-probability"}, "a percentage");
          }
        }
        p.ecn[tx_queue] = e;
        any = true;
      } else if (w[0] == "priority" && w.size() >= 2 && w[1] == "strict") {
        cfg.scheduling[tx_queue] = Scheduling::kStrict;
      } else if (w[0] == "no" && w.size() >= 2 && w[1] == "priority") {
        cfg.scheduling[tx_queue] = Scheduling::kWeighted;
      } else {
        skip(l, "tx-queue statement not read (eos)");
      }
      continue;
    }
    if (w[0] == "no" && w.size() >= 2 && w[1] == "priority-flow-control") {
      any = true;
      if (w.size() == 2 || (w.size() == 3 && w[2] == "on") ||
          (w.size() == 4 && w[2] == "mode" && w[3] == "on")) {
        pfc_on.erase(p.name);
        pfc_off.insert(p.name);
      } else if (w.size() >= 4 && w[2] == "priority") {
        p.pfc_priorities.erase(
            ParsePriority(w[3], {file, l.number, field + ".priority-flow-control.priority"}));
      } else if (t.find("watchdog") != std::string_view::npos) {
        p.pfc_watchdog = false;
      } else {
        skip(l, "not a QoS statement this tool reads (eos)");
      }
    } else if (w[0] == "priority-flow-control") {
      any = true;
      if (w.size() >= 2 && (w[1] == "on" || w[1] == "mode")) pfc_off.erase(p.name);
      if (w.size() == 2 && w[1] == "on") pfc_on[p.name] = true;
      if (w.size() == 3 && w[1] == "mode" && w[2] == "on") pfc_on[p.name] = true;
      if (w.size() >= 4 && w[1] == "priority") {
        int prio = ParsePriority(w[2], {file, l.number, field + ".priority-flow-control.priority"});
        if (w[3] == "no-drop") p.pfc_priorities.insert(prio);
        if (w[3] == "drop") p.pfc_priorities.erase(prio);
      }
      if (t.find("watchdog") != std::string_view::npos) p.pfc_watchdog = true;
    } else if (w[0] == "flowcontrol" && w.size() >= 3) {
      p.link_pause = p.link_pause.value_or(false) || w[2] == "on";
    } else if (w[0] == "speed" && w.size() >= 2) {
      std::string sp = text::ToLower(w.back());
      size_t i = 0;
      while (i < sp.size() && std::isdigit(static_cast<unsigned char>(sp[i]))) ++i;
      if (i > 0 && i < 6 && i < sp.size() && sp[i] == 'g')
        p.speed_gbps = std::stoll(sp.substr(0, i));
    } else if (w[0] == "service-profile" && w.size() >= 2) {
      applied[p.name] = w[1];
      any = true;
    } else {
      skip(l, "not a QoS statement this tool reads (eos)");
    }
  }
  // Interfaces take the settings of the qos profile they apply.
  std::set<std::string> used_profiles;
  for (PortQos& p : ports) {
    auto a = applied.find(p.name);
    if (a == applied.end()) continue;
    auto prof = std::find_if(profiles.begin(), profiles.end(),
                             [&](const PortQos& q) { return q.name == "profile " + a->second; });
    if (prof == profiles.end()) {
      cfg.notes.push_back("interface " + p.name + " applies qos profile " + a->second +
                          ", which is not in the input");
      continue;
    }
    used_profiles.insert(prof->name);
    p.pfc_priorities.insert(prof->pfc_priorities.begin(), prof->pfc_priorities.end());
    p.ecn.insert(prof->ecn.begin(), prof->ecn.end());
    if (!p.pfc_watchdog) p.pfc_watchdog = prof->pfc_watchdog;
    if (!p.link_pause) p.link_pause = prof->link_pause;
    if (pfc_on.count(prof->name) && !pfc_off.count(p.name)) pfc_on[p.name] = true;
  }
  for (PortQos& prof : profiles) {
    if (used_profiles.count(prof.name)) continue;
    cfg.notes.push_back("qos " + prof.name +
                        " is checked as it stands: no interface in the "
                        "input applies it");
    ports.push_back(prof);
  }
  if (!any) return cfg;
  for (int d = 0; d < 64; ++d) {
    auto it = dscp_tc.find(d);
    int tc = it == dscp_tc.end() ? d / 8 : it->second;
    auto qt = tc_queue.find(tc);
    cfg.dscp_to_queue[d] = qt == tc_queue.end() ? tc : qt->second;
  }
  cfg.priority_to_queue = tc_queue;
  cfg.notes.emplace_back(
      "unmapped DSCPs go to traffic class DSCP/8 and traffic class N to tx-queue N (EOS defaults)");
  bool any_inactive = false;
  cfg.ecn_stated = true;  // a configuration: a queue without random-detect ecn has none
  for (PortQos& p : ports) {
    p.pfc_stated = true;
    if (pfc_on.count(p.name) && !p.pfc_priorities.empty() && !p.pfc_watchdog)
      p.pfc_watchdog = false;  // EOS configures the PFC watchdog per interface or profile
    bool inactive = !pfc_on.count(p.name) && !p.pfc_priorities.empty();
    if (inactive) p.pfc_priorities.clear();
    any_inactive = any_inactive || inactive;
    if (inactive || !p.ecn.empty() || pfc_on.count(p.name) || p.link_pause) cfg.ports.push_back(p);
  }
  if (any_inactive)
    cfg.notes.emplace_back("no-drop priorities without 'priority-flow-control on' are inactive");
  if (cfg.ports.empty()) {
    PortQos all;
    all.name = "*";
    all.pfc_stated = true;
    cfg.ports.push_back(all);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
