// Juniper Junos (QFX) `class-of-service` configuration, in braces or as `set`
// lines (Junos OS Traffic Management User Guide for the QFX Series):
//   forwarding-classes { class NO-LOSS queue-num 3 no-loss pfc-priority 3; }
//   congestion-notification-profile cnp {
//       input { ieee-802.1 { code-point 011 { pfc; } } }      (or input dscp code-point ...)
//       pfc-watchdog;
//   }
//   classifiers { dscp d1 { forwarding-class NO-LOSS { loss-priority low code-points [ 011010 ]; }
//   } } schedulers { s1 { explicit-congestion-notification; priority strict-high; } }
//   scheduler-maps { sm1 { forwarding-class NO-LOSS scheduler s1; } }
//   drop-profiles { dp1 { interpolate { fill-level [ 20 60 ]; drop-probability [ 0 100 ]; } } }
//   interfaces { et-0/0/1 { congestion-notification-profile cnp; scheduler-map sm1; } }
// Braces are flattened into statement paths, so both forms read the same.
// ECN fill levels are percentages of the queue's buffer: reported in a note,
// not converted to bytes. With DSCP-based PFC the pause priority is the
// `pfc-priority` of the no-loss forwarding class.
#include <map>
#include <set>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

struct Statement {
  std::vector<std::string> path;  // words below class-of-service
  int64_t line = 0;
  std::string raw;
};

struct ForwardingClass {
  int queue = -1;
  bool no_loss = false;
  std::optional<int> pfc_priority;
};

int ParseBits(const std::string& bits, int max, const Location& where) {
  if (bits.empty() || bits.size() > 6 || bits.find_first_not_of("01") != std::string::npos)
    throw InputError(where, Expected("a binary code point like 011", bits));
  int v = std::stoi(bits, nullptr, 2);
  if (v > max) throw InputError(where, Expected("a code point up to " + std::to_string(max), bits));
  return v;
}

}  // namespace

