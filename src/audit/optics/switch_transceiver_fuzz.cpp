// libFuzzer target for the switch transceiver parsers (SONiC, NX-OS, Arista): any input
// must either parse or throw InputError; nothing else (no crash, no other exception, no hang).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "audit/optics/switch_transceiver.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lossless::audit::optics::SkippedLines skipped;
  for (auto parse :
       {&lossless::audit::optics::ParseSonicEeprom, &lossless::audit::optics::ParseNxosTransceiver,
        &lossless::audit::optics::ParseAristaTransceiver,
        &lossless::audit::optics::ParseJunosOptics, &lossless::audit::optics::ParseIosxrOptics}) {
    try {
      auto r = parse(text, "fuzz", &skipped);
      (void)r;
    } catch (const lossless::InputError&) {
    }
  }
  return 0;
}
