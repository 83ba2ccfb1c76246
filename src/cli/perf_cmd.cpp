// `lossless perf <collective> [nccl-tests flags]`: nccl-tests' output from the
// packet-level collective engine (run/perf_run.hpp); --model adds the
// analytic model beside each row. Flags are nccl-tests' own (perf/options.hpp), so they
// are parsed there, not by CLI11. Under mpirun with several processes the
// sweep is partitioned over the ranks (distrun/perf.hpp, docs/perf.md).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/mpi_cmd.hpp"
#include "distrun/perf.hpp"
#include "parallel/mpi_comm.hpp"
#include "perf/options.hpp"
#include "perf/result.hpp"
#include "profile/profile.hpp"
#include "run/perf_run.hpp"
#include "scenario/scenario.hpp"

namespace lossless::cli {
namespace {

constexpr const char* kDefaultFabric = "ib-ndr";

// What a sweep runs on and where its outputs go, from nccl-tests' flags.
struct PerfJob {
  perf::PerfOptions o;
  scenario::Scenario s;
  std::string name;
  Location json_where;
  std::FILE* text_out = stdout;
};

// Parses the flags, loads the fabric and checks the outputs; throws
// InputError for bad input. o.help set: nothing else is done. `say`: tell
// standard error that a scenario's traffic is ignored.
PerfJob PreparePerf(const std::vector<std::string>& args, bool say) {
  PerfJob job;
  perf::PerfOptions& o = job.o;
  o = perf::ParsePerfArgs(args);
  // NCCL_ALGO, NCCL_PROTO, NCCL_{MIN,MAX}_NCHANNELS and NCCL_BUFFSIZE as
  // NCCL reads them (--algo and --proto win).
  if (!o.help) perf::ApplyNcclEnv(o, [](const char* name) { return std::getenv(name); });
  if (o.help) return job;
  scenario::Scenario& s = job.s;
  std::string& name = job.name;
  if (!o.scenario.empty()) {
    if (!o.fabric.empty())
      throw InputError(
          {"<cli>", 0, "--scenario"},
          "expected --fabric or --scenario, not both (a scenario carries its fabric)");
    s = scenario::LoadFabricFile(o.scenario);
    name = s.name;
    if (!s.traffic.empty() && say)
      fmt::print(stderr, "lossless perf: the traffic of {} is ignored (perf makes its own)\n",
                 text::OneLine(o.scenario));
  } else {
    name = o.fabric.empty() ? kDefaultFabric : o.fabric;
    s = profile::Load(name, o.nodes, {fmt::format("topology.gpus_per_node={}", o.GpusPerNode())});
    // A NIC map with fewer NICs than GPUs (--topo, --nic-map): one network
    // host per NIC that carries traffic.
    const int rails = run::RailsPerNode(o, s);
    if (rails != o.GpusPerNode())
      s = profile::Load(name, o.nodes, {fmt::format("topology.gpus_per_node={}", rails)});
  }
  // --trace / --pcap stand for the scenario's outputs.trace / outputs.pcap
  // (its other outputs.* fields apply; a profile has none, so the defaults).
  if (!o.trace.empty()) s.capture.trace = o.trace;
  if (!o.pcap.empty()) s.capture.pcap = o.pcap;
  if (o.model && (!s.capture.trace.empty() || !s.capture.pcap.empty()))
    throw InputError({"<cli>", 0, !o.trace.empty() ? "--trace" : "--pcap"},
                     "expected no --trace or --pcap with --model (the model sends no packets)");
  // Where the outputs go is checked before anything is simulated; with one on
  // standard output (`--json -`), the nccl-tests text goes to standard error.
  job.json_where = {o.json, 0, "--json"};
  const Location trace_where{s.capture.trace, 0, o.trace.empty() ? "outputs.trace" : "--trace"};
  const Location pcap_where{s.capture.pcap, 0, o.pcap.empty() ? "outputs.pcap" : "--pcap"};
  CheckOutputPath(o.json, job.json_where);
  CheckOutputPath(s.capture.trace, trace_where);
  CheckOutputPath(s.capture.pcap, pcap_where);
  const int on_stdout = (o.json == "-") + (s.capture.trace == "-") + (s.capture.pcap == "-");
  if (on_stdout > 1)
    throw InputError(s.capture.pcap == "-" ? pcap_where : trace_where,
                     "expected one output on standard output, got more than one");
  job.text_out = on_stdout > 0 ? stderr : stdout;
  return job;
}

void PrintTiming(const perf::PerfResult& r, double wall) {
  fmt::print(stderr,
             "lossless perf timing: {:.2f} s wall, {} events ({:.3g}/s), {} packet-hops "
             "({:.3g}/s)\n",
             wall, r.events, static_cast<double>(r.events) / wall, r.packet_hops,
             static_cast<double>(r.packet_hops) / wall);
}

// Prints the nccl-tests text and writes the JSON; returns the exit status.
int WritePerf(const PerfJob& job, const perf::PerfResult& r, const std::string& failure) {
  std::vector<std::string> notes = run::PerfNotes(r);
  if (r.interrupted)
    notes.push_back(fmt::format("interrupted (Ctrl-C): {} of the sweep's rows finished",
                                r.sizes.size()));
  fmt::print(job.text_out, "{}", text::ForTerminal(perf::FormatNcclTests(r, notes)));
  for (const std::string& w : r.warnings)
    fmt::print(stderr, "warning: {}\n", text::ForTerminal(w));
  if (!job.o.json.empty())
    WriteOutput(job.o.json, perf::ToJson(r).dump(2) + "\n", job.json_where);
  int code = 0;
  if (!failure.empty()) {
    std::fflush(job.text_out);
    fmt::print(stderr, "error: {}\n", text::ForTerminal(failure));
    code = 1;
  }
  if (r.interrupted) code = kExitInterrupted;
  return code;
}

// Under an MPI launcher with several processes: the sweep partitioned over
// the ranks (distrun/perf.hpp), the serial output written by rank 0, and
// the distributed run's report line on standard error.
int PerfUnderMpi(const std::vector<std::string>& args) {
  PerfJob job;
  perf::PerfResult r;
  std::string failure;
  distrun::Stats st;
  double wall = 0;
  return UnderMpi(
      [&](parallel::Comm& comm) {
        job = PreparePerf(args, comm.Rank() == 0);
        if (job.o.help) return;
        distrun::CheckRanks(job.s, comm.Size());
      },
      [&](parallel::Comm& comm) {
        if (job.o.help) return;
        const auto t0 = std::chrono::steady_clock::now();
        r = distrun::RunPerf(job.o, job.s, job.name, &failure, comm, {}, &st);
        wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      },
      [&] {
        if (job.o.help) {
          fmt::print("{}", perf::PerfUsage());
          return 0;
        }
        if (job.o.timing) PrintTiming(r, wall);
        const int code = WritePerf(job, r, failure);
        fmt::print(stderr, "{}\n", distrun::StatsLine(st));
        return code;
      });
}

}  // namespace

void AddPerfCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "perf",
      "nccl-tests at packet level: `lossless perf all_reduce -b 8M -e 1G -f 2 -g 8 --nodes 4 "
      "--fabric ib-ndr` prints what all_reduce_perf would (-h for the flags)");
  cmd->set_help_flag();  // -h is nccl-tests' help flag, parsed below
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->callback([cmd, &ctx] {
    const std::vector<std::string> args = cmd->remaining();
    if (parallel::LauncherSize() > 1) {
      ctx.exit_code = PerfUnderMpi(args);
      return;
    }
    const PerfJob job = PreparePerf(args, true);
    if (job.o.help) {
      fmt::print("{}", perf::PerfUsage());
      return;
    }
    perf::PerfResult r;
    std::string failure;
    {
      // A status line on a terminal; Ctrl-C ends the sweep after the rows
      // finished so far, which are printed and written (base/progress.hpp).
      // With --model the alpha-beta model is printed beside each simulated
      // row (after the footer) and in the JSON.
      InterruptScope interrupts;
      ProgressLine line(ProgressLine::StderrIsTerminal());
      const auto t0 = std::chrono::steady_clock::now();
      r = run::RunPerf(job.o, job.s, job.name, &failure, [&line](const run::PerfProgress& p) {
        if (InterruptRequested()) return false;
        if (line.Due())
          line.Draw(fmt::format("size {} B ({}/{}), iteration {}/{}", p.bytes, p.row + 1, p.rows,
                                p.iteration, p.iterations));
        return true;
      });
      line.Clear();
      if (job.o.timing)
        PrintTiming(r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    ctx.exit_code = WritePerf(job, r, failure);
  });
}

}  // namespace lossless::cli
