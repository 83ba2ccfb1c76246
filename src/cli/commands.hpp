#pragma once
// Subcommand registration for the `lossless` binary. Each Add* function adds
// one subcommand (with its own --help) to `parent`. Callbacks report their
// result by setting ctx.exit_code: 0 success, 1 findings (a failed audit),
// 2 bad input. They may also throw lossless::InputError, which main() prints
// as one line and turns into exit code 2.
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "scenario/scenario.hpp"

namespace lossless::cli {

struct Context {
  int exit_code = 0;
};

void AddSimCommands(CLI::App& app, Context& ctx);  // run, validate, bench, demo
// `lossless run` under an MPI launcher with several processes (run_cmd_mpi.cpp):
// the distributed run; returns the exit status.
int RunUnderMpi(const std::string& file, const std::vector<std::string>& sets,
                const std::string& json_path, bool timing, bool digest);
void AddAuditNcclCommand(CLI::App& audit, Context& ctx);  // audit nccl
void AddAuditTopoCommand(CLI::App& audit, Context& ctx);  // audit topo
void AddAuditQosCommand(CLI::App& audit, Context& ctx);   // audit qos
void AddOpticsCommand(CLI::App& app, Context& ctx);       // optics ingest|status|quarantine
void AddDeadlockCommand(CLI::App& app, Context& ctx);     // deadlock (static CBD check)
void AddProfileCommands(CLI::App& app, Context& ctx);     // profiles, tco
void AddPerfCommand(CLI::App& app, Context& ctx);         // perf (nccl-tests at packet level)
void AddTrainCommand(CLI::App& app, Context& ctx);        // train (training steps over the fabric)
void AddCompareCommand(CLI::App& app, Context& ctx);      // compare (profiles side by side)
void AddReportCommand(CLI::App& app, Context& ctx);       // report (HTML from results.json)
void AddSweepCommand(CLI::App& app, Context& ctx);        // sweep (cases over ranks / processes)
void AddPartitionCommand(CLI::App& app, Context& ctx);    // partition (fabric cut over K ranks)
void AddLinksCommand(CLI::App& app, Context& ctx);        // links (link names faults use)
void AddWhatIfCommand(CLI::App& app, Context& ctx);       // what-if (degraded vs quarantined links)
void AddScenarioCommand(CLI::App& app, Context& ctx);     // scenario from-qos (a QoS config as a scenario)
void AddTuneCommand(CLI::App& app, Context& ctx);         // tune (ECN and DCQCN search, config snippets)

// The fabric of a command that takes --fabric NAME [--nodes N] or --scenario
// FILE (links, what-if): a profile sized to N nodes, or the scenario file;
// `sets` apply to either. Both, neither, or --nodes with --scenario: InputError.
scenario::Scenario LoadFabricOrScenario(const std::string& fabric, const std::string& scenario_file,
                                        int64_t nodes, const std::vector<std::string>& sets);

}  // namespace lossless::cli
