// SONiC config_db.json: BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG, BUFFER_QUEUE,
// WRED_PROFILE, QUEUE, SCHEDULER, PORT_QOS_MAP, DSCP_TO_TC_MAP,
// TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, PFC_PRIORITY_TO_QUEUE_MAP,
// PFC_WD, PORT, CABLE_LENGTH. Other tables are ignored.
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos::internal {

namespace {

using Json = nlohmann::json;

class SonicJsonReader {
 public:
  SonicJsonReader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  QosConfig Read();

 private:
  struct Profile {
    std::string name;
    std::string pool;
    std::optional<BufferAmount> xon, xoff, size, static_th;
    std::optional<int64_t> dynamic_th;
    bool xon_offset = false;  // Broadcom-style profile: size is the PG minimum
    int64_t line = 0;
  };

  Location Where(const std::string& table, const std::string& key = "",
                 const std::string& field = "") const {
    std::string dotted = table;
    if (!key.empty()) dotted += "." + key;
    if (!field.empty()) dotted += "." + field;
    return {file_, LineOf(table, key), dotted};
  }
  // Line of `key` inside `table` (first occurrence after the table's name).
  int64_t LineOf(const std::string& table, const std::string& key) const {
    std::string tneedle = "\"" + table + "\"";
    size_t tpos = text_.find(tneedle);
    if (tpos == std::string_view::npos) {
      // A flattened dump: "TABLE|key" at the top level.
      tpos = text_.find("\"" + table + "|" + key + "\"");
      if (tpos == std::string_view::npos) tpos = text_.find("\"" + table + "|");
      if (tpos == std::string_view::npos) return 0;
      int64_t line = 1;
      for (size_t i = 0; i < tpos; ++i)
        if (text_[i] == '\n') ++line;
      return line;
    }
    size_t pos = tpos;
    if (!key.empty()) {
      size_t kpos = text_.find("\"" + key + "\"", tpos);
      if (kpos != std::string_view::npos) pos = kpos;
    }
    int64_t line = 1;
    for (size_t i = 0; i < pos; ++i)
      if (text_[i] == '\n') ++line;
    return line;
  }

  const Json* Table(const std::string& name) const {
    auto it = root_.find(name);
    if (it == root_.end()) return nullptr;
    if (!it->is_object()) throw InputError(Where(name), Expected("a JSON object", it->dump()));
    return &*it;
  }
  std::string Str(const Json& v, const Location& where) const {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    throw InputError(where, Expected("a string", v.dump()));
  }
  std::optional<std::string> Field(const Json& obj, const std::string& table,
                                   const std::string& key, const std::string& field) const {
    if (!obj.is_object())
      throw InputError(Where(table, key), Expected("a JSON object", obj.dump()));
    auto it = obj.find(field);
    if (it == obj.end()) return std::nullopt;
    return Str(*it, Where(table, key, field));
  }
  std::optional<BufferAmount> BytesField(const Json& obj, const std::string& table,
                                         const std::string& key, const std::string& field) const {
    auto s = Field(obj, table, key, field);
    if (!s) return std::nullopt;
    int64_t v = ParseInt(*s, Where(table, key, field), "a byte count");
    if (v < 0) throw InputError(Where(table, key, field), Expected("a byte count >= 0", *s));
    return BufferAmount::Bytes(v);
  }
  // "[BUFFER_PROFILE|name]" or "name" -> "name".
  static std::string RefName(std::string ref) {
    if (!ref.empty() && ref.front() == '[') ref = ref.substr(1);
    if (!ref.empty() && ref.back() == ']') ref.pop_back();
    size_t bar = ref.find('|');
    if (bar != std::string::npos) ref = ref.substr(bar + 1);
    return ref;
  }
  // "Ethernet0,Ethernet4|3-4" -> ports and indices.
  void SplitKey(const std::string& table, const std::string& key, std::vector<std::string>& ports,
                std::set<int>& indices) const {
    size_t bar = key.find('|');
    if (bar == std::string::npos)
      throw InputError(Where(table, key), Expected("a key PORT|INDEX like \"Ethernet0|3\"", key));
    ports.clear();
    std::string plist = key.substr(0, bar);
    size_t start = 0;
    while (start <= plist.size()) {
      size_t comma = plist.find(',', start);
      if (comma == std::string::npos) comma = plist.size();
      std::string p = plist.substr(start, comma - start);
      if (!p.empty()) ports.push_back(p);
      start = comma + 1;
    }
    indices =
        ParseIntList(key.substr(bar + 1), 0, 15, Where(table, key), "queue or PG indices 0-15");
  }

  // A database dump (`sonic-db-dump -n CONFIG_DB`, the db_migrator test vectors)
  // keys each entry "TABLE|key" at the top level, its value either the fields or
  // {"type": "hash", "value": {fields}}: regroup it as config_db.json tables.
  void Unflatten() {
    Json grouped = Json::object();
    for (const auto& [k, v] : root_.items()) {
      size_t bar = k.find('|');
      if (bar == std::string::npos || bar == 0 || bar + 1 == k.size()) continue;
      const Json& fields =
          (v.is_object() && v.contains("value") && v.contains("type") && v["value"].is_object())
              ? v["value"]
              : v;
      grouped[k.substr(0, bar)][k.substr(bar + 1)] = fields;
    }
    if (!grouped.empty()) root_ = std::move(grouped);
  }
  // A profile a BUFFER_PG / BUFFER_QUEUE entry names: nullptr (and a note) when the
  // input is a fragment without a BUFFER_PROFILE table; an error when the table is
  // there and lacks it.
  const Profile* ProfileRef(const std::string& name, const Location& where,
                            std::set<std::string>& missing) const {
    auto it = profiles_.find(name);
    if (it != profiles_.end()) return &it->second;
    if (!root_.contains("BUFFER_PROFILE")) {
      missing.insert(name);
      return nullptr;
    }
    throw InputError(
        where, "buffer profile " + QuoteForMessage(name) + " is not defined in BUFFER_PROFILE");
  }

  void ReadPools();
  void ReadProfiles();
  std::map<int, int> ReadMap(const std::string& table, const std::string& name, int key_hi,
                             int value_hi) const;
  // The map a port refers to in PORT_QOS_MAP, else the only map of that table.
  std::optional<std::string> MapFor(const std::string& port, const std::string& field,
                                    const std::string& table) const;
  EcnQueue ReadWred(const std::string& name) const;
  BufferLimit LimitOf(const Profile& p) const;

  std::string_view text_;
  const std::string& file_;
  Json root_;
  std::map<std::string, BufferAmount> pools_;
  std::map<std::string, Profile> profiles_;
};

void SonicJsonReader::ReadPools() {
  const Json* t = Table("BUFFER_POOL");
  if (!t) return;
  for (const auto& [name, obj] : t->items()) {
    auto size = BytesField(obj, "BUFFER_POOL", name, "size");
    if (size) pools_[name] = *size;
  }
}

void SonicJsonReader::ReadProfiles() {
  const Json* t = Table("BUFFER_PROFILE");
  if (!t) return;
  for (const auto& [name, obj] : t->items()) {
    Profile p;
    p.name = name;
    p.line = LineOf("BUFFER_PROFILE", name);
    if (auto pool = Field(obj, "BUFFER_PROFILE", name, "pool")) p.pool = RefName(*pool);
    p.xon = BytesField(obj, "BUFFER_PROFILE", name, "xon");
    p.xoff = BytesField(obj, "BUFFER_PROFILE", name, "xoff");
    p.size = BytesField(obj, "BUFFER_PROFILE", name, "size");
    p.xon_offset = Field(obj, "BUFFER_PROFILE", name, "xon_offset").has_value();
    p.static_th = BytesField(obj, "BUFFER_PROFILE", name, "static_th");
    if (auto dt = Field(obj, "BUFFER_PROFILE", name, "dynamic_th")) {
      Location where = Where("BUFFER_PROFILE", name, "dynamic_th");
      int64_t v = ParseInt(*dt, where, "an integer -8..8");
      if (v < -8 || v > 8) throw InputError(where, Expected("an integer -8..8", *dt));
      p.dynamic_th = v;
    }
    profiles_[name] = p;
  }
}

std::map<int, int> SonicJsonReader::ReadMap(const std::string& table, const std::string& name,
                                            int key_hi, int value_hi) const {
  std::map<int, int> out;
  const Json* t = Table(table);
  if (!t) return out;
  auto it = t->find(name);
  if (it == t->end())
    throw InputError(Where(table),
                     "map " + QuoteForMessage(name) + " is referenced but not defined");
  if (!it->is_object()) throw InputError(Where(table, name), Expected("a JSON object", it->dump()));
  for (const auto& [k, v] : it->items()) {
    Location where = Where(table, name, k);
    int64_t key = ParseInt(k, where, "a map key");
    int64_t value = ParseInt(Str(v, where), where, "a map value");
    if (key < 0 || key > key_hi || value < 0 || value > value_hi)
      throw InputError(where, Expected("a value in range", k + ":" + Str(v, where)));
    out[static_cast<int>(key)] = static_cast<int>(value);
  }
  return out;
}

std::optional<std::string> SonicJsonReader::MapFor(const std::string& port,
                                                   const std::string& field,
                                                   const std::string& table) const {
  if (const Json* m = Table("PORT_QOS_MAP")) {
    for (const std::string& key : {port, std::string("global")}) {
      auto it = m->find(key);
      if (it != m->end()) {
        if (auto ref = Field(*it, "PORT_QOS_MAP", key, field)) return RefName(*ref);
      }
    }
  }
  const Json* t = Table(table);
  if (t && t->size() == 1) return t->begin().key();
  return std::nullopt;
}

EcnQueue SonicJsonReader::ReadWred(const std::string& name) const {
  const Json* t = Table("WRED_PROFILE");
  if (!t || !t->contains(name))
    throw InputError(Where("QUEUE"), "WRED profile " + QuoteForMessage(name) +
                                         " is referenced but not defined in WRED_PROFILE");
  const Json& obj = (*t)[name];
  EcnQueue e;
  e.source = "WRED_PROFILE|" + name;
  e.line = LineOf("WRED_PROFILE", name);
  std::string ecn = Field(obj, "WRED_PROFILE", name, "ecn").value_or("ecn_none");
  e.enabled = ecn != "ecn_none" && (ecn.find("green") != std::string::npos || ecn == "ecn_all");
  if (auto g = Field(obj, "WRED_PROFILE", name, "wred_green_enable"); g && *g == "false")
    e.enabled = false;
  e.kmin = BytesField(obj, "WRED_PROFILE", name, "green_min_threshold");
  e.kmax = BytesField(obj, "WRED_PROFILE", name, "green_max_threshold");
  if (auto p = Field(obj, "WRED_PROFILE", name, "green_drop_probability")) {
    Location where = Where("WRED_PROFILE", name, "green_drop_probability");
    int64_t v = ParseInt(*p, where, "a percentage 0-100");
    if (v < 0 || v > 100) throw InputError(where, Expected("a percentage 0-100", *p));
    e.pmax_percent = static_cast<double>(v);
  }
  return e;
}

BufferLimit SonicJsonReader::LimitOf(const Profile& p) const {
  BufferLimit l;
  if (p.static_th) {
    l.static_size = p.static_th;
  } else if (p.dynamic_th) {
    l.alpha = std::ldexp(1.0, static_cast<int>(*p.dynamic_th));
    l.pool_name = p.pool;
    auto it = pools_.find(p.pool);
    if (it != pools_.end()) l.pool = it->second;
  }
  return l;
}

QosConfig SonicJsonReader::Read() {
  try {
    root_ = Json::parse(text_);
  } catch (const Json::parse_error& e) {
    size_t byte = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, text_.size());
    int64_t line = 1;
    for (size_t i = 0; i < byte && i < text_.size(); ++i)
      if (text_[i] == '\n') ++line;
    std::string what = e.what();
    // The parser quotes everything it read of the failing token ("last read:
    // '<U+000A><U+000A>...'", thousands of characters after a run of blank
    // lines): keep the last 40, where it failed.
    const size_t lr = what.find("last read: '");
    if (lr != std::string::npos) {
      const size_t from = lr + 12;
      size_t to = what.find("'; ", from);
      if (to == std::string::npos) to = what.rfind('\'');
      if (to != std::string::npos && to > from + 40)
        what = what.substr(0, from) + "..." + what.substr(to - 40);
    }
    size_t cut = what.find("syntax error");
    if (cut == std::string::npos) cut = what.find("invalid");
    throw InputError({file_, line, ""}, "truncated or invalid JSON: " +
                                            (cut == std::string::npos ? what : what.substr(cut)));
  }
  if (LooksLikeOnyxJson(root_)) return ParseOnyxJson(root_, text_, file_);
  if (!root_.is_object())
    throw InputError({file_, 1, ""}, "expected a JSON object (config_db.json)");
  static const char* const kTables[] = {"BUFFER_PG", "BUFFER_PROFILE", "PORT_QOS_MAP", "WRED_PROFILE",
                                  "QUEUE",     "BUFFER_QUEUE",   "BUFFER_POOL",  "PFC_WD"};
  bool any = false;
  for (const char* t : kTables) any = any || root_.contains(t);
  if (!any) Unflatten();
  for (const char* t : kTables) any = any || root_.contains(t);
  if (!any && root_.contains("DEVICE_METADATA") && root_.contains("PORT")) {
    // A whole config_db.json (device metadata and ports) without any QoS
    // table: the switch runs without PFC, lossless buffers or ECN (SONiC
    // adds them with `config qos reload`). A finding, not bad input.
    QosConfig cfg;
    PortQos all;
    all.name = "*";
    all.line = LineOf("PORT", "");
    all.pfc_stated = true;
    cfg.ports.push_back(all);
    cfg.ecn_stated = true;
    cfg.notes.emplace_back(
        "config_db.json with DEVICE_METADATA and PORT but no QoS table (no PORT_QOS_MAP, "
        "BUFFER_PG, WRED_PROFILE): no priority has PFC and no queue has ECN");
    return cfg;
  }
  if (!any)
    throw InputError({file_, 1, "format"},
                     "JSON without SONiC QoS tables: expected config_db.json with BUFFER_POOL, "
                     "BUFFER_PG, BUFFER_PROFILE, PORT_QOS_MAP, WRED_PROFILE, QUEUE or PFC_WD");

  QosConfig cfg;
  ReadPools();
  ReadProfiles();

  // Port order: first appearance in PORT_QOS_MAP, BUFFER_PG, QUEUE, BUFFER_QUEUE.
  std::vector<std::string> order;
  std::map<std::string, PortQos> ports;
  auto touch = [&](const std::string& name, int64_t line) -> PortQos& {
    auto it = ports.find(name);
    if (it == ports.end()) {
      order.push_back(name);
      PortQos p;
      p.name = name;
      p.line = line;
      it = ports.emplace(name, p).first;
    }
    return it->second;
  };

  if (const Json* m = Table("PORT_QOS_MAP")) {
    for (const auto& [key, obj] : m->items()) {
      if (key == "global") continue;
      PortQos& p = touch(key, LineOf("PORT_QOS_MAP", key));
      p.pfc_stated = true;
      if (auto pfc = Field(obj, "PORT_QOS_MAP", key, "pfc_enable"))
        p.pfc_priorities = ParsePriorityList(*pfc, Where("PORT_QOS_MAP", key, "pfc_enable"));
    }
  }
  std::vector<std::string> key_ports;
  std::set<int> indices;
  std::set<std::string> missing;       // profiles named but not defined in a fragment
  std::set<std::string> wred_missing;  // QUEUE keys whose WRED profile is not in the input
  if (const Json* t = Table("BUFFER_PG")) {
    for (const auto& [key, obj] : t->items()) {
      SplitKey("BUFFER_PG", key, key_ports, indices);
      auto ref = Field(obj, "BUFFER_PG", key, "profile");
      if (!ref) continue;
      std::string prof = RefName(*ref);
      if (prof == "NULL" && !profiles_.count(prof)) continue;
      const Profile* found = ProfileRef(prof, Where("BUFFER_PG", key, "profile"), missing);
      if (found == nullptr) continue;
      const Profile& pr = *found;
      if (!pr.xoff && !pr.xon) continue;  // lossy PG
      for (const std::string& port : key_ports) {
        PortQos& p = touch(port, LineOf("BUFFER_PG", key));
        // PG index -> priorities via TC_TO_PRIORITY_GROUP_MAP (priority == TC in SONiC).
        std::map<int, int> tc_to_pg;
        if (auto name = MapFor(port, "tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"))
          tc_to_pg = ReadMap("TC_TO_PRIORITY_GROUP_MAP", *name, 7, 15);
        for (int prio = 0; prio < 8; ++prio) {
          auto it = tc_to_pg.find(prio);
          int pg = it == tc_to_pg.end() ? prio : it->second;
          if (!indices.count(pg)) continue;
          LosslessPg l;
          l.pfc_trigger = LimitOf(pr);
          l.xon = pr.xon;
          l.headroom = pr.xoff;
          if (!pr.xon_offset) l.reserve = pr.size;
          l.source = "BUFFER_PROFILE|" + pr.name;
          l.line = pr.line;
          p.pgs[prio] = l;
        }
      }
    }
  }
  if (const Json* t = Table("QUEUE")) {
    const Json* sched = Table("SCHEDULER");
    for (const auto& [key, obj] : t->items()) {
      SplitKey("QUEUE", key, key_ports, indices);
      auto wred = Field(obj, "QUEUE", key, "wred_profile");
      auto sref = Field(obj, "QUEUE", key, "scheduler");
      for (const std::string& port : key_ports) {
        PortQos& p = touch(port, LineOf("QUEUE", key));
        for (int q : indices) {
          if (wred && !Table("WRED_PROFILE")) {
            // A fragment (e.g. the QUEUE table `config qos reload` updates) binds a
            // profile defined elsewhere: ECN on the queue is unknown, not absent.
            if (wred_missing.insert(key).second)
              cfg.skipped.push_back({LineOf("QUEUE", key),
                                     "QUEUE|" + key + " wred_profile " + RefName(*wred),
                                     "WRED profile " + QuoteForMessage(RefName(*wred)) +
                                         " is not defined in the input (no WRED_PROFILE table)",
                                     true});
          } else if (wred) {
            p.ecn[q] = ReadWred(RefName(*wred));
          }
          if (sref && sched) {
            std::string sname = RefName(*sref);
            auto sit = sched->find(sname);
            if (sit == sched->end())
              throw InputError(
                  Where("QUEUE", key, "scheduler"),
                  "scheduler " + QuoteForMessage(sname) + " is not defined in SCHEDULER");
            std::string type = text::ToLower(Field(*sit, "SCHEDULER", sname, "type").value_or(""));
            if (!cfg.scheduling.count(q))
              cfg.scheduling[q] = type == "strict" ? Scheduling::kStrict : Scheduling::kWeighted;
          }
        }
      }
    }
  }
  if (const Json* t = Table("BUFFER_QUEUE")) {
    for (const auto& [key, obj] : t->items()) {
      SplitKey("BUFFER_QUEUE", key, key_ports, indices);
      auto ref = Field(obj, "BUFFER_QUEUE", key, "profile");
      if (!ref) continue;
      const Profile* found =
          ProfileRef(RefName(*ref), Where("BUFFER_QUEUE", key, "profile"), missing);
      if (found == nullptr) continue;
      for (const std::string& port : key_ports) {
        PortQos& p = touch(port, LineOf("BUFFER_QUEUE", key));
        for (int q : indices) p.queue_limit[q] = LimitOf(*found);
      }
    }
  }

  const Json* wd = Table("PFC_WD");
  const Json* port_table = Table("PORT");
  std::map<std::string, double> cable;
  if (const Json* c = Table("CABLE_LENGTH")) {
    for (const auto& [name, obj] : c->items()) {
      if (!obj.is_object()) continue;
      for (const auto& [port, v] : obj.items()) {
        Location where = Where("CABLE_LENGTH", port);
        std::string s = Str(v, where);
        if (!s.empty() && (s.back() == 'm' || s.back() == 'M')) s.pop_back();
        cable[port] = ParseDecimal(s, where, "a cable length like \"5m\"");
      }
    }
  }
  // PORT_QOS_MAP is where SONiC enables PFC: when the table is there, a port
  // without pfc_enable has PFC on no priority. QUEUE binds WRED profiles to
  // queues: when it is there, a queue without a profile has no ECN.
  const bool pfc_table = Table("PORT_QOS_MAP") != nullptr;
  const bool full_config = Table("PORT") != nullptr || root_.contains("DEVICE_METADATA");
  cfg.ecn_stated = Table("QUEUE") != nullptr;
  for (const char* name : {"ingress_lossless_pool", "egress_lossless_pool"}) {
    if (auto it = pools_.find(name); it != pools_.end() && !cfg.lossless_pool) {
      cfg.lossless_pool = it->second;
      cfg.lossless_pool_name = name;
    }
  }
  std::set<std::string> name_notes;
  for (const std::string& name : order) {
    PortQos& p = ports[name];
    p.pfc_stated = p.pfc_stated || pfc_table;
    // PFC_WD lives in the full config_db.json (with PORT / DEVICE_METADATA),
    // not in the QoS templates: only a full file without it says "no watchdog".
    if (wd != nullptr || full_config) {
      p.pfc_watchdog = wd != nullptr && wd->contains(name);
    } else if (pfc_table && Table("PORT_QOS_MAP")->contains(name) &&
               Field((*Table("PORT_QOS_MAP"))[name], "PORT_QOS_MAP", name, "pfcwd_sw_enable")) {
      p.pfc_watchdog = true;
    }
    if (port_table && port_table->contains(name)) {
      if (auto sp = Field((*port_table)[name], "PORT", name, "speed")) {
        int64_t mbps = ParseInt(*sp, Where("PORT", name, "speed"), "a speed in Mb/s");
        if (mbps <= 0) throw InputError(Where("PORT", name, "speed"), Expected("a speed > 0", *sp));
        p.speed_gbps = mbps / 1000;
      }
    }
    if (auto it = cable.find(name); it != cable.end()) p.cable_m = it->second;
    // The buffer manager names lossless profiles pg_lossless_<Mb/s>_<m>m_profile.
    static const std::regex kName(R"(pg_lossless_(\d{1,7})_(\d{1,5})m_profile)");
    for (const auto& [prio, pg] : p.pgs) {
      std::smatch m;
      std::string src = pg.source.substr(pg.source.find('|') + 1);
      if (!std::regex_match(src, m, kName)) continue;
      if (!p.speed_gbps) p.speed_gbps = std::stoll(m[1].str()) / 1000;
      if (!p.cable_m) {
        p.cable_m = std::stod(m[2].str());
        name_notes.insert("cable length taken from profile name " + src);
      }
      break;
    }
    cfg.ports.push_back(p);
  }

  for (const std::string& n : name_notes) cfg.notes.push_back(n);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    cfg.notes.push_back(
        "buffer profiles named but not defined in the input (a fragment without "
        "BUFFER_PROFILE): " +
        list + "; their headroom and thresholds are unknown");
  }

  // Switch-wide maps, from the first port (SONiC applies them per port; they are
  // the same on every port in practice).
  std::string first = order.empty() ? std::string("global") : order.front();
  std::map<int, int> tc_to_queue;
  if (auto n = MapFor(first, "tc_to_queue_map", "TC_TO_QUEUE_MAP"))
    tc_to_queue = ReadMap("TC_TO_QUEUE_MAP", *n, 7, 15);
  if (auto n = MapFor(first, "pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE")) {
    cfg.priority_to_queue = ReadMap("MAP_PFC_PRIORITY_TO_QUEUE", *n, 7, 15);
  } else {
    cfg.priority_to_queue = tc_to_queue;
  }
  if (auto n = MapFor(first, "dscp_to_tc_map", "DSCP_TO_TC_MAP")) {
    for (const auto& [dscp, tc] : ReadMap("DSCP_TO_TC_MAP", *n, 63, 7)) {
      auto it = tc_to_queue.find(tc);
      cfg.dscp_to_queue[dscp] = it == tc_to_queue.end() ? tc : it->second;
    }
  }
  return cfg;
}

}  // namespace

QosConfig ParseSonicJson(std::string_view text, const std::string& file) {
  SonicJsonReader r(text, file);
  return r.Read();
}

}  // namespace lossless::audit::qos::internal
