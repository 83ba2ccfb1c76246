// lossless scenario from-qos: a switch QoS config as a scenario's fabric
// section (docs/from-qos.md).
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "audit/qos/qos_parse.hpp"
#include "base/error.hpp"
#include "base/file.hpp"
#include "base/input_file.hpp"
#include "cli/commands.hpp"
#include "from_qos/from_qos.hpp"

namespace lossless::cli {
namespace {
namespace scenario_cmd {

struct FromQosArgs {
  std::string config;
  std::string output = "-";
  std::string profile = "roce-tuned";
  std::string format = "auto";
  int64_t cell_bytes = 0;
  bool quiet = false;
};

}  // namespace scenario_cmd
}  // namespace

void AddScenarioCommand(CLI::App& app, Context& ctx) {
  using scenario_cmd::FromQosArgs;
  auto* cmd = app.add_subcommand("scenario", "Make scenarios from real inputs (docs/scenarios.md)");
  cmd->require_subcommand(1);
  auto* fq = cmd->add_subcommand(
      "from-qos",
      "A switch QoS config (any format `audit qos` reads) as a scenario: its lossless settings in fabric:, "
      "each with the config line it came from; the rest from a profile");
  auto a = std::make_shared<FromQosArgs>();
  fq->add_option("config", a->config, "The switch QoS config ('-' = stdin)")->required();
  fq->add_option("-o,--output", a->output, "Write the scenario to FILE (default: standard output)");
  fq->add_option("--profile", a->profile, "Profile for what the config does not set (default roce-tuned)");
  fq->add_option("--format", a->format, "Force the config's format (as audit qos --format; default auto)");
  fq->add_option("--cell-bytes", a->cell_bytes, "Buffer cell size in bytes, for thresholds given in cells");
  fq->add_flag("-q,--quiet", a->quiet, "No summary on standard error");
  fq->footer("Exit status: 0 written (the scenario loads; settings not mapped are listed in it); 2 bad input.");
  fq->callback([a, &ctx] {
    std::optional<audit::qos::QosFormat> format;
    if (a->format != "auto") {
      format = audit::qos::QosFormatFromName(a->format);
      if (!format) throw InputError({"<cli>", 0, "--format"}, Expected("a format audit qos reads (or auto)", a->format));
    }
    if (a->cell_bytes < 0)
      throw InputError({"<cli>", 0, "--cell-bytes"}, Expected("a cell size of 1 byte or more", std::to_string(a->cell_bytes)));
    CheckOutputPath(a->output, {"<cli>", 0, "--output"});
    const audit::qos::QosConfig cfg =
        audit::qos::ParseQosText(ReadTextInput(a->config, "a switch QoS configuration"), a->config, format);
    from_qos::Options o;
    o.profile = a->profile;
    o.cell_bytes = a->cell_bytes;
    const from_qos::Result r = from_qos::FromQos(cfg, a->config, o);
    WriteOutput(a->output, r.yaml, {"<cli>", 0, "--output"});
    if (!a->quiet) {
      fmt::print(stderr, "from-qos: {} value(s) from {}, {} from profile {}, {} ignored, {} not mapped{}\n",
                 r.mapped.size(), a->config, r.defaults, a->profile, r.ignored.size(), r.unmapped.size(),
                 a->output == "-" ? "" : " -> " + a->output);
      for (const std::string& u : r.unmapped) fmt::print(stderr, "from-qos: not mapped: {}\n", u);
    }
    ctx.exit_code = 0;
  });
}

}  // namespace lossless::cli
