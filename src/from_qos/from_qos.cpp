#include "from_qos/from_qos.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/error.hpp"
#include "profile/profile.hpp"
#include "scenario/scenario.hpp"
#include "units/units.hpp"

namespace lossless::from_qos {
namespace {

namespace qos = audit::qos;

// One value of the scenario: from the profile (`line` < 0) or the config.
struct Entry {
  std::string key;  // dotted: "fabric.pfc.xoff"
  std::string value;
  std::string comment;
  bool from_config = false;
  int64_t line = 0;  // config line, 0 = not recorded
  std::string profile_value;  // the profile's value of the key ("" = the profile does not set it)
};

void Flatten(const YAML::Node& n, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) Flatten(kv.second, prefix + "." + kv.first.Scalar(), out);
  } else if (n.IsScalar()) {
    out.emplace_back(prefix, n.Scalar());
  }
}

std::string Quote(const std::string& v) {
  if (v.empty() || v.find_first_of(":#{}[],&*!|>'\"%@`") != std::string::npos || v.front() == ' ' ||
      v.back() == ' ')
    return fmt::format("\"{}\"", v);
  return v;
}

std::string Where(const std::string& file, int64_t line) {
  return line > 0 ? fmt::format("{}:{}", file, line) : file + " (line not recorded by the reader)";
}

class Builder {
 public:
  Builder(const std::string& file, const std::string& profile) : file_(file), profile_(profile) {}

  void AddDefault(const std::string& key, const std::string& value) {
    Entry e;
    e.key = key;
    e.value = value;
    e.profile_value = value;
    e.comment = fmt::format("default (profile {})", profile_);
    entries_.push_back(std::move(e));
  }

  // A config value; `what` says what in the config it is.
  void Set(const std::string& key, const std::string& value, int64_t line, const std::string& what) {
    Entry* e = Find(key);
    if (e == nullptr) {
      entries_.push_back(Entry{key, "", "", false, 0, ""});
      e = &entries_.back();
    }
    e->value = value;
    e->from_config = true;
    e->line = line;
    e->comment = Where(file_, line) + ": " + what;
  }

  Entry* Find(const std::string& key) {
    for (Entry& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }

  // Puts `key` back to the profile's value (or drops it when the profile has none).
  void Revert(const std::string& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key != key) continue;
      if (it->profile_value.empty()) {
        entries_.erase(it);
      } else {
        it->value = it->profile_value;
        it->from_config = false;
        it->comment = fmt::format("default (profile {}); the config's value was not usable (see below)", profile_);
      }
      return;
    }
  }

  const std::vector<Entry>& entries() const { return entries_; }

  // The nested YAML of the entries under `section` ("fabric", "topology").
  std::string Section(const std::string& section) const {
    std::vector<const Entry*> in;
    for (const Entry& e : entries_)
      if (e.key.rfind(section + ".", 0) == 0) in.push_back(&e);
    std::string out = section + ":\n";
    Emit(in, section.size() + 1, 1, out);
    return out;
  }

 private:
  // Entries share `skip` leading characters; groups by the next component in
  // first-appearance order.
  static void Emit(const std::vector<const Entry*>& in, size_t skip, int depth, std::string& out) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<const Entry*>> groups;
    for (const Entry* e : in) {
      const std::string rest = e->key.substr(skip);
      const size_t dot = rest.find('.');
      const std::string head = dot == std::string::npos ? rest : rest.substr(0, dot);
      if (!groups.count(head)) order.push_back(head);
      groups[head].push_back(e);
    }
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    for (const std::string& head : order) {
      const auto& g = groups[head];
      if (g.size() == 1 && g[0]->key.size() == skip + head.size()) {
        out += fmt::format("{}{}: {}   # {}\n", indent, head, Quote(g[0]->value), g[0]->comment);
      } else {
        out += fmt::format("{}{}:\n", indent, head);
        std::vector<const Entry*> sub;
        for (const Entry* e : g)
          if (e->key.size() > skip + head.size()) sub.push_back(e);
        Emit(sub, skip + head.size() + 1, depth + 1, out);
      }
    }
  }

  std::string file_, profile_;
  std::vector<Entry> entries_;
};

