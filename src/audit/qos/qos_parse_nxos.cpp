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
//   policy-map type queuing IN_Q (ingress, applied with `service-policy type
//   queuing input IN_Q` under `system qos` or an interface)
//     class type queuing c-in-8q-q3 (or c-in-q3, or a `class-map type queuing`
//     NAME with `match qos-group 3`)
//       pause buffer-size 407040 pause-threshold 103424 resume-threshold 90112
//       the same three values, bytes, for the ports that policy applies to (it
//       overrides the network-qos values there). The class is a qos-group; the
//       qos-group's no-drop CoS comes from the applied network-qos policy: the
//       class (c-8q-nqN, or a `class-map type network-qos` with `match
//       qos-group N`) with `pause pfc-cos C`, or with `pause no-drop` the CoS
//       values the applied `type qos` policy maps to that qos-group (`match cos`;
//       in Cisco's Nexus 5000 guides each system class has its 802.1p CoS, and
//       pfc-cos is for a no-drop class not mapped purely on CoS; without a
//       `match cos`, qos-group N is taken as CoS N, noted). A pause buffer in a
//       policy no `service-policy type queuing input` applies, in a class with
//       no qos-group, or for a qos-group that is not no-drop is listed as
//       skipped, and so are the other statements of an input policy
//       (docs/audit-qos.md, "NX-OS ingress queuing pause buffers").
//   system qos / service-policy type network-qos QOS_NQ ...
//   interface Ethernet1/1 / priority-flow-control mode on / flowcontrol receive on
// `!` starts a comment. qos-group N is queue N. Policies count only when
// `system qos` (or an interface) applies them; without a `system qos` block
// every defined network-qos, output queuing and qos policy is taken as applied
// when it is the only one of its kind (noted); an ingress queuing policy counts
// only when applied.
#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

// A `pause buffer-size B pause-threshold P resume-threshold R` statement of
// one class, as read.
struct PauseBuffer {
  std::string cls;
  int64_t line = 0;
  std::string text;
  LosslessPg pg;
};

struct QueuingPolicy {
  std::map<int, EcnQueue> ecn;
  std::map<int, Scheduling> scheduling;
  std::vector<PauseBuffer> pause;  // ingress classes' pause buffers
  // The other statements of its classes (line, text): read as an output
  // policy's, listed as not read when the policy is an input one.
  std::vector<std::pair<int64_t, std::string>> statements;
};

// One `pause` statement of a network-qos class.
struct NqPause {
  std::string cls;
  int64_t line = 0;
  std::string text;
  std::optional<std::set<int>> pfc_cos;  // stated; nullopt for `pause no-drop`
  std::optional<LosslessPg> pg;
};

int QueueOfClass(const std::string& name) {
  static const std::regex kQ(
      R"((?:c-out-8q-q|c-out-q|c-8q-nq|c-nq|c-out-q-|c-8q-nq-)(\d|default)$)");
  std::smatch m;
  if (!std::regex_search(name, m, kQ)) return -1;
  return m[1].str() == "default" ? 0 : std::stoi(m[1].str());
}

// qos-group of an ingress queuing class named by NX-OS's system classes:
// c-in-8q-q3, c-in-q3, c-in-q-default, c-in-8q-q-default.
int QueueOfInputClass(const std::string& name) {
  static const std::regex kQ(R"(^c-in-(?:8q-)?q-?(\d|default)$)");
  std::smatch m;
  if (!std::regex_match(name, m, kQ)) return -1;
  return m[1].str() == "default" ? 0 : std::stoi(m[1].str());
}

