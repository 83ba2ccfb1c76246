#include "scenario/scenario.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/text.hpp"
#include "scenario/params.hpp"

namespace lossless::scenario {
namespace {

constexpr const char* kSetFile = "<--set>";

struct Value {
  std::string text;
  Location where;
  bool given = false;
};

int64_t LineOf(const YAML::Node& n) {
  auto m = n.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

std::string Nearest(const std::string& key, const std::vector<std::string>& options) {
  return FindNearestName(key, options).name;
}

std::string JoinOptions(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

// Fields whose value is a list of entries, parsed apart from the registry.
constexpr const char* kListFields[] = {"traffic", "faults.pause_inject", "faults.cnp_inject"};

// Valid child keys of map path `prefix` ("" = top level), from the registry.
std::vector<std::string> ChildKeys(const std::string& prefix) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& p : Params()) {
    std::string n = p.name;
    if (!prefix.empty()) {
      if (n.rfind(prefix + ".", 0) != 0) continue;
      n = n.substr(prefix.size() + 1);
    }
    std::string first = n.substr(0, n.find('.'));
    if (seen.insert(first).second) out.push_back(first);
  }
  for (const char* list : kListFields) {
    std::string n = list;
    if (!prefix.empty()) {
      if (n.rfind(prefix + ".", 0) != 0) continue;
      n = n.substr(prefix.size() + 1);
    }
    std::string first = n.substr(0, n.find('.'));
    if (seen.insert(first).second) out.push_back(first);
  }
  return out;
}

bool IsMapPrefix(const std::string& path) {
  for (const auto& p : Params())
    if (std::string(p.name).rfind(path + ".", 0) == 0) return true;
  return false;
}

// Rejects inputs nested deeper than any scenario needs before yaml-cpp sees
// them (its recursive parser would otherwise exhaust the stack).
void CheckNesting(const std::string& text, const std::string& file) {
  int depth = 0;
  int64_t line = 1;
  for (char c : text) {
    if (c == '\n') ++line;
    if (c == '[' || c == '{') {
      if (++depth > 32) throw InputError({file, line, ""}, "expected at most 32 levels of nesting");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

class Loader {
 public:
  Loader(std::string file) : file_(std::move(file)) {}

  void Walk(const YAML::Node& node, const std::string& path) {
    if (!node.IsMap()) {
      throw InputError({file_, LineOf(node), path.empty() ? "" : path},
                       path.empty() ? "expected a mapping of scenario fields at the top level"
                                    : "expected a mapping");
    }
    for (const auto& kv : node) {
      if (!kv.first.IsScalar())
        throw InputError({file_, LineOf(kv.first), path}, "expected a plain key");
      std::string key = kv.first.Scalar();
      std::string full = path.empty() ? key : path + "." + key;
      const YAML::Node& v = kv.second;
      if (full == "traffic") {
        traffic_ = v;
        traffic_line_ = LineOf(kv.first);
        continue;
      }
      if (full == "faults.pause_inject" || full == "faults.cnp_inject") {
        lists_[full] = ListInput{v, LineOf(kv.first), {}};
        continue;
      }
      if (FindParam(full) != nullptr) {
        if (!v.IsScalar()) throw InputError({file_, LineOf(v), full}, "expected a single value");
        if (values_.count(full)) throw InputError({file_, LineOf(kv.first), full}, "given twice");
        values_[full] = Value{v.Scalar(), {file_, LineOf(v), full}, true};
      } else if (IsMapPrefix(full)) {
        Walk(v, full);
      } else {
        auto keys = ChildKeys(path);
        throw InputError({file_, LineOf(kv.first), full},
                         fmt::format("unknown field; did you mean '{}'? (valid here: {})",
                                     Nearest(key, keys), JoinOptions(keys)));
      }
    }
  }

  void ApplySet(const std::string& set) {
    auto eq = set.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError({kSetFile, 0, set}, Expected("name=value", set));
    }
    std::string name = set.substr(0, eq), value = set.substr(eq + 1);
    if (name.rfind("traffic.", 0) == 0) {
      traffic_sets_.emplace_back(name, value);
      return;
    }
    for (const char* list : {"faults.pause_inject", "faults.cnp_inject"}) {
      if (name.rfind(std::string(list) + ".", 0) == 0) {
        lists_[list].sets.emplace_back(name, value);
        return;
      }
    }
    if (FindParam(name) == nullptr) {
      std::vector<std::string> all;
      for (const auto& p : Params()) all.emplace_back(p.name);
      throw InputError({kSetFile, 0, name},
                       fmt::format("unknown field; did you mean '{}'?", Nearest(name, all)));
    }
    values_[name] = Value{value, {kSetFile, 0, name}, true};
  }

  std::map<std::string, Value> values_;
  YAML::Node traffic_;
  int64_t traffic_line_ = 0;
  std::vector<std::pair<std::string, std::string>> traffic_sets_;
  // faults.pause_inject / faults.cnp_inject: the node as given and --set
  // overrides "<list>.<index>.<field>".
  struct ListInput {
    YAML::Node node;
    int64_t line = 0;
    std::vector<std::pair<std::string, std::string>> sets;
  };
  std::map<std::string, ListInput> lists_;
  std::string file_;
};

int64_t ToInt(const Value& v, const ParamInfo& p) {
  int64_t out = 0;
  const char* b = v.text.data();
  const char* e = b + v.text.size();
  auto [ptr, ec] = std::from_chars(b, e, out);
  if (ec != std::errc() || ptr != e) throw InputError(v.where, Expected("an integer", v.text));
  if (p.min <= p.max && (static_cast<double>(out) < p.min || static_cast<double>(out) > p.max)) {
    throw InputError(v.where,
                     Expected(fmt::format("an integer from {:g} to {:g}", p.min, p.max), v.text));
  }
  return out;
}

double ToDouble(const Value& v, const ParamInfo& p) {
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.text.c_str(), &end);
  if (v.text.empty() || end != v.text.c_str() + v.text.size() || errno != 0 || !std::isfinite(d)) {
    throw InputError(v.where, Expected("a number", v.text));
  }
  if (p.min <= p.max && (d < p.min || d > p.max)) {
    throw InputError(v.where,
                     Expected(fmt::format("a number from {:g} to {:g}", p.min, p.max), v.text));
  }
  return d;
}

bool ToBool(const Value& v) {
  static const std::set<std::string> kTrue{"true", "yes", "on", "1"},
      kFalse{"false", "no", "off", "0"};
  if (kTrue.count(v.text)) return true;
  if (kFalse.count(v.text)) return false;
  throw InputError(v.where, Expected("true or false", v.text));
}

std::string ToEnum(const Value& v, const ParamInfo& p) {
  std::vector<std::string> choices;
  std::stringstream ss(p.choices);
  for (std::string c; std::getline(ss, c, '|');) choices.push_back(c);
  for (const auto& c : choices)
    if (c == v.text) return c;
  throw InputError(
      v.where, fmt::format("expected one of {}, got {} (did you mean '{}'?)", JoinOptions(choices),
                           QuoteForMessage(v.text), Nearest(v.text, choices)));
}

Pattern ParsePattern(const std::string& s, const Location& where) {
  static const std::vector<std::pair<std::string, Pattern>> kPatterns = {
      {"ring", Pattern::kRing},
      {"permutation", Pattern::kPermutation},
      {"incast", Pattern::kIncast},
      {"all-to-all", Pattern::kAllToAll},
      {"flow", Pattern::kFlow}};
  std::vector<std::string> names;
  for (const auto& [n, p] : kPatterns) {
    if (n == s) return p;
    names.push_back(n);
  }
  throw InputError(where, fmt::format("expected one of {}, got {} (did you mean '{}'?)",
                                      JoinOptions(names), QuoteForMessage(s), Nearest(s, names)));
}

std::vector<TrafficSpec> LoadTraffic(Loader& ld) {
  // Collect each entry's fields as text with their locations.
  std::vector<std::map<std::string, Value>> entries;
  std::vector<Location> entry_where;
  const YAML::Node& t = ld.traffic_;
  if (t.IsDefined() && !t.IsNull()) {
    if (!t.IsSequence())
      throw InputError({ld.file_, LineOf(t), "traffic"}, "expected a list of traffic entries");
    size_t i = 0;
    for (const auto& e : t) {
      std::string path = fmt::format("traffic.{}", i++);
      if (!e.IsMap())
        throw InputError({ld.file_, LineOf(e), path}, "expected a mapping with a 'pattern'");
      std::map<std::string, Value> fields;
      for (const auto& kv : e) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        if (key == "path" && kv.second.IsSequence()) {
          // A list of switch names: kept as comma-separated text, like --set gives it.
          std::string joined;
          for (const auto& hop : kv.second) {
            if (!hop.IsScalar())
              throw InputError({ld.file_, LineOf(hop), path + ".path"},
                               "expected a switch name (optionally name/class)");
            joined += (joined.empty() ? "" : ",") + hop.Scalar();
          }
          fields[key] = Value{joined, {ld.file_, LineOf(kv.second), path + ".path"}, true};
          continue;
        }
        if (!kv.second.IsScalar())
          throw InputError({ld.file_, LineOf(kv.second), path + "." + key},
                           "expected a single value");
        fields[key] =
            Value{kv.second.Scalar(), {ld.file_, LineOf(kv.second), path + "." + key}, true};
      }
      entries.push_back(std::move(fields));
      entry_where.push_back({ld.file_, LineOf(e), path});
    }
  }
  for (const auto& [name, value] : ld.traffic_sets_) {
    // traffic.<index>.<field>=value; index == size appends a new entry.
    auto dot1 = name.find('.'), dot2 = name.find('.', dot1 + 1);
    size_t idx = 0;
    std::string idx_text =
        name.substr(dot1 + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot1 - 1);
    auto [p, ec] = std::from_chars(idx_text.data(), idx_text.data() + idx_text.size(), idx);
    if (dot2 == std::string::npos || ec != std::errc() || p != idx_text.data() + idx_text.size() ||
        idx > entries.size()) {
      throw InputError({kSetFile, 0, name},
                       Expected(fmt::format("traffic.<0..{}>.<field>", entries.size()), name));
    }
    if (idx == entries.size()) {
      entries.emplace_back();
      entry_where.push_back({kSetFile, 0, fmt::format("traffic.{}", idx)});
    }
    entries[idx][name.substr(dot2 + 1)] = Value{value, {kSetFile, 0, name}, true};
  }
  static const std::vector<std::string> kKeys = {"pattern", "bytes", "start", "stride", "target",
                                                 "senders", "hosts", "src",   "dst",    "class",
                                                 "repeat",  "every", "path",  "rate"};
  std::vector<TrafficSpec> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto& f = entries[i];
    for (const auto& [k, v] : f) {
      if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
        throw InputError(v.where,
                         fmt::format("unknown traffic field; did you mean '{}'? (valid: {})",
                                     Nearest(k, kKeys), JoinOptions(kKeys)));
      }
    }
    TrafficSpec ts;
    ts.where = entry_where[i];
    if (!f.count("pattern"))
      throw InputError(ts.where,
                       "expected a 'pattern' (ring, permutation, incast, all-to-all, flow)");
    ts.pattern = ParsePattern(f["pattern"].text, f["pattern"].where);
    if (!f.count("bytes"))
      throw InputError(ts.where, "expected 'bytes' (size of each flow, e.g. 16MiB)");
    ts.bytes = units::ParseBytes(f["bytes"].text, f["bytes"].where).count();
    if (ts.bytes <= 0)
      throw InputError(f["bytes"].where, Expected("a size above zero", f["bytes"].text));
    if (f.count("start")) ts.start = units::ParseTime(f["start"].text, f["start"].where);
    auto get_int = [&](const char* key, int64_t lo, int64_t def) {
      if (!f.count(key)) return def;
      ParamInfo info{key, ParamType::kInt, "", "", "", static_cast<double>(lo), 1e9};
      return ToInt(f[key], info);
    };
    ts.stride = get_int("stride", 1, 1);
    ts.target = get_int("target", 0, 0);
    ts.senders = get_int("senders", 1, -1);
    ts.hosts = get_int("hosts", 2, -1);
    ts.src = get_int("src", 0, -1);
    ts.dst = get_int("dst", 0, -1);
    ts.tclass = static_cast<int>(get_int("class", 0, -1));
    if (ts.tclass > 7)
      throw InputError(f["class"].where, Expected("a class from 0 to 7", f["class"].text));
    ts.repeat = get_int("repeat", 1, 1);
    if (ts.repeat > 1'000'000)
      throw InputError(f["repeat"].where, Expected("at most 1000000 repeats", f["repeat"].text));
    if (f.count("every")) {
      ts.every = units::ParseTime(f["every"].text, f["every"].where);
      if (ts.every.ps() <= 0)
        throw InputError(f["every"].where, Expected("a time above zero", f["every"].text));
    } else if (ts.repeat > 1) {
      throw InputError(f["repeat"].where, "expected 'every' (time between repeats) with repeat");
    }
    if (ts.every.ps() > (units::Time::Max().ps() - ts.start.ps()) / ts.repeat)
      throw InputError(
          f["every"].where,
          Expected("repeats that end within the clock's range (about 106 days)", f["every"].text));
    if (f.count("rate")) {
      ts.rate = units::ParseRate(f["rate"].text, f["rate"].where);
      ts.rate_where = f["rate"].where;
    }
    if (ts.pattern == Pattern::kPermutation && !f.count("stride"))
      throw InputError(ts.where, "expected 'stride' for a permutation");
    if (ts.pattern == Pattern::kFlow && (ts.src < 0 || ts.dst < 0))
      throw InputError(ts.where, "expected 'src' and 'dst' for a flow");
    if (f.count("path")) {
      const Value& pv = f["path"];
      if (ts.pattern != Pattern::kFlow)
        throw InputError(pv.where, "expected 'path' only on a pattern: flow entry");
      ts.path_where = pv.where;
      std::stringstream ss(pv.text);
      for (std::string hop; std::getline(ss, hop, ',');) {
        hop.erase(0, hop.find_first_not_of(" \t"));
        hop.erase(hop.find_last_not_of(" \t") + 1);
        int cls = -1;
        if (auto slash = hop.find('/'); slash != std::string::npos) {
          const std::string c = hop.substr(slash + 1);
          auto [ptr, ec] = std::from_chars(c.data(), c.data() + c.size(), cls);
          if (ec != std::errc() || ptr != c.data() + c.size() || cls < 0 || cls > 7)
            throw InputError(pv.where,
                             Expected("switch or switch/class with a class from 0 to 7", hop));
          hop.resize(slash);
        }
        if (hop.empty()) throw InputError(pv.where, Expected("a list of switch names", pv.text));
        ts.path.emplace_back(hop, cls);
      }
      if (ts.path.empty()) throw InputError(pv.where, Expected("a list of switch names", pv.text));
    }
    out.push_back(ts);
  }
  return out;
}

