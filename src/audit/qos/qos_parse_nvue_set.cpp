// Cumulus Linux NVUE configuration as `nv set` command lines (a pasted session, a
// startup script, a documentation example), for example
//   nv set qos roce mode lossless
//   nv set qos pfc default-global switch-priority 3
//   nv set qos congestion-control default-global traffic-class 3 min-threshold 150000
//   nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3
//   nv set qos mapping ROCE_MAP dscp 26 switch-priority 3
//   nv set qos egress-scheduler default-global traffic-class 6 mode strict
//   nv set qos traffic-pool roce-lossless memory-percent 50
//   nv set interface swp1-4 qos pfc profile my_pfc_ports
//   nv set interface swp1 qos pfc-watchdog
//   nv set interface swp1 link speed 400G   (Cumulus Linux "Interface Configuration
//   and Management": the port's speed; `auto` is not a speed)
// Profiles named default-global apply to every port; a custom profile applies to
// the interfaces that name it (or, when none does, is checked as if applied).
// `nv set qos roce` applies the documented RoCE defaults (PFC on switch priority 3
// in lossless modes, ECN on traffic class 3 at 150,000 / 1,500,000 B, CNP on
// switch priority 6 to traffic class 6 strict) where lines do not override them:
// docs.nvidia.com, Cumulus Linux "RDMA over Converged Ethernet - RoCE", "Default
// RoCE Configuration". Thresholds without a unit are bytes (NVUE documents them
// "in bytes"). Memory percentages of traffic pools are noted, not converted (the
// switch's buffer size is not in the input).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

struct PfcProfile {
  std::optional<std::set<int>> priorities;
  bool tx = true;
  bool rx = true;
  std::optional<double> cable_m;
  std::optional<BufferAmount> xoff;
  int64_t line = 0;
};

struct EcnProfile {
  std::map<int, EcnQueue> queues;
  int64_t line = 0;
};

struct InterfaceSet {
  std::string pfc, ecn, link_pause;
  bool watchdog = false;
  std::optional<int64_t> speed_gbps;
  int64_t line = 0;
};

std::optional<size_t> After(const std::vector<std::string>& w, size_t from,
                            const std::string& word) {
  for (size_t i = from; i + 1 < w.size(); ++i)
    if (w[i] == word) return i + 1;
  return std::nullopt;
}

bool Enabled(const std::string& v) {
  std::string s = text::ToLower(v);
  return s == "enable" || s == "enabled" || s == "on" || s == "yes" || s == "true";
}

// "150000", "150000B", "150KB", "1.5 MB": bytes unless a unit says otherwise.
BufferAmount Threshold(const std::vector<std::string>& w, size_t i, const Location& where) {
  const std::string& v = w[i];
  size_t end = 0;
  while (end < v.size() && (std::isdigit(static_cast<unsigned char>(v[end])) || v[end] == '.'))
    ++end;
  if (end < v.size()) return ParseAmount(v.substr(0, end), v.substr(end), where);
  if (i + 1 < w.size()) {
    std::string u = text::ToLower(w[i + 1]);
    if (u == "b" || u == "bytes" || u == "kb" || u == "mb" || u == "kib" || u == "mib")
      return ParseAmount(v, w[i + 1], where);
  }
  return ParseAmount(v, "bytes", where);
}

}  // namespace

