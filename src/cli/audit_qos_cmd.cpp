// `lossless audit qos FILE`: reads a switch RoCE QoS configuration (one or
// several show outputs and config fragments in one file), runs the checks of
// audit/qos/qos_rules.hpp and prints text or JSON. Exit 0 on pass or warn
// (1 on warn with --strict), 1 on fail, 2 on bad input, 3 on indeterminate
// (the project-wide rule).
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "audit/qos/qos_parse.hpp"
#include "audit/qos/qos_report.hpp"
#include "audit/qos/qos_rules.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "cli/commands.hpp"
#include "cli/report_output.hpp"
#include "units/units.hpp"

namespace lossless::cli {

namespace {

struct QosArgs {
  std::string file;
  std::string format = "auto";
  int64_t cell_bytes = 0;
  std::string platform;
  double cable_m = -1;
  int64_t port_gbps = 0;
  int roce_priority = 3;
  int cnp_dscp = 48;
  int64_t mtu = 0;
  std::string t_phy;
  std::string t_resp;
  bool json = false;      // --json given
  std::string json_path;  // its value: empty or "-" = standard output
  bool verbose = false;
  bool strict = false;
};

std::string PlatformNames() {
  std::string s;
  for (const auto& p : audit::qos::CellSizePresets()) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

void RunAuditQos(const QosArgs& a, Context& ctx) {
  std::optional<audit::qos::QosFormat> format;
  if (a.format != "auto") {
    format = audit::qos::QosFormatFromName(a.format);
    if (!format)
      throw InputError({"<cli>", 0, "--format"},
                       Expected("auto, sonic-json, sonic-show, nvue, onyx, eos, nxos, dell-sonic, "
                                "junos, cumulus-traffic or switch-config",
                                a.format));
  }
  audit::qos::QosAuditOptions opts;
  opts.roce_priority = a.roce_priority;
  opts.cnp_dscp = a.cnp_dscp;
  if (a.cell_bytes > 0) {
    opts.cell_bytes = a.cell_bytes;
    opts.cell_source = "--cell-bytes";
  } else if (!a.platform.empty()) {
    auto preset = audit::qos::FindCellSizePreset(a.platform);
    if (!preset)
      throw InputError({"<cli>", 0, "--platform"},
                       Expected("one of " + PlatformNames(), a.platform));
    opts.cell_bytes = preset->bytes;
    opts.cell_source =
        fmt::format("platform preset {}{}", preset->name, preset->verified ? "" : " (unverified)");
  }
  if (a.cable_m >= 0) opts.cable_m = a.cable_m;
  if (a.port_gbps > 0) opts.port_gbps = a.port_gbps;
  if (a.mtu > 0) opts.mtu_bytes = a.mtu;
  auto time_flag = [](const std::string& text, const char* flag) {
    Location where{"<cli>", 0, flag};
    units::Time t = units::ParseTime(text, where);
    if (t > units::Time::Ms(1)) throw InputError(where, Expected("a time up to 1ms", text));
    return t;
  };
  if (!a.t_phy.empty()) opts.t_phy = time_flag(a.t_phy, "--t-phy");
  if (!a.t_resp.empty()) opts.t_resp = time_flag(a.t_resp, "--t-resp");

  audit::qos::QosConfig cfg =
      audit::qos::ParseQosText(ReadTextInput(a.file, "a switch QoS configuration"), a.file, format);
  audit::qos::QosAudit result = audit::qos::AuditQos(cfg, opts);
  const bool json_to_stdout = a.json && (a.json_path.empty() || a.json_path == "-");
  if (a.json) {
    nlohmann::json j = audit::qos::QosAuditToJson(result);
    if (a.verbose) j["skipped"] = audit::qos::QosSkippedToJson(cfg.skipped);
    WriteReport(a.json_path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                "--json");
  }
  if (!json_to_stdout) {
    // The text report, also beside a JSON file.
    std::string text = audit::qos::FormatQosAuditText(result);
    if (a.verbose) text += audit::qos::FormatQosSkippedText(cfg.skipped);
    WriteReport("-", text, "output");
  }
  ctx.exit_code = audit::ExitCode(result.verdict, a.strict);
}

}  // namespace

void AddAuditQosCommand(CLI::App& audit, Context& ctx) {
  auto args = std::make_shared<QosArgs>();
  CLI::App* cmd = audit.add_subcommand(
      "qos", "Check a switch RoCE QoS configuration (PFC, ECN, headroom, CNP priority)");
  cmd->add_option("FILE", args->file,
                  "switch QoS text ('-' = stdin): SONiC config_db.json or show output, NVUE, "
                  "Onyx, EOS or NX-OS configuration; several outputs in one file are read "
                  "together")
      ->required();
  cmd->add_option("--format", args->format,
                  "auto|sonic-json|sonic-show|nvue|onyx|eos|nxos|dell-sonic|junos|cumulus-traffic|"
                  "switch-config")
      ->capture_default_str();
  auto* cell = cmd->add_option("--cell-bytes", args->cell_bytes,
                               "buffer cell size in bytes, for thresholds given in cells")
                   ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--platform", args->platform, "cell size preset: " + PlatformNames())
      ->excludes(cell);
  cmd->add_option("--cable-m", args->cable_m, "cable length in metres for the headroom check")
      ->check(CLI::Range(0.0, 10000.0));
  cmd->add_option("--port-gbps", args->port_gbps, "port speed in Gb/s for the headroom check")
      ->check(CLI::Range(int64_t{1}, int64_t{3200}));
  cmd->add_option("--roce-priority", args->roce_priority, "priority carrying RoCE traffic")
      ->check(CLI::Range(0, 7))
      ->capture_default_str();
  cmd->add_option("--cnp-dscp", args->cnp_dscp, "DSCP of CNP packets")
      ->check(CLI::Range(0, 63))
      ->capture_default_str();
  cmd->add_option("--mtu", args->mtu,
                  "largest frame in bytes for the headroom formula (default 9216)")
      ->check(CLI::Range(int64_t{64}, int64_t{65536}));
  cmd->add_option("--t-phy", args->t_phy, "one PHY traversal, e.g. 150ns (default 150ns, assumed)");
  cmd->add_option("--t-resp", args->t_resp,
                  "sender response time, e.g. 1.1584us (default: 802.3 D-Resp for the speed)");
  // --json alone (or "--json -") prints the JSON document instead of the text;
  // "--json PATH" writes it to PATH whole or not at all and prints the text.
  // A following FILE is not taken as PATH while FILE is still missing.
  CLI::Option* json_opt =
      cmd->add_option("--json", args->json_path,
                      "one JSON document: to stdout (no value or '-') instead of the text, or to "
                      "PATH beside the text")
          ->expected(0, 1);
  cmd->add_flag("--verbose", args->verbose,
                "list every input line that was skipped (prompt, prose, unreadable) and why");
  cmd->add_flag("--strict", args->strict, "exit 1 on a warn verdict (default: 0)");
  cmd->callback([args, json_opt, &ctx] {
    args->json = json_opt->count() > 0;
    RunAuditQos(*args, ctx);
  });
}

}  // namespace lossless::cli
