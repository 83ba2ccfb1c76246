// Cumulus Linux 3.x/4.x `/etc/cumulus/datapath/traffic.conf` (replaced by
// qos_features.conf in 5.x), `key = value` lines:
//   pfc.port_group_list = [ROCE_PFC]
//   pfc.ROCE_PFC.port_set = swp1-swp4
//   pfc.ROCE_PFC.cos_list = [3]
//   pfc.ROCE_PFC.xoff_size = 18000            (bytes)
//   ecn_red.ROCE_ECN.cos_list = [3]           (or egress_queue_list)
//   ecn_red.ROCE_ECN.min_threshold_bytes = 150000
//   ecn_red.ROCE_ECN.max_threshold_bytes = 1500000
//   ecn_red.ROCE_ECN.ecn_enable = true
//   ecn_red.ROCE_ECN.probability = 100
//   link_pause.G.rx_enable = true
// Groups are read from their keys (a pasted excerpt may lack the
// port_group_list line). Switch priority = CoS = egress queue (the default
// traffic.conf mapping). `xoff_size` is read as the PG headroom
// (interpretation, noted); the PFC trigger is not in this file.
#include <map>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

struct Group {
  std::map<std::string, std::pair<std::string, int64_t>> kv;  // field -> (value, line)
};

std::string Unbracket(std::string v) {
  v = std::string(Trim(v));
  if (!v.empty() && v.front() == '[') v.erase(0, 1);
  if (!v.empty() && v.back() == ']') v.pop_back();
  return std::string(Trim(v));
}

}  // namespace

QosConfig ParseTrafficConf(std::string_view text, const std::string& file) {
  QosConfig cfg;
  // section ("pfc", "ecn_red", "link_pause") -> group -> fields
  std::map<std::string, std::map<std::string, Group>> sections;
  bool ecn_keys = false;  // any ecn_red.* line, the port_group_list included
  for (const TextLine& l : SplitLines(text)) {
    std::string_view t = Trim(l.text);
    if (t.empty() || t.front() == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string_view::npos) {
      cfg.skipped.push_back({l.number, std::string(l.text), "not a key = value line (cumulus-traffic)"});
      continue;
    }
    std::string key(Trim(t.substr(0, eq)));
    std::string value(Trim(t.substr(eq + 1)));
    size_t d1 = key.find('.');
    size_t d2 = d1 == std::string::npos ? std::string::npos : key.find('.', d1 + 1);
    std::string section = key.substr(0, d1);
    ecn_keys = ecn_keys || section == "ecn_red";
    if ((section != "pfc" && section != "ecn_red" && section != "link_pause") ||
        d2 == std::string::npos) {
      if (key.find("port_group_list") == std::string::npos)
        cfg.skipped.push_back({l.number, std::string(l.text), "traffic.conf key not read (cumulus-traffic)"});
      continue;
    }
    std::string group = key.substr(d1 + 1, d2 - d1 - 1);
    sections[section][group].kv[key.substr(d2 + 1)] = {value, l.number};
  }
  if (sections.empty()) return cfg;

  std::map<std::string, PortQos> ports;
  std::vector<std::string> order;
  auto port = [&](const Group& g) -> PortQos& {
    auto it = g.kv.find("port_set");
    std::string name = it == g.kv.end() ? std::string("*") : it->second.first;
    if (!ports.count(name)) {
      order.push_back(name);
      ports[name].name = name;
      ports[name].line = it == g.kv.end() ? 1 : it->second.second;
    }
    return ports[name];
  };
  auto get = [](const Group& g, const std::string& f) -> const std::pair<std::string, int64_t>* {
    auto it = g.kv.find(f);
    return it == g.kv.end() ? nullptr : &it->second;
  };
  auto is_true = [&](const Group& g, const std::string& f) {
    const auto* v = get(g, f);
    return v && text::ToLower(v->first) == "true";
  };
  for (const auto& [name, g] : sections["pfc"]) {
    PortQos& p = port(g);
    const auto* cos = get(g, "cos_list");
    if (cos && (is_true(g, "rx_enable") || is_true(g, "tx_enable") || !get(g, "rx_enable"))) {
      for (int c : ParsePriorityList(Unbracket(cos->first),
                                     {file, cos->second, "pfc." + name + ".cos_list"}))
        p.pfc_priorities.insert(c);
    }
    if (const auto* x = get(g, "xoff_size")) {
      LosslessPg pg;
      pg.headroom = BufferAmount::Bytes(
          ParseInt(x->first, {file, x->second, "pfc." + name + ".xoff_size"}, "a size in bytes"));
      pg.source = "pfc." + name;
      pg.line = x->second;
      for (int c : p.pfc_priorities) p.pgs[c] = pg;
    }
  }
  for (const auto& [name, g] : sections["ecn_red"]) {
    PortQos& p = port(g);
    const auto* cos = get(g, "cos_list");
    if (!cos) cos = get(g, "egress_queue_list");
    if (!cos) continue;
    EcnQueue e;
    e.enabled = is_true(g, "ecn_enable");
    e.source = "ecn_red." + name;
    e.line = cos->second;
    if (const auto* v = get(g, "min_threshold_bytes"))
      e.kmin = BufferAmount::Bytes(ParseInt(
          v->first, {file, v->second, "ecn_red." + name + ".min_threshold_bytes"}, "bytes"));
    if (const auto* v = get(g, "max_threshold_bytes"))
      e.kmax = BufferAmount::Bytes(ParseInt(
          v->first, {file, v->second, "ecn_red." + name + ".max_threshold_bytes"}, "bytes"));
    if (const auto* v = get(g, "probability"))
      e.pmax_percent = ParseDecimal(v->first, {file, v->second, "ecn_red." + name + ".probability"},
                                    "a percentage");
    for (int c : ParsePriorityList(Unbracket(cos->first),
                                   {file, cos->second, "ecn_red." + name + ".cos_list"}))
      p.ecn[c] = e;
  }
  for (const auto& [name, g] : sections["link_pause"])
    if (is_true(g, "rx_enable") || is_true(g, "tx_enable")) port(g).link_pause = true;
  // ECN is stated when the text has the ecn_red section (an empty
  // port_group_list says "none"). Without it the text is another section of
  // the file (Cumulus 5 qos_features.conf also has a default ECN profile,
  // default_ecn_red_conf, on egress queue 0): ECN there is unknown.
  cfg.ecn_stated = ecn_keys;
  if (!sections["pfc"].empty())
    cfg.notes.emplace_back(
        "traffic.conf xoff_size read as the PG headroom; the PFC trigger is not in "
        "this file");
  for (const std::string& n : order) {
    PortQos p = ports[n];
    p.pfc_stated = true;
    cfg.ports.push_back(p);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
