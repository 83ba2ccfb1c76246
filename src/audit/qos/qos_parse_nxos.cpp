// Cisco NX-OS QoS configuration (Nexus 9000 style):
//   class-map type qos match-all CNP / match dscp 48
//   policy-map type qos QOS_IN / class CNP / set qos-group 7
//   policy-map type queuing QOS_OUT
//     class type queuing c-out-8q-q7 / priority level 1
//     class type queuing c-out-8q-q3 / bandwidth remaining percent 50
//       random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes drop-probability 7
//       weight 0 ecn
//   policy-map type network-qos QOS_NQ
//     class type network-qos c-8q-nq3 / pause pfc-cos 3 (or "pause no-drop")
//       with the no-drop class's buffer in bytes, Nexus 9000 style:
//       pause buffer-size 311476 pause-threshold 200000 resume-threshold 190784 pfc-cos 3
//       (Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide,
//       "Configuring Priority Flow Control": buffer-size is the class's ingress
//       buffer, pause-threshold the occupancy at which the port pauses the peer,
//       resume-threshold the one at which it resumes it). Read as the PFC
//       trigger, XON, and headroom = buffer-size - pause-threshold (the buffer
//       kept above the trigger for what arrives after the pause).
//   system qos / service-policy type network-qos QOS_NQ ...
//   interface Ethernet1/1 / priority-flow-control mode on / flowcontrol receive on
// `!` starts a comment. qos-group N is queue N. Policies count only when
// `system qos` (or an interface) applies them; without a `system qos` block
// every defined policy is taken as applied (noted).
#include <map>
#include <regex>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

struct QueuingPolicy {
  std::map<int, EcnQueue> ecn;
  std::map<int, Scheduling> scheduling;
};

int QueueOfClass(const std::string& name) {
  static const std::regex kQ(
      R"((?:c-out-8q-q|c-out-q|c-8q-nq|c-nq|c-out-q-|c-8q-nq-)(\d|default)$)");
  std::smatch m;
  if (!std::regex_search(name, m, kQ)) return -1;
  return m[1].str() == "default" ? 0 : std::stoi(m[1].str());
}

}  // namespace

