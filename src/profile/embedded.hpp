#pragma once
// Internal: the built-in profile files (profiles/*.yaml) as compiled into the
// binary by cmake/embed.cmake; path is relative to the repository root.
#include <string>
#include <vector>

namespace lossless::profile::internal {

struct EmbeddedFile {
  const char* path;
  std::string text;
};

// In file-name order (CMake's glob is sorted).
const std::vector<EmbeddedFile>& EmbeddedFiles();

}  // namespace lossless::profile::internal
