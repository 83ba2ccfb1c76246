#pragma once
// Test helpers: `nvidia-smi topo -m` matrices from tests/fixtures/topo/ or
// from a string, parsed with formats::ParseTopoMatrix (tests only).
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "formats/topo_matrix.hpp"

namespace lossless::testing {

inline formats::TopoMatrix ParseTopoFixture(const std::string& name) {
  std::ifstream in(std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/topo/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  return formats::ParseTopoMatrix(in, name);
}

inline formats::TopoMatrix ParseTopoText(const std::string& text) {
  std::istringstream in(text);
  return formats::ParseTopoMatrix(in, "t.txt");
}

}  // namespace lossless::testing
