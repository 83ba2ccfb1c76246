// `lossless optics ingest|status|quarantine`: transceiver health tracking.
// Glue only: parsing lives in audit/optics/ingest, storage in audit/optics/store,
// the decisions in audit/optics/rules, the rendering in audit/optics/report.
// See docs/optics.md.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "audit/optics/ingest.hpp"
#include "audit/optics/report.hpp"
#include "audit/optics/rules.hpp"
#include "audit/optics/store.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/report_output.hpp"

namespace lossless::cli {
namespace {

namespace optics = audit::optics;

constexpr const char* kDefaultDb = "./lossless-optics.db";

struct OpticsOptions {
  std::string db = kDefaultDb;
  std::vector<std::string> files;
  std::string at;
  std::string link;
  bool json = false;      // --json given
  std::string json_path;  // its value: empty or "-" = standard output
  bool verbose = false;
  bool strict = false;
  optics::RuleParams rules;
};

// Test-only: LOSSLESS_OPTICS_TEST_KILL_AFTER_ROWS=N[:abort|:kill] makes ingest
// die after writing N rows inside its transaction (std::abort or SIGKILL).
void InstallKillHook(optics::Store& store) {
  const char* env = std::getenv("LOSSLESS_OPTICS_TEST_KILL_AFTER_ROWS");
  if (env == nullptr || *env == '\0') return;
  std::string spec(env);
  const bool kill = spec.size() > 5 && spec.substr(spec.size() - 5) == ":kill";
  const size_t colon = spec.find(':');
  const long n = std::strtol(spec.substr(0, colon).c_str(), nullptr, 10);
  store.SetRowHook([n, kill](int64_t rows) {
    if (rows < n) return;
    std::fflush(stdout);
    if (kill) ::kill(::getpid(), SIGKILL);
    std::abort();
  });
}

void RunIngest(const OpticsOptions& o, Context& ctx) {
  optics::IngestOptions io;
  if (!o.at.empty()) io.at = optics::ParseAtOption(o.at);
  io.link = o.link;
  // ethtool -m and the switch commands print no time: such readings get the ingest time.
  io.now = optics::ParseAtOption("now");
  // Parse everything first: a bad file stores nothing at all.
  std::vector<optics::ParsedInput> parsed;
  for (const auto& f : o.files) parsed.push_back(optics::ReadInputFileDetailed(f, io));
  optics::Store store(o.db, optics::Store::Mode::kCreate);
  InstallKillHook(store);
  for (size_t i = 0; i < o.files.size(); ++i) {
    const auto& p = parsed[i];
    store.Insert(o.files[i], p.readings);
    WriteReport("-", optics::FormatIngestText(o.files[i], p, o.verbose), "output");
  }
  ctx.exit_code = 0;
}

std::vector<optics::LinkStatus> Evaluate(const OpticsOptions& o) {
  optics::Store store(o.db, optics::Store::Mode::kExisting);
  std::vector<optics::LinkStatus> out;
  for (const auto& link : store.Links()) {
    out.push_back(optics::EvaluateLink(link, store.History(link), o.rules));
  }
  return out;
}

// The JSON document to stdout instead of the text (--json, --json -), or to a
// file beside the text (--json PATH).
void Print(const std::vector<optics::LinkStatus>& links, const OpticsOptions& o,
           const std::string& what) {
  const bool json_to_stdout = o.json && (o.json_path.empty() || o.json_path == "-");
  if (o.json) WriteReport(o.json_path, optics::LinksToJson(links).dump(2) + "\n", "--json");
  if (!json_to_stdout) WriteReport("-", optics::FormatLinksText(links, what), "output");
}

CLI::Option* AddJsonOption(CLI::App* cmd, OpticsOptions& o) {
  return cmd
      ->add_option("--json", o.json_path,
                   "one JSON document: to stdout (no value or '-') instead of the text, or to "
                   "PATH beside the text")
      ->expected(0, 1);
}

void AddRuleFlags(CLI::App* cmd, OpticsOptions& o) {
  auto& p = o.rules;
  cmd->add_option("--ber-watch", p.ber_watch, "raw (pre-FEC) BER above which a link is watched")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ber-quarantine", p.ber_quarantine,
                  "raw (pre-FEC) BER above which a link is quarantined (FEC limit ~2.4e-4)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--post-fec-ber-watch", p.post_fec_ber_watch,
                  "device-reported post-FEC BER above which a link is watched")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--post-fec-quarantine-per-hour", p.post_fec_quarantine_per_hour,
         "post-FEC errors per hour (from counter deltas) above which a link is quarantined")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--power-margin-watch-db", p.power_margin_watch_db,
                  "watch a lane this close (dB) to a power alarm when the module has no warning")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--trend-min-db-per-day", p.trend_min_db_per_day,
                  "rx power falling at least this fast (dB/day) is a finding")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ber-trend-decades-per-day", p.ber_trend_decades_per_day,
                  "raw BER rising at least this fast (decades/day) is a finding")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--trend-quarantine-days", p.trend_quarantine_days,
                  "quarantine when a trend reaches its threshold within this many days")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--trend-min-readings", p.trend_min_readings, "readings needed for a trend")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000000));
  cmd->add_option("--ber-rise-factor", p.ber_rise_factor,
                  "raw BER rising this many times between two readings is watched")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e300));
  cmd->add_option("--no-light-dbm", p.no_light_dbm,
                  "optical power at or below this (dBm) counts as no light")
      ->capture_default_str();
  cmd->add_option("--lane-errors-skew", p.lane_errors_skew,
                  "a lane whose raw errors are this many times the other lanes' median is watched")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e300));
  cmd->add_option("--lane-errors-min", p.lane_errors_min,
                  "raw errors a lane needs before the skew rule looks at it")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--dark-bias-ma", p.dark_bias_ma,
                  "laser bias below this (mA) counts as a laser not driven")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

}  // namespace

