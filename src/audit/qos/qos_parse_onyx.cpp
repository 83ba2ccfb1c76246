// NVIDIA Onyx / MLNX-OS `show running-config`: flat lines such as
//   roce lossless
//   dcb priority-flow-control enable force
//   dcb priority-flow-control priority 3 enable
//   interface ethernet 1/1 dcb priority-flow-control mode on force
//   interface ethernet 1/1 traffic-class 3 congestion-control ecn minimum-absolute 150
//   maximum-absolute 1500 interface ethernet 1/1 traffic-class 6 dcb ets strict interface ethernet
//   1/1 flowcontrol receive on force interface ethernet 1/1 ingress-buffer iPort.pg3 map pool
//   iPool0 type lossless reserved 67 kilobytes shared alpha 2 xoff 56 kilobytes xon 18 kilobytes
//   interface ethernet 1/1 ingress-buffer iPort.pg3 bind switch-priority 3
//   pool iPool0 direction ingress size 8000 kilobytes type dynamic
// and the same inside "interface ethernet 1/1" ... "exit" blocks. ECN
// minimum/maximum-absolute are in KB. `roce` applies the documented defaults
// (PFC on priority 3, ECN on TC 3 at 150 / 1500 KB, CNP in TC 6 strict)
// unless lines override them. DSCP maps to switch priority DSCP/8 (default).
// In an ingress-buffer line, xoff is read as the PG headroom (as in SONiC
// profiles for the same ASICs) and "shared alpha" as the PFC trigger.
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <map>
#include <regex>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

struct OnyxPort {
  PortQos q;
  std::optional<bool> pfc_mode;
  std::map<int, int> pg_bind;  // pg -> switch priority
  std::map<int, LosslessPg> pg_buffers;
  std::map<int, std::string> pg_pool;
};

int64_t ParseSpeed(const std::string& s, const Location& where) {
  std::string v = text::ToLower(s);
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  if (i == 0 || i > 7) throw InputError(where, Expected("a speed like 100G", s));
  int64_t n = std::stoll(v.substr(0, i));
  return n >= 1000 ? n / 1000 : n;  // "100000" is Mb/s
}

bool IsUnitWord(const std::string& w) {
  static const std::set<std::string> kUnits = {
      "b",         "bytes", "kb",  "kbytes", "kilobytes", "mb", "mbytes",
      "megabytes", "kib",   "mib", "cells",  "k",         "m"};
  return kUnits.count(text::ToLower(w)) > 0;
}

// The amount after keyword index i: "xoff 18432" (bytes) or "xoff 56 kilobytes".
BufferAmount AmountAt(const std::vector<std::string>& w, size_t i, const Location& where) {
  if (i + 1 < w.size() && IsUnitWord(w[i + 1])) return ParseAmount(w[i], w[i + 1], where);
  return ParseAmount(w[i], "bytes", where);
}

}  // namespace