// The entries of list field `name` (faults.pause_inject / cnp_inject): a
// single mapping or a list of them, then --set "<name>.<index>.<field>"
// overrides (index == size appends an entry). A list value (`at: [1us, 2us]`)
// is kept as comma-separated text, as --set gives it.
struct ListEntries {
  std::vector<std::map<std::string, Value>> fields;
  std::vector<Location> where;
};

ListEntries CollectList(Loader& ld, const std::string& name, const std::vector<std::string>& keys) {
  ListEntries out;
  Loader::ListInput& in = ld.lists_[name];
  const YAML::Node& t = in.node;
  if (t.IsDefined() && !t.IsNull()) {
    if (!t.IsSequence() && !t.IsMap())
      throw InputError({ld.file_, LineOf(t), name}, "expected a mapping or a list of mappings");
    std::vector<YAML::Node> nodes;
    if (t.IsMap()) {
      nodes.push_back(t);
    } else {
      for (const auto& e : t) nodes.push_back(e);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const YAML::Node& e = nodes[i];
      const std::string path = fmt::format("{}.{}", name, i);
      if (!e.IsMap()) throw InputError({ld.file_, LineOf(e), path}, "expected a mapping");
      std::map<std::string, Value> fields;
      for (const auto& kv : e) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        const Location where{ld.file_, LineOf(kv.second), path + "." + key};
        std::string text;
        if (kv.second.IsSequence()) {
          for (const auto& item : kv.second) {
            if (!item.IsScalar()) throw InputError(where, "expected a list of single values");
            text += (text.empty() ? "" : ",") + item.Scalar();
          }
        } else if (kv.second.IsScalar()) {
          text = kv.second.Scalar();
        } else {
          throw InputError(where, "expected a single value or a list of values");
        }
        fields[key] = Value{text, where, true};
      }
      out.fields.push_back(std::move(fields));
      out.where.push_back({ld.file_, LineOf(e), path});
    }
  }
  for (const auto& [set, value] : in.sets) {
    const std::string rest = set.substr(name.size() + 1);
    const auto dot = rest.find('.');
    size_t idx = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + std::min(dot, rest.size()), idx);
    if (dot == std::string::npos || ec != std::errc() || p != rest.data() + dot ||
        idx > out.fields.size()) {
      throw InputError({kSetFile, 0, set},
                       Expected(fmt::format("{}.<0..{}>.<field>", name, out.fields.size()), set));
    }
    if (idx == out.fields.size()) {
      out.fields.emplace_back();
      out.where.push_back({kSetFile, 0, fmt::format("{}.{}", name, idx)});
    }
    out.fields[idx][rest.substr(dot + 1)] = Value{value, {kSetFile, 0, set}, true};
  }
  for (auto& f : out.fields) {
    for (const auto& [k, v] : f) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        throw InputError(v.where, fmt::format("unknown field; did you mean '{}'? (valid: {})",
                                              Nearest(k, keys), JoinOptions(keys)));
      }
    }
  }
  return out;
}

