// `lossless audit topo FILE`: nvidia-smi topo -m -> GPU/NIC pairing verdicts.
// Parsing is formats/topo_matrix; rules and rendering live in src/audit/topo; this
// file is option handling and wiring.
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/topo/topo_report.hpp"
#include "audit/topo/topo_rules.hpp"
#include "audit/verdict.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "formats/topo_matrix.hpp"

namespace lossless::cli {
namespace {

struct TopoOptions {
  std::string file;
  bool json = false;
};

// Read whole with the limits of every reader (base/input_file.hpp: "-" =
// standard input, a folder, binary data and UTF-16, with its hint, refused
// at the first block); a matrix is a few KiB.
formats::TopoMatrix Load(const std::string& path) {
  std::istringstream in(ReadTextInput(path, "an nvidia-smi topo -m matrix"));
  return formats::ParseTopoMatrix(in, path);
}

}  // namespace

void AddAuditTopoCommand(CLI::App& audit, Context& ctx) {
  auto opt = std::make_shared<TopoOptions>();
  CLI::App* cmd = audit.add_subcommand(
      "topo", "Audit nvidia-smi topo -m: pair each GPU with its best NIC and judge the PCIe path");
  cmd->add_option("file", opt->file, "output of nvidia-smi topo -m ('-' = stdin)")->required();
  cmd->add_flag("--json", opt->json, "print one JSON document instead of text");
  cmd->callback([opt, &ctx] {
    formats::TopoMatrix m = Load(opt->file);
    audit::topo::TopoReport r = audit::topo::EvaluateTopo(m);
    if (opt->json) {
      fmt::print("{}\n", audit::topo::TopoToJson(m, r).dump(2));
    } else {
      fmt::print("{}", text::ForTerminal(audit::topo::FormatTopoText(r)));
    }
    // docs/errors.md: 0 pass, 1 fail, 3 indeterminate.
    ctx.exit_code = audit::ExitCode(r.verdict, /*strict=*/false);
  });
}

}  // namespace lossless::cli
