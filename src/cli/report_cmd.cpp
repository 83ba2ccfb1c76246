// `lossless report RESULTS.json [-o report.html]`: renders the HTML report of
// a saved `lossless compare` results.json (report/compare_html.hpp), written
// whole or not at all (WriteFileAtomically).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/file.hpp"
#include "cli/commands.hpp"
#include "report/compare_html.hpp"

namespace lossless::cli {
namespace {

struct ReportOptions {
  std::string input;
  std::string output = "report.html";
};

nlohmann::json ReadResults(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError({path, 0, ""}, fmt::format("cannot read the file: {}", std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError({path, 0, ""}, "cannot read the file");
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ...".
    std::string what = e.what();
    if (const size_t end = what.find("] ");
        what.rfind("[json.", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    throw InputError({path, 0, ""}, "not valid JSON: " + what);
  }
}

}  // namespace

void AddReportCommand(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Render the HTML report of a saved `lossless compare` results.json");
  cmd->add_option("results", o->input, "results.json written by lossless compare")->required();
  cmd->add_option("-o,--output", o->output, "HTML file to write")->capture_default_str();
  cmd->callback([o, &ctx] {
    const nlohmann::json results = ReadResults(o->input);
    const std::string html = report::RenderCompareReport(results, o->input);
    WriteFileAtomically(o->output, html, {o->output, 0, "-o"});
    fmt::print("wrote {}\n", o->output);
    ctx.exit_code = 0;
  });
}

}  // namespace lossless::cli
