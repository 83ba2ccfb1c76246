// lossless tune (docs/tune.md)
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
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
#include "perf/options.hpp"
#include "profile/profile.hpp"
#include "scenario/scenario.hpp"
#include "tune/tune.hpp"

namespace lossless::cli {
namespace {
namespace tune_cmd {

struct TuneArgs {
  std::string fabric;
  std::string scenario;
  int64_t nodes = 0;
  std::vector<std::string> sets;
  int64_t budget = 60;
  int levels = 2;
  uint64_t seed = 1;
  std::string dir;
  double max_loss = 2.0;
  std::string allreduce_bytes = "64M";
  int64_t iterations = 2;
  bool evaluate = false;
  bool json = false;
  bool quiet = false;
  bool timing = false;
};

int64_t Size(const std::string& text, const char* flag) {
  const std::optional<int64_t> b = perf::ParseSize(text);
  if (!b || *b < 1)
    throw InputError({"<cli>", 0, flag}, Expected("a size such as 64M or 1G", text));
  return *b;
}

int Tune(parallel::Comm& comm, const TuneArgs& a, bool& writing) {
  const bool root = comm.Rank() == 0;
  tune::Options o;
  o.budget = a.budget;
  o.levels = a.levels;
  o.target.max_busbw_loss_pct = a.max_loss;
  o.target.iterations = a.iterations;
  std::string text, text_path;
  tune::Loader load;
  scenario::Scenario base;
  parallel::RunAgreed(comm, [&] {
    o.target.allreduce_bytes = Size(a.allreduce_bytes, "--allreduce-bytes");
    if (!a.scenario.empty()) {
      if (!a.fabric.empty())
        throw InputError(
            {"<cli>", 0, "--scenario"},
            "expected --fabric or --scenario, not both (a scenario carries its fabric)");
      if (a.nodes != 0)
        throw InputError({"<cli>", 0, "--nodes"},
                         "expected --nodes only with --fabric (a scenario sizes its own topology)");
      text = ReadTextInput(a.scenario, "a scenario");
      text_path = a.scenario;
    } else {
      if (a.fabric.empty())
        throw InputError({"<cli>", 0, "--fabric"}, "expected --fabric NAME or --scenario FILE");
      if (a.nodes < 0)
        throw InputError({"<cli>", 0, "--nodes"},
                         Expected("a node count of 1 or more", std::to_string(a.nodes)));
      text = profile::ProfileText(a.fabric, &text_path);
    }
  });
  const std::string fabric = a.fabric, scenario_file = a.scenario;
  const int64_t nodes_flag = a.nodes;
  const std::vector<std::string> user_sets = a.sets;
  const uint64_t seed = a.seed;
  load = [=](const std::vector<std::string>& sets) {
    std::vector<std::string> all = user_sets;
    all.insert(all.end(), sets.begin(), sets.end());
    scenario::Scenario s = scenario_file.empty() ? profile::Load(fabric, nodes_flag, all)
                                                 : scenario::LoadFabricText(text, text_path, all);
    s.seed = seed;
    return s;
  };
  parallel::RunAgreed(comm, [&] {
    base = load({});
    const int64_t g = base.clos.gpus_per_node;
    const topology::Topology t = scenario::BuildTopology(base);
    const int64_t hosts = static_cast<int64_t>(t.hosts.size());
    if (g <= 0 || hosts % g != 0 || hosts / g < 2)
      throw InputError(
          {a.scenario.empty() ? "<cli>" : a.scenario, 0, "topology"},
          fmt::format("expected a topology of whole nodes of {} GPUs (2 or more), got {} hosts", g,
                      hosts));
    if (!a.evaluate) {
      tune::Check(tune::SearchSpace(base), o);
      if (a.dir.empty())
        throw InputError({"<cli>", 0, "-o"}, "expected -o DIR: the folder for the snippets");
      if (root) PrepareOutputDir(a.dir);
    }
  });
  if (!base.traffic.empty() && root)
    fmt::print(stderr,
               "tune: the scenario's traffic section is ignored (the target brings its own)\n");
  o.fabric = a.scenario.empty() ? a.fabric : a.scenario;
  const int64_t g = base.clos.gpus_per_node;
  const int64_t nodes = base.clos.gpus / g;
  const auto started = std::chrono::steady_clock::now();

  if (a.evaluate) {
    // The target once on the fabric as given: what the round trip compares.
    const tune::Figures f = tune::Evaluate(base, o.target);
    writing = true;
    if (!root) return 0;
    nlohmann::ordered_json j;
    j["schema"] = "lossless.tune/1";
    j["fabric"] = o.fabric;
    j["nodes"] = nodes;
    j["seed"] = base.seed;
    j["evaluate"] = tune::ToJson(f);
    if (a.json) {
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("tune --evaluate: {}, {} nodes x {} GPUs, seed {}\n", o.fabric, nodes, g,
                 base.seed);
      if (!f.failure.empty()) fmt::print("failed: {}\n", f.failure);
      fmt::print("busbw_gbs {:.3f}\nvictim_p99_us {:.3f}\npause_frames {}\necn_marks {}\ncnps {}\n",
                 f.busbw_gbs, f.victim_p99_us, f.pause_frames, f.ecn_marks, f.cnps);
    }
    return 0;
  }

  // Ctrl-C stops the search after the runs in flight (docs/tune.md): what
  // finished is written to tune.json, marked "interrupted": true, exit 130.
  InterruptScope interrupts;
  ProgressLine line(root && !a.quiet && ProgressLine::StderrIsTerminal());
  const tune::Result r = tune::Run(comm, load, o, [&](int64_t done, int64_t budget) {
    if (!line.Due()) return;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    line.Draw(fmt::format("tune: {} of at most {} runs ({:.0f} %), {:.1f} runs/s", done, budget,
                          100.0 * static_cast<double>(done) / static_cast<double>(budget),
                          s > 0 ? static_cast<double>(done) / s : 0.0));
  });
  line.Clear();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  writing = true;
  if (!root) return r.interrupted ? kExitInterrupted : 0;
  const auto path = [&](const std::string& name) {
    return (std::filesystem::path(a.dir) / name).string();
  };
  std::vector<std::string> written;
  if (r.interrupted) {
    // A partial search: tune.json only (no snippets: nothing was chosen by a
    // finished search).
    nlohmann::ordered_json doc = tune::ToJson(r, base, o);
    if (a.timing) doc["timing"] = {{"seconds", seconds}, {"ranks", comm.Size()}};
    WriteFileAtomically(path("tune.json"), doc.dump(2) + "\n", {a.dir, 0, "-o"});
    fmt::print("{}", tune::Text(r, o, nodes, static_cast<int>(g)));
    fmt::print("\nwrote into {}: tune.json (interrupted: no snippets)\n", text::OneLine(a.dir));
    return kExitInterrupted;
  }
  const scenario::Scenario chosen = load(r.points[r.chosen].sets);
  for (const tune::Snippet& s : tune::Snippets(r, chosen, o, text, a.sets, nodes)) {
    WriteFileAtomically(path(s.file), s.text, {a.dir, 0, "-o"});
    written.push_back(s.file);
  }
  nlohmann::ordered_json doc = tune::ToJson(r, base, o);
  if (a.timing) doc["timing"] = {{"seconds", seconds}, {"ranks", comm.Size()}};
  WriteFileAtomically(path("tune.json"), doc.dump(2) + "\n", {a.dir, 0, "-o"});
  written.emplace_back("tune.json");
  fmt::print("{}", tune::Text(r, o, nodes, static_cast<int>(g)));
  fmt::print("\nwrote into {}: {}\n", text::OneLine(a.dir), fmt::join(written, ", "));
  if (a.timing)
    fmt::print(stderr, "tune: {} runs in {:.1f} s on {} rank{}\n", r.points.size(), seconds,
               comm.Size(), comm.Size() == 1 ? "" : "s");
  return 0;
}

}  // namespace tune_cmd
}  // namespace

void AddTuneCommand(CLI::App& app, Context& ctx) {
  using tune_cmd::TuneArgs;
  auto* cmd = app.add_subcommand(
      "tune",
      "Search ECN and DCQCN settings against the incast stress and a large all-reduce; write the "
      "chosen settings as switch and NIC config snippets (docs/tune.md)");
  auto a = std::make_shared<TuneArgs>();
  cmd->add_option("--fabric", a->fabric,
                  "Profile name or file to start from (lossless profiles), e.g. roce-untuned");
  cmd->add_option("--nodes", a->nodes,
                  "Nodes of the profile's default topology (default: the profile's own)");
  cmd->add_option("--scenario", a->scenario,
                  "A scenario file instead of a profile (its fabric and topology)");
  cmd->add_option("--set", a->sets, "Override a field of the starting fabric (repeatable)");
  cmd->add_option("--budget", a->budget,
                  "Runs in all: the baseline, the coarse grid, then refinement (default 60)");
  cmd->add_option("--levels", a->levels, "Values per coarse-grid axis: 1, 2 or 3 (default 2)");
  cmd->add_option("--seed", a->seed, "Random seed of every run (default 1)");
  cmd->add_option("-o,--output", a->dir,
                  "Folder for the snippets and tune.json (created if needed)");
  cmd->add_option("--max-busbw-loss", a->max_loss,
                  "Busbw the chosen point may lose against the baseline, percent (default 2)");
  cmd->add_option("--allreduce-bytes", a->allreduce_bytes,
                  "Size of the target's all-reduce (default 64M)");
  cmd->add_option("-n,--iterations", a->iterations,
                  "Measured all-reduce iterations per run (default 2)");
  cmd->add_flag("--evaluate", a->evaluate,
                "Run the target once on the fabric as given (no search, no -o): its figures");
  cmd->add_flag("--json", a->json, "With --evaluate: print JSON (schema lossless.tune/1)");
  cmd->add_flag("--quiet", a->quiet, "No progress line (one is drawn on a terminal only)");
  cmd->add_flag("--timing", a->timing,
                "Print the wall time on standard error and put it in tune.json");
  cmd->footer(
      "Runs are spread over mpirun's ranks when started under mpirun (an MPI build); the result is "
      "the "
      "same bytes for any rank count. Exit status: 0 done (the verdict says whether the goal was "
      "met); 2 "
      "bad input (unknown fabric, a budget below the coarse grid, an InfiniBand fabric); 130 "
      "interrupted (Ctrl-C: tune.json holds the runs that finished).");
  cmd->callback([a, &ctx] {
    if (parallel::LaunchedByMpi() && !parallel::MpiBuilt()) {
      if (parallel::LauncherRank() <= 0) {
        throw InputError(
            {"<cli>", 0, "mpirun"},
            "expected a build with MPI support (CMake LOSSLESS_MPI=ON) under an MPI launcher");
      }
      ctx.exit_code = 0;
      return;
    }
    std::unique_ptr<parallel::Comm> world = parallel::OpenMpiWorld();
    parallel::SerialComm serial;
    parallel::Comm& comm = world ? *world : serial;
    bool writing = false;
    try {
      ctx.exit_code = tune_cmd::Tune(comm, *a, writing);
    } catch (const std::exception& e) {
      if (writing || comm.Size() == 1) throw;
      if (comm.Rank() == 0) {
        fmt::print(stderr, "error: {}\n", text::OneLine(e.what()));
        std::fflush(stderr);
      }
      comm.Barrier();
      ctx.exit_code = 2;
    }
  });
}

}  // namespace lossless::cli