std::string PortName(const qos::PortQos& p) { return p.name == "*" ? "all ports" : p.name; }

std::string Bytes(int64_t b) { return units::FormatBytes(units::Bytes(b)); }

// Bytes of an amount; nullopt for cells without a cell size.
std::optional<int64_t> ToBytes(const qos::BufferAmount& a, int64_t cell_bytes) { return a.ToBytes(cell_bytes); }

std::string List(const std::vector<std::string>& names, size_t max = 4) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) {
    if (i) s += ", ";
    s += names[i];
  }
  if (names.size() > max) s += fmt::format(" (+{} more)", names.size() - max);
  return s;
}

// "1-3, 7, 9-12"
std::string Ranges(const std::vector<int64_t>& lines) {
  std::string s;
  size_t i = 0;
  while (i < lines.size()) {
    size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    s += j == i ? fmt::format("{}", lines[i]) : fmt::format("{}-{}", lines[i], lines[j]);
    i = j + 1;
  }
  return s;
}

// Mapping one setting over ports: the first port that states it gives the
// value; ports that state a different one are collected for the ignored list.
template <typename Get>
void PerPort(const qos::QosConfig& cfg, const Get& get, const qos::PortQos** first, std::string* value,
             std::vector<std::string>* differ) {
  for (const qos::PortQos& p : cfg.ports) {
    const std::optional<std::string> v = get(p);
    if (!v) continue;
    if (*first == nullptr) {
      *first = &p;
      *value = *v;
    } else if (*v != *value) {
      differ->push_back(fmt::format("{} {}", p.name, *v));
    }
  }
}

// The PFC trigger (XOFF) in bytes of the profile as the simulator resolves
// it (its presets and defaults included); -1 when it does not load.
int64_t ProfileXoff(const std::string& profile_text, const std::string& profile_path) {
  try {
    return scenario::LoadFabricText(profile_text, profile_path).net.pfc.xoff.count();
  } catch (const InputError&) {
    return -1;
  }
}

}  // namespace

