#include "flowctl/ib_credits.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace lossless::flowctl {

void IbLinkConfig::Check(int32_t mtu_blocks) const {
  if (num_vls < 1 || num_vls > kVl15Queue)
    throw std::invalid_argument(
        fmt::format("fabric.ib.vls: expected 1 to {} data VLs, got {}", kVl15Queue, num_vls));
  if (credits > kMaxCredits || credits < mtu_blocks) {
    throw std::invalid_argument(fmt::format(
        "fabric.ib.credits: expected {} to {} blocks of 64 B (one MTU packet up to half "
        "the 12-bit credit counter), got {}",
        mtu_blocks, kMaxCredits, credits));
  }
  if (fcp_period.ps() <= 0)
    throw std::invalid_argument("fabric.ib.fcp_period: expected a period above zero");
  auto check_table = [&](const std::vector<VlArbEntry>& t, const char* field) {
    for (const VlArbEntry& e : t) {
      if (e.vl >= num_vls)
        throw std::invalid_argument(
            fmt::format("{}: expected VLs below {}, got VL{}", field, num_vls, e.vl));
    }
  };
  check_table(high, "fabric.ib.vlarb_high");
  check_table(low, "fabric.ib.vlarb_low");
  if (limit_of_high < 0 || limit_of_high > 255)
    throw std::invalid_argument(
        fmt::format("fabric.ib.high_limit: expected 0 to 255, got {}", limit_of_high));
}

}  // namespace lossless::flowctl