// A time of zero or more (ParseTime rejects negative ones).
units::Time ListTime(const std::string& text, const Location& where) {
  return units::ParseTime(text::Trim(text), where);
}

// "3", "3,4" (priorities) or "0x08" / "0b00001000" (bit vector) -> mask.
uint8_t ParseClassEnable(const Value& v) {
  const std::string what = "a list of priorities from 0 to 7, or a bit vector 0x01..0xff";
  const std::string t(text::Trim(v.text));
  auto whole = [](std::string_view x, int base, unsigned& out) {
    auto [p, ec] = std::from_chars(x.data(), x.data() + x.size(), out, base);
    return !x.empty() && ec == std::errc() && p == x.data() + x.size();
  };
  unsigned bits = 0;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X' || t[1] == 'b' || t[1] == 'B')) {
    const int base = (t[1] == 'x' || t[1] == 'X') ? 16 : 2;
    if (!whole(std::string_view(t).substr(2), base, bits) || bits == 0 || bits > 0xFF)
      throw InputError(v.where, Expected(what, v.text));
    return static_cast<uint8_t>(bits);
  }
  std::stringstream ss(t);
  for (std::string item; std::getline(ss, item, ',');) {
    unsigned prio = 0;
    if (!whole(text::Trim(item), 10, prio) || prio > 7)
      throw InputError(v.where, Expected(what, v.text));
    bits |= 1u << prio;
  }
  if (bits == 0) throw InputError(v.where, Expected(what, v.text));
  return static_cast<uint8_t>(bits);
}

