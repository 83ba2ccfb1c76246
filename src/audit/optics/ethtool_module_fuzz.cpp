// libFuzzer target for the ethtool_module text parser: any input must either parse or
// throw InputError; nothing else (no crash, no other exception, no hang).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "audit/optics/ethtool_module.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    lossless::audit::optics::SkippedLines skipped;
    auto r = lossless::audit::optics::ParseEthtoolModules(text, "fuzz", &skipped);
    (void)r;
  } catch (const lossless::InputError&) {
  }
  return 0;
}