// The buffer words of a `pause` statement, w[1..end): buffer-size,
// pause-threshold, resume-threshold in bytes. nullopt without a
// pause-threshold. Throws InputError (at `line`) for a value that is not a
// number or a buffer below its own pause threshold.
std::optional<LosslessPg> ReadPauseBuffer(const std::vector<std::string>& w, size_t end,
                                          const std::string& file, int64_t line,
                                          const std::string& field) {
  std::optional<int64_t> size, pause, resume;
  for (size_t i = 1; i + 1 < end; ++i) {
    auto bytes = [&] {
      return ParseInt(w[i + 1], {file, line, field + "." + w[i]}, "a size in bytes");
    };
    if (w[i] == "buffer-size") size = bytes();
    if (w[i] == "pause-threshold") pause = bytes();
    if (w[i] == "resume-threshold") resume = bytes();
  }
  if (!pause) return std::nullopt;
  if (size && *size < *pause)
    throw InputError(
        {file, line, field + ".buffer-size"},
        Expected("a buffer-size of at least the pause-threshold (" + std::to_string(*pause) + " B)",
                 std::to_string(*size)));
  LosslessPg pg;
  pg.pfc_trigger.static_size = BufferAmount::Bytes(*pause);
  if (resume) pg.xon = BufferAmount::Bytes(*resume);
  if (size) pg.headroom = BufferAmount::Bytes(*size - *pause);
  pg.line = line;
  return pg;
}