QosConfig ParseNxos(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::map<std::string, std::set<int>> class_dscp;           // qos class-map -> DSCPs
  std::map<std::string, std::map<std::string, int>> qos_pm;  // policy -> class -> qos-group
  std::map<std::string, QueuingPolicy> queuing;
  std::map<std::string, std::set<int>> nq;                 // network-qos policy -> no-drop cos
  std::map<std::string, std::map<int, LosslessPg>> nq_pg;  // policy -> cos -> pause buffer
  std::string sys_nq, sys_queuing, sys_qos;
  bool system_qos = false;
  std::optional<bool> global_wd;
  std::vector<PortQos> ports;
  std::map<std::string, std::string> port_mode;

  // Context stack by indentation.
  std::vector<std::pair<size_t, std::vector<std::string>>> stack;
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty() || t.front() == '!' || t.front() == '#') continue;
    std::vector<std::string> w = Words(t);
    while (!stack.empty() && stack.back().first >= l.indent) stack.pop_back();
    std::vector<std::string> top =
        stack.empty() ? std::vector<std::string>{} : stack.front().second;
    std::vector<std::string> parent =
        stack.empty() ? std::vector<std::string>{} : stack.back().second;
    stack.push_back({l.indent, w});
    Location where{file, l.number, ""};
    auto is = [](const std::vector<std::string>& v, std::initializer_list<const char*> head) {
      size_t i = 0;
      for (const char* h : head) {
        if (i >= v.size() || v[i] != h) return false;
        ++i;
      }
      return true;
    };
    if (top.empty()) {
      if (is(w, {"system", "qos"})) system_qos = true;
      if (w[0] == "interface" && w.size() >= 2) {
        PortQos p;
        // A range or list ("interface Ethernet1/1/1 - 2", "Ethernet1/1, Ethernet1/5")
        // is one configuration block: keep its whole text as the name.
        p.name = w[1];
        for (size_t i = 2; i < w.size(); ++i) p.name += " " + w[i];
        p.line = l.number;
        ports.push_back(p);
      }
      if (is(w, {"priority-flow-control", "watch-dog-interval"}) && w.size() >= 3)
        global_wd = w[2] == "on";
      // A defined policy counts even when it has no pause / random-detect line.
      if (is(w, {"policy-map", "type", "network-qos"}) && w.size() >= 4) nq[w[3]];
      if (is(w, {"policy-map", "type", "queuing"}) && w.size() >= 4) queuing[w[3]];
      if (!(is(w, {"system", "qos"}) || w[0] == "interface" || w[0] == "class-map" ||
            w[0] == "policy-map" || w[0] == "priority-flow-control"))
        cfg.skipped.push_back({l.number, l.text, "not a QoS statement this tool reads (nxos)"});
      continue;
    }
    if (is(top, {"class-map", "type", "qos"}) && top.size() >= 5 && is(w, {"match", "dscp"}) &&
        w.size() >= 3) {
      std::string list;
      for (size_t i = 2; i < w.size(); ++i) list += w[i] + ",";
      for (int d : ParseIntList(list, 0, 63, {file, l.number, "class-map." + top.back() + ".dscp"},
                                "DSCP 0-63"))
        class_dscp[top.back()].insert(d);
    } else if (is(top, {"policy-map", "type", "qos"}) && top.size() >= 4 &&
               is(w, {"set", "qos-group"}) && w.size() >= 3 && parent.size() >= 2 &&
               parent[0] == "class") {
      qos_pm[top[3]][parent.back()] =
          ParsePriority(w[2], {file, l.number, "policy-map." + top[3] + ".qos-group"});
    } else if (is(top, {"policy-map", "type", "queuing"}) && top.size() >= 4 &&
               parent.size() >= 2 && parent[0] == "class") {
      // Ingress queuing classes (`class type queuing c-in-q3`) carry the pause
      // buffer in public RoCE configs; it is read only in the network-qos form
      // (`pause buffer-size ... pfc-cos N`, below), so it is listed, not dropped.
      if (w[0] == "pause") {
        cfg.skipped.push_back({l.number, l.text,
                               "pause buffer in a queuing policy not read (nxos reads it in a "
                               "network-qos class with pfc-cos)"});
        continue;
      }
      int q = QueueOfClass(parent.back());
      if (q < 0) continue;
      QueuingPolicy& pol = queuing[top[3]];
      std::string field = "policy-map." + top[3] + "." + parent.back();
      if (w[0] == "priority") {
        pol.scheduling[q] = Scheduling::kStrict;
      } else if (w[0] == "bandwidth") {
        if (!pol.scheduling.count(q)) pol.scheduling[q] = Scheduling::kWeighted;
      } else if (w[0] == "random-detect") {
        EcnQueue e;
        e.line = l.number;
        e.source = parent.back();
        e.enabled = w.back() == "ecn";
        for (size_t i = 1; i + 2 < w.size(); ++i) {
          if (w[i] == "minimum-threshold" || w[i] == "maximum-threshold") {
            BufferAmount a = ParseAmount(w[i + 1], w[i + 2], {file, l.number, field + "." + w[i]});
            (w[i] == "minimum-threshold" ? e.kmin : e.kmax) = a;
          }
        }
        for (size_t i = 1; i + 1 < w.size(); ++i)
          if (w[i] == "drop-probability")
            e.pmax_percent = ParseDecimal(w[i + 1], {file, l.number, field + ".drop-probability"},
                                          "a percentage");
        pol.ecn[q] = e;
      }
    } else if (is(top, {"policy-map", "type", "network-qos"}) && top.size() >= 4 &&
               parent.size() >= 2 && parent[0] == "class" && w[0] == "pause") {
      std::set<int>& cos = nq[top[3]];
      size_t pfc_cos = 0;
      for (size_t i = 1; i < w.size(); ++i)
        if (w[i] == "pfc-cos") pfc_cos = i;
      if (pfc_cos > 0 && pfc_cos + 1 < w.size()) {
        std::string list;
        for (size_t i = pfc_cos + 1; i < w.size(); ++i) list += w[i] + ",";
        const std::string field = "policy-map." + top[3] + "." + parent.back();
        const std::set<int> listed = ParsePriorityList(list, {file, l.number, field + ".pfc-cos"});
        for (int c : listed) cos.insert(c);
        // pause buffer-size B pause-threshold P resume-threshold R (bytes).
        std::optional<int64_t> size, pause, resume;
        for (size_t i = 1; i + 1 < pfc_cos; ++i) {
          auto bytes = [&] {
            return ParseInt(w[i + 1], {file, l.number, field + "." + w[i]}, "a size in bytes");
          };
          if (w[i] == "buffer-size") size = bytes();
          if (w[i] == "pause-threshold") pause = bytes();
          if (w[i] == "resume-threshold") resume = bytes();
        }
        if (pause) {
          if (size && *size < *pause)
            throw InputError({file, l.number, field + ".buffer-size"},
                             Expected("a buffer-size of at least the pause-threshold (" +
                                          std::to_string(*pause) + " B)",
                                      std::to_string(*size)));
          LosslessPg pg;
          pg.pfc_trigger.static_size = BufferAmount::Bytes(*pause);
          if (resume) pg.xon = BufferAmount::Bytes(*resume);
          if (size) pg.headroom = BufferAmount::Bytes(*size - *pause);
          pg.source = "network-qos " + top[3] + " " + parent.back() + " pause buffer";
          pg.line = l.number;
          for (int c : listed) nq_pg[top[3]][c] = pg;
        }
      } else if (is(w, {"pause", "no-drop"})) {
        int q = QueueOfClass(parent.back());
        if (q < 0)
          throw InputError(where,
                           Expected("a network-qos class named like c-8q-nq3", parent.back()));
        cos.insert(q);
      }
    } else if (is(top, {"system", "qos"}) && is(w, {"service-policy", "type"}) && w.size() >= 4) {
      if (w[2] == "network-qos") sys_nq = w.back();
      if (w[2] == "queuing" && w[3] == "output") sys_queuing = w.back();
      if (w[2] == "qos" && w[3] == "input") sys_qos = w.back();
    } else if (top[0] == "interface" && !ports.empty()) {
      PortQos& p = ports.back();
      if (is(w, {"priority-flow-control", "mode"}) && w.size() >= 3) {
        port_mode[p.name] = w[2];
      } else if (is(w, {"priority-flow-control", "watch-dog-interval"}) && w.size() >= 3) {
        p.pfc_watchdog = w[2] == "on";
      } else if (w[0] == "flowcontrol" && w.size() >= 3) {
        p.link_pause = p.link_pause.value_or(false) || w[2] == "on";
      } else if (w[0] == "speed" && w.size() >= 2 && w[1] != "auto") {
        int64_t mbps =
            ParseInt(w[1], {file, l.number, "interface." + p.name + ".speed"}, "a speed in Mb/s");
        p.speed_gbps = mbps / 1000;
      } else if (is(w, {"service-policy", "type", "qos", "input"}) && w.size() >= 5 &&
                 sys_qos.empty()) {
        sys_qos = w[4];
      } else if (!is(w, {"service-policy"})) {
        cfg.skipped.push_back({l.number, l.text, "interface statement not read (nxos)"});
      }
    }
  }
  cfg.ecn_stated = !queuing.empty();
  if (nq.empty() && queuing.empty() && qos_pm.empty() && port_mode.empty()) return cfg;
  auto pick = [&](std::string& chosen, const auto& defined, const char* kind) {
    if (!chosen.empty() || defined.empty()) return;
    if (!system_qos && defined.size() == 1) {
      chosen = defined.begin()->first;
      cfg.notes.push_back(std::string("no 'system qos' block; ") + kind + " policy " + chosen +
                          " taken as applied");
    }
  };
  pick(sys_nq, nq, "network-qos");
  pick(sys_queuing, queuing, "queuing");
  pick(sys_qos, qos_pm, "qos");
  if (!sys_nq.empty() && !nq.count(sys_nq))
    throw InputError(
        {file, FindLine(text, sys_nq), "system.qos"},
        "network-qos policy " + QuoteForMessage(sys_nq) + " is applied but not defined");
  std::set<int> cos = sys_nq.empty() ? std::set<int>{} : nq[sys_nq];
  QueuingPolicy qp = sys_queuing.empty() ? QueuingPolicy{} : queuing[sys_queuing];
  cfg.scheduling = qp.scheduling;
  if (!sys_qos.empty()) {
    for (const auto& [cls, group] : qos_pm[sys_qos])
      for (int d : class_dscp[cls]) cfg.dscp_to_queue[d] = group;
  }
  if (ports.empty()) {
    PortQos all;
    all.name = "*";
    ports.push_back(all);
  }
  // Which classes are no-drop is in the network-qos policy: without one (and
  // without `system qos`) the input does not say, e.g. an interface excerpt.
  const bool nq_known = !nq.empty() || system_qos;
  if (!nq_known)
    cfg.notes.push_back(
        "no network-qos policy or 'system qos' block in the input: which "
        "classes are no-drop (PFC) is not stated");
  for (PortQos& p : ports) {
    auto m = port_mode.find(p.name);
    std::string mode = m == port_mode.end() ? "auto" : m->second;
    p.pfc_stated = nq_known;
    if (mode != "off") p.pfc_priorities = cos;
    if (mode != "off" && !sys_nq.empty()) p.pgs = nq_pg[sys_nq];
    p.ecn = qp.ecn;
    if (!p.pfc_watchdog && global_wd) p.pfc_watchdog = global_wd;
    if (m != port_mode.end() || p.link_pause || p.name == "*" || ports.size() == 1)
      cfg.ports.push_back(p);
  }
  if (cfg.ports.empty()) {
    PortQos all;
    all.name = "*";
    all.pfc_stated = nq_known;
    all.pfc_priorities = cos;
    if (!sys_nq.empty()) all.pgs = nq_pg[sys_nq];
    all.ecn = qp.ecn;
    all.pfc_watchdog = global_wd;
    cfg.ports.push_back(all);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
