// libFuzzer target: any bytes through the nccl-tests parser and the rules.
// InputError is the only allowed failure; anything else (crash, other
// exception, sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "audit/nccl/nccl_log.hpp"
#include "audit/nccl/nccl_rules.hpp"
#include "base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  lossless::audit::nccl::NcclRulesConfig cfg;
  cfg.nic_gbps = 400;
  cfg.nics_per_node = 8;
  try {
    lossless::audit::nccl::StreamNcclLog(in, "fuzz.log", [&](lossless::audit::nccl::NcclRun&& run) {
      lossless::audit::nccl::EvaluateNcclRun(run, cfg);
    });
  } catch (const lossless::InputError&) {
  }
  return 0;
}
