#include "base/input_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"

namespace lossless {
namespace {

constexpr std::string_view kUtf16Hint =
    "UTF-16 text: expected UTF-8 or ASCII (convert it, e.g. iconv -f UTF-16 -t UTF-8)";

// UTF-16 without a byte-order mark: NUL at every other byte of an ASCII text.
bool LooksUtf16(std::string_view b) {
  if (b.size() < 8) return false;
  size_t n = std::min<size_t>(b.size() & ~size_t{1}, 512);
  size_t even = 0, odd = 0;
  for (size_t i = 0; i < n; i += 2) {
    even += b[i] == '\0';
    odd += b[i + 1] == '\0';
  }
  const size_t pairs = n / 2;
  return (odd * 10 >= pairs * 9 && even == 0) || (even * 10 >= pairs * 9 && odd == 0);
}

}  // namespace

std::string FormatByteLimit(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0)
    return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (uint64_t{1} << 10) && bytes % (uint64_t{1} << 10) == 0)
    return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

void CheckTextBlock(std::string_view block, const std::string& file, std::string_view expected) {
  const bool bom = block.size() >= 2 && ((block[0] == '\xff' && block[1] == '\xfe') ||
                                         (block[0] == '\xfe' && block[1] == '\xff'));
  if (bom || LooksUtf16(block)) throw InputError({file, 1, ""}, std::string(kUtf16Hint));
  const size_t nul = block.find('\0');
  if (nul == std::string_view::npos) return;
  int64_t line = 1;
  for (size_t i = 0; i < nul; ++i) line += block[i] == '\n';
  throw InputError({file, line, ""}, fmt::format("binary data (NUL byte): expected {}", expected));
}

namespace {
// Standard input as first read: a command that loads its input more than once
// (a profile validated then sized, compare's --scenario per profile) gets the
// same text again rather than an empty stream.
std::mutex stdin_mutex;
std::optional<std::string> stdin_text;

std::string ReadOnce(const std::string& path, std::string_view expected, size_t max_bytes);
}  // namespace

std::string ReadTextInput(const std::string& path, std::string_view expected, size_t max_bytes) {
  if (path != "-") return ReadOnce(path, expected, max_bytes);
  const std::lock_guard<std::mutex> lock(stdin_mutex);
  if (!stdin_text) stdin_text = ReadOnce(path, expected, max_bytes);
  if (stdin_text->size() > max_bytes)
    throw InputError({path, 0, ""}, fmt::format("expected {} of at most {}, got more", expected,
                                                FormatByteLimit(max_bytes)));
  return *stdin_text;
}

namespace {
std::string ReadOnce(const std::string& path, std::string_view expected, size_t max_bytes) {
  std::FILE* f = stdin;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned(nullptr, &std::fclose);
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw InputError({path, 0, ""}, fmt::format("is a directory: expected {}", expected));
    f = std::fopen(path.c_str(), "rb");
    if (f == nullptr)
      throw InputError({path, 0, ""}, fmt::format("cannot open: {}", std::strerror(errno)));
    owned.reset(f);
  }
  const AllocationContext context("reading " + path);
  std::string text;
  std::vector<char> buf(kFirstBlockBytes);
  size_t checked = 0;  // bytes of the first block checked so far
  for (;;) {
    const size_t got = std::fread(buf.data(), 1, buf.size(), f);
    if (got == 0) break;
    if (text.size() + got > max_bytes)
      throw InputError({path, 0, ""}, fmt::format("expected {} of at most {}, got more (reading "
                                                  "stopped there)",
                                                  expected, FormatByteLimit(max_bytes)));
    text.append(buf.data(), got);
    if (checked < kFirstBlockBytes) {
      CheckTextBlock(std::string_view(text).substr(0, kFirstBlockBytes), path, expected);
      checked = text.size();
    }
  }
  if (std::ferror(f)) throw InputError({path, 0, ""}, "read error");
  return text;
}
}  // namespace

}  // namespace lossless
