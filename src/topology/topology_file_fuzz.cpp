// Fuzz target: topology files parse or fail with one InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "topology/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    lossless::topology::Topology t = lossless::topology::ParseTopologyText(text, "fuzz.topo");
    (void)lossless::topology::FindUnreachableHosts(t);
  } catch (const lossless::InputError&) {
  }
  return 0;
}
