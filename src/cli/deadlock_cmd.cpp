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
#include "run/deadlock_check.hpp"
#include "scenario/scenario.hpp"

namespace lossless::cli {

void AddDeadlockCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "deadlock",
      "Check the routes of a scenario's traffic for a cyclic buffer dependency (PFC deadlock "
      "risk); exit 1 if there is one");
  auto file = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  auto priority = std::make_shared<int>(-1);
  auto json = std::make_shared<bool>(false);
  auto all_pairs = std::make_shared<bool>(false);
  cmd->add_option("FILE", *file, "Scenario file (YAML or JSON)")->required();
  cmd->add_option("--set", *sets, "Override a field: --set topology.gpus=256 (repeatable)");
  cmd->add_option("--priority", *priority,
                  "Check only the buffers of this priority, 0-7 (default: every class the "
                  "scenario's traffic uses; fabric.data_class when the traffic is not known)");
  cmd->add_flag("--all-pairs", *all_pairs,
                "Ignore the traffic list: every host pair over every route the routing may "
                "choose (does the routing allow a cyclic dependency at all?)");
  cmd->add_flag("--json", *json, "Print the result as JSON");
  cmd->callback([=, &ctx] {
    scenario::Scenario s = scenario::LoadScenarioFile(*file, *sets);
    if (*priority != -1 && (*priority < 0 || *priority >= fabric::kMaxClasses)) {
      throw InputError({"<cli>", 0, "--priority"},
                       Expected("a priority from 0 to 7", std::to_string(*priority)));
    }
    topology::Topology t = scenario::BuildTopology(s);
    const run::DeadlockCheck c = run::CheckDeadlockStatically(s, t, *priority, *all_pairs);
    const bool global = s.net.pfc.global;
    // Under global pause a buffer is a whole ingress port (labels end in
    // ":all"), so the check is about every priority at once.
    const std::string on =
        global ? "every priority (global pause: one buffer per ingress port)"
        : c.classes.size() == 1 ? fmt::format("priority {}", c.classes.front())
        : c.classes.empty()     ? std::string("no priority (no traffic reaches a switch)")
                                : fmt::format("priorities {}", fmt::join(c.classes, ", "));
    const std::string traffic =
        c.traffic_known
            ? fmt::format("known statically: the scenario's {} flows ({} on explicit paths, {} "
                          "on every route the routing may choose){}",
                          c.flows, c.explicit_routes, c.flows - c.explicit_routes,
                          c.return_flows == 0
                              ? std::string()
                              : fmt::format(", and {} flows of ACKs, CNPs or BECNs back on every "
                                            "route the routing may choose",
                                            c.return_flows))
            : fmt::format("not known statically ({}): every host pair on every route the "
                          "routing may choose",
                          c.why);
    if (*json) {
      nlohmann::json prio = global ? nlohmann::json("all")
                            : c.classes.size() == 1 ? nlohmann::json(c.classes.front())
                                                    : nlohmann::json(c.classes);
      nlohmann::json j = {
          {"scenario", *file},
          {"priority", prio},
          {"buffers", c.graph.num_vertices},
          {"dependencies", c.graph.num_edges()},
          {"lossless", c.lossless},
          {"traffic",
           {{"known", c.traffic_known},
            {"why_not", c.traffic_known ? nlohmann::json() : nlohmann::json(c.why)},
            {"flows", c.flows},
            {"explicit_routes", c.explicit_routes},
            {"return_flows", c.return_flows}}},
          {"cyclic", !c.cycle.empty()},
          {"cycle", nlohmann::json::array()}};
      const auto& nodes = t.nodes;
      const fabric::RoutingTable routes(t);
      for (size_t i = 0; i < c.cycle.size(); ++i) {
        const uint32_t p = c.graph.PortOf(c.cycle[i]);
        const uint32_t peer = fabric::RoutingTable::PortPeer(p);
        nlohmann::json e = {{"buffer", c.labels[i]},
                            {"switch", nodes[routes.PortNode(p)].name},
                            {"from", nodes[routes.PortNode(peer)].name},
                            {"port", p}};
        if (c.traffic_known) e["flows"] = c.cycle_flows[i];
        j["cycle"].push_back(e);
      }
      fmt::print("{}\n", j.dump(2));
    } else if (c.cycle.empty()) {
      fmt::print("{}: no cyclic buffer dependency on {} ({} buffers, {} dependencies)\n",
                 text::OneLine(*file), on, c.graph.num_vertices, c.graph.num_edges());
      fmt::print("  traffic: {}\n", text::OneLine(traffic));
    } else {
      // Buffer labels carry node names from a topology file, flow names
      // from the scenario: escaped.
      fmt::print("{}: cyclic buffer dependency on {}: {} buffers each wait for the next\n",
                 text::OneLine(*file), on, c.cycle.size());
      fmt::print("  {} -> {}\n", text::OneLine(fmt::format("{}", fmt::join(c.labels, " -> "))),
                 text::OneLine(c.labels.front()));
      for (size_t i = 0; i < c.cycle_flows.size(); ++i) {
        fmt::print("  {} -> {}: {}\n", text::OneLine(c.labels[i]),
                   text::OneLine(c.labels[(i + 1) % c.labels.size()]),
                   text::OneLine(fmt::format("{}", fmt::join(c.cycle_flows[i], ", "))));
      }
      fmt::print("  traffic: {}\n", text::OneLine(traffic));
      fmt::print("  ({} buffers, {} dependencies checked; a deadlock can form under load)\n",
                 c.graph.num_vertices, c.graph.num_edges());
    }
    if (!*json && !c.lossless) {
      fmt::print(
          "  note: PFC is off for priority {} in this scenario (fabric.pfc): its buffers drop "
          "instead of pausing, so no deadlock forms {}until it is on\n",
          fmt::join(c.lossy_classes, ", "), c.cycle.empty() ? "" : "on this cycle ");
    }
    ctx.exit_code = c.cycle.empty() ? 0 : 1;
  });
}

}  // namespace lossless::cli