QosConfig ParseJunos(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::vector<Statement> stmts;
  std::vector<std::vector<std::string>> stack;
  bool in_comment = false;
  for (const TextLine& l : SplitLines(text)) {
    std::string t(Trim(l.text));
    // Comments: /* ... */ (possibly over several lines) and '#'.
    std::string clean;
    for (size_t i = 0; i < t.size(); ++i) {
      if (in_comment) {
        if (t.compare(i, 2, "*/") == 0) {
          in_comment = false;
          ++i;
        }
        continue;
      }
      if (t.compare(i, 2, "/*") == 0) {
        in_comment = true;
        ++i;
        continue;
      }
      if (t[i] == '#') break;
      clean += t[i];
    }
    std::vector<std::string> w = Words(clean);
    if (w.empty()) continue;
    if (w[0] == "set" || w[0] == "deactivate" || w[0] == "delete") {
      if (w[0] != "set") {
        cfg.skipped.push_back({l.number, std::string(l.text), "'" + w[0] + "' line not applied (junos)"});
        continue;
      }
      w.erase(w.begin());
      for (std::string& x : w)
        if (!x.empty() && x.back() == ';') x.pop_back();
      stmts.push_back({w, l.number, std::string(l.text)});
      continue;
    }
    if (w.size() == 1 && w[0] == "}") {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    bool opens = w.back() == "{";
    if (opens) w.pop_back();
    if (!w.empty() && w.back().size() > 1 && w.back().back() == ';') w.back().pop_back();
    if (!w.empty() && w.back() == ";") w.pop_back();
    std::vector<std::string> path;
    for (const auto& level : stack) path.insert(path.end(), level.begin(), level.end());
    bool inactive = false;
    for (const auto& level : stack)
      if (!level.empty() && level.front() == "inactive:") inactive = true;
    if (!w.empty() && w.front() == "inactive:") inactive = true;
    if (opens) {
      stack.push_back(w);
      continue;
    }
    if (inactive) continue;
    path.insert(path.end(), w.begin(), w.end());
    stmts.push_back({path, l.number, std::string(l.text)});
  }

  // Statements under class-of-service; the "class-of-service" head is optional
  // (a pasted `[edit class-of-service]` level).
  std::map<std::string, ForwardingClass> fcs;
  std::map<std::string, std::set<int>> cnp_prio;  // profile -> IEEE priorities with PFC
  std::map<std::string, bool> cnp_dscp;           // profile uses DSCP-based PFC
  std::map<std::string, bool> cnp_watchdog;
  std::map<std::string, std::map<int, std::string>> classifier;  // name -> dscp -> fc
  std::map<std::string, bool> sched_ecn;
  std::map<std::string, bool> sched_strict;
  std::map<std::string, std::map<std::string, std::string>> smap;  // map -> fc -> scheduler
  std::map<std::string, std::string> drop_levels;
  std::map<std::string, std::pair<double, double>> drop_pct;  // first and last fill level
  std::map<std::string, int64_t> drop_line;                   // the fill-level statement's line
  std::map<std::string, double> drop_pmax;  // highest drop-probability of an interpolate profile
  std::map<std::string, std::string> sched_dp;                        // scheduler -> drop profile
  std::map<std::string, std::pair<std::string, std::string>> ifaces;  // name -> (cnp, smap)
  std::vector<std::string> if_order;
  bool any = false;
  for (Statement& s : stmts) {
    std::vector<std::string>& p = s.path;
    if (!p.empty() && p[0] == "class-of-service") {
      p.erase(p.begin());
    } else if (!p.empty() && p[0] != "forwarding-classes" &&
               p[0] != "congestion-notification-profile" && p[0] != "classifiers" &&
               p[0] != "schedulers" && p[0] != "scheduler-maps" && p[0] != "drop-profiles" &&
               p[0] != "interfaces" && p[0] != "shared-buffer") {
      cfg.skipped.push_back({s.line, s.raw, "not a class-of-service statement (junos)"});
      continue;
    }
    auto has = [&](const std::string& word) {
      for (const auto& x : p)
        if (x == word) return true;
      return false;
    };
    auto after = [&](const std::string& word) -> std::string {
      for (size_t i = 0; i + 1 < p.size(); ++i)
        if (p[i] == word) return p[i + 1];
      return "";
    };
    Location where{file, s.line, "class-of-service." + (p.empty() ? std::string() : p[0])};
    if (p.size() >= 3 && p[0] == "forwarding-classes" && p[1] == "class") {
      ForwardingClass& fc = fcs[p[2]];
      if (std::string q = after("queue-num"); !q.empty()) fc.queue = ParsePriority(q, where);
      if (has("no-loss")) fc.no_loss = true;
      if (std::string q = after("pfc-priority"); !q.empty())
        fc.pfc_priority = ParsePriority(q, where);
      any = true;
    } else if (p.size() >= 2 && p[0] == "congestion-notification-profile") {
      const std::string& name = p[1];
      if (has("pfc-watchdog")) cnp_watchdog[name] = true;
      if (has("input") && has("pfc")) {
        std::string cp = after("code-point");
        if (has("ieee-802.1") && !cp.empty()) cnp_prio[name].insert(ParseBits(cp, 7, where));
        if (has("dscp")) cnp_dscp[name] = true;
      }
      cnp_prio[name];
      any = true;
    } else if (p.size() >= 4 && p[0] == "classifiers" && p[1] == "dscp") {
      std::string fc = after("forwarding-class");
      bool in_list = false;
      for (const std::string& x : p) {
        if (x == "code-points") {
          in_list = true;
          continue;
        }
        if (!in_list || x == "[" || x == "]") continue;
        if (x.size() == 6 && x.find_first_not_of("01") == std::string::npos)
          classifier[p[2]][ParseBits(x, 63, where)] = fc;
      }
      any = true;
    } else if (p.size() >= 3 && p[0] == "schedulers") {
      if (has("explicit-congestion-notification")) sched_ecn[p[1]] = true;
      if (std::string dp = after("drop-profile"); !dp.empty()) sched_dp[p[1]] = dp;
      if (after("priority") == "strict-high") sched_strict[p[1]] = true;
      sched_ecn[p[1]];
      any = true;
    } else if (p.size() >= 5 && p[0] == "scheduler-maps" && p[2] == "forwarding-class") {
      smap[p[1]][p[3]] = after("scheduler");
      any = true;
    } else if (p.size() >= 3 && p[0] == "drop-profiles" &&
               (has("fill-level") || has("drop-probability"))) {
      // `interpolate { fill-level [ 45 90 ]; drop-probability [ 0 100 ]; }` (each list
      // on its own line in brace form) or one `set ... drop-probability N` per point.
      // The probability's top is the marking probability at Kmax (ECN marks where the
      // profile would drop).
      bool in_prob = false;
      for (const std::string& x : p) {
        if (x == "drop-probability") {
          in_prob = true;
          continue;
        }
        if (!in_prob || x == "[") continue;
        if (x == "]" || x == "fill-level") break;
        double v = ParseDecimal(x, where, "a drop probability in percent");
        drop_pmax[p[1]] = std::max(drop_pmax.count(p[1]) ? drop_pmax[p[1]] : v, v);
      }
      if (!has("fill-level")) continue;
      std::string levels;
      bool in_list = false;
      for (const std::string& x : p) {
        if (x == "fill-level") {
          in_list = true;
          continue;
        }
        if (!in_list || x == "[") continue;
        if (x == "]" || x == "drop-probability") break;
        levels += (levels.empty() ? "" : "/") + x;
      }
      drop_levels[p[1]] = levels;
      std::vector<double> v;
      for (size_t a = 0, b = 0; a < levels.size(); a = b + 1) {
        b = levels.find('/', a);
        if (b == std::string::npos) b = levels.size();
        v.push_back(ParseDecimal(levels.substr(a, b - a), where, "a fill level in percent"));
      }
      if (!v.empty()) {
        drop_pct[p[1]] = {v.front(), v.back()};
        drop_line[p[1]] = s.line;
      }
    } else if (p.size() >= 3 && p[0] == "interfaces") {
      if (!ifaces.count(p[1])) if_order.push_back(p[1]);
      auto& [cnp, sm] = ifaces[p[1]];
      if (p[2] == "congestion-notification-profile" && p.size() >= 4) cnp = p[3];
      if (p[2] == "scheduler-map" && p.size() >= 4) sm = p[3];
      any = true;
    } else if (!p.empty() && p[0] == "shared-buffer") {
      continue;
    } else {
      cfg.skipped.push_back({s.line, s.raw, "class-of-service statement not read (junos)"});
    }
  }
  if (!any) return cfg;

  // Queues, priorities and DSCPs.
  for (const auto& [name, fc] : fcs)
    if (fc.pfc_priority && fc.queue >= 0) cfg.priority_to_queue[*fc.pfc_priority] = fc.queue;
  if (!classifier.empty()) {
    for (const auto& [dscp, fc] : classifier.begin()->second)
      if (auto it = fcs.find(fc); it != fcs.end() && it->second.queue >= 0)
        cfg.dscp_to_queue[dscp] = it->second.queue;
  }
  auto pfc_of = [&](const std::string& cnp) {
    std::set<int> prios = cnp_prio[cnp];
    if (cnp_dscp[cnp])
      for (const auto& [name, fc] : fcs)
        if (fc.no_loss) prios.insert(fc.pfc_priority.value_or(fc.queue));
    return prios;
  };
  auto ecn_of = [&](const std::string& sm, PortQos& q) {
    auto m = smap.find(sm);
    if (m == smap.end()) return;
    for (const auto& [fc, sched] : m->second) {
      auto f = fcs.find(fc);
      if (f == fcs.end() || f->second.queue < 0) continue;
      if (sched_strict[sched]) cfg.scheduling[f->second.queue] = Scheduling::kStrict;
      EcnQueue e;
      e.enabled = sched_ecn[sched];
      e.source = "scheduler " + sched;
      if (auto d = drop_pct.find(sched_dp[sched]); d != drop_pct.end()) {
        e.kmin_percent = d->second.first;
        e.kmax_percent = d->second.second;
        e.source += ", drop profile " + d->first;
        e.line = drop_line[d->first];
      }
      if (auto d = drop_pmax.find(sched_dp[sched]); d != drop_pmax.end())
        e.pmax_percent = d->second;
      q.ecn[f->second.queue] = e;
    }
  };
  cfg.ecn_stated = !smap.empty();
  for (const auto& [dp, levels] : drop_levels)
    cfg.notes.push_back("drop profile " + dp + " marks between fill levels " + levels +
                        " % of the queue's buffer (a share of the queue's buffer, not bytes)");
  for (const std::string& name : if_order) {
    const auto& [cnp, sm] = ifaces[name];
    if (cnp.empty() && sm.empty()) continue;
    PortQos q;
    q.name = name;
    q.pfc_stated = true;
    if (!cnp.empty()) q.pfc_priorities = pfc_of(cnp);
    if (!q.pfc_priorities.empty()) q.pfc_watchdog = cnp_watchdog[cnp];
    ecn_of(sm, q);
    cfg.ports.push_back(q);
  }
  if (cfg.ports.empty()) {
    // Profiles defined but applied to no interface in the input: check the only ones.
    PortQos q;
    q.name = "*";
    q.pfc_stated = true;
    if (cnp_prio.size() == 1) q.pfc_priorities = pfc_of(cnp_prio.begin()->first);
    if (!q.pfc_priorities.empty()) q.pfc_watchdog = cnp_watchdog[cnp_prio.begin()->first];
    if (smap.size() == 1) ecn_of(smap.begin()->first, q);
    if (!cnp_prio.empty() || !smap.empty())
      cfg.notes.emplace_back(
          "no interface in the input applies the class-of-service profiles; "
          "they are checked as if applied");
    cfg.ports.push_back(q);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
