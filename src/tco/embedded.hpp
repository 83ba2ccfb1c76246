#pragma once
// Internal: data/prices.yaml as compiled into the binary by cmake/embed.cmake.
#include <string>
#include <vector>

namespace lossless::tco::internal {

struct EmbeddedFile {
  const char* path;
  std::string text;
};

const std::vector<EmbeddedFile>& EmbeddedFiles();

}  // namespace lossless::tco::internal
