// `lossless report RESULTS.json [-o report.html]`: renders the HTML report of
// a saved `lossless compare` results.json (report/compare_html.hpp), written
// whole or not at all (WriteOutput).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/file.hpp"
#include "base/input_file.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "report/compare_html.hpp"

namespace lossless::cli {
namespace {

struct ReportOptions {
  std::string input;
  std::string output = "report.html";
};

// "-" = standard input; the limits of every reader (base/input_file.hpp).
nlohmann::json ReadResults(const std::string& path) {
  constexpr const char* kWhat = "a results.json written by lossless compare";
  const std::string text = ReadTextInput(path, kWhat);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError({path, 1, ""}, fmt::format("expected {}, got an empty file", kWhat));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ...":
    // the line goes where every error puts it (docs/errors.md).
    std::string what = e.what();
    if (const size_t end = what.find("] ");
        what.rfind("[json.", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    int line = 0, column = 0, used = 0;
    const int got =
        std::sscanf(what.c_str(), "parse error at line %d, column %d: %n", &line, &column, &used);
    if (got == 2 && used > 0) {
      throw InputError({path, line, ""},
                       fmt::format("expected JSON ({}), column {}: {}", kWhat, column,
                                   what.substr(static_cast<size_t>(used))));
    }
    throw InputError({path, 0, ""}, fmt::format("expected JSON ({}): {}", kWhat, what));
  }
}

}  // namespace

void AddReportCommand(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Render the HTML report of a saved `lossless compare` results.json");
  cmd->add_option("results", o->input,
                  "results.json written by lossless compare ('-' = standard input)")
      ->required();
  cmd->add_option("-o,--output", o->output, "HTML file to write ('-' = standard output)")
      ->capture_default_str();
  cmd->callback([o, &ctx] {
    const Location where{o->output, 0, "-o"};
    CheckOutputPath(o->output, where);
    const nlohmann::json results = ReadResults(o->input);
    const std::string html = report::RenderCompareReport(results, o->input);
    WriteOutput(o->output, html, where);
    if (o->output != "-") fmt::print("wrote {}\n", text::OneLine(o->output));
    ctx.exit_code = 0;
  });
}

}  // namespace lossless::cli
