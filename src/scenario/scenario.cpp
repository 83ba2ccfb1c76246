#include "scenario/scenario.hpp"

#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include "base/input_file.hpp"
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

namespace {

// Counts the documents the parser reports and where the second starts.
struct DocumentStarts final : YAML::EventHandler {
  int count = 0;
  int64_t second_line = 0;
  void OnDocumentStart(const YAML::Mark& m) override {
    if (++count == 2) second_line = m.line + 1;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

Scenario Load(const std::string& text, const std::string& file_name,
              const std::vector<std::string>& sets, bool traffic_optional) {
  const AllocationContext context("reading the scenario " + file_name);
  Loader ld(file_name);
  ld.set_traffic_optional(traffic_optional);
  CheckNesting(text, file_name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
    // Load stops after the first document and ignores whatever follows it
    // (trailing garbage after a JSON object): ask the parser for exactly one
    // more document. Not YAML::LoadAll: on some inputs (a JSON object
    // followed by ",") it loops forever (found by the scenario fuzzer).
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    parser.HandleNextDocument(starts);
    if (parser.HandleNextDocument(starts) && starts.count > 1) {
      throw InputError({file_name, starts.second_line, ""},
                       "expected one scenario, got more after it (trailing text or a second "
                       "YAML document)");
    }
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
  ReadNode(f, sc);
  ResolvePfcHeadroom(f, sc);
  ReadOutputs(f, sc);
  ReadTraffic(f, sc);
  ReadInjections(f, sc);
  ReadProfileFields(f, sc);
  CompleteResolved(f, sc);
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
