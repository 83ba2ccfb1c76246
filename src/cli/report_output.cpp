#include "cli/report_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"
#include "base/file.hpp"

namespace lossless::cli {

std::string EscapeControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f)) {
      out += ch;
    } else if (c == '\r') {
      out += "\\r";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

void FlushStdout(const char* flag) {
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (failed) {
    const int err = errno;
    throw InputError({"<stdout>", 0, flag}, std::string("cannot write the output: ") +
                                                (err != 0 ? std::strerror(err) : "write error"));
  }
}

void WriteReport(const std::string& path, std::string_view raw, const char* flag) {
  const std::string escaped = EscapeControls(raw);
  const std::string_view text = escaped;
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    FlushStdout(flag);
    return;
  }
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
      !std::filesystem::is_directory(st)) {
    // A device or a pipe: renaming a temporary file over it would replace it.
    std::FILE* f = std::fopen(path.c_str(), "w");
    int err = f == nullptr ? errno : 0;
    if (f != nullptr) {
      if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno;
      if (std::fflush(f) != 0 && err == 0) err = errno;
      if (std::fclose(f) != 0 && err == 0) err = errno;
    }
    if (err != 0) {
      throw InputError({path, 0, flag},
                       std::string("cannot write the file: ") + std::strerror(err));
    }
    return;
  }
  WriteFileAtomically(path, text, {path, 0, flag});
}

void PrepareOutputDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError({dir, 0, "-o"}, "cannot create the output folder");
  const std::string probe = (std::filesystem::path(dir) / ".lossless-write-test").string();
  {
    std::ofstream out(probe);
    if (!out) throw InputError({dir, 0, "-o"}, "the output folder is not writable");
  }
  std::filesystem::remove(probe, ec);
}

}  // namespace lossless::cli
