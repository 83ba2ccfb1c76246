// Fuzz target: scenario loading and traffic expansion must end in a Scenario
// (and its flows) or one InputError, never a crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenario/scenario.hpp"
#include "workload/traffic.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    lossless::scenario::Scenario s = lossless::scenario::LoadScenarioText(text, "fuzz.yaml");
    if (s.clos.gpus <= 4096) (void)lossless::workload::ExpandTraffic(s, 64);
  } catch (const lossless::InputError&) {
  }
  return 0;
}
