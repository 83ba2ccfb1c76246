// `lossless perf <collective> [nccl-tests flags]`: nccl-tests' output from the
// packet-level collective engine (run/perf_run.hpp), or from the analytic
// model with --model. Flags are nccl-tests' own (perf/options.hpp), so they
// are parsed there, not by CLI11.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "perf/model_run.hpp"
#include "perf/options.hpp"
#include "perf/result.hpp"
#include "profile/profile.hpp"
#include "run/perf_run.hpp"
#include "scenario/scenario.hpp"

namespace lossless::cli {
namespace {

constexpr const char* kDefaultFabric = "ib-ndr";

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
    perf::PerfOptions o = perf::ParsePerfArgs(args);
    // NCCL_ALGO as NCCL reads it, unless --algo says otherwise.
    if (const char* env = std::getenv("NCCL_ALGO"); env != nullptr && o.algo.empty() && !o.help)
      perf::SetAlgo(o, env, {"<env>", 0, "NCCL_ALGO"});
    if (o.help) {
      fmt::print("{}", perf::PerfUsage());
      return;
    }
    scenario::Scenario s;
    std::string name;
    if (!o.scenario.empty()) {
      if (!o.fabric.empty())
        throw InputError(
            {"<cli>", 0, "--scenario"},
            "expected --fabric or --scenario, not both (a scenario carries its fabric)");
      s = scenario::LoadFabricFile(o.scenario);
      name = s.name;
      if (!s.traffic.empty())
        fmt::print(stderr, "lossless perf: the traffic of {} is ignored (perf makes its own)\n",
                   text::OneLine(o.scenario));
    } else {
      name = o.fabric.empty() ? kDefaultFabric : o.fabric;
      s = profile::Load(name, o.nodes, {fmt::format("topology.gpus_per_node={}", o.GpusPerNode())});
    }
    // Where the JSON goes is checked before anything is simulated; with it on
    // standard output (`--json -`), the nccl-tests text goes to standard error.
    const Location json_where{o.json, 0, "--json"};
    CheckOutputPath(o.json, json_where);
    std::FILE* text_out = o.json == "-" ? stderr : stdout;
    perf::PerfResult r;
    std::vector<std::string> notes;
    std::string failure;
    if (o.model) {
      const run::PerfModel m = run::PerfModelFor(o, s.net, s.clos.link_rate);
      r = perf::ModelRun(o, m.ab, m.tuning);
      r.fabric = name;
      notes = perf::ModelNotes(r.nccl_version, "");
    } else {
      // A status line on a terminal; Ctrl-C ends the sweep after the rows
      // finished so far, which are printed and written (base/progress.hpp).
      InterruptScope interrupts;
      ProgressLine line(ProgressLine::StderrIsTerminal());
      r = run::RunPerf(o, s, name, &failure, [&line](const run::PerfProgress& p) {
        if (InterruptRequested()) return false;
        if (line.Due())
          line.Draw(fmt::format("size {} B ({}/{}), iteration {}/{}", p.bytes, p.row + 1, p.rows,
                                p.iteration, p.iterations));
        return true;
      });
      line.Clear();
      notes = run::PerfNotes(r);
      if (r.interrupted)
        notes.push_back(fmt::format("interrupted (Ctrl-C): {} of the sweep's rows finished",
                                    r.sizes.size()));
    }
    fmt::print(text_out, "{}", text::ForTerminal(perf::FormatNcclTests(r, notes)));
    if (!o.json.empty()) WriteOutput(o.json, perf::ToJson(r).dump(2) + "\n", json_where);
    if (!failure.empty()) {
      std::fflush(text_out);
      fmt::print(stderr, "error: {}\n", text::ForTerminal(failure));
      ctx.exit_code = 1;
    }
    if (r.interrupted) ctx.exit_code = kExitInterrupted;
  });
}

}  // namespace lossless::cli
