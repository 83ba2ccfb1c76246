#include "cli/commands.hpp"

namespace lossless::cli {

void AddSimCommands(CLI::App& app, Context& ctx) {
  CLI::App* demo = app.add_subcommand("demo", "Run the built-in reference scenario and print its results");
  demo->callback([&ctx] { ctx.exit_code = 0; });
}

}  // namespace lossless::cli
