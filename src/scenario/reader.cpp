#include "scenario/internal/reader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::scenario {
namespace {

// Fields whose value is a list of entries, parsed apart from the registry.
constexpr const char* kListFields[] = {"traffic", "faults.pause_inject", "faults.cnp_inject",
                                       "faults.link_loss", "faults.link_down"};

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

}  // namespace

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

int64_t ToInt(const Value& v, const char* field, double lo, double hi) {
  return ToInt(v, ParamInfo{field, ParamType::kInt, "", "", "", lo, hi});
}

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

void Loader::Walk(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    throw InputError({file_, LineOf(node), path.empty() ? "" : path},
                     path.empty() ? "expected a mapping of scenario fields at the top level"
                                  : "expected a mapping");
  }
  std::map<std::string, int64_t> seen;  // key -> its line, in this mapping
  for (const auto& kv : node) {
    if (!kv.first.IsScalar())
      throw InputError({file_, LineOf(kv.first), path}, "expected a plain key");
    std::string key = kv.first.Scalar();
    std::string full = path.empty() ? key : path + "." + key;
    // Two `fabric:` maps would merge and a second `traffic:` replace the first.
    if (auto [it, fresh] = seen.emplace(key, LineOf(kv.first)); !fresh) {
      throw InputError({file_, LineOf(kv.first), full},
                       fmt::format("given twice (first on line {})", it->second));
    }
    const YAML::Node& v = kv.second;
    if (std::find(std::begin(kListFields), std::end(kListFields), full) != std::end(kListFields)) {
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

void Loader::ApplySet(const std::string& set) {
  auto eq = set.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError({kSetFile, 0, set}, Expected("name=value", set));
  }
  std::string name = set.substr(0, eq), value = set.substr(eq + 1);
  for (const char* list : kListFields) {
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

Value Fields::Find(const std::string& name) const {
  auto& values = ld_.values();
  auto it = values.find(name);
  if (it != values.end()) return it->second;
  std::string preset = values.count("fabric.preset") ? values["fabric.preset"].text : "roce";
  for (const auto& pv : PresetValues())
    if (preset == pv.preset && name == pv.name)
      return Value{pv.value, {ld_.file() + " (preset " + preset + ")", 0, name}, false};
  // A default that does not fit the rest is reported against the scenario
  // that left it in place, not a file called "<default>".
  return Value{FindParam(name)->def, {ld_.file() + " (default)", 0, name}, false};
}

Value Fields::Get(const char* name) {
  Value v = Find(name);
  sc_.resolved.emplace_back(name, v.text);
  return v;
}

units::Time Fields::Time(const char* name) {
  Value v = Get(name);
  return units::ParseTime(v.text, v.where);
}

units::Rate Fields::Rate(const char* name) {
  Value v = Get(name);
  RequireUnit(v, ParamType::kRate);
  return units::ParseRate(v.text, v.where);
}

int64_t Fields::Bytes(const char* name) {
  Value v = Get(name);
  RequireUnit(v, ParamType::kBytes);
  return units::ParseBytes(v.text, v.where).count();
}

void CompleteResolved(Fields& f, Scenario& sc) {
  std::map<std::string, std::string> read;
  for (const auto& [k, v] : sc.resolved) read[k] = v;
  std::vector<std::pair<std::string, std::string>> out;
  for (const ParamInfo& p : Params()) {
    auto it = read.find(p.name);
    std::string v = it != read.end() ? it->second : f.Find(p.name).text;
    const std::string_view t = text::Trim(v);
    const bool digits = !t.empty() && t.find_first_not_of("0123456789.") == std::string_view::npos;
    if (v.empty()) {
      v = "(none)";
    } else if (digits && p.type == ParamType::kBytes) {
      v += "B";
    } else if (digits && p.type == ParamType::kRate) {
      v += "bps";
    } else if (digits && std::string_view(p.name) == "fabric.cable_length") {
      v += "m";
    } else if (digits && (std::string_view(p.name) == "fabric.mtu" ||
                          std::string_view(p.name) == "fabric.frame_overhead")) {
      v += "B";  // given as plain bytes
    }
    out.emplace_back(p.name, std::move(v));
  }
  for (size_t i = 0; i < sc.traffic.size(); ++i)
    out.emplace_back(fmt::format("traffic.{}", i), TrafficText(sc.traffic[i]));
  // The fault lists, as the run applies them.
  for (size_t i = 0; i < sc.pause_inject.size(); ++i) {
    const PauseInjection& p = sc.pause_inject[i];
    out.emplace_back(fmt::format("faults.pause_inject.{}", i),
                     fmt::format("{} at={} class_enable=0x{:02x} quanta={}",
                                 p.host >= 0 ? fmt::format("host={}", p.host) : "port=" + p.port,
                                 units::FormatTime(p.at), p.class_enable, p.quanta));
  }
  for (size_t i = 0; i < sc.cnp_inject.size(); ++i) {
    const CnpInjection& c = sc.cnp_inject[i];
    out.emplace_back(fmt::format("faults.cnp_inject.{}", i),
                     fmt::format("flow={} count={} first={} last={}", c.flow, c.at.size(),
                                 c.at.empty() ? std::string("-") : units::FormatTime(c.at.front()),
                                 c.at.empty() ? std::string("-") : units::FormatTime(c.at.back())));
  }
  for (size_t i = 0; i < sc.link_loss.size(); ++i) {
    const LinkLossFault& l = sc.link_loss[i];
    out.emplace_back(fmt::format("faults.link_loss.{}", i),
                     fmt::format("link={} ber={} drop_every={} drop_prob={}", l.link,
                                 l.ber_given ? fmt::format("{:g}", l.loss.ber) : "fabric.ber",
                                 l.loss.drop_every, l.loss.drop_prob));
  }
  for (size_t i = 0; i < sc.link_down.size(); ++i) {
    const LinkDownFault& l = sc.link_down[i];
    out.emplace_back(fmt::format("faults.link_down.{}", i),
                     fmt::format("link={} at={} up_at={}", l.link, units::FormatTime(l.at),
                                 l.up_at == units::Time::Max() ? std::string("never")
                                                               : units::FormatTime(l.up_at)));
  }
  sc.resolved = std::move(out);
}

std::string PathInScenario(const Value& v, const std::string& scenario_file) {
  if (v.text.empty() || v.text == "-" || !v.given || v.where.file != scenario_file) return v.text;
  const std::filesystem::path p(v.text);
  const std::filesystem::path folder = std::filesystem::path(scenario_file).parent_path();
  if (p.is_absolute() || folder.empty()) return v.text;
  return (folder / p).lexically_normal().string();
}

void RequireUnit(const Value& v, ParamType type) {
  if (type != ParamType::kRate && type != ParamType::kBytes) return;
  const std::string_view t = text::Trim(v.text);
  if (t.empty() || t.find_first_not_of("0123456789.+-") != std::string_view::npos) return;
  // Zero is zero in any unit.
  if (t.find_first_not_of("0.+-") == std::string_view::npos) return;
  throw InputError(v.where,
                   Expected(type == ParamType::kRate ? "a rate with a unit such as 400Gbps"
                                                     : "a size with a unit such as 9KiB or 4096B",
                            v.text));
}

int64_t Fields::Int(const char* name) {
  return ToInt(Get(name), *FindParam(name));
}
double Fields::Number(const char* name) {
  return ToDouble(Get(name), *FindParam(name));
}
bool Fields::Bool(const char* name) {
  return ToBool(Get(name));
}
std::string Fields::Choice(const char* name) {
  return ToEnum(Get(name), *FindParam(name));
}

void Fields::Fail(const char* name, const std::string& what) const {
  Value v = Find(name);
  throw InputError(v.where, Expected(what, v.text));
}

}  // namespace lossless::scenario