std::vector<PauseInjection> LoadPauseInjections(Loader& ld, const fabric::PfcConfig& pfc,
                                                units::Time stop,
                                                std::vector<std::string>& warnings) {
  static const std::vector<std::string> kKeys = {"host", "port", "at", "class_enable", "quanta"};
  ListEntries in = CollectList(ld, "faults.pause_inject", kKeys);
  std::vector<PauseInjection> out;
  for (size_t i = 0; i < in.fields.size(); ++i) {
    auto& f = in.fields[i];
    const Location& where = in.where[i];
    if (!pfc.enabled) {
      throw InputError(where,
                       "expected fabric.pfc.enabled true along with an injected PFC frame "
                       "(ports with PFC off ignore PFC frames), got false");
    }
    PauseInjection pi;
    if (f.count("host") == f.count("port"))
      throw InputError(where,
                       "expected exactly one of 'host' (a host rank: its NIC sends) or "
                       "'port' (a link direction such as leaf0->host0: its sender sends)");
    if (f.count("host")) {
      ParamInfo info{"host", ParamType::kInt, "", "", "", 0, 1e7};
      pi.host = ToInt(f["host"], info);
      pi.where = f["host"].where;
    } else {
      pi.port = std::string(text::Trim(f["port"].text));
      pi.where = f["port"].where;
    }
    for (const char* k : {"at", "class_enable", "quanta"})
      if (!f.count(k)) throw InputError(where, fmt::format("expected '{}'", k));
    pi.at = ListTime(f["at"].text, f["at"].where);
    pi.class_enable = ParseClassEnable(f["class_enable"]);
    const Value& q = f["quanta"];
    const std::string qt(text::Trim(q.text));
    unsigned quanta = 0;
    const bool hex = qt.size() > 2 && qt[0] == '0' && (qt[1] == 'x' || qt[1] == 'X');
    const std::string_view digits = hex ? std::string_view(qt).substr(2) : std::string_view(qt);
    auto [p, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), quanta, hex ? 16 : 10);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() ||
        quanta > 0xFFFF) {
      throw InputError(q.where, Expected("pause quanta from 0 (XON) to 65535 (0xffff)", q.text));
    }
    pi.quanta = static_cast<uint16_t>(quanta);
    if (pi.at > stop) {
      warnings.push_back(fmt::format("{}.at: {} is after stop_time ({}): the frame is never sent",
                                     where.field, units::FormatTime(pi.at),
                                     units::FormatTime(stop)));
    }
    out.push_back(pi);
  }
  return out;
}

std::vector<CnpInjection> LoadCnpInjections(Loader& ld, const std::string& cc, units::Time stop,
                                            std::vector<std::string>& warnings) {
  static const std::vector<std::string> kKeys = {"flow", "at", "count", "every"};
  ListEntries in = CollectList(ld, "faults.cnp_inject", kKeys);
  std::vector<CnpInjection> out;
  for (size_t i = 0; i < in.fields.size(); ++i) {
    auto& f = in.fields[i];
    const Location& where = in.where[i];
    if (cc != "dcqcn-paper" && cc != "dcqcn-firmware") {
      throw InputError(where, Expected("fabric.cc dcqcn-paper or dcqcn-firmware along with an "
                                       "injected CNP",
                                       cc));
    }
    CnpInjection ci;
    if (!f.count("flow")) throw InputError(where, "expected 'flow' (index of a traffic flow)");
    if (!f.count("at")) throw InputError(where, "expected 'at' (a time or a list of times)");
    ParamInfo info{"flow", ParamType::kInt, "", "", "", 0, 1e9};
    ci.flow = ToInt(f["flow"], info);
    ci.where = f["flow"].where;
    const Value& at = f["at"];
    std::stringstream ss(at.text);
    for (std::string item; std::getline(ss, item, ',');) ci.at.push_back(ListTime(item, at.where));
    if (ci.at.empty()) throw InputError(at.where, Expected("a time or a list of times", at.text));
    int64_t count = 1;
    if (f.count("count")) {
      ParamInfo cinfo{"count", ParamType::kInt, "", "", "", 1, 1e6};
      count = ToInt(f["count"], cinfo);
      if (ci.at.size() > 1)
        throw InputError(f["count"].where, "expected 'count' only with a single 'at' time");
    }
    if (f.count("every")) {
      const Value& ev = f["every"];
      const units::Time every = units::ParseTime(text::Trim(ev.text), ev.where);
      if (every.ps() <= 0) throw InputError(ev.where, Expected("a time above zero", ev.text));
      if (!f.count("count")) throw InputError(ev.where, "expected 'count' with 'every'");
      if (every.ps() > (units::Time::Max().ps() - ci.at[0].ps()) / count)
        throw InputError(ev.where, Expected("CNPs that end within the clock's range (about 106 "
                                            "days)",
                                            ev.text));
      for (int64_t k = 1; k < count; ++k)
        ci.at.push_back(ci.at[0] + units::Time::Ps(k * every.ps()));
    } else if (count > 1) {
      throw InputError(f["count"].where, "expected 'every' (time between CNPs) with count");
    }
    std::sort(ci.at.begin(), ci.at.end());
    if (ci.at.back() > stop) {
      warnings.push_back(
          fmt::format("{}.at: {} is after stop_time ({}): that CNP is never "
                      "delivered",
                      where.field, units::FormatTime(ci.at.back()), units::FormatTime(stop)));
    }
    out.push_back(std::move(ci));
  }
  return out;
}

