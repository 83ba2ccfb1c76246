// libFuzzer target for the switch transceiver parsers (SONiC, NX-OS, Arista): any input
// must either parse or throw InputError; nothing else (no crash, no other exception, no hang).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "optics/switch_transceiver.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lossless::optics::SkippedLines skipped;
  for (auto parse : {&lossless::optics::ParseSonicEeprom, &lossless::optics::ParseNxosTransceiver,
                     &lossless::optics::ParseAristaTransceiver, &lossless::optics::ParseJunosOptics,
                     &lossless::optics::ParseIosxrOptics}) {
    try {
      auto r = parse(text, "fuzz", &skipped);
      (void)r;
    } catch (const lossless::InputError&) {
    }
  }
  return 0;
}
