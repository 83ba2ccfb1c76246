// Cumulus Linux NVUE `nv show qos roce`: a key / operational / applied table
// (mode, cable-length, congestion-control, pfc, trust) followed by the
// "RoCE PCP/DSCP->SP mapping", "RoCE SP->TC mapping and ETS" and
// "RoCE pool config" tables. Also `nv show qos congestion-control PROFILE`
// ("ECN Configurations": traffic-class ECN RED "Min Th" "Max Th" Probability,
// thresholds in bytes with a unit) and `nv show interface X qos pfc-watchdog`
// (`state enabled`, then "PFC WD Status": traffic-class status deadlock-count).
// And `nv show qos pfc PROFILE` (cable-length, port-buffer, rx, tx,
// xoff-threshold, xon-threshold, [switch-priority]); as for `nv set qos pfc`,
// xoff-threshold is read as the PG headroom. NVUE prints sizes in binary units labelled
// "KB" / "MB" (150 KB = 146.48 KB as shown), read here as KiB / MiB.
// The output states neither headroom nor link pause; the switch computes
// headroom from cable-length.
#include <map>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

QosConfig ParseNvueShow(std::string_view text, const std::string& file);

bool IsNvCommand(std::string_view t) {
  return StartsWith(t, "nv ");
}

}  // namespace

// NVUE text may mix `nv set` command lines with `nv show` output: each part goes
// to its reader (line numbers kept), and the two results are merged, the show
// output's switch-wide settings first.
QosConfig ParseNvue(std::string_view text, const std::string& file) {
  std::string set_text, show_text;
  bool any_set = false, any_show = false;
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    const bool nv = IsNvCommand(t);
    const bool setting = StartsWith(t, "nv set ") || StartsWith(t, "nv unset ");
    any_set = any_set || setting;
    any_show = any_show || (!nv && !t.empty());
    if (setting) {
      set_text += l.text;
    } else if (!nv) {
      show_text += l.text;
    }
    set_text += '\n';
    show_text += '\n';
  }
  if (!any_set) return ParseNvueShow(text, file);
  QosConfig set = ParseNvueSet(set_text, file);
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (IsNvCommand(t) && !StartsWith(t, "nv set ") && !StartsWith(t, "nv unset "))
      set.skipped.push_back({l.number, std::string(l.text), "NVUE command that changes no setting", false});
  }
  if (!any_show) return set;
  QosConfig show;
  try {
    show = ParseNvueShow(show_text, file);
  } catch (const InputError& e) {
    // Text beside the `nv set` lines that is not `nv show` output: listed, not fatal.
    for (const TextLine& l : SplitLines(show_text))
      if (!Trim(l.text).empty())
        set.skipped.push_back({l.number, std::string(l.text), "not readable as nv show output: " + e.message()});
    return set;
  }
  for (PortQos& p : set.ports) show.ports.push_back(std::move(p));
  show.ecn_stated = show.ecn_stated || set.ecn_stated;
  show.scheduling.insert(set.scheduling.begin(), set.scheduling.end());
  show.priority_to_queue.insert(set.priority_to_queue.begin(), set.priority_to_queue.end());
  show.dscp_to_queue.insert(set.dscp_to_queue.begin(), set.dscp_to_queue.end());
  for (std::string& n : set.notes) show.notes.push_back(std::move(n));
  for (SkippedLine& s : set.skipped) show.skipped.push_back(std::move(s));
  return show;
}

