// SONiC show text: `mmuconfig -l` / `show buffer configuration` (Pool: and
// Profile: blocks, "Pool for namespace asicN:" on multi-ASIC switches), `show ecn` (Profile: blocks
// with green_* keys), `show pfc priority`, `show queue counters` (also `--voq`), `show pfcwd
// config` and `show interfaces status`, in any order and combination in one file.
//
// Show text does not say which port uses which profile. The parser applies
// the lossless PG profile (the one with the smallest xoff when there are
// several), the ECN-enabled WRED profile and egress_lossless_profile to the
// lossless priorities of every port, and says so in QosConfig::notes.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

struct Block {
  std::string kind;  // "Pool" or "Profile"
  std::string name;
  int64_t line = 0;
  std::map<std::string, std::pair<std::string, int64_t>> kv;  // key -> (value, line)
};

std::string RefName(std::string ref) {
  if (!ref.empty() && ref.front() == '[') ref = ref.substr(1);
  if (!ref.empty() && ref.back() == ']') ref.pop_back();
  size_t bar = ref.find('|');
  if (bar != std::string::npos) ref = ref.substr(bar + 1);
  return ref;
}

bool IsRule(std::string_view t) {
  t = Trim(t);
  return !t.empty() && t.find_first_not_of("- ") == std::string_view::npos;
}

bool IsCommandEcho(std::string_view t) {
  t = Trim(t);
  return t.empty() || t.front() == '#' || t.find("$ ") != std::string_view::npos;
}

}  // namespace

bool IsBlockTitle(std::string_view t) {
  // "Pool: NAME", or on a multi-ASIC switch "Pool for namespace asic0: NAME".
  for (std::string_view kind : {"Pool", "Profile"}) {
    if (!StartsWith(t, kind)) continue;
    std::string_view rest = t.substr(kind.size());
    if (StartsWith(rest, ": ")) return true;
    if (StartsWith(rest, " for namespace ") && rest.find(": ") != std::string_view::npos)
      return true;
  }
  return false;
}

