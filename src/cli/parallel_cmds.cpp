// lossless sweep | partition (docs/sweep.md, docs/parallel.md)
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/input_file.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/report_output.hpp"
#include "parallel/comm.hpp"
#include "parallel/mpi_comm.hpp"
#include "parallel/partition.hpp"
#include "scenario/scenario.hpp"
#include "sweep/sweep.hpp"

namespace lossless::cli {
namespace {

struct SweepArgs {
  std::string file;
  std::vector<std::string> vary;
  std::vector<std::string> sets;
  std::string dir;
  int jobs = 1;
  bool quiet = false;
};

// The sweep on every rank of `comm`; rank 0 writes. Returns the exit status.
// Until `writing` is set, every error is thrown on every rank at the same
// point (parallel::RunAgreed, sweep::RunOnComm); after it, only rank 0 works.
int Sweep(parallel::Comm& comm, const SweepArgs& a, bool& writing) {
  const bool root = comm.Rank() == 0;
  sweep::Plan plan;
  plan.file = a.file;
  plan.sets = a.sets;
  // Checks every rank can make on its own, then what only rank 0 does (read
  // the scenario, prepare the output folder); all ranks agree on the outcome.
  parallel::RunAgreed(comm, [&] {
    if (a.jobs < 1)
      throw InputError({"<cli>", 0, "-j"}, Expected("at least 1", std::to_string(a.jobs)));
    if (comm.Size() > 1 && a.jobs != 1) {
      throw InputError({"<cli>", 0, "-j"}, Expected("1 under mpirun (the ranks are the workers)",
                                                    std::to_string(a.jobs)));
    }
    for (const auto& v : a.vary) plan.vary.push_back(sweep::ParseVary(v));
    if (root) {
      plan.text = ReadTextInput(a.file, "a scenario");
      if (!a.dir.empty()) PrepareOutputDir(a.dir);
    }
  });
  plan.text = comm.Broadcast(plan.text);
  parallel::RunAgreed(comm, [&] { sweep::CheckPlan(plan); });
  if (root)
    for (const std::string& note : sweep::PlanNotes(plan))
      fmt::print(stderr, "sweep: warning: {}\n", note);

  const size_t cases = plan.Cases();
  InterruptScope interrupts;
  ProgressLine line(root && !a.quiet && ProgressLine::StderrIsTerminal());
  size_t done_here = 0;
  const std::string where =
      comm.Size() > 1 ? fmt::format(" on rank 0 of {}", comm.Size()) : std::string();
  sweep::Hooks hooks;
  hooks.keep_going = [] { return !InterruptRequested(); };
  hooks.between_slices = [&](const sweep::CaseStatus& st) {
    if (InterruptRequested()) return false;
    if (line.Due()) {
      line.Draw(
          fmt::format("sweep: case {} of {}{}: simulated {} of {} ({:.0f}%); {} case{} done here",
                      st.index + 1, cases, where, units::FormatTime(units::Time::Ps(st.now_ps)),
                      units::FormatTime(units::Time::Ps(st.stop_ps)),
                      100.0 * static_cast<double>(st.now_ps) /
                          static_cast<double>(std::max<int64_t>(1, st.stop_ps)),
                      done_here, done_here == 1 ? "" : "s"));
    }
    return true;
  };
  hooks.case_done = [&](size_t) { ++done_here; };

  sweep::Table table;
  if (comm.Size() > 1 || a.jobs == 1) {
    table = sweep::RunOnComm(comm, plan, hooks);
  } else {
    sweep::Hooks child;  // workers draw nothing; the parent counts rows
    child.keep_going = hooks.keep_going;
    child.between_slices = [](const sweep::CaseStatus&) { return !InterruptRequested(); };
    table = sweep::RunForked(plan, a.jobs, child, [&](size_t done) {
      if (line.Due())
        line.Draw(fmt::format("sweep: {} of {} cases done ({} workers)", done, cases, a.jobs));
    });
  }
  line.Clear();
  writing = true;
  if (!root) return 0;
  const std::string csv = sweep::TableCsv(plan, table);
  if (a.dir.empty()) {
    fmt::print("{}", csv);
  } else {
    const auto path = [&](const char* name) {
      return (std::filesystem::path(a.dir) / name).string();
    };
    WriteFileAtomically(path("sweep.csv"), csv, {a.dir, 0, "-o"});
    WriteFileAtomically(path("sweep.json"), sweep::TableJson(plan, table).dump(2) + "\n",
                        {a.dir, 0, "-o"});
    size_t done = 0;
    for (const auto& r : table.rows) done += r.is_null() ? 0 : 1;
    fmt::print("sweep: {} of {} cases -> {}, {}\n", done, cases, text::OneLine(path("sweep.csv")),
               text::OneLine(path("sweep.json")));
  }
  return table.interrupted ? kExitInterrupted : 0;
}

}  // namespace

void AddSweepCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run a scenario over the cross product of parameter values and write one results table "
      "(docs/sweep.md)");
  cmd->footer(
      "Cases are spread over mpirun's ranks when started under mpirun (an MPI build), else over "
      "-j local processes; the table is the same bytes either way. Exit status: 0 done; 2 bad "
      "input (reported once, by rank 0; every rank exits); 130 Ctrl-C (the cases finished so far "
      "are written, marked interrupted).");
  auto a = std::make_shared<SweepArgs>();
  cmd->add_option("FILE", a->file, "Scenario file (YAML or JSON; '-' = standard input)")
      ->required();
  cmd->add_option("--vary", a->vary,
                  "A field and its values: --vary fabric.ecn.kmin=50KB,100KB,200KB (repeatable; "
                  "any --set key; the first --vary varies slowest)")
      ->required();
  cmd->add_option("--set", a->sets, "Override a field in every case (repeatable)");
  cmd->add_option("-o,--output", a->dir,
                  "Write sweep.csv and sweep.json into this folder (created if needed); without "
                  "it the CSV goes to standard output");
  cmd->add_option("-j,--jobs", a->jobs, "Local worker processes when not under mpirun (default 1)")
      ->capture_default_str();
  cmd->add_flag("--quiet", a->quiet, "No progress line (one is drawn on a terminal only)");
  cmd->footer(std::string(cmd->get_footer()) + " This build: " +
              (parallel::MpiBuilt() ? "MPI support (" + parallel::MpiLibraryVersion() + ")."
                                    : "no MPI support (CMake LOSSLESS_MPI=OFF): -j only."));
  cmd->callback([a, &ctx] {
    if (parallel::LaunchedByMpi() && !parallel::MpiBuilt()) {
      // Every rank would run the whole sweep and write the same files.
      if (parallel::LauncherRank() <= 0) {
        throw InputError({"<cli>", 0, "mpirun"},
                         "expected a build with MPI support (CMake LOSSLESS_MPI=ON) under an MPI "
                         "launcher; without it, run the sweep without mpirun and use -j");
      }
      ctx.exit_code = 0;  // quietly: rank 0 reports (mpirun stops the job on a non-zero exit)
      return;
    }
    std::unique_ptr<parallel::Comm> world = parallel::OpenMpiWorld();
    parallel::SerialComm serial;
    parallel::Comm& comm = world ? *world : serial;
    bool writing = false;
    try {
      ctx.exit_code = Sweep(comm, *a, writing);
    } catch (const std::exception& e) {
      if (writing || comm.Size() == 1) throw;  // main() prints it
      // Every rank is here: rank 0 reports, then all end with status 2
      // together (the barrier keeps mpirun from ending rank 0 early when
      // another rank exits non-zero first).
      if (comm.Rank() == 0) {
        fmt::print(stderr, "error: {}\n", text::OneLine(e.what()));
        std::fflush(stderr);
      }
      comm.Barrier();
      ctx.exit_code = 2;
    }
  });
}

void AddPartitionCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "partition",
      "Show how a scenario's fabric is cut over K ranks: units per rank, cut links, lookahead "
      "(docs/parallel.md)");
  auto file = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  auto ranks = std::make_shared<int>(2);
  cmd->add_option("FILE", *file, "Scenario file (YAML or JSON)")->required();
  cmd->add_option("--set", *sets, "Override a field (repeatable)");
  cmd->add_option("--ranks", *ranks, "Number of ranks")->required();
  cmd->callback([=, &ctx] {
    const scenario::Scenario s = scenario::LoadScenarioFile(*file, *sets);
    const topology::Topology t = scenario::BuildTopology(s);
    // Clos builders lay hosts out node-major (gpus_per_node per server);
    // LS-RING and topology files have no servers: each host is its own node.
    const bool clos = s.topology_kind == "leaf-spine" || s.topology_kind == "fat-tree" ||
                      s.topology_kind == "rail-optimized";
    const int g = clos ? s.clos.gpus_per_node : 1;
    const parallel::Partition p = parallel::PartitionFabric(t, g, *ranks, {"<cli>", 0, "--ranks"});
    fmt::print("{}: {}; {} GPUs per node\n", text::OneLine(*file), text::OneLine(t.description), g);
    fmt::print("{}", parallel::PartitionText(t, p));
    ctx.exit_code = 0;
  });
}

}  // namespace lossless::cli
