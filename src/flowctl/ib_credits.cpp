#include "flowctl/ib_credits.hpp"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace lossless::flowctl {

void IbLinkConfig::Check(int32_t mtu_blocks) const {
  if (num_vls < 1 || num_vls > kVl15Queue)
    throw std::invalid_argument(
        std::string("fabric.ib.vls") + ": " +
        fmt::format("expected 1 to {} data VLs, got {}", kVl15Queue, num_vls));
  if (credits > kMaxCredits || credits < mtu_blocks) {
    throw std::invalid_argument(
        std::string("fabric.ib.credits") + ": " +
        fmt::format("expected {} to {} blocks of 64 B (one MTU packet up to half "
                    "the 12-bit credit counter), got {}",
                    mtu_blocks, kMaxCredits, credits));
  }
  if (fcp_period.ps() <= 0)
    throw std::invalid_argument(std::string("fabric.ib.fcp_period") + ": " +
                                "expected a period above zero");
  auto check_table = [&](const std::vector<VlArbEntry>& t, const char* field) {
    for (const VlArbEntry& e : t) {
      if (e.vl >= num_vls)
        throw std::invalid_argument(std::string(field) + ": " +
                                    fmt::format("expected VLs below {}, got VL{}", num_vls, e.vl));
    }
  };
  check_table(high, "fabric.ib.vlarb_high");
  check_table(low, "fabric.ib.vlarb_low");
  if (limit_of_high < 0 || limit_of_high > 255)
    throw std::invalid_argument(std::string("fabric.ib.high_limit") + ": " +
                                fmt::format("expected 0 to 255, got {}", limit_of_high));
}

}  // namespace lossless::flowctl