QosConfig ParseSonicShow(std::string_view text, const std::string& file) {
  QosConfig cfg;
  std::vector<TextLine> lines = SplitLines(text);
  std::vector<Block> blocks;
  std::vector<std::string> port_order;
  std::map<std::string, PortQos> ports;
  auto touch = [&](const std::string& name, int64_t line) -> PortQos& {
    auto it = ports.find(name);
    if (it == ports.end()) {
      port_order.push_back(name);
      PortQos p;
      p.name = name;
      p.line = line;
      it = ports.emplace(name, p).first;
    }
    return it->second;
  };
  bool saw_pfcwd = false;
  static const std::regex kQueue(R"(^(?:UC|VOQ)(\d+)$)");

  enum class Mode {
    kNone,
    kBlock,
    kSkipBlock,
    kPfc,
    kCounters,
    kPfcwd,
    kStatus,
    kPfcFrames,
    kPgDrops,
    kPgWatermark
  };
  std::vector<std::string> pg_cols;  // header of a priority-group table
  std::string pg_table;              // its title
  std::map<std::string, std::pair<int64_t, std::string>> pg_peak;  // title -> bytes, where
  bool pfc_frames_rx = true;
  Mode mode = Mode::kNone;
  size_t drop_col = 0;
  int block_rules = 0;
  size_t speed_col = 0;
  for (const TextLine& l : lines) {
    std::string_view t = Trim(l.text);
    Location where{file, l.number, ""};
    if (IsCommandEcho(l.text)) {
      if (t.empty() && mode != Mode::kBlock) mode = Mode::kNone;
      continue;
    }
    if (IsRule(t)) {
      // A Pool:/Profile: table is framed by two rule lines; text after the
      // second one is not part of it.
      if (mode == Mode::kBlock && ++block_rules == 2) mode = Mode::kNone;
      continue;
    }
    if (IsBlockTitle(t)) {
      Block b;
      b.kind = StartsWith(t, "Pool") ? "Pool" : "Profile";
      b.name = std::string(Trim(t.substr(t.find(':') + 1)));
      b.line = l.number;
      blocks.push_back(b);
      mode = Mode::kBlock;
      block_rules = 0;
      continue;
    }
    if (StartsWith(t, "For namespace")) continue;  // multi-ASIC title above a counter table
    if (StartsWith(t, "Lossless traffic pattern")) {
      mode = Mode::kSkipBlock;
      continue;
    }
    std::vector<std::string> cols = Columns(t);
    if (StartsWith(t, "Ingress PG dropped packets") || StartsWith(t, "Ingress headroom per PG") ||
        StartsWith(t, "Ingress shared pool occupancy per PG")) {
      // `show priority-group drop counters` / `... [persistent-]watermark headroom|shared`.
      mode = StartsWith(t, "Ingress PG dropped") ? Mode::kPgDrops : Mode::kPgWatermark;
      pg_table = std::string(t.substr(0, t.find(':')));
      pg_cols.clear();
      continue;
    }
    if ((mode == Mode::kPgDrops || mode == Mode::kPgWatermark) && StartsWith(t, "Port ")) {
      pg_cols = Words(t);
      continue;
    }
    if (t.find("Lossless priorities") != std::string_view::npos) {
      mode = Mode::kPfc;
      continue;
    }
    if ((t.find("TxQ") != std::string_view::npos || t.find("Voq") != std::string_view::npos) &&
        t.find("Drop/pkts") != std::string_view::npos) {
      // `show queue counters` (TxQ) or its `--voq` form (Voq: one row per
      // system port and virtual output queue of a chassis).
      mode = Mode::kCounters;
      auto it = std::find(cols.begin(), cols.end(), "Drop/pkts");
      drop_col = static_cast<size_t>(it - cols.begin());
      continue;
    }
    if (t.find("PFC0") != std::string_view::npos && t.find("PFC7") != std::string_view::npos &&
        t.find("Port") != std::string_view::npos) {
      // `show pfc counters`: "Port Rx" / "Port Tx" header, then one row per port.
      mode = Mode::kPfcFrames;
      pfc_frames_rx = t.find("Tx") == std::string_view::npos;
      continue;
    }
    if (StartsWith(t, "PORT") && t.find("ACTION") != std::string_view::npos) {
      mode = Mode::kPfcwd;
      saw_pfcwd = true;
      continue;
    }
    if (StartsWith(t, "Interface") && t.find("Speed") != std::string_view::npos) {
      mode = Mode::kStatus;
      auto it = std::find(cols.begin(), cols.end(), "Speed");
      speed_col = static_cast<size_t>(it - cols.begin());
      continue;
    }
    std::vector<std::string> w = Words(t);
    switch (mode) {
      case Mode::kBlock:
        if (w.size() >= 2) {
          blocks.back().kv[w[0]] = {w[1], l.number};
        } else {
          throw InputError(where, Expected("a \"key  value\" row", std::string(t)));
        }
        break;
      case Mode::kPfc: {
        PortQos& p = touch(w[0], l.number);
        p.pfc_stated = true;
        if (w.size() >= 2 && w[1] != "N/A")
          p.pfc_priorities =
              ParsePriorityList(w[1], {file, l.number, w[0] + ".lossless_priorities"});
        break;
      }
      case Mode::kCounters: {
        std::smatch m;
        if (w.size() <= drop_col)
          throw InputError(where, Expected("a queue counter row", std::string(t)));
        if (!std::regex_match(w[1], m, kQueue)) break;  // multicast / ALL queues
        PortQos& p = touch(w[0], l.number);
        std::string v = w[drop_col];
        v.erase(std::remove(v.begin(), v.end(), ','), v.end());
        if (v == "N/A") break;
        int64_t drops = ParseInt(v, {file, l.number, w[0] + ".Drop/pkts"}, "a packet count");
        p.queue_drops[std::stoi(m[1].str()) & 0xff] += drops;
        break;
      }
      case Mode::kPfcwd:
        touch(w[0], l.number).pfc_watchdog = true;
        break;
      case Mode::kStatus: {
        std::vector<std::string> c = Columns(t);
        if (c.size() <= speed_col) break;
        PortQos& p = touch(c[0], l.number);
        std::string sp = c[speed_col];
        if (!sp.empty() && (sp.back() == 'G' || sp.back() == 'g')) {
          sp.pop_back();
          p.speed_gbps = ParseInt(sp, {file, l.number, c[0] + ".speed"}, "a speed like 100G");
        }
        break;
      }
      case Mode::kPfcFrames: {
        if (w.size() < 9)
          throw InputError(where, Expected("a PFC counter row: port and 8 counts", std::string(t)));
        PortQos& p = touch(w[0], l.number);
        for (int prio = 0; prio < 8; ++prio) {
          std::string v = w[static_cast<size_t>(prio) + 1];
          v.erase(std::remove(v.begin(), v.end(), ','), v.end());
          if (v == "N/A") continue;
          int64_t n =
              ParseInt(v, {file, l.number, w[0] + ".PFC" + std::to_string(prio)}, "a frame count");
          (pfc_frames_rx ? p.pfc_rx_frames : p.pfc_tx_frames)[prio] += n;
        }
        break;
      }
      case Mode::kPgDrops:
      case Mode::kPgWatermark: {
        if (pg_cols.size() < 2 || w.size() != pg_cols.size())
          throw InputError(where, Expected("a row of port and one count per PG column of the "
                                           "header above",
                                           std::string(t)));
        PortQos& p = touch(w[0], l.number);
        for (size_t i = 1; i < w.size(); ++i) {
          if (w[i] == "N/A") continue;
          if (!StartsWith(pg_cols[i], "PG"))
            throw InputError(where, Expected("PG<n> column headings", pg_cols[i]));
          int pg = static_cast<int>(
              ParseInt(pg_cols[i].substr(2), {file, l.number, "header"}, "a PG number"));
          int64_t n = ParseInt(w[i], {file, l.number, w[0] + "." + pg_cols[i]}, "a count");
          if (mode == Mode::kPgDrops) {
            p.pg_drops[pg] += n;
          } else if (n > pg_peak[pg_table].first) {
            pg_peak[pg_table] = {n, w[0] + " " + pg_cols[i]};
          }
        }
        break;
      }
      case Mode::kSkipBlock:
        break;
      case Mode::kNone:
        throw InputError(where, Expected("SONiC show output (Pool:, Profile:, or a known table)",
                                         std::string(t)));
    }
  }

  // Pools and profiles.
  std::map<std::string, BufferAmount> pools;
  auto bytes_of = [&](const Block& b, const std::string& key) -> std::optional<BufferAmount> {
    auto it = b.kv.find(key);
    if (it == b.kv.end()) return std::nullopt;
    Location where{file, it->second.second, b.name + "." + key};
    int64_t v = ParseInt(it->second.first, where, "a byte count");
    if (v < 0) throw InputError(where, Expected("a byte count >= 0", it->second.first));
    return BufferAmount::Bytes(v);
  };
  for (const Block& b : blocks)
    if (b.kind == "Pool")
      if (auto s = bytes_of(b, "size")) pools[b.name] = *s;
  for (const char* name : {"ingress_lossless_pool", "egress_lossless_pool"}) {
    if (auto it = pools.find(name); it != pools.end() && !cfg.lossless_pool) {
      cfg.lossless_pool = it->second;
      cfg.lossless_pool_name = name;
    }
  }
  auto limit_of = [&](const Block& b) {
    BufferLimit lim;
    if (auto st = bytes_of(b, "static_th")) {
      lim.static_size = st;
    } else if (auto it = b.kv.find("dynamic_th"); it != b.kv.end()) {
      Location where{file, it->second.second, b.name + ".dynamic_th"};
      int64_t dt = ParseInt(it->second.first, where, "an integer -8..8");
      if (dt < -8 || dt > 8)
        throw InputError(where, Expected("an integer -8..8", it->second.first));
      lim.alpha = std::ldexp(1.0, static_cast<int>(dt));
      if (auto pit = b.kv.find("pool"); pit != b.kv.end()) {
        lim.pool_name = RefName(pit->second.first);
        if (auto pool = pools.find(lim.pool_name); pool != pools.end()) lim.pool = pool->second;
      }
    }
    return lim;
  };
  const Block* pg = nullptr;
  const Block* egress = nullptr;
  const Block* wred = nullptr;
  int lossless_profiles = 0;
  for (const Block& b : blocks) {
    if (b.kind != "Profile") continue;
    if (b.kv.count("xoff")) {
      ++lossless_profiles;
      if (!pg || bytes_of(b, "xoff")->value < bytes_of(*pg, "xoff")->value) pg = &b;
    } else if (b.kv.count("green_min_threshold") || b.kv.count("ecn")) {
      auto e = b.kv.find("ecn");
      bool enabled = e != b.kv.end() && e->second.first != "ecn_none";
      if (!wred || (enabled && wred->kv.find("ecn")->second.first == "ecn_none")) wred = &b;
    } else if (b.name == "egress_lossless_profile") {
      egress = &b;
    }
  }
  for (const auto& [title, peak] : pg_peak)
    cfg.notes.push_back(fmt::format(
        "{}: the highest watermark is {} B ({}); watermarks show buffer use, not settings, so "
        "they are reported, not judged",
        title, peak.first, peak.second));
  if (lossless_profiles > 1)
    cfg.notes.push_back("several lossless PG profiles; checked the one with the smallest xoff, " +
                        pg->name);

  if (ports.empty()) {
    if (!pg && !wred) return cfg;
    PortQos all;
    all.name = "*";
    touch("*", 1);
    cfg.notes.emplace_back("no per-port tables in the input; profiles checked as if on all ports");
  }
  std::optional<int64_t> name_speed;
  std::optional<double> name_cable;
  if (pg) {
    static const std::regex kName(R"(pg_lossless_(\d+)_(\d+)m_profile)");
    std::smatch m;
    std::string n = pg->name;
    if (std::regex_match(n, m, kName) && m[1].str().size() < 9 && m[2].str().size() < 6) {
      name_speed = std::stoll(m[1].str()) / 1000;
      name_cable = std::stod(m[2].str());
      cfg.notes.push_back("port speed and cable length taken from profile name " + n);
    }
  }
  cfg.ecn_stated = wred != nullptr;
  if (wred)
    cfg.notes.push_back("show text has no queue-to-WRED mapping; WRED profile " + wred->name +
                        " assumed on the lossless queues");
  for (const std::string& name : port_order) {
    PortQos& p = ports[name];
    if (saw_pfcwd && !p.pfc_watchdog) p.pfc_watchdog = false;
    if (!p.speed_gbps) p.speed_gbps = name_speed;
    if (!p.cable_m) p.cable_m = name_cable;
    std::set<int> lossless = p.pfc_stated ? p.pfc_priorities : std::set<int>{3, 4};
    for (int prio : lossless) {
      if (pg) {
        LosslessPg l;
        l.pfc_trigger = limit_of(*pg);
        l.xon = bytes_of(*pg, "xon");
        l.headroom = bytes_of(*pg, "xoff");
        if (!pg->kv.count("xon_offset")) l.reserve = bytes_of(*pg, "size");
        l.source = pg->name;
        l.line = pg->line;
        p.pgs[prio] = l;
      }
      if (egress) p.queue_limit[prio] = limit_of(*egress);
      if (wred) {
        EcnQueue e;
        auto ecn = wred->kv.find("ecn");
        e.enabled = ecn != wred->kv.end() && ecn->second.first != "ecn_none";
        e.kmin = bytes_of(*wred, "green_min_threshold");
        e.kmax = bytes_of(*wred, "green_max_threshold");
        if (auto pr = wred->kv.find("green_drop_probability"); pr != wred->kv.end())
          e.pmax_percent = static_cast<double>(ParseInt(
              pr->second.first, {file, pr->second.second, wred->name + ".green_drop_probability"},
              "a percentage"));
        e.source = wred->name;
        e.line = wred->line;
        p.ecn[prio] = e;
      }
    }
    cfg.ports.push_back(p);
  }
  return cfg;
}

}  // namespace lossless::audit::qos::internal
