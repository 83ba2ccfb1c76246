// Cumulus Linux NVUE `nv show qos roce`: a key / operational / applied table
// (mode, cable-length, congestion-control, pfc, trust) followed by the
// "RoCE PCP/DSCP->SP mapping", "RoCE SP->TC mapping and ETS" and
// "RoCE pool config" tables. NVUE prints sizes in binary units labelled
// "KB" / "MB" (150 KB = 146.48 KB as shown), read here as KiB / MiB.
// The output states neither headroom nor link pause; the switch computes
// headroom from cable-length.
#include <map>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

QosConfig ParseNvue(std::string_view text, const std::string& file) {
  QosConfig cfg;
  PortQos port;
  port.name = "*";
  port.line = 1;
  std::map<std::string, std::pair<std::string, int64_t>> kv;  // "parent.key" -> value, line
  std::map<int, int> sp_to_tc;
  std::map<int, std::set<int>> sp_dscp;
  enum class Section { kTop, kDscp, kTc, kPool, kOther };
  Section section = Section::kTop;
  std::vector<std::pair<size_t, std::string>> parents;  // (indent, key) of open groups
  std::optional<BufferAmount> roce_pool;
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
    if (c.size() >= 1 && (c[0] == "pcp" || c[0] == "switch-prio")) continue;  // header row
    std::vector<std::string> w = Words(t);
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
  if (!get("mode") && !get("pfc.pfc-priority") && !get("congestion-control.enabled-tc") &&
      sp_to_tc.empty() && !counters)
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
    cfg.notes.push_back("RoCE is disabled ('enable off')");
  }
  std::string mode = get("mode") ? text::ToLower(get("mode")->first) : "lossless";
  // "lossless" and "lossless-single-ipool" (one shared ingress pool) both run PFC.
  const bool lossless = StartsWith(mode, "lossless");
  port.pfc_stated = get("mode") || get("pfc.pfc-priority");
  if (auto p = get("pfc.pfc-priority"); p && enabled && lossless)
    port.pfc_priorities = ParsePriorityList(p->first, {file, p->second, "pfc.pfc-priority"});
  if (!get("cable-length") && get("pfc.cable-length")) kv["cable-length"] = kv["pfc.cable-length"];
  cfg.ecn_stated = get("mode") || get("congestion-control.enabled-tc");
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

}  // namespace lossless::audit::qos::internal
