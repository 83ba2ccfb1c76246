// `lossless compare`: every fabric profile through the same cases, side by
// side (docs/compare.md); writes results.json, results.csv and report.html.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/file.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/report_output.hpp"
#include "audit/qos/qos_parse.hpp"
#include "base/input_file.hpp"
#include "compare/compare.hpp"
#include "from_qos/from_qos.hpp"
#include "perf/options.hpp"
#include "report/compare_html.hpp"
#include "tco/prices.hpp"

namespace lossless::cli {
namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(',', start);
    std::string item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

void AddCompareCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "compare",
      "InfiniBand, tuned and untuned RoCE v2 and a shared cloud side by side: latency, all-reduce "
      "busbw, jitter, incast, faults and TCO (docs/compare.md)");
  auto o = std::make_shared<compare::Options>();
  auto profiles = std::make_shared<std::string>();
  auto sizes = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>("lossless-report");
  auto quiet = std::make_shared<bool>(false);
  auto stall_us = std::make_shared<double>(200);
  o->jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cmd->add_option("--profiles", *profiles,
                  "Comma-separated profiles, one column each (default: ib-ndr,roce-tuned,"
                  "roce-untuned,cloud-shared; lossless profiles lists them)");
  cmd->add_option("--nodes", o->nodes,
                  "Cluster size in nodes of 8 GPUs: TCO, and the all-reduce sweep with --full "
                  "(default 16; the reduced sweep runs on at most 4)");
  cmd->add_flag("--full", o->full,
                "The checklist's sweep: -b 8M -e 4G -f 2 -g 8 on --nodes nodes (minutes to hours)");
  cmd->add_option("--sizes", *sizes, "Comma-separated all-reduce sizes, e.g. 8M,64M,256M");
  cmd->add_option("--rate", o->rate, "400g (default) or 800g: at 800g InfiniBand is XDR, RoCE 800G");
  cmd->add_option("--seed", o->seed, "Random seed (default 1)");
  cmd->add_option("--scenario", o->scenario,
                  "A scenario file whose topology and faults replace the profiles' (its traffic "
                  "is ignored)");
  cmd->add_option("-o,--output", *dir, "Output folder (default lossless-report)");
  cmd->add_option("--prices", o->prices_file, "YAML file overriding TCO prices (data/prices.yaml)");
  cmd->add_option("--server-capex", o->server_capex,
                  "Server capex per GPU (USD): shows cloud and on-premises all-in");
  cmd->add_option("--jobs", o->jobs, "Profiles simulated at once (default: the CPU count)");
  cmd->add_option("--latency-samples", o->latency_samples, "Ping-pongs per profile (default 1000)");
  cmd->add_option("--iterations", o->iterations, "Measured iterations per sweep size (default 5)");
  cmd->add_option("--jitter-iterations", o->jitter_iterations,
                  "Measured iterations of the jitter all-reduce (default 40)");
  cmd->add_option("--fault-iterations", o->fault_iterations,
                  "Measured iterations of each fault case's all-reduce (default 10)");
  auto jitter_bytes = std::make_shared<std::string>();
  cmd->add_option("--jitter-bytes", *jitter_bytes,
                  "Size of the jitter and fault all-reduce, e.g. 32M (default)");
  cmd->add_option("--fault-ber", o->fault_ber, "Post-FEC BER of the degraded link (default 1e-7)");
  cmd->add_option("--stall", *stall_us, "How long the stalled NIC stops receiving, us (default 200)");
  auto qos = std::make_shared<std::string>();
  auto qos_profile = std::make_shared<std::string>("roce-tuned");
  cmd->add_option("--qos", *qos,
                  "A switch QoS config (as audit qos reads): one more column, your-config, the profile of "
                  "--qos-profile with the config's values (scenario from-qos), at the comparison's link rate");
  cmd->add_option("--qos-profile", *qos_profile, "Profile the --qos column takes its other values from (default roce-tuned)");
  cmd->add_option("--train-model", o->train_model,
                  "Model of the training-step row: 7b (default), 1.1b, 13b, 70b, or none (no row)");
  cmd->add_flag("-q,--quiet", *quiet, "No progress line");
  cmd->add_flag("--timing", o->timing,
                "Wall-clock seconds per profile and stage in results.json and on stderr (the "
                "document then differs run to run)");
  cmd->callback([=, &ctx] {
    compare::Options opt = *o;
    if (!profiles->empty()) opt.profiles = SplitList(*profiles);
    if (!sizes->empty()) {
      for (const std::string& s : SplitList(*sizes)) {
        const std::optional<int64_t> b = perf::ParseSize(s);
        if (!b) throw InputError({"<cli>", 0, "--sizes"}, Expected("a size such as 8M or 1G", s));
        opt.sizes.push_back(*b);
      }
    }
    if (!jitter_bytes->empty()) {
      const std::optional<int64_t> b = perf::ParseSize(*jitter_bytes);
      if (!b || *b <= 0)
        throw InputError({"<cli>", 0, "--jitter-bytes"}, Expected("a size such as 32M", *jitter_bytes));
      opt.jitter_bytes = *b;
    }
    if (!(*stall_us > 0 && *stall_us <= 1e6))
      throw InputError({"<cli>", 0, "--stall"}, fmt::format("expected 0 < us <= 1e6, got {:g}", *stall_us));
    opt.stall = units::Time::Ps(static_cast<int64_t>(*stall_us * 1e6));
    if (opt.jobs < 1) throw InputError({"<cli>", 0, "--jobs"}, fmt::format("expected 1 or more, got {}", opt.jobs));
    // --qos: the config as a profile (lossless scenario from-qos), checked
    // now; written into the report folder, where the column loads it from.
    std::string qos_yaml;
    if (!qos->empty()) {
      from_qos::Options fo;
      fo.profile = *qos_profile;
      fo.profile_flag = "--qos-profile";
      const audit::qos::QosConfig cfg =
          audit::qos::ParseQosText(ReadTextInput(*qos, "a switch QoS configuration"), *qos);
      const from_qos::Result r = from_qos::FromQos(cfg, *qos, fo);
      qos_yaml = r.yaml;
      if (!*quiet)
        fmt::print(stderr, "compare --qos: {} value(s) from {}, {} from profile {}, {} ignored, {} not mapped\n",
                   r.mapped.size(), *qos, r.defaults, *qos_profile, r.ignored.size(), r.unmapped.size());
    }
    compare::Check(opt);
    // A price file that cannot be used is bad input now, not after the
    // simulations (issue 16, item 15); standard input is read once, later.
    if (!opt.prices_file.empty() && opt.prices_file != "-")
      tco::PriceTable::Defaults().OverrideFile(opt.prices_file);
    PrepareOutputDir(*dir);
    if (!qos_yaml.empty()) {
      opt.qos_file = (std::filesystem::path(*dir) / "your-config.yaml").string();
      WriteFileAtomically(opt.qos_file, qos_yaml, {*dir, 0, "-o"});
    }
    // A status line on a terminal; Ctrl-C ends the comparison early with what
    // finished (base/progress.hpp).
    InterruptScope interrupts;
    ProgressLine line(!*quiet && ProgressLine::StderrIsTerminal());
    std::map<std::string, compare::Progress> state;
    std::mutex line_mu;
    // --timing without the terminal line (a log file, CI): one line per stage
    // as it starts, so a long --full run shows where it is.
    const bool log_stages = opt.timing && !line.enabled();
    const auto started = std::chrono::steady_clock::now();
    const nlohmann::json doc = compare::Run(
        opt,
        [&](const compare::Progress& p) {
          std::lock_guard<std::mutex> lock(line_mu);
          state[p.profile] = p;
          if (log_stages) {
            const double s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            if (p.stage == "done")
              fmt::print(stderr, "timing {:.1f}s {}: done\n", s, text::OneLine(p.profile));
            else
              fmt::print(stderr, "timing {:.1f}s {}: {} starts ({:.0f}% of its work done)\n", s,
                         text::OneLine(p.profile), text::OneLine(p.stage), 100 * p.done);
            std::fflush(stderr);
          }
          if (!line.Due()) return;
          std::string text;
          for (const auto& [name, st] : state)
            text += fmt::format("{} {:.0f}% {}  ", name, 100 * st.done, st.stage);
          line.Draw(text);
        },
        [] { return InterruptRequested(); });
    line.Clear();
    if (opt.timing && doc.contains("timing")) {
      for (const auto& [name, stages] : doc["timing"].items()) {
        std::string line;
        double total = 0;
        for (const auto& st : stages) {
          line += fmt::format("  {} {:.1f}s", st["stage"].get<std::string>(), st["seconds"].get<double>());
          total += st["seconds"].get<double>();
        }
        fmt::print(stderr, "timing {} {:.1f}s:{}\n", name, total, line);
      }
    }
    const std::string text = compare::MatrixText(doc);
    const std::string html = report::RenderCompareReport(doc);
    for (const auto& [name, body] : std::vector<std::pair<std::string, std::string>>{
             {"results.json", doc.dump(2) + "\n"},
             {"results.csv", compare::MatrixCsv(doc)},
             {"report.html", html}})
      WriteFileAtomically((std::filesystem::path(*dir) / name).string(), body, {*dir, 0, "-o"});
    fmt::print("{}", text::ForTerminal(text));
    fmt::print("\nwrote {0}/report.html, {0}/results.json and {0}/results.csv{1}\n", *dir,
               opt.qos_file.empty() ? "" : fmt::format(" (and {}: the --qos column's profile)", opt.qos_file));
    ctx.exit_code = doc.value("interrupted", false) ? kExitInterrupted : 0;
  });
}

}  // namespace lossless::cli
