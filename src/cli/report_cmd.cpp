// `lossless report RESULTS.json [-o report.html]`: renders the HTML report of
// a saved `lossless compare` results.json (report/compare_html.hpp). The page
// is written to a temporary file beside the destination and renamed, so a
// failure leaves no half-written report.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
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

void WriteAtomically(const std::string& path, const std::string& text) {
  const std::filesystem::path dest(path);
  const std::filesystem::path dir = dest.has_parent_path() ? dest.parent_path() : ".";
  std::string tmpl = (dir / ("." + dest.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw InputError({path, 0, "-o"},
                     fmt::format("cannot write the report: {}", std::strerror(errno)));
  bool ok = true;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  const int err = ok ? 0 : errno;
  // mkstemp creates the file 0600: a report is for reading, like any output.
  ok = ok && ::fchmod(fd, 0644) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int e = err != 0 ? err : errno;
    std::remove(tmpl.c_str());
    throw InputError({path, 0, "-o"}, fmt::format("cannot write the report: {}", std::strerror(e)));
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
    WriteAtomically(o->output, html);
    fmt::print("wrote {}\n", o->output);
    ctx.exit_code = 0;
  });
}

}  // namespace lossless::cli
