#include "cli/commands.hpp"

namespace lossless::cli {

// Placeholder until the audit tool lands (issue 4); refuses to give a verdict.
void AddAuditTopoCommand(CLI::App& audit, Context& ctx) {
  CLI::App* cmd = audit.add_subcommand("topo", "(not implemented yet)");
  cmd->allow_extras();
  cmd->callback([&ctx] {
    std::fputs("error: 'audit topo' is not implemented yet\n", stderr);
    ctx.exit_code = 2;
  });
}

}  // namespace lossless::cli
