// lossless deadlock: static PFC deadlock check (cyclic buffer dependency).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "cli/commands.hpp"
#include "deadlock/buffer_graph.hpp"
#include "fabric/routing.hpp"
#include "scenario/scenario.hpp"

namespace lossless::cli {

void AddDeadlockCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "deadlock",
      "Check a scenario's fabric for a cyclic buffer dependency (PFC deadlock risk) on one "
      "lossless priority; exit 1 if there is one");
  auto file = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  auto priority = std::make_shared<int>(-1);
  auto json = std::make_shared<bool>(false);
  cmd->add_option("FILE", *file, "Scenario file (YAML or JSON)")->required();
  cmd->add_option("--set", *sets, "Override a field: --set topology.gpus=256 (repeatable)");
  cmd->add_option("--priority", *priority,
                  "Lossless priority to check, 0-7 (default: the scenario's fabric.data_class)");
  cmd->add_flag("--json", *json, "Print the result as JSON");
  cmd->callback([=, &ctx] {
    scenario::Scenario s = scenario::LoadScenarioFile(*file, *sets);
    if (*priority != -1 && (*priority < 0 || *priority >= fabric::kMaxClasses)) {
      throw InputError({"<cli>", 0, "--priority"},
                       Expected("a priority from 0 to 7", std::to_string(*priority)));
    }
    const int prio = *priority == -1 ? s.net.nic.data_class : *priority;
    topology::Topology t = scenario::BuildTopology(s);
    const fabric::RoutingTable routes(t);  // no engine: the tables the simulator routes on
    deadlock::BufferGraph g = deadlock::BuildBufferGraph(routes, prio);
    std::vector<uint32_t> cycle = deadlock::FindBufferCycle(g);
    // InfiniBand's credit-based flow control makes every lane lossless; on
    // Ethernet only the PFC priorities are, or every priority under global
    // 802.3x pause.
    const bool lossless =
        s.preset == "infiniband" ||
        (s.net.pfc.enabled && (s.net.pfc.global || (s.net.pfc.priorities >> prio & 1u) != 0));
    // Under global pause a buffer is a whole ingress port (labels end in
    // ":all"), so the check is about every priority at once.
    const bool global = s.net.pfc.global;
    const std::string on = global ? "every priority (global pause: one buffer per ingress port)"
                                  : fmt::format("priority {}", prio);
    std::vector<std::string> labels;
    for (uint32_t p : cycle) labels.push_back(deadlock::BufferLabel(routes, p, prio, global));
    if (*json) {
      nlohmann::json j = {{"scenario", *file},
                          {"priority", global ? nlohmann::json("all") : nlohmann::json(prio)},
                          {"buffers", g.num_vertices},
                          {"dependencies", g.num_edges()},
                          {"lossless", lossless},
                          {"cyclic", !cycle.empty()},
                          {"cycle", nlohmann::json::array()}};
      const auto& nodes = t.nodes;
      for (size_t i = 0; i < cycle.size(); ++i) {
        const uint32_t p = cycle[i];
        j["cycle"].push_back({{"buffer", labels[i]},
                              {"switch", nodes[routes.PortNode(p)].name},
                              {"from", nodes[routes.PortNode(routes.PortPeer(p))].name},
                              {"port", p}});
      }
      fmt::print("{}\n", j.dump(2));
    } else if (cycle.empty()) {
      fmt::print("{}: no cyclic buffer dependency on {} ({} buffers, {} dependencies)\n",
                 text::OneLine(*file), on, g.num_vertices, g.num_edges());
    } else {
      // Buffer labels carry node names from a topology file: escaped.
      fmt::print("{}: cyclic buffer dependency on {}: {} buffers each wait for the next\n",
                 text::OneLine(*file), on, cycle.size());
      fmt::print("  {} -> {}\n", text::OneLine(fmt::format("{}", fmt::join(labels, " -> "))),
                 text::OneLine(labels.front()));
      fmt::print("  ({} buffers, {} dependencies checked; a deadlock can form under load)\n",
                 g.num_vertices, g.num_edges());
    }
    if (!*json && !lossless) {
      fmt::print(
          "  note: PFC is off for priority {} in this scenario (fabric.pfc): its buffers drop "
          "instead of pausing, so no deadlock forms until it is on\n",
          prio);
    }
    ctx.exit_code = cycle.empty() ? 0 : 1;
  });
}

}  // namespace lossless::cli
