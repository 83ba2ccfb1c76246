#include "tco/prices.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/input_file.hpp"
#include "tco/embedded.hpp"

namespace lossless::tco {
namespace {

int64_t LineOf(const YAML::Node& n) {
  const auto m = n.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

YAML::Node LoadYaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError({file, e.mark.line >= 0 ? e.mark.line + 1 : 0, ""},
                     "expected a YAML price file: " + e.msg);
  }
  if (!root.IsMap()) {
    throw InputError({file, root.IsNull() ? 1 : LineOf(root), ""},
                     "expected a mapping of price names (docs/tco.md)");
  }
  return root;
}

double ToNumber(const YAML::Node& n, const Location& where) {
  if (!n.IsScalar()) throw InputError(where, "expected a number");
  const std::string& t = n.Scalar();
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno != 0 || !std::isfinite(d)) {
    throw InputError(where, Expected("a number", t));
  }
  return d;
}

std::string ToText(const YAML::Node& n, const Location& where) {
  if (!n.IsScalar() || n.Scalar().empty()) throw InputError(where, "expected a text value");
  return n.Scalar();
}

}  // namespace

void CheckValue(const std::string& name, double value, const Location& where) {
  if (value < 0)
    throw InputError(where, Expected("a value of 0 or more", fmt::format("{:g}", value)));
  if (name == "pue" && value < 1)
    throw InputError(where, Expected("a PUE of at least 1", fmt::format("{:g}", value)));
  if (name.rfind("amortization_years", 0) == 0 && value <= 0)
    throw InputError(where, Expected("more than 0 years", fmt::format("{:g}", value)));
  if (name == "utilization" && (value <= 0 || value > 1))
    throw InputError(where, Expected("a fraction above 0, at most 1", fmt::format("{:g}", value)));
  if ((name == "optics_third_party_discount" || name.rfind("network_share_band", 0) == 0) &&
      value >= 1)
    throw InputError(where, Expected("a fraction below 1", fmt::format("{:g}", value)));
}

PriceTable PriceTable::Parse(const std::string& text, const std::string& file) {
  const YAML::Node root = LoadYaml(text, file);
  PriceTable t;
  for (const auto& kv : root) {
    Price p;
    p.name = kv.first.Scalar();
    const int64_t line = LineOf(kv.first);
    const YAML::Node& e = kv.second;
    if (!e.IsMap())
      throw InputError({file, line, p.name},
                       "expected a mapping with value, unit, source, date and grade");
    auto field = [&](const char* f) -> YAML::Node {
      const YAML::Node n = e[f];
      if (!n) {
        throw InputError({file, line, p.name + "." + f}, "expected this field (it is missing)");
      }
      return n;
    };
    const YAML::Node v = field("value");
    p.where = {file, LineOf(v), p.name + ".value"};
    p.value = ToNumber(v, p.where);
    CheckValue(p.name, p.value, p.where);
    p.default_value = p.value;
    for (const char* f : {"low", "high"}) {
      if (const YAML::Node n = e[f]) {
        const double d = ToNumber(n, {file, LineOf(n), p.name + "." + f});
        (std::string(f) == "low" ? p.low : p.high) = d;
      }
    }
    p.unit = ToText(field("unit"), {file, line, p.name + ".unit"});
    p.source = ToText(field("source"), {file, line, p.name + ".source"});
    p.date = ToText(field("date"), {file, line, p.name + ".date"});
    const YAML::Node g = field("grade");
    const std::string grade = g.IsScalar() ? g.Scalar() : "";
    if (grade.size() != 1 || grade[0] < 'A' || grade[0] > 'D')
      throw InputError({file, LineOf(g), p.name + ".grade"}, Expected("A, B, C or D", grade));
    p.grade = grade[0];
    if (t.Has(p.name)) throw InputError({file, line, p.name}, "given twice");
    t.entries_.push_back(std::move(p));
  }
  return t;
}

PriceTable PriceTable::Defaults() {
  for (const auto& f : internal::EmbeddedFiles())
    if (std::string(f.path) == "data/prices.yaml") return Parse(f.text, f.path);
  throw std::logic_error("data/prices.yaml is not compiled in");
}

bool PriceTable::Has(const std::string& name) const {
  for (const auto& p : entries_)
    if (p.name == name) return true;
  return false;
}

Price* PriceTable::Find(const std::string& name) {
  for (auto& p : entries_)
    if (p.name == name) return &p;
  return nullptr;
}

const Price& PriceTable::Get(const std::string& name) const {
  for (const auto& p : entries_)
    if (p.name == name) return p;
  throw std::out_of_range("no price entry " + name);
}

void PriceTable::Assume(const std::string& name, double value) {
  Price* p = Find(name);
  if (p == nullptr) throw std::out_of_range("no price entry " + name);
  p->value = value;
}

void PriceTable::Set(const std::string& name, double value, const Location& where) {
  Price* p = Find(name);
  if (p == nullptr) throw std::out_of_range("no price entry " + name);
  CheckValue(name, value, where);
  p->value = value;
  p->where = where;
  p->overridden = true;
  p->grade = 'U';
}

void PriceTable::Override(const std::string& text, const std::string& file) {
  const YAML::Node root = LoadYaml(text, file);
  std::vector<std::string> names;
  for (const auto& p : entries_) names.push_back(p.name);
  for (const auto& kv : root) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    const int64_t line = LineOf(kv.first);
    Price* p = Find(name);
    if (p == nullptr) {
      const NearestName near = FindNearestName(name, names);
      throw InputError({file, line, name},
                       fmt::format("unknown price name{}; the names are those of data/prices.yaml "
                                   "(docs/tco.md)",
                                   near.Close(4) ? " (did you mean '" + near.name + "'?)" : ""));
    }
    const YAML::Node& e = kv.second;
    if (!e.IsMap() && !e.IsScalar()) {
      throw InputError({file, LineOf(e), name}, "expected a number or a mapping with `value`");
    }
    const YAML::Node v = e.IsMap() ? e["value"] : e;
    if (!v) {
      throw InputError({file, line, name + ".value"}, "expected a number (the field is missing)");
    }
    const Location where{file, LineOf(v), e.IsMap() ? name + ".value" : name};
    if (e.IsMap()) {
      for (const auto& f : e) {
        const std::string k = f.first.Scalar();
        const YAML::Node& n = f.second;
        const Location at{file, LineOf(n), name + "." + k};
        if (k == "low") {
          p->low = ToNumber(n, at);
        } else if (k == "high") {
          p->high = ToNumber(n, at);
        } else if (k == "source") {
          p->source = ToText(n, at);
        } else if (k == "date") {
          p->date = ToText(n, at);
        } else if (k == "unit") {
          p->unit = ToText(n, at);
        } else if (k != "value" && k != "grade") {
          throw InputError({file, LineOf(f.first), name + "." + k},
                           "unknown field; expected value, low, high, unit, source, date or grade");
        }
      }
    }
    const double value = ToNumber(v, where);
    Set(name, value, where);
  }
}

void PriceTable::OverrideFile(const std::string& path) {
  Override(ReadTextInput(path, "a price file"), path);
}

}  // namespace lossless::tco