QosConfig ParseOnyx(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::optional<std::string> roce;
  bool pfc_global = false;
  std::set<int> pfc_prios;
  std::vector<std::string> order;
  std::map<std::string, OnyxPort> ports;
  std::map<std::string, BufferAmount> pools;
  std::string block_if;
  bool any = false;
  bool watchdog_global = false;
  std::set<std::string> lossless_pools;
  std::map<std::string, double> pool_percent;
  std::map<std::string, std::set<int>> pool_prios;
  static const std::regex kShowPort(R"(^Eth(\d+/\d+(?:/\d+)?):?$)");
  static const std::regex kShowPfcRow(R"(^Eth(\d+/\d+(/\d+)?)\s+\S+\s+(Enabled|Disabled)$)");
  std::string show_port;
  std::set<std::string> pause_only;  // ports known only from a Flow-control line
  bool config = false;               // a configuration line, not show output, was read
  auto port = [&](const std::string& name, int64_t line) -> OnyxPort& {
    auto it = ports.find(name);
    if (it == ports.end()) {
      order.push_back(name);
      OnyxPort p;
      p.q.name = name;
      p.q.line = line;
      it = ports.emplace(name, p).first;
    }
    return it->second;
  };
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty() || t.front() == '#') continue;
    std::vector<std::string> w = Words(t);
    Location where{file, l.number, ""};
    if (w[0] == "exit") {
      block_if.clear();
      continue;
    }
    if (w.size() == 3 && w[0] == "interface" && w[1] == "ethernet") {
      block_if = w[2];
      port(block_if, l.number);
      continue;
    }
    std::string ifname;
    size_t k = 0;
    if (w.size() > 3 && w[0] == "interface" && w[1] == "ethernet") {
      ifname = w[2];
      k = 3;
    } else if (!block_if.empty() && l.indent > 0) {
      ifname = block_if;
    } else {
      block_if.clear();
    }
    auto at = [&](size_t i) -> std::string { return k + i < w.size() ? w[k + i] : std::string(); };
    auto rest_has = [&](const std::string& word) {
      for (size_t i = k; i < w.size(); ++i)
        if (w[i] == word) return true;
      return false;
    };
    auto value_after = [&](const std::string& word) -> std::optional<size_t> {
      for (size_t i = k; i + 1 < w.size(); ++i)
        if (w[i] == word) return i + 1;
      return std::nullopt;
    };
    // `show dcb priority-flow-control` and the Flow-control line of `show
    // interfaces ethernet X`: show output, which says nothing about ECN.
    const std::string ts(t);
    if (t.find_first_not_of('-') == std::string_view::npos) continue;  // table rule
    if (std::smatch m; ifname.empty() && std::regex_match(ts, m, kShowPort)) {
      show_port = m[1].str();
      continue;
    }
    if (ifname.empty() && (StartsWith(t, "PFC:") || StartsWith(t, "Priority Enabled List:") ||
                           StartsWith(t, "Priority Disabled List:"))) {
      std::string v(Trim(t.substr(t.find(':') + 1)));
      if (StartsWith(t, "PFC:")) pfc_global = text::ToLower(v) == "enabled";
      if (StartsWith(t, "Priority Enabled List:"))
        for (const std::string& x : Words(v))
          pfc_prios.insert(ParsePriority(x, {file, l.number, "show.priority-enabled-list"}));
      any = true;
      continue;
    }
    if (ifname.empty() && w.size() >= 3 && w[0] == "Interface" && w[1] == "PFC") continue;
    if (std::smatch m; ifname.empty() && std::regex_match(ts, m, kShowPfcRow)) {
      port(m[1].str(), l.number).pfc_mode = m[3].str() == "Enabled";
      any = true;
      continue;
    }
    if (ifname.empty() && StartsWith(t, "Flow-control") && t.find(':') != std::string_view::npos) {
      std::string v = text::ToLower(Trim(t.substr(t.find(':') + 1)));
      const std::string name = show_port.empty() ? "*" : show_port;
      if (!ports.count(name)) pause_only.insert(name);
      OnyxPort& p = port(name, l.number);
      p.q.link_pause = v.find(" on") != std::string::npos;
      any = true;
      continue;
    }
    if (ifname.empty()) {
      if (w[0] == "roce") {
        roce = w.size() > 1 ? w[1] : "lossless";
        any = config = true;
      } else if (w.size() >= 3 && w[0] == "dcb" && w[1] == "priority-flow-control" &&
                 w[2] == "enable") {
        pfc_global = true;
        any = config = true;
      } else if (w.size() >= 3 && w[0] == "no" && w[1] == "dcb" &&
                 w[2] == "priority-flow-control") {
        pfc_global = false;
        any = config = true;
      } else if (w.size() >= 5 && w[0] == "dcb" && w[1] == "priority-flow-control" &&
                 w[2] == "priority") {
        int p = ParsePriority(w[3], {file, l.number, "dcb.priority-flow-control.priority"});
        if (w[4] == "enable") pfc_prios.insert(p);
        if (w[4] == "disable") pfc_prios.erase(p);
        any = config = true;
      } else if (w[0] == "pool" && w.size() >= 2) {
        if (auto i = value_after("size"))
          pools[w[1]] = AmountAt(w, *i, {file, l.number, "pool." + w[1] + ".size"});
        any = config = true;
      } else if (w.size() >= 3 && w[0] == "traffic" && w[1] == "pool") {
        // Onyx 3.9+: "traffic pool NAME type lossless", "traffic pool NAME memory percent P",
        // "traffic pool NAME map switch-priority P".
        if (value_after("type") && rest_has("lossless")) lossless_pools.insert(w[2]);
        if (auto i = value_after("percent"))
          pool_percent[w[2]] =
              ParseDecimal(w[*i], {file, l.number, "traffic.pool.percent"}, "a percentage");
        if (rest_has("switch-priority"))
          if (auto i = value_after("switch-priority"))
            for (int prio : ParsePriorityList(w[*i], {file, l.number, "traffic.pool.map"}))
              pool_prios[w[2]].insert(prio);
        any = config = true;
      } else if (w.size() >= 2 && w[0] == "dcb" && w[1] == "priority-flow-control" &&
                 rest_has("watchdog")) {
        watchdog_global = true;
        any = config = true;
      } else if (!(w[0] == "advanced" || w[0] == "enable" || w[0] == "configure" ||
                   w[0] == "configuration" || w[0] == "show")) {
        cfg.skipped.push_back({l.number, std::string(l.text), "not a QoS statement this tool reads (onyx)"});
      }
      continue;
    }
    OnyxPort& p = port(ifname, l.number);
    any = true;
    config = true;
    std::string field = "interface." + ifname;
    if (at(0) == "dcb" && at(1) == "priority-flow-control" && at(2) == "mode") {
      p.pfc_mode = at(3) == "on";
    } else if (at(0) == "traffic-class" && at(2) == "congestion-control") {
      int tc = ParsePriority(at(1), {file, l.number, field + ".traffic-class"});
      EcnQueue e;
      e.enabled = rest_has("ecn");
      e.line = l.number;
      e.source = "traffic-class " + at(1);
      if (auto i = value_after("minimum-absolute"))
        e.kmin = ParseAmount(w[*i], "kbytes", {file, l.number, field + ".minimum-absolute"});
      if (auto i = value_after("maximum-absolute"))
        e.kmax = ParseAmount(w[*i], "kbytes", {file, l.number, field + ".maximum-absolute"});
      if (auto i = value_after("minimum-relative"))
        e.kmin_percent =
            ParseDecimal(w[*i], {file, l.number, field + ".minimum-relative"}, "a percentage");
      if (auto i = value_after("maximum-relative"))
        e.kmax_percent =
            ParseDecimal(w[*i], {file, l.number, field + ".maximum-relative"}, "a percentage");
      p.q.ecn[tc] = e;
    } else if (at(0) == "traffic-class" && at(2) == "dcb" && at(3) == "ets") {
      int tc = ParsePriority(at(1), {file, l.number, field + ".traffic-class"});
      cfg.scheduling[tc] = at(4) == "strict" ? Scheduling::kStrict : Scheduling::kWeighted;
    } else if (at(0) == "flowcontrol" && (at(1) == "receive" || at(1) == "send")) {
      bool on = at(2) == "on";
      p.q.link_pause = p.q.link_pause.value_or(false) || on;
    } else if (at(0) == "speed" && !at(1).empty()) {
      p.q.speed_gbps = ParseSpeed(at(1), {file, l.number, field + ".speed"});
    } else if (at(0) == "ingress-buffer") {
      static const std::regex kPg(R"(iPort\.pg(\d))");
      std::smatch m;
      std::string pgname = at(1);
      if (!std::regex_match(pgname, m, kPg))
        throw InputError({file, l.number, field + ".ingress-buffer"},
                         Expected("iPort.pg0..7", pgname));
      int pg = std::stoi(m[1].str());
      if (at(2) == "bind" && at(3) == "switch-priority") {
        for (int prio : ParsePriorityList(at(4), {file, l.number, field + ".bind"}))
          p.pg_bind[prio] = pg;
      } else if (at(2) == "map" && at(3) == "pool") {
        LosslessPg b;
        b.line = l.number;
        b.source = "ingress-buffer " + pgname;
        p.pg_pool[pg] = at(4);
        b.pfc_trigger.pool_name = at(4);
        if (auto i = value_after("alpha"))
          b.pfc_trigger.alpha =
              ParseDecimal(w[*i], {file, l.number, field + ".alpha"}, "an alpha value");
        if (auto i = value_after("xoff"))
          b.headroom = AmountAt(w, *i, {file, l.number, field + ".xoff"});
        if (auto i = value_after("xon")) b.xon = AmountAt(w, *i, {file, l.number, field + ".xon"});
        if (rest_has("lossless")) {
          p.pg_buffers[pg] = b;
          lossless_pools.insert(at(4));
        }
      } else {
        cfg.skipped.push_back({l.number, std::string(l.text), "ingress-buffer statement not read (onyx)"});
      }
    } else if (at(0) == "pfc-wd" || (at(0) == "dcb" && rest_has("watchdog"))) {
      p.q.pfc_watchdog = true;
    } else {
      cfg.skipped.push_back({l.number, std::string(l.text), "not a QoS statement this tool reads (onyx)"});
    }
  }
  if (!any) return cfg;
  if (order.empty()) port("*", 1);
  // A configuration states ECN (a traffic class without congestion-control has
  // none); show output alone (PFC status, flow control) does not.
  cfg.ecn_stated = config;
  for (const std::string& name : lossless_pools) {
    if (auto it = pools.find(name); it != pools.end()) {
      cfg.lossless_pool = it->second;
      cfg.lossless_pool_name = name;
      break;
    }
  }
  for (const auto& [name, pct] : pool_percent)
    if (lossless_pools.count(name))
      cfg.notes.push_back("lossless traffic pool " + name + " has " + fmt::format("{:g}", pct) +
                          "% of the shared buffer; the buffer size is not in the input");
  if (roce) {
    cfg.notes.push_back("'roce " + *roce +
                        "': defaults assumed where not overridden (PFC priority 3, ECN on TC 3 "
                        "150 / 1500 KB, CNP in TC 6 strict)");
    if (!cfg.scheduling.count(6)) cfg.scheduling[6] = Scheduling::kStrict;
  }
  for (int d = 0; d < 64; ++d) cfg.dscp_to_queue[d] = d / 8;
  cfg.notes.emplace_back(
      "DSCP to switch priority DSCP/8 and priority to TC identity assumed (defaults)");
  for (const std::string& name : order) {
    OnyxPort& p = ports[name];
    PortQos q = p.q;
    if (pause_only.count(name) && !p.pfc_mode) {
      cfg.ports.push_back(q);  // flow control only: says nothing about PFC
      continue;
    }
    q.pfc_stated = true;
    if (watchdog_global && !q.pfc_watchdog) q.pfc_watchdog = true;
    bool roce_lossless = roce && *roce != "lossy";
    bool on = p.pfc_mode.value_or(roce_lossless || name == "*");
    std::set<int> prios = pfc_prios;
    if (prios.empty() && roce_lossless) prios = {3};
    if ((pfc_global || roce_lossless) && on) q.pfc_priorities = prios;
    if (roce && !q.ecn.count(3)) {
      EcnQueue e;
      e.enabled = true;
      e.kmin = BufferAmount::Bytes(150'000);
      e.kmax = BufferAmount::Bytes(1'500'000);
      e.source = "roce defaults";
      q.ecn[3] = e;
    }
    for (auto& [pg, b] : p.pg_buffers) {
      if (auto it = pools.find(p.pg_pool[pg]); it != pools.end()) b.pfc_trigger.pool = it->second;
      bool bound = false;
      for (const auto& [prio, bpg] : p.pg_bind)
        if (bpg == pg) {
          q.pgs[prio] = b;
          bound = true;
        }
      if (!bound) q.pgs[pg] = b;
    }
    cfg.ports.push_back(q);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
