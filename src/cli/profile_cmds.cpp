// lossless profiles | tco
#include <memory>

#include <fmt/format.h>

#include "base/text.hpp"
#include "cli/commands.hpp"
#include "profile/profile.hpp"
#include "tco/tco.hpp"

namespace lossless::cli {

void AddProfileCommands(CLI::App& app, Context& ctx) {
  // --- profiles ----------------------------------------------------------
  {
    auto* cmd = app.add_subcommand(
        "profiles", "List the built-in fabric profiles (every --fabric NAME; docs/profiles.md)");
    auto show = std::make_shared<std::string>();
    cmd->add_option("--show", *show,
                    "Print one profile's YAML (a built-in name or a file); copy it to edit");
    cmd->callback([=, &ctx] {
      if (!show->empty()) {
        std::string path;
        std::string text = profile::ProfileText(*show, &path, {"<cli>", 0, "--show"});
        profile::Load(*show, 0, {}, {"<cli>", 0, "--show"});  // validates it
        fmt::print("{}", text::ForTerminal(text));
        ctx.exit_code = 0;
        return;
      }
      fmt::print("{:<13} {:<8} {:<8} {:<15} {:<9} {:<7} {}\n", "NAME", "RATE", "LOSSLESS", "CC",
                 "ROUTING", "COST", "DEFAULT TOPOLOGY");
      for (const auto& p : profile::List()) {
        fmt::print("{:<13} {:<8} {:<8} {:<15} {:<9} {:<7} {}\n", p.name, p.link_rate, p.lossless,
                   p.cc, p.routing, p.cost_model, p.topology);
        fmt::print("{:<13} {}\n", "", p.description);
      }
      fmt::print(
          "\nA profile is a scenario file without traffic (profiles/NAME.yaml); `lossless "
          "profiles --show NAME` prints it.\n");
      ctx.exit_code = 0;
    });
  }
  // --- tco ---------------------------------------------------------------
  {
    auto* cmd = app.add_subcommand(
        "tco",
        "Size a fabric and price it: bill of materials, power, operations, cost per GPU "
        "(docs/tco.md)");
    auto opts = std::make_shared<tco::Options>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("--set", opts->sets,
                    "Override a profile field: --set topology.kind=leaf-spine (repeatable)");
    cmd->add_option("--gpus", opts->gpus, "GPUs (one NIC each)")->required();
    cmd->add_option("--fabric", opts->fabric, "Profile name or file (lossless profiles)")
        ->required();
    cmd->add_option("--prices", opts->prices_file,
                    "YAML file overriding any of the defaults in data/prices.yaml (partial)");
    cmd->add_option("--rate", opts->rate,
                    "Per-GPU link rate: 400g or 800g (default: the profile's); prices that "
                    "generation's switches, NICs and optics");
    cmd->add_option("--server-capex", opts->server_capex,
                    "GPU server capex per GPU in USD: enables all-in figures comparable with a "
                    "cloud price per GPU-hour");
    cmd->add_flag("--json", *json, "Print JSON (schema lossless.tco/1) instead of text");
    cmd->footer(
        "Exit status: 0 done (warnings on stderr); 2 bad input (unknown profile, price "
        "file error, a GPU count no topology can host).");
    cmd->callback([=, &ctx] {
      const tco::Result r = tco::Run(*opts);
      if (*json) {
        fmt::print("{}\n", tco::ResultJson(r).dump(2));
      } else {
        fmt::print("{}", text::ForTerminal(tco::ResultText(r)));
      }
      for (const auto& w : r.warnings) fmt::print(stderr, "warning: {}\n", text::OneLine(w));
      ctx.exit_code = 0;
    });
  }
}

}  // namespace lossless::cli
