#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "lossless/version.hpp"
#include "parallel/mpi_comm.hpp"

namespace {

// The subcommand named on the command line (the first argument that is not
// an option), or "" when there is none.
std::string_view FirstCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return {};
}

}  // namespace

// What can still escape: building the command tree (CLI11 throws on a
// programming error such as a duplicate option) and printing the error itself
// to a broken standard error; std::terminate is the right end for both.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  using lossless::cli::Context;
  CLI::App app{
      "lossless: predict, validate and compare lossless RDMA fabrics (InfiniBand, RoCE v2)"};
  app.set_version_flag("--version", std::string("lossless ") + lossless::kVersion);
  app.require_subcommand(1);
  // Started by mpirun with several processes: only `sweep`, `run`, `perf` and `tune`
  // share the work out (docs/sweep.md, docs/parallel.md, docs/perf.md, docs/tune.md); any other
  // command would run once per process and print and write its output that many times. Rank 0 says
  // so; the others end quietly with 0, so mpirun does not end rank 0 before it has printed.
  if (const std::string_view cmd = FirstCommand(argc, argv);
      lossless::parallel::LauncherSize() > 1 && !cmd.empty() && cmd != "sweep" && cmd != "run" &&
      cmd != "perf" && cmd != "tune") {
    if (lossless::parallel::LauncherRank() > 0) return 0;
    fmt::print(
        stderr,
        "error: <cli>: mpirun: expected `lossless sweep`, `lossless run`, `lossless perf` or "
        "`lossless tune` under an MPI launcher with {} processes, got `lossless {}`, which runs on "
        "one process (docs/parallel.md)\n",
        lossless::parallel::LauncherSize(), lossless::text::OneLine(std::string(cmd)));
    return 2;
  }
  Context ctx;
  lossless::cli::AddSimCommands(app, ctx);
  CLI::App* audit =
      app.add_subcommand("audit", "Audit a real cluster's artifacts and give verdicts");
  audit->require_subcommand(1);
  lossless::cli::AddAuditNcclCommand(*audit, ctx);
  lossless::cli::AddAuditTopoCommand(*audit, ctx);
  lossless::cli::AddAuditQosCommand(*audit, ctx);
  lossless::cli::AddOpticsCommand(app, ctx);
  lossless::cli::AddDeadlockCommand(app, ctx);
  lossless::cli::AddProfileCommands(app, ctx);
  lossless::cli::AddPerfCommand(app, ctx);
  lossless::cli::AddTrainCommand(app, ctx);
  lossless::cli::AddCompareCommand(app, ctx);
  lossless::cli::AddReportCommand(app, ctx);
  lossless::cli::AddSweepCommand(app, ctx);
  lossless::cli::AddPartitionCommand(app, ctx);
  lossless::cli::AddLinksCommand(app, ctx);
  lossless::cli::AddWhatIfCommand(app, ctx);
  lossless::cli::AddScenarioCommand(app, ctx);
  lossless::cli::AddTuneCommand(app, ctx);
  try {
    app.parse(argc, argv);
    // What a command printed must have arrived: a full disk or a closed pipe
    // behind standard output is an error, not a silent exit 0.
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      const int err = errno;
      fmt::print(stderr, "error: <stdout>: cannot write: {}\n",
                 err != 0 ? std::strerror(err) : "write error");
      return 2;
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line, as every error (CLI11 adds "Run with --help ..." on a second).
    std::string command = "lossless";
    const CLI::App* inner = &app;
    while (!inner->get_subcommands().empty()) {
      inner = inner->get_subcommands().front();
      command += " " + inner->get_name();
    }
    std::string what = lossless::text::OneLine(e.what());
    // CLI11 checks required options before it looks at arguments it did not
    // expect: `partition -k 3` would say "--ranks is required". The argument
    // nobody expected is the likelier mistake; name it first.
    const std::vector<std::string> rest = inner->remaining();
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && !rest.empty())
      what = fmt::format("the following argument{} not expected: {} ({})",
                         rest.size() == 1 ? " was" : "s were", fmt::join(rest, " "), what);
    fmt::print(stderr, "error: <cli>: {} (usage: {} --help)\n", what, command);
    return 2;
  } catch (const std::bad_alloc&) {
    // One line saying what was too large (the innermost AllocationContext
    // the failure left), not "std::bad_alloc".
    std::fflush(stdout);
    const std::string& what = lossless::FailedContext();
    fmt::print(stderr,
               "error: out of memory{}{}: expected an input this machine can hold (limits: "
               "docs/errors.md#input-limits)\n",
               what.empty() ? "" : " while ", lossless::text::OneLine(what));
    return 2;
  } catch (const lossless::InputError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", lossless::text::OneLine(e.what()));
    return 2;
  } catch (const std::system_error& e) {
    // fmt::print to a full disk or a closed pipe throws "cannot write to
    // file: ..." without saying which: nearly always standard output.
    std::fflush(stdout);
    if (std::string_view(e.what()).rfind("cannot write to file", 0) == 0) {
      fmt::print(stderr, "error: <stdout>: cannot write: {}\n", e.code().message());
    } else {
      fmt::print(stderr, "error: {}\n", lossless::text::OneLine(e.what()));
    }
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", lossless::text::OneLine(e.what()));
    return 2;
  }
  return ctx.exit_code;
}