Result FromQos(const qos::QosConfig& cfg, const std::string& file, const Options& o) {
  Result r;
  std::string profile_path;
  const std::string profile_text = profile::ProfileText(o.profile, &profile_path, {"<cli>", 0, o.profile_flag});
  const YAML::Node root = YAML::Load(profile_text);
  Builder b(file, o.profile);
  std::vector<std::pair<std::string, std::string>> flat;
  Flatten(root["fabric"], "fabric", flat);
  Flatten(root["topology"], "topology", flat);
  for (const auto& [k, v] : flat) b.AddDefault(k, v);

  auto ignore = [&](int64_t line, const std::string& what) { r.ignored.push_back(Where(file, line) + ": " + what); };
  auto differ_note = [&](const std::string& key, const qos::PortQos* first, const std::vector<std::string>& d) {
    if (d.empty()) return;
    ignore(first->line, fmt::format("{} other port(s) set {} differently: {} (the simulator applies one value to "
                                    "every switch port; {}'s is used)",
                                    d.size(), key, List(d), PortName(*first)));
  };

  // Lossless priorities.
  std::set<int> prios;
  const qos::PortQos* pfc_port = nullptr;
  for (const qos::PortQos& p : cfg.ports) {
    if (!p.pfc_stated) continue;
    if (pfc_port == nullptr) pfc_port = &p;
    prios.insert(p.pfc_priorities.begin(), p.pfc_priorities.end());
  }
  std::optional<int> prio;
  if (pfc_port != nullptr) {
    if (prios.empty()) {
      b.Set("fabric.pfc.enabled", "false", pfc_port->line, "no priority has PFC");
    } else {
      prio = *prios.begin();
      b.Set("fabric.pfc.enabled", "true", pfc_port->line,
            fmt::format("PFC on priorit{} {}", prios.size() > 1 ? "ies" : "y",
                        [&] {
                          std::string s;
                          for (int q : prios) {
                            if (!s.empty()) s += ",";
                            s += std::to_string(q);
                          }
                          return s;
                        }()));
      b.Set("fabric.pfc.priority", std::to_string(*prio), pfc_port->line, "the lowest lossless priority");
      b.Set("fabric.data_class", std::to_string(*prio), pfc_port->line,
            "the RoCE data runs on the lossless priority");
      for (int q : prios)
        if (q != *prio)
          ignore(pfc_port->line, fmt::format("PFC on priority {} (the simulator models one lossless priority, {})",
                                             q, *prio));
    }
  }
  for (const qos::PortQos& p : cfg.ports) {
    if (p.link_pause && *p.link_pause && prios.empty()) {
      b.Set("fabric.pfc.enabled", "true", p.line, "802.3x link-level pause");
      b.Set("fabric.pfc.mode", "global", p.line, "802.3x link-level pause on every class");
      break;
    }
  }
  const int pfc_prio = prio.value_or(3);

  // The lossless priority's PG: trigger, xon, headroom.
  int64_t trigger_bytes = -1;  // the config's PFC trigger in bytes (-1: not stated)
  int64_t trigger_line = 0;
  {
    const qos::PortQos* first = nullptr;
    std::string v;
    std::vector<std::string> d;
    std::string what;
    PerPort(cfg,
            [&](const qos::PortQos& p) -> std::optional<std::string> {
              auto it = p.pgs.find(pfc_prio);
              if (it == p.pgs.end() || !it->second.pfc_trigger.Stated()) return std::nullopt;
              return it->second.pfc_trigger.Describe();
            },
            &first, &v, &d);
    if (first != nullptr) {
      const qos::LosslessPg& pg = first->pgs.at(pfc_prio);
      const std::optional<int64_t> bytes = pg.pfc_trigger.ResolveBytes(o.cell_bytes);
      trigger_line = pg.line;
      if (!bytes) {
        ignore(pg.line, fmt::format("PFC trigger of priority {} ({}): no size in bytes (a pool of unknown size, or "
                                    "cells without --cell-bytes)",
                                    pfc_prio, v));
      } else if (pg.pfc_trigger.static_size) {
        trigger_bytes = *bytes;
        b.Set("fabric.pfc.xoff", Bytes(*bytes), pg.line,
              fmt::format("PFC trigger of priority {} ({}{})", pfc_prio, v,
                          pg.source.empty() ? "" : ", " + pg.source));
      } else {
        trigger_bytes = *bytes;
        b.Set("fabric.pfc.xoff", Bytes(*bytes), pg.line,
              fmt::format("PFC trigger of priority {}: {}{}; as one congested queue on an empty pool sees it, "
                          "alpha x pool / (1 + alpha) (approximation: the simulator's XOFF is static)",
                          pfc_prio, v, pg.source.empty() ? "" : " (" + pg.source + ")"));
      }
      differ_note("the PFC trigger", first, d);
      if (pg.headroom) {
        if (const auto h = ToBytes(*pg.headroom, o.cell_bytes))
          b.Set("fabric.pfc.headroom", Bytes(*h), pg.line, fmt::format("headroom of priority {}", pfc_prio));
        else
          ignore(pg.line, fmt::format("headroom {} in cells without --cell-bytes", pg.headroom->ToString()));
      }
      if (pg.xon) {
        const auto x = ToBytes(*pg.xon, o.cell_bytes);
        if (x && trigger_bytes > 0 && *x < trigger_bytes)
          b.Set("fabric.pfc.xon", Bytes(*x), pg.line, fmt::format("XON of priority {}", pfc_prio));
        else
          ignore(pg.line, fmt::format("xon {} of priority {}: not a resume threshold below the trigger in bytes "
                                      "(a reserve, or cells without --cell-bytes); the simulator's default "
                                      "(XOFF minus one frame) applies",
                                      pg.xon->ToString(), pfc_prio));
      }
    }
    std::set<std::pair<int64_t, int>> seen;
    for (const qos::PortQos& p : cfg.ports)
      for (const auto& [q, pg] : p.pgs)
        if (q != pfc_prio && seen.insert({pg.line, q}).second)
          ignore(pg.line, fmt::format("lossless PG of priority {} (the simulator models one lossless priority)", q));
  }

  // PFC watchdog.
  {
    const qos::PortQos* first = nullptr;
    std::string v;
    std::vector<std::string> d;
    PerPort(cfg,
            [](const qos::PortQos& p) -> std::optional<std::string> {
              if (!p.pfc_watchdog) return std::nullopt;
              return *p.pfc_watchdog ? "true" : "false";
            },
            &first, &v, &d);
    if (first != nullptr) {
      b.Set("fabric.pfc.watchdog.enabled", v, first->line, v == "true" ? "PFC watchdog on" : "no PFC watchdog");
      differ_note("the PFC watchdog", first, d);
    }
  }

  // ECN on the lossless priority's queue.
  const int ecn_queue = cfg.QueueOf(pfc_prio);
  {
    const qos::PortQos* first = nullptr;
    std::string v;
    std::vector<std::string> d;
    PerPort(cfg,
            [&](const qos::PortQos& p) -> std::optional<std::string> {
              auto it = p.ecn.find(ecn_queue);
              if (it == p.ecn.end()) return std::nullopt;
              const qos::EcnQueue& e = it->second;
              return fmt::format("{} {} {} {}", e.enabled, e.kmin ? e.kmin->ToString() : "-",
                                 e.kmax ? e.kmax->ToString() : "-", e.pmax_percent.value_or(-1));
            },
            &first, &v, &d);
    if (first != nullptr) {
      const qos::EcnQueue& e = first->ecn.at(ecn_queue);
      const std::string q = fmt::format("queue {} (priority {})", ecn_queue, pfc_prio);
      b.Set("fabric.ecn.enabled", e.enabled ? "true" : "false", e.line,
            fmt::format("ECN {} on {}{}", e.enabled ? "marking" : "off", q, e.source.empty() ? "" : ", " + e.source));
      if (e.enabled) {
        auto amount = [&](const std::optional<qos::BufferAmount>& a, const char* key, const char* label) {
          if (!a) return;
          if (const auto x = ToBytes(*a, o.cell_bytes))
            b.Set(key, Bytes(*x), e.line, fmt::format("{} on {}", label, q));
          else
            ignore(e.line, fmt::format("{} {} on {} in cells without --cell-bytes", label, a->ToString(), q));
        };
        amount(e.kmin, "fabric.ecn.kmin", "ECN Kmin");
        amount(e.kmax, "fabric.ecn.kmax", "ECN Kmax");
        if (e.pmax_percent)
          b.Set("fabric.ecn.pmax", fmt::format("{:g}", *e.pmax_percent / 100), e.line,
                fmt::format("marking probability {:g} % at Kmax on {}", *e.pmax_percent, q));
        // Thresholds stated as fill levels, shares of the queue's buffer (Junos
        // drop profiles, docs/from-qos.md, "Fill levels"): bytes of the buffer
        // available to the queue, as the audit takes it
        // (docs/audit-qos.md, "Buffer available to the queue"): the config's PFC trigger, else
        // the profile's, marked as such.
        if ((e.kmin_percent && !e.kmin) || (e.kmax_percent && !e.kmax)) {
          int64_t buffer = trigger_bytes;
          std::string of;
          if (buffer > 0) {
            of = fmt::format("the PFC trigger of priority {} ({} B, {})", pfc_prio, buffer,
                             Where(file, trigger_line));
          } else {
            buffer = ProfileXoff(profile_text, profile_path);
            of = fmt::format("the PFC trigger of priority {} ({} B) from the profile {}: the config states no "
                             "buffer for the queue in bytes",
                             pfc_prio, buffer, o.profile);
          }
          auto share = [&](const std::optional<double>& pct, const char* key, const char* label) {
            if (!pct) return;
            const int64_t bytes = std::llround(*pct / 100.0 * static_cast<double>(buffer));
            b.Set(key, Bytes(bytes), e.line,
                  fmt::format("{} at fill level {:g} % of the queue's buffer on {}, taken as {}", label, *pct, q, of));
          };
          if (buffer > 0) {
            if (!e.kmin) share(e.kmin_percent, "fabric.ecn.kmin", "ECN Kmin");
            if (!e.kmax) share(e.kmax_percent, "fabric.ecn.kmax", "ECN Kmax");
          } else {
            ignore(e.line, fmt::format("ECN thresholds as a share of the queue's buffer on {}: no buffer size in "
                                       "bytes to take them of",
                                       q));
          }
        }
      }
      differ_note("ECN on the lossless queue", first, d);
    } else if (cfg.ecn_stated && prio) {
      b.Set("fabric.ecn.enabled", "false", pfc_port ? pfc_port->line : 0,
            fmt::format("the config states ECN and queue {} (priority {}) has none", ecn_queue, pfc_prio));
    }
    std::set<std::pair<int64_t, int>> seen;
    for (const qos::PortQos& p : cfg.ports)
      for (const auto& [qu, e] : p.ecn)
        if (qu != ecn_queue && e.enabled && seen.insert({e.line, qu}).second)
          ignore(e.line, fmt::format("ECN on queue {} (the simulator marks the lossless class's queue only)", qu));
  }

  // Buffer pool, speed, cable.
  if (cfg.lossless_pool) {
    if (const auto x = ToBytes(*cfg.lossless_pool, o.cell_bytes)) {
      int64_t line = 0;
      b.Set("fabric.buffer", Bytes(*x), line,
            fmt::format("lossless pool {}: the simulator's one shared buffer per switch is the pool lossless "
                        "traffic uses (approximation)",
                        cfg.lossless_pool_name.empty() ? "(unnamed)" : cfg.lossless_pool_name));
    } else {
      ignore(0, fmt::format("lossless pool {} in cells without --cell-bytes", cfg.lossless_pool->ToString()));
    }
  }
  {
    const qos::PortQos* first = nullptr;
    std::string v;
    std::vector<std::string> d;
    PerPort(cfg,
            [](const qos::PortQos& p) -> std::optional<std::string> {
              if (!p.speed_gbps) return std::nullopt;
              return fmt::format("{}Gbps", *p.speed_gbps);
            },
            &first, &v, &d);
    if (first != nullptr) {
      b.Set("fabric.link_rate", v, first->line, fmt::format("speed of {}", PortName(*first)));
      differ_note("the port speed", first, d);
    }
  }
  {
    const qos::PortQos* first = nullptr;
    std::string v;
    std::vector<std::string> d;
    PerPort(cfg,
            [](const qos::PortQos& p) -> std::optional<std::string> {
              if (!p.cable_m) return std::nullopt;
              return fmt::format("{:g}", *p.cable_m);
            },
            &first, &v, &d);
    if (first != nullptr) {
      b.Set("fabric.cable_length", v, first->line, fmt::format("cable length of {} (metres)", PortName(*first)));
      differ_note("the cable length", first, d);
    }
  }

  // Parsed, not modelled: one line per kind, naming the ports' lines.
  {
    std::vector<int64_t> limit_lines, counter_lines;
    size_t limit_ports = 0, counter_ports = 0;
    for (const qos::PortQos& p : cfg.ports) {
      if (!p.queue_limit.empty()) {
        ++limit_ports;
        if (p.line > 0) limit_lines.push_back(p.line);
      }
      if (!p.queue_drops.empty() || !p.pg_drops.empty() || !p.pfc_rx_frames.empty() || !p.pfc_tx_frames.empty() ||
          p.pfc_wd_status) {
        ++counter_ports;
        if (p.line > 0) counter_lines.push_back(p.line);
      }
    }
    auto lines = [&](std::vector<int64_t> v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      return v.empty() ? file + " (lines not recorded by the reader)" : fmt::format("{} lines {}", file, Ranges(v));
    };
    if (limit_ports > 0)
      r.ignored.push_back(fmt::format("{}: egress queue limits of {} port(s) (not modelled: the simulator's queues "
                                      "share fabric.buffer)",
                                      lines(limit_lines), limit_ports));
    if (counter_ports > 0)
      r.ignored.push_back(fmt::format("{}: counters of {} port(s) (observations, not settings)",
                                      lines(counter_lines), counter_ports));
    if (!cfg.scheduling.empty()) ignore(0, "egress scheduling per queue (the simulator serves one data class)");
    if (!cfg.dscp_to_queue.empty() || !cfg.priority_to_queue.empty())
      ignore(0, "DSCP / priority to queue maps (used to find the lossless queue; not modelled otherwise)");
  }
  std::vector<int64_t> unused;
  for (const qos::SkippedLine& s : cfg.skipped) {
    if (s.unreadable) ignore(s.line, "the QoS reader could not read a value here: " + s.reason);
    else unused.push_back(s.line);
  }

  // Load it; a value the simulator refuses goes back to the profile's.
  const std::string name = "from-qos";
  auto render = [&] {
    std::string y;
    y += fmt::format("# Scenario from the switch QoS config {} (format {}), by lossless scenario from-qos\n", file,
                     qos::QosFormatName(cfg.format));
    y += fmt::format("# (docs/from-qos.md). Values the config does not set come from\n"
                     "# the profile {} ({}), marked default. DCQCN is a NIC setting and no NIC\n"
                     "# configuration was read: fabric.cc and fabric.dcqcn.* are the profile's.\n",
                     o.profile, profile_path);
    y += "name: " + name + "\n";
    y += "description: " + Quote(fmt::format("From {} ({}), profile {} for the rest", file,
                                             qos::QosFormatName(cfg.format), o.profile)) +
         "\n";
    y += b.Section("fabric");
    y += b.Section("topology");
    if (!r.unmapped.empty()) {
      y += "# Not mapped (the simulator refused the config's value; the profile's is used):\n";
      for (const auto& s : r.unmapped) y += "#   " + s + "\n";
    }
    if (!r.ignored.empty()) {
      y += "# Ignored (parsed, not modelled by the simulator):\n";
      for (const auto& s : r.ignored) y += "#   " + s + "\n";
    }
    if (!unused.empty()) y += fmt::format("# Lines the QoS reader did not use: {}\n", Ranges(unused));
    return y;
  };
  for (size_t attempt = 0;; ++attempt) {
    r.yaml = render();
    try {
      const scenario::Scenario s = scenario::LoadFabricText(r.yaml, file + ".scenario.yaml");
      r.warnings = s.warnings;
      break;
    } catch (const InputError& e) {
      const Entry* bad = nullptr;
      for (const Entry& en : b.entries())
        if (en.from_config && en.key == e.where().field) bad = &en;
      // A check across fields (XOFF + headroom above the buffer) names one of
      // them; without a named config field, give up the config's values one
      // at a time from the last mapped.
      if (bad == nullptr)
        for (const Entry& en : b.entries())
          if (en.from_config) bad = &en;
      if (bad == nullptr || attempt > b.entries().size()) throw;
      r.unmapped.push_back(fmt::format("{}: {} = {} not used: {}", Where(file, bad->line), bad->key, bad->value,
                                       e.message()));
      b.Revert(bad->key);
    }
  }
  for (const Entry& e : b.entries()) {
    if (e.from_config) r.mapped.push_back(fmt::format("{} = {}  <- {}", e.key, e.value, e.comment));
    else ++r.defaults;
  }
  if (!r.warnings.empty()) {
    r.yaml += "# Warnings of the loaded scenario:\n";
    for (const auto& w : r.warnings) r.yaml += "#   " + w + "\n";
  }
  return r;
}

}  // namespace lossless::from_qos
