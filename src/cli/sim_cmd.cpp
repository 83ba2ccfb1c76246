// lossless run | validate | params | bench | demo
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "parallel/mpi_comm.hpp"
#include "report/run_report.hpp"
#include "run/runner.hpp"
#include "scenario/params.hpp"
#include "scenario/scenario.hpp"
#include "workload/traffic.hpp"

namespace lossless::cli {
namespace {

// `ps` picoseconds with three significant digits and a unit: "1.88ms".
std::string ShortTime(double ps) {
  static constexpr std::pair<double, const char*> kUnits[] = {
      {1e12, "s"}, {1e9, "ms"}, {1e6, "us"}, {1e3, "ns"}};
  for (const auto& [scale, unit] : kUnits)
    if (ps >= scale) return fmt::format("{:.3g}{}", ps / scale, unit);
  return fmt::format("{:.3g}ps", ps);
}

// Runs and prints the scenario and returns its exit status (docs/errors.md):
// 1 for a finding (the online deadlock detector confirmed a deadlock: the
// report's DEADLOCK line; or an RC queue pair ran out of retries: QP
// FAILED), kExitInterrupted when Ctrl-C ended it (the partial result is
// still printed and written, "interrupted": true), else 0. `progress`: a
// status line on a terminal (base/progress.hpp).
int RunAndPrint(const scenario::Scenario& s, const std::string& json_path, bool timing,
                bool progress = false, bool digest = false) {
  const std::string path = json_path.empty() ? s.json_out : json_path;
  const Location json_where{path, 0, json_path.empty() ? "outputs.json" : "--json"};
  const Location csv_where{s.series.csv_out, 0, "outputs.series_csv"};
  CheckOutputPath(path, json_where);
  CheckOutputPath(s.series.csv_out, csv_where);
  const Location pcap_where{s.capture.pcap, 0, "outputs.pcap"};
  const Location trace_where{s.capture.trace, 0, "outputs.trace"};
  CheckOutputPath(s.capture.pcap, pcap_where);
  CheckOutputPath(s.capture.trace, trace_where);
  if (path == "-" && s.series.csv_out == "-")
    throw InputError(csv_where, "expected one output on standard output, got the JSON and the CSV");
  const int on_stdout = (path == "-") + (s.series.csv_out == "-") + (s.capture.pcap == "-") +
                        (s.capture.trace == "-");
  if (on_stdout > 1 && (s.capture.pcap == "-" || s.capture.trace == "-")) {
    throw InputError(s.capture.pcap == "-" ? pcap_where : trace_where,
                     "expected one output on standard output, got more than one");
  }
  InterruptScope interrupts;
  ProgressLine line(progress && ProgressLine::StderrIsTerminal());
  const auto t0 = std::chrono::steady_clock::now();
  run::RunHooks hooks;
  hooks.between_slices = [&](const run::RunStatus& st) {
    if (InterruptRequested()) return false;
    if (line.Due()) {
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      line.Draw(fmt::format(
          "simulated {} of stop_time {} ({:.1f}%), {}/{} flows done, {} simulated per second",
          units::FormatTime(st.now), units::FormatTime(st.stop_time),
          100.0 * static_cast<double>(st.now.ps()) / static_cast<double>(st.stop_time.ps()),
          st.flows_done, st.flows,
          ShortTime(static_cast<double>(st.now.ps()) / std::max(wall, 1e-9))));
    }
    return true;
  };
  std::vector<run::EntityDigestLine> digests;
  if (digest) hooks.digests = &digests;
  report::RunResult r = run::RunScenario(s, hooks);
  line.Clear();
  // With the JSON or the CSV on standard output, the text report goes to standard error.
  const bool stdout_taken = on_stdout > 0;
  fmt::print(stdout_taken ? stderr : stdout, "{}", text::ForTerminal(report::RunText(r, timing)));
  if (digest)
    fmt::print(stdout_taken ? stderr : stdout, "{}", text::ForTerminal(run::DigestText(digests)));
  if (!path.empty()) WriteOutput(path, report::RunJson(r, timing).dump(2) + "\n", json_where);
  if (!s.series.csv_out.empty())
    WriteOutput(s.series.csv_out, report::SeriesCsv(r.series), csv_where);
  if (r.interrupted) return kExitInterrupted;
  return (r.deadlock.enabled && !r.deadlock.cycle.empty()) || !r.qp_failure.empty() ? 1 : 0;
}

// The built-in reference scenario (until `lossless compare` exists): the same
// 64-GPU leaf-spine and traffic under the InfiniBand and RoCE presets.
constexpr const char* kDemoScenario = R"(name: reference-64gpu
seed: 1
fabric:
  preset: roce
  link_rate: 400Gbps
  cable_length: 10
topology:
  kind: leaf-spine
  gpus: 64
  radix: 16
traffic:
  - pattern: permutation   # every host sends across the spines
    stride: 8
    bytes: 4MiB
  - pattern: incast        # 8 senders into host 0, on top
    target: 0
    senders: 8
    bytes: 1MiB
    start: 20us
)";

// How a child process ended, for a message: "exit status 127", "killed by
// signal 9", or why it could not start.
struct ChildEnd {
  bool ok = false;  // exited with status 0
  std::string how;
};

// Runs argv[0] (looked up in PATH) with `argv` and no shell, so nothing in an
// argument is ever interpreted; its stdout and stderr together go to `out`.
ChildEnd RunCapture(const std::vector<std::string>& argv, std::string& out) {
  int fds[2];
  if (pipe(fds) != 0) return {false, fmt::format("cannot create a pipe: {}", std::strerror(errno))};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    return {false, fmt::format("cannot start {}: {}", argv[0], std::strerror(err))};
  }
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    return {WEXITSTATUS(status) == 0, fmt::format("exit status {}", WEXITSTATUS(status))};
  if (WIFSIGNALED(status)) return {false, fmt::format("killed by signal {}", WTERMSIG(status))};
  return {false, "ended abnormally"};
}

}  // namespace

