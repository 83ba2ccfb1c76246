// Dell Enterprise SONiC `sonic-cli` running-configuration:
//   qos wred-policy ROCE
//    green minimum-threshold 2048 maximum-threshold 12480 drop-probability 15
//    ecn green
//   qos scheduler-policy ROCE
//    queue 6
//     type strict
//   qos map dscp-tc ROCE
//    dscp 24,26 traffic-class 3
//   qos map tc-queue ROCE            (traffic-class T queue Q)
//   qos map pfc-priority-queue ROCE  (pfc-priority P queue Q)
//   interface Eth1/1
//    speed 400000
//    queue 3 wred-policy ROCE
//    scheduler-policy ROCE
//    qos-map dscp-tc ROCE
//    priority-flow-control priority 3
//    priority-flow-control watchdog on detect-time 200
// Indentation is optional (documents often print it flat): a sub-line belongs
// to the last `qos ...` or `interface ...` header; `!` closes it. WRED
// thresholds are in KB (Dell Enterprise SONiC QoS guide), read as 1,000 bytes.
// A named map applies when an interface refers to it; with no reference the
// only map of its kind is taken (noted).
#include <map>
#include <set>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

struct DellPort {
  PortQos q;
  std::map<int, std::string> queue_wred;    // queue -> wred-policy
  std::string scheduler;                    // scheduler-policy
  std::map<std::string, std::string> maps;  // kind -> name
  bool watchdog_on = false;
  bool qos = false;  // the interface carries any QoS statement
};

}  // namespace