QosConfig ParseNvueSet(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::optional<std::string> roce_mode;
  bool roce_enabled = true;
  std::map<std::string, PfcProfile> pfc;
  std::map<std::string, EcnProfile> ecn;
  std::set<std::string> link_pause_profiles;
  std::map<std::string, InterfaceSet> ifs;
  std::vector<std::string> if_order;
  std::map<int, int> sp_to_tc;
  std::map<int, int> dscp_to_sp;
  bool any = false;
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty() || t.front() == '#') continue;
    std::vector<std::string> w = Words(t);
    auto skip = [&](const std::string& why) { cfg.skipped.push_back({l.number, std::string(l.text), why}); };
    if (w.size() < 3 || w[0] != "nv" || (w[1] != "set" && w[1] != "unset")) {
      skip("not an 'nv set' line (nvue)");
      continue;
    }
    if (w[1] == "unset") {
      skip("'nv unset' restores a default this tool does not model (nvue)");
      continue;
    }
    const std::string field = w.size() > 3 ? w[2] + "." + w[3] : w[2];
    Location where{file, l.number, field};
    if (w[2] == "qos" && w.size() >= 4 && w[3] == "roce") {
      any = true;
      if (auto i = After(w, 4, "mode")) roce_mode = text::ToLower(w[*i]);
      if (auto i = After(w, 4, "enable")) roce_enabled = Enabled(w[*i]);
      if (!roce_mode) roce_mode = "lossless";
    } else if (w[2] == "qos" && w.size() >= 6 && w[3] == "pfc") {
      any = true;
      PfcProfile& p = pfc[w[4]];
      if (!p.line) p.line = l.number;
      if (auto i = After(w, 5, "switch-priority")) p.priorities = ParsePriorityList(w[*i], where);
      if (auto i = After(w, 5, "tx")) p.tx = Enabled(w[*i]);
      if (auto i = After(w, 5, "rx")) p.rx = Enabled(w[*i]);
      if (auto i = After(w, 5, "cable-length"))
        p.cable_m = ParseDecimal(w[*i], where, "a cable length in metres");
      if (auto i = After(w, 5, "xoff-threshold")) p.xoff = Threshold(w, *i, where);
    } else if (w[2] == "qos" && w.size() >= 8 && w[3] == "congestion-control" &&
               w[5] == "traffic-class") {
      any = true;
      EcnProfile& p = ecn[w[4]];
      if (!p.line) p.line = l.number;
      for (int tc : ParsePriorityList(w[6], where)) {
        EcnQueue& e = p.queues[tc];
        if (!e.line) {
          e.line = l.number;
          e.enabled = true;  // a congestion-control traffic class marks unless "ecn disable"
          e.source = "congestion-control " + w[4];
        }
        if (auto i = After(w, 7, "ecn")) e.enabled = Enabled(w[*i]);
        if (auto i = After(w, 7, "min-threshold")) e.kmin = Threshold(w, *i, where);
        if (auto i = After(w, 7, "max-threshold")) e.kmax = Threshold(w, *i, where);
        if (auto i = After(w, 7, "probability"))
          e.pmax_percent = ParseDecimal(w[*i], where, "a percentage");
      }
    } else if (w[2] == "qos" && w.size() >= 9 && w[3] == "egress-queue-mapping") {
      any = true;
      if (auto s = After(w, 4, "switch-priority"))
        if (auto q = After(w, 4, "traffic-class"))
          for (int sp : ParsePriorityList(w[*s], where)) sp_to_tc[sp] = ParsePriority(w[*q], where);
    } else if (w[2] == "qos" && w.size() >= 5 && w[3] == "mapping") {
      any = true;
      if (auto d = After(w, 5, "dscp"))
        if (auto s = After(w, 5, "switch-priority"))
          for (int dscp : ParseIntList(w[*d], 0, 63, where, "DSCP values 0-63"))
            dscp_to_sp[dscp] = ParsePriority(w[*s], where);
    } else if (w[2] == "qos" && w.size() >= 8 && w[3] == "egress-scheduler") {
      any = true;
      if (auto q = After(w, 5, "traffic-class"))
        if (auto m = After(w, 5, "mode"))
          for (int tc : ParsePriorityList(w[*q], where))
            cfg.scheduling[tc] =
                text::ToLower(w[*m]) == "strict" ? Scheduling::kStrict : Scheduling::kWeighted;
    } else if (w[2] == "qos" && w.size() >= 5 && w[3] == "link-pause") {
      any = true;
      link_pause_profiles.insert(w[4]);
    } else if (w[2] == "qos" && w.size() >= 5 && w[3] == "traffic-pool") {
      any = true;
      if (auto i = After(w, 4, "memory-percent"))
        cfg.notes.push_back(fmt::format(
            "traffic pool {} has {}% of the shared buffer (line {}); the buffer size is not in "
            "the input, so the pool is not converted to bytes",
            w[4], fmt::format("{:g}", ParseDecimal(w[*i], where, "a percentage")), l.number));
    } else if (w[2] == "qos" && w.size() >= 4 && w[3] == "pfc-watchdog") {
      any = true;  // polling interval and robustness: nothing the checks use
    } else if (w[2] == "interface" && w.size() >= 7 && w[4] == "link" && w[5] == "speed") {
      if (text::ToLower(w[6]) == "auto") {
        skip("link speed auto: no speed stated (nvue)");
        continue;
      }
      std::string v = text::ToLower(w[6]);
      int64_t scale = 0;
      if (!v.empty() && v.back() == 'g') scale = 1;
      if (v.size() > 1 && v.back() == 'm') scale = -1;
      if (scale != 0) v.pop_back();
      if (scale == 0)
        throw InputError({file, l.number, "interface." + w[3] + ".link.speed"},
                         Expected("a speed like 400G", w[6]));
      const int64_t n =
          ParseInt(v, {file, l.number, "interface." + w[3] + ".link.speed"}, "a speed like 400G");
      auto [it, fresh] = ifs.try_emplace(w[3]);
      if (fresh) {
        it->second.line = l.number;
        if_order.push_back(w[3]);
      }
      it->second.speed_gbps = scale > 0 ? n : n / 1000;
    } else if (w[2] == "interface" && w.size() >= 5 && w[4] == "qos") {
      any = true;
      auto [it, fresh] = ifs.try_emplace(w[3]);
      if (fresh) {
        it->second.line = l.number;
        if_order.push_back(w[3]);
      }
      InterfaceSet& s = it->second;
      if (w.size() >= 6 && w[5] == "pfc-watchdog") {
        s.watchdog = !(After(w, 6, "state") && !Enabled(w[*After(w, 6, "state")]));
      } else if (w.size() >= 8 && w[6] == "profile") {
        if (w[5] == "pfc") s.pfc = w[7];
        if (w[5] == "congestion-control") s.ecn = w[7];
        if (w[5] == "link-pause") s.link_pause = w[7];
      }
    } else {
      skip("an 'nv set' line without a RoCE QoS setting (nvue)");
    }
  }
  if (!any) return cfg;

  const bool roce = roce_mode && roce_enabled;
  const bool roce_lossless = roce && StartsWith(*roce_mode, "lossless");
  if (roce_mode && !roce_enabled) cfg.notes.emplace_back("RoCE is disabled ('enable off')");
  if (roce) {
    cfg.notes.push_back(
        "'nv set qos roce' (mode " + *roce_mode +
        "): the documented RoCE defaults are assumed where lines do not override them (PFC on "
        "switch priority 3 in lossless modes, ECN on traffic class 3 at 150000 / 1500000 B, "
        "CNP switch priority 6 to traffic class 6 strict)");
    if (roce_lossless && !pfc["default-global"].priorities) pfc["default-global"].priorities = {3};
    EcnQueue& e = ecn["default-global"].queues[3];
    if (!e.line) {
      e.enabled = true;
      e.source = "roce defaults";
    }
    if (!e.kmin) e.kmin = BufferAmount::Bytes(150'000);
    if (!e.kmax) e.kmax = BufferAmount::Bytes(1'500'000);
    sp_to_tc.try_emplace(3, 3);
    sp_to_tc.try_emplace(6, 6);
    cfg.scheduling.try_emplace(6, Scheduling::kStrict);
    cfg.scheduling.try_emplace(3, Scheduling::kWeighted);
  }
  // Switch priority -> traffic class: stated entries, the rest by the NVUE
  // default (identity) unless RoCE maps the others to traffic class 0.
  for (int sp = 0; sp < 8; ++sp)
    if (!sp_to_tc.count(sp) && roce) sp_to_tc[sp] = 0;
  cfg.priority_to_queue = sp_to_tc;
  for (int d = 0; d < 64; ++d) {
    int sp = dscp_to_sp.count(d) ? dscp_to_sp[d] : d / 8;
    cfg.dscp_to_queue[d] = cfg.QueueOf(sp);
  }
  if (dscp_to_sp.size() < 64)
    cfg.notes.emplace_back(
        "DSCP to switch priority DSCP/8 assumed where not mapped (NVUE default)");
  cfg.ecn_stated = !ecn.empty();

  // Custom profiles no interface names are checked as if applied.
  std::set<std::string> named;
  for (const auto& [n, s] : ifs) named.insert({s.pfc, s.ecn});
  auto port_from = [&](const std::string& name, int64_t line, const std::string& pfc_name,
                       const std::string& ecn_name) {
    PortQos q;
    q.name = name;
    q.line = line;
    if (auto it = pfc.find(pfc_name); it != pfc.end()) {
      q.pfc_stated = true;
      if (it->second.priorities && (it->second.tx || it->second.rx))
        q.pfc_priorities = *it->second.priorities;
      q.cable_m = it->second.cable_m;
      if (it->second.xoff)
        for (int p : q.pfc_priorities) {
          LosslessPg pg;
          pg.headroom = it->second.xoff;
          pg.source = "pfc " + pfc_name + " xoff-threshold";
          pg.line = it->second.line;
          q.pgs[p] = pg;
        }
    }
    if (auto it = ecn.find(ecn_name); it != ecn.end()) q.ecn = it->second.queues;
    return q;
  };
  const bool any_pfc_profile = std::any_of(pfc.begin(), pfc.end(), [&](const auto& kv) {
    return kv.first != "default-global" && !named.count(kv.first);
  });
  const bool any_ecn_profile = std::any_of(ecn.begin(), ecn.end(), [&](const auto& kv) {
    return kv.first != "default-global" && !named.count(kv.first);
  });
  auto fallback = [&](auto& profiles) -> std::string {
    if (profiles.count("default-global")) return "default-global";
    for (const auto& kv : profiles)
      if (!named.count(kv.first)) return kv.first;
    return "";
  };
  if (any_pfc_profile || any_ecn_profile)
    cfg.notes.emplace_back(
        "a custom PFC or ECN profile that no interface names is checked as if "
        "applied to every port");
  PortQos global = port_from("*", 1, fallback(pfc), fallback(ecn));
  if (!link_pause_profiles.empty() && link_pause_profiles.count("default-global"))
    global.link_pause = true;
  for (const std::string& name : if_order) {
    const InterfaceSet& s = ifs[name];
    PortQos q = port_from(name, s.line, s.pfc.empty() ? fallback(pfc) : s.pfc,
                          s.ecn.empty() ? fallback(ecn) : s.ecn);
    if (!q.pfc_stated) q.pfc_stated = global.pfc_stated;
    if (q.ecn.empty()) q.ecn = global.ecn;
    q.pfc_watchdog = s.watchdog;
    q.speed_gbps = s.speed_gbps;
    if (!s.link_pause.empty() || global.link_pause) q.link_pause = true;
    cfg.ports.push_back(q);
  }
  if (cfg.ports.empty()) cfg.ports.push_back(global);
  return cfg;
}

}  // namespace lossless::audit::qos::internal