// "VL:weight, VL:weight, ..." (fabric.ib.vlarb_high / vlarb_low).
std::vector<fabric::VlArbEntry> ParseVlArb(const Value& v, int vls) {
  std::vector<fabric::VlArbEntry> out;
  std::string item;
  std::stringstream in(v.text);
  const std::string what = fmt::format(
      "comma-separated VL:weight entries (VL 0..{}, weight 0..255, at most 64)", vls - 1);
  while (std::getline(in, item, ',')) {
    const std::string t(text::Trim(item));
    if (t.empty()) throw InputError(v.where, Expected(what, v.text));
    const size_t colon = t.find(':');
    int vl = -1, weight = -1;
    if (colon != std::string::npos) {
      auto [p1, e1] = std::from_chars(t.data(), t.data() + colon, vl);
      auto [p2, e2] = std::from_chars(t.data() + colon + 1, t.data() + t.size(), weight);
      if (e1 != std::errc() || p1 != t.data() + colon || e2 != std::errc() ||
          p2 != t.data() + t.size())
        vl = -1;
    }
    if (vl < 0 || vl >= vls || weight < 0 || weight > 255 || out.size() == 64)
      throw InputError(v.where, Expected(what, v.text));
    out.push_back({static_cast<uint8_t>(vl), static_cast<uint8_t>(weight)});
  }
  return out;
}

}  // namespace