QosConfig ParseDellSonic(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::map<std::string, EcnQueue> wred;
  std::map<std::string, std::map<int, Scheduling>> schedulers;
  // kind ("dscp-tc", "tc-queue", "pfc-priority-queue") -> name -> key -> value
  std::map<std::string, std::map<std::string, std::map<int, int>>> maps;
  std::vector<DellPort> ports;
  enum class Ctx { kNone, kWred, kScheduler, kMap, kInterface, kOther };
  Ctx ctx = Ctx::kNone;
  std::string name;
  std::string map_kind;
  int sched_queue = -1;
  bool any = false;
  auto skip = [&](const TextLine& l, const char* why) {
    cfg.skipped.push_back({l.number, std::string(l.text), why});
  };
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty()) continue;
    if (t.front() == '!') {
      if (ctx != Ctx::kScheduler) ctx = Ctx::kNone;  // "!" also separates queues of a scheduler
      continue;
    }
    std::vector<std::string> w = Words(t);
    Location where{file, l.number, ""};
    if (w.size() >= 3 && w[0] == "qos" && w[1] == "wred-policy") {
      ctx = Ctx::kWred;
      name = w[2];
      wred[name].source = "wred-policy " + name;
      wred[name].line = l.number;
      any = true;
      continue;
    }
    if (w.size() >= 3 && w[0] == "qos" && w[1] == "scheduler-policy") {
      ctx = Ctx::kScheduler;
      name = w[2];
      schedulers[name];
      sched_queue = -1;
      any = true;
      continue;
    }
    if (w.size() >= 4 && w[0] == "qos" && w[1] == "map") {
      ctx = Ctx::kMap;
      map_kind = w[2];
      name = w[3];
      maps[map_kind][name];
      any = true;
      continue;
    }
    if (w.size() >= 2 && w[0] == "interface") {
      ctx = Ctx::kInterface;
      DellPort p;
      p.q.name = w.size() >= 3 ? w[1] + w[2] : w[1];
      p.q.line = l.number;
      ports.push_back(p);
      continue;
    }
    switch (ctx) {
      case Ctx::kWred: {
        EcnQueue& e = wred[name];
        std::string field = "wred-policy." + name;
        if (w[0] == "green") {
          for (size_t i = 1; i + 1 < w.size(); ++i) {
            if (w[i] == "minimum-threshold")
              e.kmin = ParseAmount(w[i + 1], "kb", {file, l.number, field + ".minimum-threshold"});
            if (w[i] == "maximum-threshold")
              e.kmax = ParseAmount(w[i + 1], "kb", {file, l.number, field + ".maximum-threshold"});
            if (w[i] == "drop-probability")
              e.pmax_percent = ParseDecimal(w[i + 1], {file, l.number, field + ".drop-probability"},
                                            "a percentage");
          }
        } else if (w[0] == "ecn") {
          e.enabled = w.size() >= 2 && w[1] != "none";
        } else {
          skip(l, "wred-policy statement not read (dell-sonic)");
        }
        break;
      }
      case Ctx::kScheduler:
        if (w[0] == "queue" && w.size() >= 2) {
          sched_queue =
              ParsePriority(w[1], {file, l.number, "scheduler-policy." + name + ".queue"});
        } else if (w[0] == "type" && w.size() >= 2 && sched_queue >= 0) {
          schedulers[name][sched_queue] =
              text::ToLower(w[1]) == "strict" ? Scheduling::kStrict : Scheduling::kWeighted;
        } else if (w[0] != "weight" && w[0] != "meter-type" && w[0] != "pir" && w[0] != "cir") {
          skip(l, "scheduler-policy statement not read (dell-sonic)");
        }
        break;
      case Ctx::kMap: {
        auto& m = maps[map_kind][name];
        std::string field = "qos.map." + map_kind + "." + name;
        // "dscp 24,26 traffic-class 3", "traffic-class 3 queue 3", "pfc-priority 3 queue 3",
        // "traffic-class 3 priority-group 3", "dot1p 3 traffic-class 3", "pfc-priority 3 pg 3".
        if (w.size() == 4) {
          int hi = w[0] == "dscp" ? 63 : 7;
          int to = ParsePriority(w[3], {file, l.number, field});
          for (int from : ParseIntList(w[1], 0, hi, {file, l.number, field}, "a value list"))
            m[from] = to;
        } else {
          skip(l, "map entry not read (dell-sonic)");
        }
        break;
      }
      case Ctx::kInterface: {
        DellPort& p = ports.back();
        std::string field = "interface." + p.q.name;
        if (w[0] == "priority-flow-control" && w.size() >= 3 && w[1] == "priority") {
          p.q.pfc_priorities.insert(ParsePriority(w[2], {file, l.number, field + ".pfc"}));
          p.qos = true;
        } else if (w[0] == "priority-flow-control" && w.size() >= 3 && w[1] == "watchdog") {
          if (w[2] == "on") p.watchdog_on = true;
          if (w[2] == "off") p.watchdog_on = false;
          p.qos = true;
        } else if (w[0] == "queue" && w.size() >= 4 && w[2] == "wred-policy") {
          p.queue_wred[ParsePriority(w[1], {file, l.number, field + ".queue"})] = w[3];
          p.qos = true;
        } else if (w[0] == "scheduler-policy" && w.size() >= 2) {
          p.scheduler = w[1];
          p.qos = true;
        } else if (w[0] == "qos-map" && w.size() >= 3) {
          p.maps[w[1]] = w[2];
          p.qos = true;
        } else if (w[0] == "flowcontrol" && w.size() >= 3) {
          p.q.link_pause = p.q.link_pause.value_or(false) || w[2] == "on";
          p.qos = true;
        } else if (w[0] == "speed" && w.size() >= 2) {
          int64_t mbps = ParseInt(w[1], {file, l.number, field + ".speed"}, "a speed in Mb/s");
          if (mbps > 0) p.q.speed_gbps = mbps >= 1000 ? mbps / 1000 : mbps;
        } else {
          skip(l, "interface statement not read (dell-sonic)");
        }
        break;
      }
      case Ctx::kNone:
      case Ctx::kOther:
        skip(l, "not a QoS statement this tool reads (dell-sonic)");
        break;
    }
  }
  if (!any && ports.empty()) return cfg;

  // The map of a kind for the first QoS port, else the only one defined.
  const DellPort* first = nullptr;
  for (const DellPort& p : ports)
    if (p.qos) {
      first = &p;
      break;
    }
  auto map_of = [&](const std::string& kind) -> std::map<int, int> {
    auto k = maps.find(kind);
    if (k == maps.end() || k->second.empty()) return {};
    if (first) {
      auto ref = first->maps.find(kind);
      if (ref != first->maps.end()) {
        auto it = k->second.find(ref->second);
        if (it != k->second.end()) return it->second;
        cfg.notes.push_back("qos map " + kind + " " + ref->second + " is not in the input");
        return {};
      }
    }
    if (k->second.size() == 1) {
      cfg.notes.push_back("qos map " + kind + " " + k->second.begin()->first +
                          " taken as applied (no interface refers to a " + kind + " map)");
      return k->second.begin()->second;
    }
    return {};
  };
  std::map<int, int> tc_queue = map_of("tc-queue");
  std::map<int, int> prio_queue = map_of("pfc-priority-queue");
  cfg.priority_to_queue = prio_queue.empty() ? tc_queue : prio_queue;
  for (const auto& [dscp, tc] : map_of("dscp-tc")) {
    auto q = tc_queue.find(tc);
    cfg.dscp_to_queue[dscp] = q == tc_queue.end() ? tc : q->second;
  }
  if (first && !first->scheduler.empty()) {
    auto s = schedulers.find(first->scheduler);
    if (s != schedulers.end()) cfg.scheduling = s->second;
  } else if (schedulers.size() == 1) {
    cfg.scheduling = schedulers.begin()->second;
  }
  cfg.ecn_stated = true;
  for (DellPort& p : ports) {
    if (!p.qos) continue;
    p.q.pfc_stated = true;
    if (!p.q.pfc_priorities.empty()) p.q.pfc_watchdog = p.watchdog_on;
    for (const auto& [queue, policy] : p.queue_wred) {
      auto it = wred.find(policy);
      if (it == wred.end()) {
        cfg.notes.push_back("interface " + p.q.name + " queue " + std::to_string(queue) +
                            " refers to wred-policy " + policy + ", which is not in the input");
        continue;
      }
      p.q.ecn[queue] = it->second;
    }
    cfg.ports.push_back(p.q);
  }
  if (cfg.ports.empty()) {
    PortQos all;
    all.name = "*";
    all.line = 1;
    // Policies defined but applied to no interface in the input: check them as if applied.
    for (const auto& [n, e] : wred)
      if (e.enabled) all.ecn[cfg.QueueOf(3)] = e;
    if (!wred.empty())
      cfg.notes.emplace_back(
          "no interface applies the QoS policies; they are checked as if applied "
          "to the RoCE queue");
    cfg.ports.push_back(all);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
