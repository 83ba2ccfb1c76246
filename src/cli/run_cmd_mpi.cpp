// `mpirun -np K lossless run SCENARIO` (docs/parallel.md): the run over K
// ranks on the window engine, with the serial run's output written by rank 0
// and one report line on standard error (partition, lookahead, windows,
// cross-rank events, time waiting); and UnderMpi, how `run` and `perf`
// (perf_cmd.cpp) start and end under an MPI launcher.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/file.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/mpi_cmd.hpp"
#include "distrun/distributed.hpp"
#include "parallel/mpi_comm.hpp"
#include "report/run_report.hpp"
#include "scenario/scenario.hpp"

namespace lossless::cli {

int UnderMpi(const std::function<void(parallel::Comm&)>& check,
             const std::function<void(parallel::Comm&)>& run, const std::function<int()>& write_out) {
  if (!parallel::MpiBuilt()) {
    // Every rank would run the whole job: rank 0 says so, the others end quietly.
    if (parallel::LauncherRank() > 0) return 0;
    throw InputError({"<cli>", 0, "mpirun"},
                     "expected a build with MPI support (CMake LOSSLESS_MPI=ON) under an MPI "
                     "launcher; without it, run without mpirun");
  }
  std::unique_ptr<parallel::Comm> world = parallel::OpenMpiWorld();
  parallel::Comm& comm = *world;
  auto say_once = [&comm](const std::exception& e) {
    if (comm.Rank() == 0) {
      fmt::print(stderr, "error: {}\n", text::OneLine(e.what()));
      std::fflush(stderr);
    }
    comm.Barrier();
    return 2;
  };
  try {
    // Bad input is found by every rank alike; RunAgreed makes them agree anyway.
    parallel::RunAgreed(comm, [&] { check(comm); });
  } catch (const std::exception& e) {
    return say_once(e);
  }
  try {
    run(comm);
  } catch (const InputError& e) {
    // Bad input found during the run (the series' memory cap) is found by
    // every rank at the same point: rank 0 says it once.
    return say_once(e);
  } catch (const std::exception& e) {
    // Found during the run by one rank (a QP failure): the others may wait
    // in a collective, so this rank ends the job.
    fmt::print(stderr, "error: rank {}: {}\n", comm.Rank(), text::OneLine(e.what()));
    std::fflush(stderr);
    std::_Exit(2);
  }
  // Outside the handlers above: an output that cannot be written is rank 0's
  // own error (main prints it, exit 2); the other ranks have ended.
  return comm.Rank() == 0 ? write_out() : 0;
}

int RunUnderMpi(const std::string& file, const std::vector<std::string>& sets,
                const std::string& json_path, bool timing, bool digest) {
  scenario::Scenario s;
  std::string path;
  distrun::Stats st;
  std::vector<run::EntityDigestLine> digests;
  report::RunResult r;
  return UnderMpi(
      [&](parallel::Comm& comm) {
        s = scenario::LoadScenarioFile(file, sets);
        path = json_path.empty() ? s.json_out : json_path;
        if (path == "-" && s.series.csv_out == "-")
          throw InputError({s.series.csv_out, 0, "outputs.series_csv"},
                           "expected one output on standard output, got the JSON and the CSV");
        distrun::CheckRanks(s, comm.Size());
      },
      [&](parallel::Comm& comm) {
        r = distrun::Run(s, comm, {}, &st, digest ? &digests : nullptr);
      },
      [&] {
        const bool stdout_taken = path == "-" || s.series.csv_out == "-";
        fmt::print(stdout_taken ? stderr : stdout, "{}",
                   text::ForTerminal(report::RunText(r, timing)));
        if (digest)
          fmt::print(stdout_taken ? stderr : stdout, "{}",
                     text::ForTerminal(run::DigestText(digests)));
        if (!path.empty())
          WriteOutput(path, report::RunJson(r, timing).dump(2) + "\n",
                      {path, 0, json_path.empty() ? "outputs.json" : "--json"});
        if (!s.series.csv_out.empty())
          WriteOutput(s.series.csv_out, report::SeriesCsv(r.series),
                      {s.series.csv_out, 0, "outputs.series_csv"});
        fmt::print(stderr, "{}\n", distrun::StatsLine(st));
        return (r.deadlock.enabled && !r.deadlock.cycle.empty()) || !r.qp_failure.empty() ? 1 : 0;
      });
}

}  // namespace lossless::cli
