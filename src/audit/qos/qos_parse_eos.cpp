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
// `!` starts a comment. Thresholds in segments are cells. DSCP maps to
// traffic class DSCP/8 and traffic class to tx-queue identically unless
// stated (EOS defaults).
#include <map>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos_internal {

QosConfig ParseEos(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::map<int, int> dscp_tc;
  std::map<int, int> tc_queue;
  std::vector<PortQos> ports;
  std::map<std::string, bool> pfc_on;
  std::string section;  // top-level line owning the current block
  int tx_queue = -1;
  size_t tx_indent = 0;
  bool any = false;
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty() || t.front() == '!' || t.front() == '#') continue;
    std::vector<std::string> w = Words(t);
    Location where{file, l.number, ""};
    if (l.indent == 0) {
      section = std::string(t);
      tx_queue = -1;
      if (w[0] == "interface" && w.size() >= 2) {
        PortQos p;
        p.name = w[1];
        p.line = l.number;
        ports.push_back(p);
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
      }
      continue;
    }
    if (!StartsWith(section, "interface ") || ports.empty()) continue;
    PortQos& p = ports.back();
    std::string field = "interface." + p.name;
    if (tx_queue >= 0 && l.indent <= tx_indent) tx_queue = -1;
    if (w[0] == "tx-queue" && w.size() >= 2) {
      tx_queue = ParsePriority(w[1], {file, l.number, field + ".tx-queue"});
      tx_indent = l.indent;
      continue;
    }
    if (tx_queue >= 0) {
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
      }
      continue;
    }
    if (w[0] == "priority-flow-control") {
      any = true;
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
      std::string s = text::ToLower(w.back());
      size_t i = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      if (i > 0 && i < 6 && i < s.size() && s[i] == 'g') p.speed_gbps = std::stoll(s.substr(0, i));
    }
  }
  if (!any) return cfg;
  for (int d = 0; d < 64; ++d) {
    auto it = dscp_tc.find(d);
    int tc = it == dscp_tc.end() ? d / 8 : it->second;
    auto qt = tc_queue.find(tc);
    cfg.dscp_to_queue[d] = qt == tc_queue.end() ? tc : qt->second;
  }
  cfg.priority_to_queue = tc_queue;
  cfg.notes.push_back(
      "unmapped DSCPs go to traffic class DSCP/8 and traffic class N to tx-queue N (EOS defaults)");
  bool any_inactive = false;
  for (PortQos& p : ports) {
    p.pfc_stated = true;
    bool inactive = !pfc_on.count(p.name) && !p.pfc_priorities.empty();
    if (inactive) p.pfc_priorities.clear();
    any_inactive = any_inactive || inactive;
    if (inactive || !p.ecn.empty() || pfc_on.count(p.name) || p.link_pause) cfg.ports.push_back(p);
  }
  if (any_inactive)
    cfg.notes.push_back("no-drop priorities without 'priority-flow-control on' are inactive");
  if (cfg.ports.empty()) {
    PortQos all;
    all.name = "*";
    all.pfc_stated = true;
    cfg.ports.push_back(all);
  }
  return cfg;
}

}  // namespace lossless::audit::qos_internal