namespace {

QosConfig ParseNvueShow(std::string_view text, const std::string& file) {
  QosConfig cfg;
  PortQos port;
  port.name = "*";
  port.line = 1;
  std::map<std::string, std::pair<std::string, int64_t>> kv;  // "parent.key" -> value, line
  std::map<int, int> sp_to_tc;
  std::map<int, std::set<int>> sp_dscp;
  enum class Section { kTop, kDscp, kTc, kPool, kEcn, kWd, kOther };
  Section section = Section::kTop;
  std::vector<std::pair<size_t, std::string>> parents;  // (indent, key) of open groups
  std::optional<BufferAmount> roce_pool;
  bool ecn_table = false;
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty() || t.front() == '#') continue;
    if (t.find_first_not_of("-= ") == std::string_view::npos) continue;
    Location where{file, l.number, ""};
    if (t.find("PCP/DSCP->SP") != std::string_view::npos) {
      section = Section::kDscp;
      continue;
    }
    if (t.find("SP->TC") != std::string_view::npos) {
      section = Section::kTc;
      continue;
    }
    if (StartsWith(t, "RoCE Pool") || StartsWith(t, "RoCE pool")) {
      section = Section::kPool;
      continue;
    }
    if (t == "ECN Configurations") {
      section = Section::kEcn;
      continue;
    }
    if (t == "PFC WD Status") {
      section = Section::kWd;
      port.pfc_wd_status = true;
      continue;
    }
    if (StartsWith(t, "RoCE ") || StartsWith(t, "Exception")) {
      section = Section::kOther;
      continue;
    }
    std::vector<std::string> c = Columns(t);
    if (section == Section::kTop) {
      if (c[0] == "operational" || (c.size() >= 2 && c[1] == "operational")) continue;
      // Nested groups ("pfc", "tx-stats" > "tx-roce-stats") by indentation.
      while (!parents.empty() && parents.back().first >= l.indent) parents.pop_back();
      std::string prefix;
      for (const auto& [indent, key] : parents) prefix += key + ".";
      if (c.size() == 1) {
        kv[prefix + c[0]] = {"", l.number};
        parents.emplace_back(l.indent, c[0]);
        continue;
      }
      kv[prefix + c[0]] = {c[1], l.number};
      continue;
    }
    if (section == Section::kPool) {
      // "RoCE Pool Status": index name mode pool-id switch-priorities traffic-class size ...
      std::vector<std::string> w = Words(t);
      if (w.size() >= 8 && w[1] == "roce-reserved-ingress" && w[7] != "%")
        roce_pool = ParseAmount(w[6], w[7], {file, l.number, "roce-reserved-ingress.size"}, true);
      continue;
    }
    if (section == Section::kOther) continue;
    if (!c.empty() && (c[0] == "pcp" || c[0] == "switch-prio" || c[0] == "traffic-class"))
      continue;  // header row
    std::vector<std::string> w = Words(t);
    if (section == Section::kEcn) {
      // 4  enable  enable  40000 B  200000 B  100
      if (w.size() < 8)
        throw InputError(where, Expected("a row: traffic-class ECN RED min-threshold unit "
                                         "max-threshold unit probability",
                                         std::string(t)));
      int tc = ParsePriority(w[0], {file, l.number, "traffic-class"});
      EcnQueue e;
      e.enabled = text::ToLower(w[1]) == "enable";
      e.kmin = ParseAmount(w[3], w[4], {file, l.number, "min-threshold"}, true);
      e.kmax = ParseAmount(w[5], w[6], {file, l.number, "max-threshold"}, true);
      e.pmax_percent = ParseDecimal(w[7], {file, l.number, "probability"}, "a percentage");
      e.source = "congestion-control";
      e.line = l.number;
      port.ecn[tc] = e;
      ecn_table = true;
      continue;
    }
    if (section == Section::kWd) {
      // 2  DEADLOCK  2
      if (w.size() < 3)
        throw InputError(where,
                         Expected("a row: traffic-class status deadlock-count", std::string(t)));
      int tc = ParsePriority(w[0], {file, l.number, "traffic-class"});
      if (text::ToLower(w[1]) == "deadlock") port.pfc_wd_deadlocked.insert(tc);
      port.pfc_wd_deadlocks[tc] = ParseInt(w[2], {file, l.number, "deadlock-count"}, "a count");
      continue;
    }
    if (section == Section::kDscp) {
      if (w.size() < 4)
        throw InputError(where, Expected("a row: index pcp dscp switch-prio", std::string(t)));
      int sp = ParsePriority(w[3], {file, l.number, "switch-prio"});
      sp_dscp[sp] = ParseIntList(w[2], 0, 63, {file, l.number, "dscp"}, "DSCP values 0-63");
    } else if (section == Section::kTc) {
      if (w.size() < 4)
        throw InputError(where, Expected("a row: index switch-prio traffic-class scheduler-weight",
                                         std::string(t)));
      int sp = ParsePriority(w[1], {file, l.number, "switch-prio"});
      int tc = ParsePriority(w[2], {file, l.number, "traffic-class"});
      sp_to_tc[sp] = tc;
      cfg.scheduling[tc] = text::ToLower(w[3]).find("strict") != std::string::npos
                               ? Scheduling::kStrict
                               : Scheduling::kWeighted;
    }
  }
  auto get = [&](const std::string& key) -> std::optional<std::pair<std::string, int64_t>> {
    auto it = kv.find(key);
    if (it == kv.end()) return std::nullopt;
    return it->second;
  };
  const std::string kTxDiscard = "tx-stats.tx-roce-stats.unicast-no-buffer-discard";
  const std::string kRxDiscard = "rx-stats.rx-roce-stats.no-buffer-discard";
  const bool counters = get(kTxDiscard) || get(kRxDiscard);
  if (port.pfc_wd_status) {
    if (auto st = get("state"); st && !st->first.empty())
      port.pfc_watchdog = text::ToLower(st->first) == "enabled";
  }
  if (ecn_table) cfg.ecn_stated = true;
  // `nv show qos pfc PROFILE`: the profile's switch priorities, with PFC on
  // when it sends or honours pause frames.
  const bool pfc_table = get("[switch-priority]") || get("xoff-threshold");
  if (pfc_table) {
    auto on = [&](const char* k) {
      auto v = get(k);
      return v && text::ToLower(v->first) == "enable";
    };
    port.pfc_stated = true;
    if (auto sp = get("[switch-priority]"); sp && !sp->first.empty() && (on("tx") || on("rx")))
      port.pfc_priorities =
          ParsePriorityList(Words(sp->first)[0], {file, sp->second, "[switch-priority]"});
    LosslessPg pg;
    if (auto x = get("xoff-threshold"); x && !x->first.empty()) {
      std::vector<std::string> w = Words(x->first);
      pg.headroom =
          ParseAmount(w[0], w.size() > 1 ? w[1] : "", {file, x->second, "xoff-threshold"}, true);
      pg.line = x->second;
    }
    if (auto x = get("xon-threshold"); x && !x->first.empty()) {
      std::vector<std::string> w = Words(x->first);
      pg.xon =
          ParseAmount(w[0], w.size() > 1 ? w[1] : "", {file, x->second, "xon-threshold"}, true);
    }
    pg.source = "pfc xoff-threshold";
    if (pg.headroom || pg.xon)
      for (int prio : port.pfc_priorities) port.pgs[prio] = pg;
  }
  if (!get("mode") && !get("pfc.pfc-priority") && !get("congestion-control.enabled-tc") &&
      sp_to_tc.empty() && !counters && !ecn_table && !port.pfc_wd_status && !pfc_table)
    throw InputError({file, 1, "format"},
                     "no RoCE settings found: expected the output of 'nv show qos roce'");
  auto amount = [&](const std::string& key) -> std::optional<BufferAmount> {
    auto v = get(key);
    if (!v || v->first.empty()) return std::nullopt;
    std::vector<std::string> w = Words(v->first);
    return ParseAmount(w[0], w.size() > 1 ? w[1] : "", {file, v->second, key}, true);
  };
  bool enabled = true;
  if (auto e = get("enable"); e && text::ToLower(e->first) == "off") {
    enabled = false;
    cfg.notes.emplace_back("RoCE is disabled ('enable off')");
  }
  std::string mode = get("mode") ? text::ToLower(get("mode")->first) : "lossless";
  // "lossless" and "lossless-single-ipool" (one shared ingress pool) both run PFC.
  const bool lossless = StartsWith(mode, "lossless");
  port.pfc_stated = port.pfc_stated || get("mode") || get("pfc.pfc-priority");
  if (auto p = get("pfc.pfc-priority"); p && enabled && lossless)
    port.pfc_priorities = ParsePriorityList(p->first, {file, p->second, "pfc.pfc-priority"});
  if (!get("cable-length") && get("pfc.cable-length")) kv["cable-length"] = kv["pfc.cable-length"];
  cfg.ecn_stated = cfg.ecn_stated || get("mode") || get("congestion-control.enabled-tc");
  if (roce_pool) {
    cfg.lossless_pool = roce_pool;
    cfg.lossless_pool_name = "roce-reserved-ingress";
  }
  if (auto c = get("cable-length"); c && !c->first.empty()) {
    std::string v = c->first;
    if (!v.empty() && v.back() == 'm') v.pop_back();
    port.cable_m = ParseDecimal(v, {file, c->second, "cable-length"}, "a cable length in metres");
  }
  if (auto tcs = get("congestion-control.enabled-tc"); tcs && enabled) {
    std::string cmode = get("congestion-control.congestion-mode")
                            ? text::ToLower(get("congestion-control.congestion-mode")->first)
                            : "ecn";
    for (int tc :
         ParsePriorityList(tcs->first, {file, tcs->second, "congestion-control.enabled-tc"})) {
      EcnQueue e;
      e.enabled = cmode.find("ecn") != std::string::npos;
      e.kmin = amount("congestion-control.min-threshold");
      e.kmax = amount("congestion-control.max-threshold");
      if (auto pr = get("congestion-control.probability"); pr && !pr->first.empty())
        e.pmax_percent = ParseDecimal(
            pr->first, {file, pr->second, "congestion-control.probability"}, "a percentage");
      e.source = "congestion-control";
      e.line = tcs->second;
      port.ecn[tc] = e;
    }
  }
  cfg.priority_to_queue = sp_to_tc;
  if (counters) {
    // `nv show interface X qos roce counters`: discards "for RoCE traffic" are
    // drops of the lossless class; PFC pause counts are for the RoCE priority.
    int prio = port.pfc_priorities.empty() ? 3 : *port.pfc_priorities.begin();
    int tc = cfg.QueueOf(prio);
    for (const std::string& key : {kTxDiscard, kRxDiscard})
      if (auto v = get(key); v && !v->first.empty())
        port.queue_drops[tc] += ParseInt(Words(v->first)[0], {file, v->second, key}, "a count");
    port.drops_are_roce = true;
    for (const auto& [key, rx] :
         {std::pair<std::string, bool>{"rx-stats.rx-pfc-stats.pause-packets", true},
          std::pair<std::string, bool>{"tx-stats.tx-pfc-stats.pause-packets", false}})
      if (auto v = get(key); v && !v->first.empty())
        (rx ? port.pfc_rx_frames : port.pfc_tx_frames)[prio] +=
            ParseInt(Words(v->first)[0], {file, v->second, key}, "a count");
    cfg.notes.push_back("RoCE counters are read as the lossless class on priority " +
                        std::to_string(prio) + ", traffic class " + std::to_string(tc));
  }
  for (const auto& [sp, dscps] : sp_dscp)
    for (int d : dscps) cfg.dscp_to_queue[d] = cfg.QueueOf(sp);
  cfg.ports.push_back(port);
  return cfg;
}

}  // namespace

}  // namespace lossless::audit::qos::internal
