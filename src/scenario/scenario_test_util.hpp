#pragma once
// Shared by the tests of scenario, workload and run: a small valid scenario
// and the error that loading a scenario gives.
#include <string>
#include <vector>

#include "base/error.hpp"
#include "scenario/scenario.hpp"

namespace lossless::scenario::testing {

// 32 GPUs on a radix-16 leaf-spine, RoCE at 400G, one ring of 64 KiB flows
// (traffic.1 onwards can be added with --set).
inline constexpr const char* kGood = R"(name: t
seed: 3
fabric:
  preset: roce
  link_rate: 400Gbps
topology:
  kind: leaf-spine
  gpus: 32
  radix: 16
traffic:
  - pattern: ring
    bytes: 64KiB
)";

// The message of the InputError that loading `text` as "s.yaml" with `sets`
// and building its topology throws; "no error" if none.
inline std::string ErrorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    BuildTopology(LoadScenarioText(text, "s.yaml", sets));
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

}  // namespace lossless::scenario::testing
