#include "scenario/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include "base/input_file.hpp"
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

namespace {

Scenario Load(const std::string& text, const std::string& file_name,
              const std::vector<std::string>& sets, bool traffic_optional) {
  const AllocationContext context("reading the scenario " + file_name);
  Loader ld(file_name);
  ld.set_traffic_optional(traffic_optional);
  CheckNesting(text, file_name);
  YAML::Node root;
  try {
    // LoadAll, not Load: Load stops after the first document and ignored
    // whatever followed it (trailing garbage after a JSON object).
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1) {
      throw InputError({file_name, LineOf(docs[1]), ""},
                       "expected one scenario, got more after it (trailing text or a second "
                       "YAML document)");
    }
    if (!docs.empty()) root = docs[0];
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
  Fields f(ld, sc);
  sc.name = f.Get("name").text;
  sc.description = f.Get("description").text;
  sc.seed = static_cast<uint64_t>(f.Int("seed"));
  sc.preset = f.Choice("fabric.preset");  // first: it decides other defaults
  ReadFabric(f, sc);
  ReadTransport(f, sc);
  ReadNicStall(f, sc);
  ReadDeadlock(f, sc);
  ReadTopology(f, sc);
  ReadOutputs(f, sc);
  ReadTraffic(f, sc);
  ReadInjections(f, sc);
  ReadProfileFields(f, sc);
  return sc;
}

}  // namespace

Scenario LoadScenarioText(const std::string& text, const std::string& file_name,
                          const std::vector<std::string>& sets) {
  return Load(text, file_name, sets, false);
}

Scenario LoadFabricText(const std::string& text, const std::string& file_name,
                        const std::vector<std::string>& sets) {
  return Load(text, file_name, sets, true);
}

namespace {
std::string ReadScenarioFile(const std::string& path) {
  return ReadTextInput(path, "a scenario");
}
}  // namespace

Scenario LoadScenarioFile(const std::string& path, const std::vector<std::string>& sets) {
  return LoadScenarioText(ReadScenarioFile(path), path, sets);
}

Scenario LoadFabricFile(const std::string& path, const std::vector<std::string>& sets) {
  return LoadFabricText(ReadScenarioFile(path), path, sets);
}

}  // namespace lossless::scenario
