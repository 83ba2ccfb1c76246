// `lossless audit topo FILE`: nvidia-smi topo -m -> GPU/NIC pairing verdicts.
// Parsing is formats/topo_matrix; rules and rendering live in src/audit/topo; this
// file is option handling and wiring.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/topo/topo_report.hpp"
#include "audit/topo/topo_rules.hpp"
#include "audit/verdict.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "formats/topo_matrix.hpp"

namespace lossless::cli {
namespace {

struct TopoOptions {
  std::string file;
  bool json = false;
};

formats::TopoMatrix Load(const std::string& path) {
  if (path == "-") return formats::ParseTopoMatrix(std::cin, path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError({path, 0, ""}, "is a directory, expected an nvidia-smi topo -m file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, ""}, fmt::format("cannot open: {}", std::strerror(errno)));
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
