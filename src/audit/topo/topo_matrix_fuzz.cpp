// libFuzzer target: any bytes through the topo matrix parser and the rules.
// InputError is the only allowed failure.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "audit/topo/topo_rules.hpp"
#include "base/error.hpp"
#include "formats/topo_matrix.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    lossless::audit::topo::EvaluateTopo(lossless::formats::ParseTopoMatrix(in, "fuzz.txt"));
  } catch (const lossless::InputError&) {
  }
  return 0;
}