std::string Join(const std::set<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

QosConfig ParseNxos(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::map<std::string, std::set<int>> class_dscp;           // qos class-map -> DSCPs
  std::map<std::string, std::set<int>> class_cos;            // qos class-map -> CoS
  std::map<std::string, int> queuing_class_group;            // queuing class-map -> qos-group
  std::map<std::string, int> nq_class_group;                 // network-qos class-map -> qos-group
  std::map<std::string, std::map<std::string, int>> qos_pm;  // policy -> class -> qos-group
  std::map<std::string, QueuingPolicy> queuing;
  std::map<std::string, std::vector<NqPause>> nq;  // network-qos policy -> pause statements
  std::string sys_nq, sys_queuing, sys_qos;
  std::pair<std::string, int64_t> sys_queuing_in;                          // policy, line
  std::map<std::string, std::pair<std::string, int64_t>> port_queuing_in;  // port -> policy, line
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
    stack.emplace_back(l.indent, w);
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
        cfg.skipped.push_back({l.number, std::string(l.text), "not a QoS statement this tool reads (nxos)"});
      continue;
    }
    if (is(top, {"class-map", "type", "qos"}) && top.size() >= 5 && is(w, {"match", "dscp"}) &&
        w.size() >= 3) {
      std::string list;
      for (size_t i = 2; i < w.size(); ++i) list += w[i] + ",";
      for (int d : ParseIntList(list, 0, 63, {file, l.number, "class-map." + top.back() + ".dscp"},
                                "DSCP 0-63"))
        class_dscp[top.back()].insert(d);
    } else if (is(top, {"class-map", "type", "qos"}) && top.size() >= 4 &&
               is(w, {"match", "cos"}) && w.size() >= 3) {
      std::string list;
      for (size_t i = 2; i < w.size(); ++i) list += w[i] + ",";
      for (int c : ParsePriorityList(list, {file, l.number, "class-map." + top.back() + ".cos"}))
        class_cos[top.back()].insert(c);
    } else if ((is(top, {"class-map", "type", "queuing"}) ||
                is(top, {"class-map", "type", "network-qos"})) &&
               top.size() >= 4 && is(w, {"match", "qos-group"}) && w.size() >= 3) {
      const int g = ParsePriority(w[2], {file, l.number, "class-map." + top.back() + ".qos-group"});
      (top[2] == "queuing" ? queuing_class_group : nq_class_group)[top.back()] = g;
    } else if (is(top, {"policy-map", "type", "qos"}) && top.size() >= 4 &&
               is(w, {"set", "qos-group"}) && w.size() >= 3 && parent.size() >= 2 &&
               parent[0] == "class") {
      qos_pm[top[3]][parent.back()] =
          ParsePriority(w[2], {file, l.number, "policy-map." + top[3] + ".qos-group"});
    } else if (is(top, {"policy-map", "type", "queuing"}) && top.size() >= 4 &&
               parent.size() >= 2 && parent[0] == "class") {
      QueuingPolicy& pol = queuing[top[3]];
      std::string field = "policy-map." + top[3] + "." + parent.back();
      // An ingress class's pause buffer (bytes); which priority it is for is
      // resolved once every policy is read.
      if (w[0] == "pause") {
        std::optional<LosslessPg> pg = ReadPauseBuffer(w, w.size(), file, l.number, field);
        if (!pg) {
          cfg.skipped.push_back({l.number, std::string(l.text),
                                 "pause statement without a pause-threshold not read (nxos "
                                 "reads pause buffer-size B pause-threshold P "
                                 "resume-threshold R)"});
          continue;
        }
        pg->source = "queuing input " + top[3] + " " + parent.back() + " pause buffer";
        pol.pause.push_back({parent.back(), l.number, std::string(l.text), *pg});
        continue;
      }
      pol.statements.emplace_back(l.number, l.text);
      int q = QueueOfClass(parent.back());
      if (q < 0) {
        auto named = queuing_class_group.find(parent.back());
        if (named != queuing_class_group.end()) q = named->second;
      }
      if (q < 0) continue;
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
      const std::string field = "policy-map." + top[3] + "." + parent.back();
      size_t pfc_cos = 0;
      for (size_t i = 1; i < w.size(); ++i)
        if (w[i] == "pfc-cos") pfc_cos = i;
      NqPause np{parent.back(), l.number, std::string(l.text), std::nullopt, std::nullopt};
      if (pfc_cos > 0 && pfc_cos + 1 < w.size()) {
        std::string list;
        for (size_t i = pfc_cos + 1; i < w.size(); ++i) list += w[i] + ",";
        np.pfc_cos = ParsePriorityList(list, {file, l.number, field + ".pfc-cos"});
        // pause buffer-size B pause-threshold P resume-threshold R (bytes).
        np.pg = ReadPauseBuffer(w, pfc_cos, file, l.number, field);
      } else if (is(w, {"pause", "no-drop"})) {
        np.pg = ReadPauseBuffer(w, w.size(), file, l.number, field);
      } else {
        cfg.skipped.push_back({l.number, std::string(l.text),
                               "network-qos pause statement not read (nxos reads pause pfc-cos N "
                               "and pause no-drop)"});
        continue;
      }
      if (np.pg) np.pg->source = "network-qos " + top[3] + " " + parent.back() + " pause buffer";
      nq[top[3]].push_back(np);
    } else if (is(top, {"system", "qos"}) && is(w, {"service-policy", "type"}) && w.size() >= 4) {
      if (w[2] == "network-qos") sys_nq = w.back();
      if (w[2] == "queuing" && w[3] == "output") sys_queuing = w.back();
      if (w[2] == "queuing" && w[3] == "input" && w.size() >= 5) sys_queuing_in = {w[4], l.number};
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
      } else if (is(w, {"service-policy", "type", "queuing", "input"}) && w.size() >= 5) {
        port_queuing_in[p.name] = {w[4], l.number};
      } else if (!is(w, {"service-policy"})) {
        cfg.skipped.push_back({l.number, std::string(l.text), "interface statement not read (nxos)"});
      }
    }
  }
  // Ingress queuing policies: the ones applied as input, and any policy that
  // carries a pause buffer (Cisco: an input queuing policy cannot also carry
  // priority or bandwidth). The others are output (egress) policies.
  std::set<std::string> applied_in;
  if (!sys_queuing_in.first.empty()) applied_in.insert(sys_queuing_in.first);
  for (const auto& [port, in] : port_queuing_in) applied_in.insert(in.first);
  std::map<std::string, QueuingPolicy> output;
  for (const auto& [name, pol] : queuing)
    if (!applied_in.count(name) && pol.pause.empty()) output[name] = pol;
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
  pick(sys_queuing, output, "queuing");
  pick(sys_qos, qos_pm, "qos");
  // The input states ECN when it has an output policy (a queuing policy
  // without ECN then has it off).
  cfg.ecn_stated = !output.empty() || queuing.count(sys_queuing) > 0;
  if (!sys_nq.empty() && !nq.count(sys_nq))
    throw InputError(
        {file, FindLine(text, sys_nq), "system.qos"},
        "network-qos policy " + QuoteForMessage(sys_nq) + " is applied but not defined");

  // The no-drop CoS values, by qos-group where the class names one, from the
  // applied network-qos policy.
  std::set<int> cos;
  std::map<int, std::set<int>> nodrop_cos;  // qos-group -> CoS
  std::map<int, LosslessPg> nq_pgs;         // CoS -> buffer of the network-qos form
  auto nq_group = [&](const std::string& cls) {
    int g = QueueOfClass(cls);
    auto named = nq_class_group.find(cls);
    return g >= 0 ? g : named == nq_class_group.end() ? -1 : named->second;
  };
  // CoS values the applied qos (classification) policy maps to qos-group g.
  auto cos_of_group = [&](int g) {
    std::set<int> out;
    if (sys_qos.empty()) return out;
    for (const auto& [cls, group] : qos_pm[sys_qos])
      if (group == g && class_cos.count(cls))
        out.insert(class_cos[cls].begin(), class_cos[cls].end());
    return out;
  };
  if (!sys_nq.empty()) {
    for (const NqPause& np : nq[sys_nq]) {
      const int g = nq_group(np.cls);
      std::set<int> c;
      if (np.pfc_cos) {
        c = *np.pfc_cos;
      } else if (g < 0) {
        cfg.skipped.push_back(
            {np.line, np.text,
             "pause no-drop in network-qos class " + np.cls +
                 " not read: no qos-group for the class (expected a class named like c-8q-nq3, "
                 "or a class-map type network-qos " +
                 np.cls + " with match qos-group N)",
             /*unreadable=*/true});
        continue;
      } else {
        c = cos_of_group(g);
        if (c.empty()) {
          c = {g};
          if (QueueOfClass(np.cls) < 0)
            cfg.notes.push_back("no-drop class " + np.cls + " (qos-group " + std::to_string(g) +
                                "): no 'match cos' maps a CoS to qos-group " + std::to_string(g) +
                                "; CoS " + std::to_string(g) + " taken as its PFC priority");
        }
      }
      cos.insert(c.begin(), c.end());
      if (g >= 0) nodrop_cos[g].insert(c.begin(), c.end());
      if (np.pg)
        for (int x : c) nq_pgs[x] = *np.pg;
    }
  }
  // The pause buffers of each ingress queuing policy that is applied, by CoS;
  // what cannot be placed is listed once, with its line.
  std::map<std::string, std::map<int, LosslessPg>> in_pgs;
  for (const std::string& name : applied_in) {
    auto def = queuing.find(name);
    if (def == queuing.end()) {
      cfg.notes.push_back("ingress queuing policy " + name + " is applied but not defined");
      continue;
    }
    std::map<int, LosslessPg>& out = in_pgs[name];
    // A policy applied both ways is read as the output one too.
    if (name != sys_queuing)
      for (const auto& [line, statement] : def->second.statements)
        cfg.skipped.push_back({line, statement,
                               "statement of ingress queuing policy " + name +
                                   " not read (nxos reads the pause buffers of an input policy)"});
    for (const PauseBuffer& pb : def->second.pause) {
      int g = QueueOfInputClass(pb.cls);
      auto named = queuing_class_group.find(pb.cls);
      if (g < 0 && named != queuing_class_group.end()) g = named->second;
      if (g < 0) {
        cfg.skipped.push_back(
            {pb.line, pb.text,
             "pause buffer of ingress queuing class " + pb.cls + " (policy " + name +
                 ") not read: no qos-group for the class (expected c-in-8q-qN or c-in-qN, or a "
                 "class-map type queuing " +
                 pb.cls + " with match qos-group N)",
             /*unreadable=*/true});
        continue;
      }
      auto c = nodrop_cos.find(g);
      if (c == nodrop_cos.end() || c->second.empty()) {
        cfg.skipped.push_back({pb.line, pb.text,
                               "pause buffer of ingress queuing class " + pb.cls + " (policy " +
                                   name + ", qos-group " + std::to_string(g) +
                                   ") not used: qos-group " + std::to_string(g) +
                                   " is not a no-drop class of the applied network-qos policy" +
                                   (sys_nq.empty() ? " (none is applied)" : " " + sys_nq)});
        continue;
      }
      for (int x : c->second) out[x] = pb.pg;
      cfg.notes.push_back("ingress queuing policy " + name + " class " + pb.cls + " (qos-group " +
                          std::to_string(g) + ", no-drop CoS " + Join(c->second) +
                          "): pause buffer read as the PFC trigger, XON and headroom of the "
                          "ports it applies to");
    }
  }
  for (const auto& [name, pol] : queuing) {
    if (applied_in.count(name) || pol.pause.empty()) continue;
    for (const auto& [line, statement] : pol.statements)
      cfg.skipped.push_back({line, statement,
                             "statement of queuing policy " + name +
                                 " (it has pause buffers: an input policy) not read"});
    cfg.notes.push_back("ingress queuing policy " + name +
                        " is defined but not applied (no 'service-policy type queuing input " +
                        name + "'): its pause buffers are not used");
    for (const PauseBuffer& pb : pol.pause)
      cfg.skipped.push_back({pb.line, pb.text,
                             "pause buffer of queuing policy " + name +
                                 ", which no 'service-policy type queuing input' applies: not "
                                 "used"});
  }
  std::stable_sort(cfg.skipped.begin(), cfg.skipped.end(),
                   [](const SkippedLine& a, const SkippedLine& b) { return a.line < b.line; });

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
    cfg.notes.emplace_back(
        "no network-qos policy or 'system qos' block in the input: which "
        "classes are no-drop (PFC) is not stated");
  // A port's lossless buffers: the network-qos values, overridden by those of
  // the ingress queuing policy applied to the port (else the system one).
  auto buffers = [&](const std::string& port) {
    std::map<int, LosslessPg> pgs = sys_nq.empty() ? std::map<int, LosslessPg>{} : nq_pgs;
    auto own = port_queuing_in.find(port);
    const std::string& in = own != port_queuing_in.end() ? own->second.first : sys_queuing_in.first;
    if (!in.empty())
      for (const auto& [c, pg] : in_pgs[in])
        if (cos.count(c)) pgs[c] = pg;
    return pgs;
  };
  for (PortQos& p : ports) {
    auto m = port_mode.find(p.name);
    std::string mode = m == port_mode.end() ? "auto" : m->second;
    p.pfc_stated = nq_known;
    if (mode != "off") p.pfc_priorities = cos;
    if (mode != "off") p.pgs = buffers(p.name);
    p.ecn = qp.ecn;
    if (!p.pfc_watchdog && global_wd) p.pfc_watchdog = global_wd;
    if (m != port_mode.end() || p.link_pause || port_queuing_in.count(p.name) || p.name == "*" ||
        ports.size() == 1)
      cfg.ports.push_back(p);
  }
  if (cfg.ports.empty()) {
    PortQos all;
    all.name = "*";
    all.pfc_stated = nq_known;
    all.pfc_priorities = cos;
    all.pgs = buffers("*");
    all.ecn = qp.ecn;
    all.pfc_watchdog = global_wd;
    cfg.ports.push_back(all);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
