#include "profile/profile.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "base/input_file.hpp"
#include "profile/embedded.hpp"

namespace lossless::profile {
namespace {

// "profiles/ib-ndr.yaml" -> "ib-ndr".
std::string NameOf(const std::string& path) {
  std::string n = path.substr(path.rfind('/') + 1);
  return n.substr(0, n.rfind('.'));
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool LooksLikePath(const std::string& s) {
  return s == "-" || s.find('/') != std::string::npos || EndsWith(s, ".yaml") ||
         EndsWith(s, ".yml") || EndsWith(s, ".json");
}

std::string Resolved(const scenario::Scenario& s, const std::string& name) {
  for (const auto& [k, v] : s.resolved)
    if (k == name) return v;
  return "";
}

}  // namespace

std::vector<std::string> Names() {
  std::vector<std::string> out;
  for (const auto& f : internal::EmbeddedFiles()) out.push_back(NameOf(f.path));
  std::sort(out.begin(), out.end());
  return out;
}

bool BuiltinText(const std::string& name, std::string* text, std::string* path) {
  for (const auto& f : internal::EmbeddedFiles()) {
    if (NameOf(f.path) == name) {
      if (text != nullptr) *text = f.text;
      if (path != nullptr) *path = f.path;
      return true;
    }
  }
  return false;
}

std::string ProfileText(const std::string& name_or_path, std::string* path, const Location& where) {
  std::string text;
  if (BuiltinText(name_or_path, &text, path)) return text;
  if (!LooksLikePath(name_or_path)) {
    const std::vector<std::string> names = Names();
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    const NearestName near = FindNearestName(name_or_path, names);
    throw InputError(where,
                     fmt::format("unknown profile {}; expected one of {}, or a profile "
                                 "file (a path ending in .yaml){}",
                                 QuoteForMessage(name_or_path), list,
                                 near.Close(3) ? " (did you mean '" + near.name + "'?)" : ""));
  }
  if (path != nullptr) *path = name_or_path;
  return ReadTextInput(name_or_path, "a profile", size_t{1} << 20);
}

scenario::Scenario Load(const std::string& name_or_path, int64_t nodes,
                        const std::vector<std::string>& sets, const Location& where) {
  if (nodes < 0) {
    throw InputError({where.file, where.line, "--nodes"},
                     Expected("a node count of at least 1", std::to_string(nodes)));
  }
  std::string path;
  const std::string text = ProfileText(name_or_path, &path, where);
  std::vector<std::string> all;
  if (nodes > 0) all.push_back(fmt::format("topology.nodes={}", nodes));
  all.insert(all.end(), sets.begin(), sets.end());
  return scenario::LoadFabricText(text, path, all);
}

Summary Summarize(const scenario::Scenario& s, const std::string& file) {
  Summary out;
  out.name = s.name;
  out.file = file;
  out.description = s.description;
  out.link_rate = Resolved(s, "fabric.link_rate");
  out.lossless = s.net.ib.enabled ? "credits" : s.net.pfc.enabled ? "PFC" : "none";
  out.cc = Resolved(s, "fabric.cc");
  out.routing = Resolved(s, "fabric.routing");
  out.topology = fmt::format("{}, radix {}", s.topology_kind, s.clos.radix);
  if (s.clos.oversubscription != 1.0)
    out.topology += fmt::format(", {:g}:1", s.clos.oversubscription);
  out.topology += fmt::format(", {} GPUs/node", s.clos.gpus_per_node);
  out.cost_model = s.cost_model;
  return out;
}

std::vector<Summary> List() {
  std::vector<Summary> out;
  for (const auto& name : Names()) {
    std::string path;
    scenario::Scenario s = Load(name);
    BuiltinText(name, nullptr, &path);
    out.push_back(Summarize(s, path));
  }
  return out;
}

}  // namespace lossless::profile
