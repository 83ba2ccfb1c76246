#include "cli/commands.hpp"

namespace lossless::cli {

// Placeholder until the optics tool lands (issue 4); refuses to give a verdict.
void AddOpticsCommand(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand("optics", "(not implemented yet)");
  cmd->allow_extras();
  cmd->callback([&ctx] {
    std::fputs("error: 'optics' is not implemented yet\n", stderr);
    ctx.exit_code = 2;
  });
}

}  // namespace lossless::cli
