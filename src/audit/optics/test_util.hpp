#pragma once
// Test helpers: fixture paths and file reading (tests only).
#include <fstream>
#include <iterator>
#include <string>

namespace lossless::audit::optics::testing {

inline std::string FixturePath(const std::string& name) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/optics/" + name;
}

inline std::string ReadFixture(const std::string& name) {
  std::ifstream in(FixturePath(name), std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Real captures collected from public sources (tests/fixtures/real/SOURCES.md).
inline std::string ReadRealSample(const std::string& name) {
  std::ifstream in(std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/real/optics/" + name,
                   std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace lossless::audit::optics::testing