void AddSimCommands(CLI::App& app, Context& ctx) {
  // --- run ---------------------------------------------------------------
  {
    auto* cmd = app.add_subcommand(
        "run", "Simulate a scenario file and print flow completion times, link use and totals");
    cmd->footer(
        "Exit status: 0 the run finished (completed, time limit or flows incomplete); 1 the "
        "deadlock detector (deadlock.detect) confirmed a PFC deadlock (the DEADLOCK line; also "
        "when a watchdog broke it later) or a QP failed; 2 bad input; 130 Ctrl-C ended the run "
        "(the partial result is printed and written, marked interrupted).");
    auto file = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    auto json = std::make_shared<std::string>();
    auto timing = std::make_shared<bool>(false);
    auto no_timing = std::make_shared<bool>(false);
    auto quiet = std::make_shared<bool>(false);
    auto digest = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "Scenario file (YAML or JSON; '-' = standard input)")
        ->required();
    cmd->add_option("--set", *sets,
                    "Override a field: --set fabric.link_rate=800Gbps (repeatable)");
    cmd->add_option("--json", *json,
                    "Also write the results as JSON to this file ('-' = standard output; the "
                    "text report then goes to standard error)");
    cmd->add_flag("--timing", *timing,
                  "Add wall-clock figures (build and run seconds, packet-hops per second, peak "
                  "RSS) to the text and JSON; without it the output is byte-identical per seed");
    cmd->add_flag("--no-timing", *no_timing, "The default (kept for existing scripts)")
        ->excludes("--timing");
    cmd->add_flag("--quiet", *quiet,
                  "No progress line (one is drawn on stderr only when it is a terminal)");
    cmd->add_flag("--digest", *digest,
                  "After the report, print per-entity event digests (each port, switch and other "
                  "entity: events run and a rolling hash of their times, sequence numbers and "
                  "kinds; docs/parallel.md): two runs that differ show where");
    // The callback owns every flag's storage (CLI11 writes through references
    // to them while parsing), the unused --no-timing included.
    cmd->callback([=, &ctx] {
      (void)no_timing;
      if (parallel::LauncherSize() > 1) {
        ctx.exit_code = RunUnderMpi(*file, *sets, *json, *timing, *digest);
        return;
      }
      scenario::Scenario s = scenario::LoadScenarioFile(*file, *sets);
      ctx.exit_code = RunAndPrint(s, *json, *timing, !*quiet, *digest);
    });
  }
  // --- validate ----------------------------------------------------------
  {
    auto* cmd = app.add_subcommand(
        "validate", "Check a scenario file (fields, units, topology) without running it");
    auto file = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    auto show = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "Scenario file (YAML or JSON)")->required();
    cmd->add_option("--set", *sets, "Override a field (repeatable)");
    cmd->add_flag("--show", *show, "Print every field's resolved value");
    cmd->callback([=, &ctx] {
      scenario::Scenario s = scenario::LoadScenarioFile(*file, *sets);
      topology::Topology t = scenario::BuildTopology(s);
      auto flows = workload::ExpandTraffic(s, static_cast<uint32_t>(t.hosts.size()), &t);
      if (s.series.interval.ps() > 0) scenario::SeriesPorts(s, t);
      if (!s.capture.pcap.empty())
        scenario::SelectPorts(s.capture.pcap_ports, s.capture.pcap_ports_where, t);
      if (!s.capture.trace.empty())
        scenario::SelectPorts(s.capture.trace_ports, s.capture.trace_ports_where, t);
      scenario::CheckFaults(s, t, flows.size());
      fmt::print("{}: ok: {}; {} hosts, {} links; {} flows\n", text::OneLine(*file),
                 text::OneLine(t.description), t.hosts.size(), t.links.size(), flows.size());
      for (const auto& w : s.warnings) fmt::print(stderr, "warning: {}\n", text::OneLine(w));
      if (*show) {
        for (const auto& [k, v] : s.resolved)
          fmt::print("  {} = {}\n", text::OneLine(k), text::OneLine(v));
      }
      ctx.exit_code = 0;
    });
  }
  // --- params ------------------------------------------------------------
  {
    auto* cmd = app.add_subcommand("params",
                                   "List every scenario field with its type, default and meaning");
    auto md = std::make_shared<bool>(false);
    cmd->add_flag("--markdown", *md, "Print the Markdown reference (docs/scenarios.md)");
    cmd->callback([=, &ctx] {
      if (*md) {
        fmt::print("{}", scenario::ParamsMarkdown());
      } else {
        fmt::print("{:<34} {:<26} {:<10} {}\n", "FIELD", "TYPE AND RANGE", "DEFAULT", "MEANING");
        for (const auto& p : scenario::Params()) {
          fmt::print("{:<34} {:<26} {:<10} {}\n", p.name, scenario::ParamTypeText(p),
                     *p.def ? p.def : "-", p.help);
        }
      }
      ctx.exit_code = 0;
    });
  }
  // --- bench -------------------------------------------------------------
  {
    auto* bench = app.add_subcommand(
        "bench", "Benchmarks, optionally against an ns-3 baseline (docs/benchmarks.md)");
    bench->require_subcommand(1);
    auto* cmd = bench->add_subcommand(
        "ls-ring", "LS-RING: leaf-spine ring of UDP-like flows (docs/model/ls-ring.md)");
    auto hosts = std::make_shared<int64_t>(64);
    auto bytes_text = std::make_shared<std::string>("64MiB");
    auto stride = std::make_shared<int64_t>(1);
    auto vs_ns3 = std::make_shared<bool>(false);
    auto lossless_mode = std::make_shared<std::string>("none");
    auto anchors = std::make_shared<std::string>();
    cmd->add_option("--hosts", *hosts, "Hosts N (a multiple of 8)")->capture_default_str();
    cmd->add_option("--bytes", *bytes_text, "Bytes each host sends (64MiB, 16777216, ...)")
        ->capture_default_str();
    cmd->add_option("--stride", *stride, "Host i sends to host (i + stride) mod N")
        ->capture_default_str();
    cmd->add_option("--lossless", *lossless_mode,
                    "none; roce: PFC on priority 3 and DCQCN (paper preset) armed; ib: "
                    "InfiniBand credits (2,048 blocks per VL) on every link")
        ->capture_default_str();
    cmd->add_flag("--vs-ns3", *vs_ns3,
                  "Also run the ns-3 anchor on the same case and print the speedup");
    cmd->add_option("--anchors", *anchors,
                    "Folder holding the ns-3 driver ns3/run.sh (docs/benchmarks.md); default: "
                    "$LOSSLESS_ANCHORS");
    cmd->callback([=, &ctx] {
      int64_t bytes = units::ParseBytes(*bytes_text, {"<cli>", 0, "--bytes"}).count();
      if (bytes <= 0)
        throw InputError({"<cli>", 0, "--bytes"}, Expected("a size above zero", *bytes_text));
      if (*hosts < 16 || *hosts % 8 != 0) {
        throw InputError({"<cli>", 0, "--hosts"},
                         Expected("a multiple of 8, at least 16", std::to_string(*hosts)));
      }
      const int64_t m = (bytes + 3971) / 3972;  // whole datagrams, as the anchor sends
      std::string yaml = fmt::format(
          "name: ls-ring\nseed: 1\n"
          "fabric: {{preset: raw, link_rate: 400Gbps, link_delay: 1us, mtu: 3972, frame_overhead: "
          "30,\n"
          "         switch_latency: 0ns, routing: spray, buffer: 1GiB,\n"
          "         ecn: {{enabled: true, kmin: 128064B, kmax: 132066B, pmax: 1}}}}\n"
          "topology: {{kind: ls-ring, gpus: {}, hosts_per_leaf: 8, spines: 8}}\n"
          "traffic: [{{pattern: permutation, stride: {}, bytes: {}B}}]\n",
          *hosts, *stride, m * 3972);
      std::vector<std::string> sets;
      if (*lossless_mode == "roce") {
        // Same work with PFC and DCQCN armed: the cost of the lossless machinery.
        sets = {"fabric.pfc.enabled=true", "fabric.pfc.priority=3", "fabric.cc=dcqcn-paper"};
      } else if (*lossless_mode == "ib") {
        // Same work with per-VL credits on every link (the default 2,048
        // blocks cover the 1 us credit loop, so the closed form still holds).
        sets = {"fabric.ib.enabled=true"};
      } else if (*lossless_mode != "none") {
        throw InputError({"<cli>", 0, "--lossless"}, Expected("none, roce or ib", *lossless_mode));
      }
      scenario::Scenario s = scenario::LoadScenarioText(yaml, "<bench ls-ring>", sets);
      auto t0 = std::chrono::steady_clock::now();
      report::RunResult r = run::RunScenario(s);
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fmt::print(
          "ls-ring hosts={} bytes={} datagrams_per_flow={} stride={}: {} flows done, completion "
          "{}\n",
          *hosts, bytes, m, *stride, r.flows_done, units::FormatTime(r.fct.max));
      if (*stride == 1) {
        int64_t closed = (m + 3) * 80'040 + 4'000'000;
        uint64_t hops =
            static_cast<uint64_t>(m) * static_cast<uint64_t>(2 * *hosts + 2 * (*hosts / 8));
        // The closed form is the raw links'. InfiniBand's flow-control
        // packets share the wire with the data, so its completion is later
        // by their link time (docs/benchmarks.md); only the hops compare.
        const bool ib = *lossless_mode == "ib";
        const bool match = (ib || closed == r.fct.max.ps()) && hops == r.packet_hops;
        fmt::print("closed form: completion {} packet_hops {} -> {}{}\n",
                   units::FormatTime(units::Time::Ps(closed)), hops,
                   match ? (ib ? "hops match" : "exact match") : "MISMATCH",
                   ib ? fmt::format(" (completion {} later: the FCPs' link time)",
                                    units::FormatTime(r.fct.max - units::Time::Ps(closed)))
                      : "");
      }
      double rate = static_cast<double>(r.packet_hops) / wall;
      fmt::print(
          "fabric build {:.3f} s ({} hosts, {} switches, {} links); peak packets alive {} x {} B\n",
          r.timing.build_s, r.hosts, r.switches, r.links, r.peak_packets_alive, r.bytes_per_packet);
      std::string line =
          fmt::format("packet_hops={} wall_s={:.3f} packet_hops_per_s={:.4g} peak_rss_mb={:.1f}",
                      r.packet_hops, wall, rate, run::PeakRssMb());
      std::string anchor_dir = *anchors;
      if (anchor_dir.empty()) {
        const char* env = std::getenv("LOSSLESS_ANCHORS");
        anchor_dir = env != nullptr ? env : "";
      }
      if (*vs_ns3 && anchor_dir.empty()) {
        fmt::print(
            "ns-3 anchor not configured: pass --anchors DIR or set LOSSLESS_ANCHORS "
            "(docs/benchmarks.md)\n");
      } else if (*vs_ns3) {
        const std::string script = anchor_dir + "/ns3/run.sh";
        std::string out;
        const ChildEnd end =
            RunCapture({"bash", script, fmt::format("--hosts={}", *hosts),
                        fmt::format("--bytes={}", bytes), fmt::format("--stride={}", *stride)},
                       out);
        std::smatch mt;
        static const std::regex kRe(
            R"(RESULT .*wall_s=([0-9.]+) .*packet_hops=([0-9]+) .*hops_per_wall_s=([0-9.]+))");
        if (end.ok && std::regex_search(out, mt, kRe)) {
          double ns3 = std::stod(mt[3].str());
          line += fmt::format(" ns3_packet_hops_per_s={:.4g} speedup={:.1f}", ns3,
                              ns3 > 0 ? rate / ns3 : 0.0);
          fmt::print("ns-3: wall_s={} packet_hops={}\n", mt[1].str(), mt[2].str());
        } else {
          fmt::print("ns-3 anchor {} not available ({}); last output:\n{}\n", text::OneLine(script),
                     end.how, text::OneLine(out.size() > 600 ? out.substr(out.size() - 600) : out));
        }
      }
      fmt::print("{}\n", line);
      ctx.exit_code = 0;
    });
  }
  // --- demo --------------------------------------------------------------
  {
    auto* cmd = app.add_subcommand(
        "demo", "Run the built-in reference scenario under both presets and print the results");
    cmd->callback([&ctx] {
      fmt::print(
          "lossless demo: the built-in reference scenario under the InfiniBand and RoCE v2 "
          "presets.\n"
          "Modelled: InfiniBand with per-VL credit flow control (2,048 blocks of 64 B per VL,\n"
          "adaptive routing) and RoCE v2 with PFC (lossless priority 3, ECMP). Neither run uses\n"
          "end-to-end congestion control here (fabric.cc: dcqcn-paper, dcqcn-firmware, "
          "ib-cc).\n\n");
      for (const char* preset : {"infiniband", "roce"}) {
        scenario::Scenario s = scenario::LoadScenarioText(
            kDemoScenario, "<builtin demo>", {fmt::format("fabric.preset={}", preset)});
        fmt::print("== preset {} ==\n", preset);
        if (RunAndPrint(s, "", true) == kExitInterrupted) {  // Ctrl-C: no second preset
          ctx.exit_code = kExitInterrupted;
          return;
        }
        fmt::print("\n");
      }
      ctx.exit_code = 0;
    });
  }
}

}  // namespace lossless::cli
