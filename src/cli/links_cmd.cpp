// lossless links: every link of a fabric's topology by the name faults use
// (docs/what-if.md#link-names).
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "profile/profile.hpp"
#include "scenario/scenario.hpp"
#include "topology/topology.hpp"
#include "units/units.hpp"

namespace lossless::cli {
namespace {

const char* TierName(topology::Tier t) {
  switch (t) {
    case topology::Tier::kHost:
      return "host";
    case topology::Tier::kLeaf:
      return "leaf";
    case topology::Tier::kSpine:
      return "spine";
    case topology::Tier::kCore:
      return "core";
    case topology::Tier::kOther:
      return "other";
  }
  return "other";
}

struct LinksOptions {
  std::string fabric;
  std::string scenario;
  int64_t nodes = 0;
  std::vector<std::string> sets;
  bool json = false;
};

}  // namespace

scenario::Scenario LoadFabricOrScenario(const std::string& fabric, const std::string& scenario_file,
                                        int64_t nodes, const std::vector<std::string>& sets) {
  if (!scenario_file.empty()) {
    if (!fabric.empty())
      throw InputError({"<cli>", 0, "--scenario"},
                       "expected --fabric or --scenario, not both (a scenario carries its fabric)");
    if (nodes != 0)
      throw InputError({"<cli>", 0, "--nodes"},
                       "expected --nodes only with --fabric (a scenario sizes its own topology; "
                       "--set topology.nodes=N changes it)");
    return scenario::LoadFabricFile(scenario_file, sets);
  }
  if (fabric.empty())
    throw InputError({"<cli>", 0, "--fabric"}, "expected --fabric NAME or --scenario FILE");
  return profile::Load(fabric, nodes, sets);
}

void AddLinksCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "links",
      "List every link of a fabric's topology by the name faults use (leaf0-spine0, #k for "
      "parallel links; docs/what-if.md)");
  auto o = std::make_shared<LinksOptions>();
  cmd->add_option("--fabric", o->fabric, "Profile name or file (lossless profiles)");
  cmd->add_option("--nodes", o->nodes,
                  "Nodes of the profile's default topology (default: the "
                  "profile's own)");
  cmd->add_option("--scenario", o->scenario, "A scenario file instead of a profile");
  cmd->add_option("--set", o->sets, "Override a field: --set topology.radix=16 (repeatable)");
  cmd->add_flag("--json", o->json, "Print JSON (schema lossless.links/1) instead of text");
  cmd->footer(
      "Exit status: 0 listed; 2 bad input (unknown profile, bad scenario, sizes no "
      "topology can host).");
  cmd->callback([o, &ctx] {
    if (o->nodes < 0)
      throw InputError({"<cli>", 0, "--nodes"},
                       Expected("a node count of 1 or more", std::to_string(o->nodes)));
    const scenario::Scenario s = LoadFabricOrScenario(o->fabric, o->scenario, o->nodes, o->sets);
    const topology::Topology t = scenario::BuildTopology(s);
    const std::vector<std::string> names = scenario::LinkNames(t);
    if (o->json) {
      nlohmann::ordered_json j;
      j["schema"] = "lossless.links/1";
      j["fabric"] = s.name;
      j["topology"] = t.description;
      nlohmann::ordered_json arr = nlohmann::ordered_json::array();
      for (size_t l = 0; l < t.links.size(); ++l) {
        const topology::Link& link = t.links[l];
        nlohmann::ordered_json e;
        e["name"] = names[l];
        e["a"] = t.nodes[link.a].name;
        e["b"] = t.nodes[link.b].name;
        e["tiers"] =
            fmt::format("{}-{}", TierName(t.nodes[link.a].tier), TierName(t.nodes[link.b].tier));
        e["rate_gbps"] = static_cast<double>(link.rate.bps()) / 1e9;
        e["delay_ns"] = static_cast<double>(link.delay.ps()) / 1e3;
        arr.push_back(std::move(e));
      }
      j["links"] = std::move(arr);
      fmt::print("{}\n", j.dump(2));
      ctx.exit_code = 0;
      return;
    }
    size_t width = 4;
    for (const auto& n : names) width = std::max(width, n.size());
    fmt::print("# {}: {}\n", text::OneLine(s.name), text::OneLine(t.description));
    fmt::print("{:<{}}  {:<11}  {:>9}  {:>9}\n", "LINK", width, "TIERS", "RATE", "DELAY");
    for (size_t l = 0; l < t.links.size(); ++l) {
      const topology::Link& link = t.links[l];
      fmt::print(
          "{:<{}}  {:<11}  {:>9}  {:>9}\n", text::OneLine(names[l]), width,
          fmt::format("{}-{}", TierName(t.nodes[link.a].tier), TierName(t.nodes[link.b].tier)),
          units::FormatRate(link.rate), units::FormatTime(link.delay));
    }
    ctx.exit_code = 0;
  });
}

}  // namespace lossless::cli