Scenario LoadScenarioText(const std::string& text, const std::string& file_name,
                          const std::vector<std::string>& sets) {
  Loader ld(file_name);
  CheckNesting(text, file_name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError({file_name, e.mark.line >= 0 ? e.mark.line + 1 : 0, ""},
                     "expected YAML or JSON: " + e.msg);
  }
  if (root.IsNull()) throw InputError({file_name, 1, ""}, "expected a scenario, got an empty file");
  try {
    ld.Walk(root, "");
  } catch (const YAML::Exception& e) {
    throw InputError({file_name, e.mark.line >= 0 ? e.mark.line + 1 : 0, ""},
                     "expected YAML or JSON: " + e.msg);
  }
  for (const auto& s : sets) ld.ApplySet(s);

  Scenario sc;
  sc.file = file_name;
  // Preset first: it decides other defaults.
  auto value = [&](const std::string& name) -> Value {
    auto it = ld.values_.find(name);
    if (it != ld.values_.end()) return it->second;
    std::string preset =
        ld.values_.count("fabric.preset") ? ld.values_["fabric.preset"].text : "roce";
    for (const auto& pv : PresetValues())
      if (preset == pv.preset && name == pv.name)
        return Value{pv.value, {"<preset " + preset + ">", 0, name}, false};
    return Value{FindParam(name)->def, {"<default>", 0, name}, false};
  };
  auto get = [&](const char* name) {
    Value v = value(name);
    sc.resolved.emplace_back(name, v.text);
    return v;
  };
  auto time = [&](const char* name) {
    Value v = get(name);
    return units::ParseTime(v.text, v.where);
  };
  auto rate = [&](const char* name) {
    Value v = get(name);
    return units::ParseRate(v.text, v.where);
  };
  auto bytes = [&](const char* name) {
    Value v = get(name);
    return units::ParseBytes(v.text, v.where).count();
  };
  auto integer = [&](const char* name) { return ToInt(get(name), *FindParam(name)); };
  auto number = [&](const char* name) { return ToDouble(get(name), *FindParam(name)); };
  auto boolean = [&](const char* name) { return ToBool(get(name)); };
  auto choice = [&](const char* name) { return ToEnum(get(name), *FindParam(name)); };
  auto given = [&](const char* name) { return ld.values_.count(name) > 0; };

  sc.name = get("name").text;
  sc.seed = static_cast<uint64_t>(integer("seed"));
  sc.preset = choice("fabric.preset");
  auto& net = sc.net;
  units::Rate link_rate = rate("fabric.link_rate");
  units::Time link_delay;
  if (given("fabric.link_delay")) {
    Value v = get("fabric.link_delay");
    link_delay = units::ParseTime(v.text, v.where);
    if (link_delay.ps() <= 0) {
      throw InputError(
          v.where,
          Expected("a delay above zero (components talk only through links with latency)", v.text));
    }
  } else {
    link_delay = units::CableDelay(number("fabric.cable_length"));
    sc.resolved.emplace_back("fabric.link_delay", units::FormatTime(link_delay));
  }
  int64_t mtu = integer("fabric.mtu");
  bool vlan = boolean("fabric.vlan_tag");
  if (sc.preset == "infiniband") {
    net.framing = fabric::Framing::InfiniBand(static_cast<int32_t>(mtu));
  } else if (sc.preset == "roce") {
    net.framing = fabric::Framing::RoceV2(static_cast<int32_t>(mtu), vlan);
  } else {
    net.framing = fabric::Framing::Raw(static_cast<int32_t>(mtu), 30);
  }
  if (sc.preset != "raw" && !fabric::IsRdmaMtu(mtu)) {
    Value v = value("fabric.mtu");
    throw InputError(v.where, Expected("an RDMA path MTU: 256, 512, 1024, 2048 or 4096", v.text));
  }
  if (given("fabric.frame_overhead"))
    net.framing.frame_overhead = static_cast<int32_t>(integer("fabric.frame_overhead"));
  net.sw.latency = time("fabric.switch_latency");
  net.sw.cut_through = boolean("fabric.cut_through");
  net.sw.buffer_bytes = bytes("fabric.buffer");
  if (net.sw.buffer_bytes < net.framing.FrameBytes(mtu)) {
    Value v = value("fabric.buffer");
    throw InputError(v.where, Expected(fmt::format("a buffer of at least one frame ({} B)",
                                                   net.framing.FrameBytes(mtu)),
                                       v.text));
  }
  net.sw.alpha = number("fabric.alpha");
  std::string routing = choice("fabric.routing");
  net.routing = routing == "ecmp"         ? fabric::RoutingMode::kEcmp
                : routing == "dest-table" ? fabric::RoutingMode::kDestTable
                : routing == "adaptive"   ? fabric::RoutingMode::kAdaptive
                                          : fabric::RoutingMode::kSpray;
  net.nic.data_class = static_cast<uint8_t>(integer("fabric.data_class"));
  if (given("fabric.pcie_rate")) net.nic.pcie_rate = rate("fabric.pcie_rate");
  fabric::EcnConfig ecn;
  ecn.enabled = boolean("fabric.ecn.enabled");
  ecn.kmin_bytes = bytes("fabric.ecn.kmin");
  ecn.kmax_bytes = bytes("fabric.ecn.kmax");
  ecn.pmax = number("fabric.ecn.pmax");
  if (ecn.kmin_bytes >= ecn.kmax_bytes) {
    Value v = value("fabric.ecn.kmin");
    throw InputError(v.where,
                     Expected(fmt::format("Kmin below Kmax ({} B)", ecn.kmax_bytes), v.text));
  }
  net.sw.ecn[net.nic.data_class] = ecn;

  const std::string cc = choice("fabric.cc");
  // fabric.dcqcn.<name>: per-parameter overrides on top of the fabric.cc preset.
  std::vector<std::pair<std::string, Value>> dcqcn_given;
  for (const auto& info : cc::DcqcnParamInfos()) {
    const std::string full = std::string("fabric.dcqcn.") + info.name;
    if (given(full.c_str())) dcqcn_given.emplace_back(info.name, ld.values_[full]);
  }
  if (given("fabric.dcqcn.cnp_class"))
    dcqcn_given.emplace_back("cnp_class", ld.values_["fabric.dcqcn.cnp_class"]);
  if (cc == "none") {
    if (!dcqcn_given.empty()) {
      // Overrides of a controller that does not run are a mistake, not a no-op.
      throw InputError(dcqcn_given.front().second.where,
                       Expected("fabric.cc dcqcn-paper or dcqcn-firmware along with a DCQCN "
                                "override",
                                "none"));
    }
  } else if (cc == "ib-cc") {
    if (!dcqcn_given.empty()) {
      throw InputError(dcqcn_given.front().second.where,
                       Expected("fabric.cc dcqcn-paper or dcqcn-firmware along with a DCQCN "
                                "override",
                                cc));
    }
    net.ib_cc = true;
    net.fecn.queue_threshold = units::Bytes(bytes("fabric.ibcc.threshold"));
    net.fecn.marking_rate = integer("fabric.ibcc.marking_rate");
    net.ib_cc_params.ccti_increase = integer("fabric.ibcc.ccti_increase");
    net.ib_cc_params.ccti_timer = time("fabric.ibcc.ccti_timer");
    net.ib_cc_params.cct =
        cc::IbCcParams::LinearCct(integer("fabric.ibcc.cct_entries"), time("fabric.ibcc.cct_step"));
    if (net.ib_cc_params.ccti_timer.ps() <= 0) {
      Value v = value("fabric.ibcc.ccti_timer");
      throw InputError(v.where, Expected("a period above zero", v.text));
    }
    if (net.ib_cc_params.cct.back().ps() < 0) {
      Value v = value("fabric.ibcc.cct_step");
      throw InputError(v.where, Expected("a step of zero or more", v.text));
    }
  } else {
    net.dcqcn = true;
    const Location cc_where = value("fabric.cc").where;
    net.dcqcn_params =
        cc::DcqcnParams::Preset(cc == "dcqcn-paper" ? "paper" : "connectx-firmware", cc_where);
    for (const auto& [name, v] : dcqcn_given)
      if (name != "cnp_class") net.dcqcn_params.Set(name, v.text, v.where);
    try {
      net.dcqcn_params.Validate(link_rate, {cc_where.file, cc_where.line, "fabric.dcqcn"});
    } catch (const InputError& e) {
      // Validate() names the parameter at the start of its message: point at
      // the override that set it (or at fabric.cc when the preset did).
      const std::string& msg = e.message();
      const auto colon = msg.find(": ");
      const std::string name = colon == std::string::npos ? "" : msg.substr(0, colon);
      Location where = cc_where;
      where.field = "fabric.dcqcn." + name;
      for (const auto& [n, v] : dcqcn_given)
        if (n == name) where = v.where;
      if (name == "line_rate") where = value("fabric.link_rate").where;
      if (colon == std::string::npos) throw;
      throw InputError(where, msg.substr(colon + 2));
    }
    for (const auto& info : cc::DcqcnParamInfos()) {
      sc.resolved.emplace_back(std::string("fabric.dcqcn.") + info.name,
                               cc::DcqcnParamValue(net.dcqcn_params, info.name));
    }
    const int64_t cnp_class = integer("fabric.dcqcn.cnp_class");
    if (cnp_class == net.nic.data_class) {
      Value v = value("fabric.dcqcn.cnp_class");
      throw InputError(v.where, Expected(fmt::format("a class other than the data class {}",
                                                     static_cast<int>(net.nic.data_class)),
                                         v.text));
    }
    net.cnp_class = static_cast<uint8_t>(cnp_class);
    net.sw.strict_mask = static_cast<uint8_t>(1u << cnp_class);
    if (!ecn.enabled) {
      sc.warnings.push_back(
          "fabric.cc: DCQCN is on but fabric.ecn.enabled is false: no marks, no CNPs, no rate "
          "cuts");
    }
  }

  fabric::IbLinkConfig& ib = net.ib;
  ib.enabled = boolean("fabric.ib.enabled");
  ib.credits = static_cast<int32_t>(integer("fabric.ib.credits"));
  ib.num_vls = static_cast<int>(integer("fabric.ib.vls"));
  ib.fcp_on_release = boolean("fabric.ib.fcp_on_release");
  ib.fcp_period = time("fabric.ib.fcp_period");
  ib.rx_free_delay = time("fabric.ib.rx_delay");
  ib.credit_delay = time("fabric.ib.credit_delay");
  ib.high = ParseVlArb(get("fabric.ib.vlarb_high"), ib.num_vls);
  ib.low = ParseVlArb(get("fabric.ib.vlarb_low"), ib.num_vls);
  ib.limit_of_high = static_cast<int>(integer("fabric.ib.high_limit"));
  if (ib.enabled) {
    auto fail = [&](const char* field, const std::string& what) {
      Value v = value(field);
      throw InputError(v.where, Expected(what, v.text));
    };
    if (sc.preset == "roce")
      fail("fabric.ib.enabled", "false with the roce preset (credits are IB's link layer)");
    const int64_t mtu_blocks = (net.framing.FrameBytes(mtu) + 63) / 64;
    if (ib.credits < mtu_blocks)
      fail("fabric.ib.credits",
           fmt::format("credits for at least one MTU packet ({} blocks of 64 B)", mtu_blocks));
    if (ib.fcp_period.ps() <= 0) fail("fabric.ib.fcp_period", "a period above zero");
    if (net.nic.data_class >= ib.num_vls)
      fail("fabric.data_class", fmt::format("an SL below fabric.ib.vls ({})", ib.num_vls));
    if (cc != "none" && cc != "ib-cc")
      fail("fabric.cc", "none or ib-cc with InfiniBand credits (DCQCN is RoCE's)");
  } else if (cc == "ib-cc") {
    Value v = value("fabric.cc");
    throw InputError(v.where, Expected("fabric.ib.enabled along with ib-cc", v.text));
  }

  fabric::PfcConfig& pfc = net.pfc;
  pfc.enabled = boolean("fabric.pfc.enabled");
  const int prio = static_cast<int>(integer("fabric.pfc.priority"));
  pfc.priorities = static_cast<uint8_t>(1u << prio);
  pfc.global = choice("fabric.pfc.mode") == "global";
  pfc.xoff_bytes = bytes("fabric.pfc.xoff");
  pfc.response = time("fabric.pfc.response");
  pfc.quanta = static_cast<uint16_t>(integer("fabric.pfc.quanta"));
  const int64_t max_frame = net.framing.FrameBytes(mtu);
  const int64_t max_wire = net.framing.WireBytes(mtu);
  // Headroom per fabric.md §2.4 without the PHY term (two frames, the PAUSE
  // frame, the cable both ways, the sender's response time), plus what this
  // model adds: the frame that crosses XOFF (it is charged whole) and the
  // switch pipeline, since bytes are charged when they reach the egress queue.
  const int64_t in_flight_ps = 2 * link_delay.ps() + pfc.response.ps() + net.sw.latency.ps();
  const int64_t needed_headroom =
      3 * max_wire + 84 + units::BytesInTime(units::Time::Ps(in_flight_ps), link_rate).count();
  pfc.xon_bytes = given("fabric.pfc.xon") ? bytes("fabric.pfc.xon") : pfc.xoff_bytes - max_frame;
  if (!given("fabric.pfc.xon"))
    sc.resolved.emplace_back("fabric.pfc.xon", fmt::format("{}", pfc.xon_bytes));
  pfc.headroom_bytes =
      given("fabric.pfc.headroom") ? bytes("fabric.pfc.headroom") : needed_headroom;
  if (!given("fabric.pfc.headroom"))
    sc.resolved.emplace_back("fabric.pfc.headroom", fmt::format("{}", needed_headroom));
  if (pfc.enabled) {
    if (pfc.xon_bytes >= pfc.xoff_bytes) {
      Value v = value("fabric.pfc.xon");
      throw InputError(v.where,
                       Expected(fmt::format("XON below XOFF ({} B)", pfc.xoff_bytes), v.text));
    }
    if (pfc.xon_bytes < 0) {
      Value v = value("fabric.pfc.xoff");
      throw InputError(
          v.where, Expected(fmt::format("XOFF of at least one frame ({} B)", max_frame), v.text));
    }
    if (pfc.headroom_bytes < max_frame) {
      Value v = value("fabric.pfc.headroom");
      throw InputError(
          v.where,
          Expected(fmt::format("headroom of at least one frame ({} B)", max_frame), v.text));
    }
    if (pfc.headroom_bytes < needed_headroom) {
      sc.warnings.push_back(
          fmt::format("fabric.pfc.headroom: {} B is below the {} B that can arrive after XOFF on "
                      "{} of cable at {} "
                      "(fabric.md 2.4): expect lossless drops",
                      pfc.headroom_bytes, needed_headroom, units::FormatTime(link_delay),
                      units::FormatRate(link_rate)));
    }
    if (ecn.enabled && prio == net.nic.data_class && ecn.kmin_bytes >= pfc.xoff_bytes) {
      sc.warnings.push_back(
          fmt::format("fabric.ecn.kmin: ECN starts marking an egress queue at {} B, at or above "
                      "the PFC trigger of one ingress queue ({} B): traffic that enters through "
                      "one port is paused before ECN and DCQCN can slow it (an egress fed by k "
                      "ports reaches Kmin when each holds Kmin/k)",
                      ecn.kmin_bytes, pfc.xoff_bytes));
    }
  }

  fabric::PfcWatchdogConfig& wd = pfc.watchdog;
  wd.enabled = boolean("fabric.pfc.watchdog.enabled");
  wd.poll = time("fabric.pfc.watchdog.poll");
  wd.detect_polls = static_cast<int>(integer("fabric.pfc.watchdog.detect_polls"));
  wd.restore = time("fabric.pfc.watchdog.restore");
  wd.threshold = number("fabric.pfc.watchdog.threshold");
  wd.stagger = boolean("fabric.pfc.watchdog.stagger");
  if (wd.poll.ps() <= 0) {
    Value v = value("fabric.pfc.watchdog.poll");
    throw InputError(v.where, Expected("a poll period above zero", v.text));
  }
  if (wd.restore.ps() < 0) {
    Value v = value("fabric.pfc.watchdog.restore");
    throw InputError(v.where, Expected("a restore time of zero or more", v.text));
  }
  if (wd.enabled && !pfc.enabled) {
    sc.warnings.push_back(
        "fabric.pfc.watchdog.enabled: the PFC watchdog is on but "
        "fabric.pfc.enabled is false: it never acts");
  }
  {
    Value v = get("fabric.nic.pause_storm_timeout");
    if (v.text == "off") {
      net.nic.pause_storm_timeout = units::Time::Zero();
    } else if (v.text == "auto") {
      net.nic.pause_storm_timeout = units::Time::Ms(100);  // ConnectX "auto" (fabric.md 2.6)
    } else {
      units::Time t;
      try {
        t = units::ParseTime(v.text, v.where);
      } catch (const InputError&) {
        throw InputError(v.where, Expected("a time such as 100ms, auto or off", v.text));
      }
      if (t.ps() <= 0)
        throw InputError(v.where, Expected("a time above zero, auto or off", v.text));
      net.nic.pause_storm_timeout = t;
    }
  }
  if (given("faults.nic_stall.host")) {
    sc.nic_stall.host = integer("faults.nic_stall.host");
    sc.nic_stall.where = value("faults.nic_stall.host").where;
    sc.nic_stall.at = time("faults.nic_stall.at");
    if (sc.nic_stall.at.ps() < 0) {
      Value v = value("faults.nic_stall.at");
      throw InputError(v.where, Expected("a time of zero or more", v.text));
    }
    if (given("faults.nic_stall.until")) {
      sc.nic_stall.until = time("faults.nic_stall.until");
      if (sc.nic_stall.until <= sc.nic_stall.at) {
        Value v = value("faults.nic_stall.until");
        throw InputError(v.where, Expected(fmt::format("a time after faults.nic_stall.at ({})",
                                                       units::FormatTime(sc.nic_stall.at)),
                                           v.text));
      }
    }
  } else {
    for (const char* f : {"faults.nic_stall.at", "faults.nic_stall.until"}) {
      if (given(f)) {
        throw InputError(value(f).where, "expected faults.nic_stall.host with this field");
      }
    }
  }
  sc.deadlock.detect = boolean("deadlock.detect");
  sc.deadlock.persist = time("deadlock.persist");
  if (sc.deadlock.persist.ps() <= 0) {
    Value v = value("deadlock.persist");
    throw InputError(v.where, Expected("a time above zero", v.text));
  }
  const std::string stop = choice("deadlock.stop");
  sc.deadlock.stop = stop == "yes" || (stop == "auto" && !wd.enabled);
  if (sc.deadlock.detect && !pfc.enabled) {
    sc.warnings.push_back(
        "deadlock.detect: PFC is off (fabric.pfc.enabled), so no PFC deadlock "
        "can form");
  }

  sc.topology_kind = choice("topology.kind");
  sc.topology_where = value(given("topology.gpus") ? "topology.gpus" : "topology.kind").where;
  sc.clos.gpus = integer("topology.gpus");
  sc.clos.radix = static_cast<int>(integer("topology.radix"));
  sc.clos.oversubscription = number("topology.oversubscription");
  sc.clos.tiers = static_cast<int>(integer("topology.tiers"));
  sc.clos.gpus_per_node = static_cast<int>(integer("topology.gpus_per_node"));
  sc.clos.link_rate = link_rate;
  sc.clos.link_delay = link_delay;
  sc.hosts_per_leaf = static_cast<int>(integer("topology.hosts_per_leaf"));
  sc.spines = static_cast<int>(integer("topology.spines"));
  sc.topology_file = get("topology.file").text;
  if (sc.topology_kind == "file" && sc.topology_file.empty()) {
    throw InputError(value("topology.kind").where, "expected topology.file with kind: file");
  }
  sc.json_out = get("outputs.json").text;
  sc.stop_time = time("stop_time");
  if (sc.stop_time.ps() <= 0) {
    throw InputError(value("stop_time").where, "expected a time above zero");
  }
  SeriesSpec& series = sc.series;
  series.ports = get("outputs.series.ports").text;
  series.ports_where = value("outputs.series.ports").where;
  series.flows = choice("outputs.series.flows") == "all";
  series.csv_out = get("outputs.series_csv").text;
  if (given("outputs.series.interval")) {
    Value v = get("outputs.series.interval");
    series.where = v.where;
    series.interval = units::ParseTime(v.text, v.where);
    if (series.interval.ps() <= 0) {
      throw InputError(v.where, Expected("an interval above zero", v.text));
    }
    if (sc.stop_time.ps() / series.interval.ps() > kMaxSeriesSamples) {
      const int64_t min_ps = (sc.stop_time.ps() + kMaxSeriesSamples - 1) / kMaxSeriesSamples;
      throw InputError(
          v.where,
          Expected(fmt::format("an interval of at least {} (stop_time {} allows at most {} "
                               "samples per series)",
                               units::FormatTime(units::Time::Ps(min_ps)),
                               units::FormatTime(sc.stop_time), kMaxSeriesSamples),
                   v.text));
    }
  } else if (!series.csv_out.empty()) {
    throw InputError(value("outputs.series_csv").where,
                     Expected("outputs.series.interval along with outputs.series_csv", "none"));
  }
  sc.traffic = LoadTraffic(ld);
  if (sc.traffic.empty()) {
    throw InputError({file_name, ld.traffic_line_, "traffic"},
                     "expected at least one traffic entry");
  }
  if (ib.enabled) {
    if (pfc.enabled) {
      Value v = value("fabric.pfc.enabled");
      throw InputError(v.where, Expected("false with fabric.ib.enabled (credits are the lossless "
                                         "mechanism of InfiniBand; PFC is Ethernet's)",
                                         v.text));
    }
    for (const auto& t : sc.traffic) {
      if (t.tclass >= ib.num_vls) {
        throw InputError(t.where, fmt::format("traffic class (SL) {}: expected an SL below "
                                              "fabric.ib.vls ({})",
                                              t.tclass, ib.num_vls));
      }
    }
  }
  if (pfc.enabled) {
    bool carried = false;
    for (const auto& t : sc.traffic)
      carried |= (t.tclass < 0 ? net.nic.data_class : t.tclass) == prio;
    if (!carried) {
      Value v = value("fabric.pfc.priority");
      throw InputError(
          v.where,
          fmt::format("PFC on priority {}, which no traffic uses (data class {}): expected "
                      "the priority of a traffic class",
                      prio, static_cast<int>(net.nic.data_class)));
    }
  }
  if (net.dcqcn) {
    for (const auto& t : sc.traffic) {
      if (t.rate.bps() > 0) {
        throw InputError(t.rate_where,
                         "expected no 'rate' with DCQCN (fabric.cc): the reaction "
                         "point sets each flow's rate");
      }
    }
  }
  sc.pause_inject = LoadPauseInjections(ld, pfc, sc.stop_time, sc.warnings);
  sc.cnp_inject = LoadCnpInjections(ld, cc, sc.stop_time, sc.warnings);
  return sc;
}

Scenario LoadScenarioFile(const std::string& path, const std::vector<std::string>& sets) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, ""}, "cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > (64u << 20))
    throw InputError({path, 0, ""}, "expected a scenario under 64 MiB");
  return LoadScenarioText(text, path, sets);
}

}  // namespace lossless::scenario