void AddOpticsCommand(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<OpticsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "optics", "Transceiver health: ingest ethtool -m / mlxlink / telemetry, decide quarantine");
  cmd->require_subcommand(1);

  CLI::App* ingest = cmd->add_subcommand(
      "ingest",
      "Store readings from ethtool -m, mlxlink, SONiC/NX-OS/Arista transceiver or telemetry files");
  ingest->add_option("files", o->files, "input files ('-' = stdin; then give --link)")->required();
  ingest->add_option("--at", o->at,
                     "time of the readings: ISO-8601 with zone, epoch seconds, or 'now' "
                     "(default: the capture's own time, else the ingest time)");
  ingest->add_option("--link", o->link, "link name (default: from the file, else the file stem)");
  ingest->add_option("--db", o->db, "SQLite database")->capture_default_str();
  ingest->add_flag("--verbose", o->verbose,
                   "list every reading stored and every input line that was not used, with its "
                   "line number and why (default: one summary line per file)");
  ingest->callback([o, &ctx] { RunIngest(*o, ctx); });

  CLI::App* status =
      cmd->add_subcommand("status", "State of every link: healthy, watch, quarantine");
  status->add_option("--db", o->db, "SQLite database")->capture_default_str();
  CLI::Option* status_json = AddJsonOption(status, *o);
  status->add_flag("--strict", o->strict, "exit 1 also when a link is only on watch");
  AddRuleFlags(status, *o);
  status->callback([o, status_json, &ctx] {
    o->json = status_json->count() > 0;
    auto links = Evaluate(*o);
    Print(links, *o, "links stored");
    // 1 a link to quarantine; 3 none, but a link that cannot be judged
    // (invalid-data); 0 otherwise, watch included (a warning; --strict makes it 1).
    ctx.exit_code = audit::ExitCode(optics::OverallVerdict(links), o->strict);
  });

  CLI::App* quarantine =
      cmd->add_subcommand("quarantine", "Only the links to take out of service (exit 1 if any)");
  quarantine->add_option("--db", o->db, "SQLite database")->capture_default_str();
  CLI::Option* quarantine_json = AddJsonOption(quarantine, *o);
  AddRuleFlags(quarantine, *o);
  quarantine->callback([o, quarantine_json, &ctx] {
    o->json = quarantine_json->count() > 0;
    auto links = Evaluate(*o);
    std::vector<optics::LinkStatus> q;
    for (auto& s : links) {
      if (s.state == audit::Verdict::kFail) q.push_back(std::move(s));
    }
    Print(q, *o, "links to quarantine");
    ctx.exit_code = q.empty() ? 0 : 1;
  });
}

}  // namespace lossless::cli
