#include "flowctl/vl_arbiter.hpp"

namespace lossless::flowctl {

VlArbiter::VlArbiter(const IbLinkConfig& cfg)
    : high_{cfg.high, {}},
      low_{cfg.low, {}},
      limit_of_high_(cfg.limit_of_high),
      limit_blocks_(cfg.limit_of_high * 4096 / 64) {
  if (cfg.high.empty() && cfg.low.empty()) {
    for (int v = 0; v < cfg.num_vls; ++v)
      low_.entries.push_back({static_cast<uint8_t>(v), static_cast<uint8_t>(64)});
  }
  for (const VlArbEntry& e : low_.entries)
    if (e.weight > 0) low_mask_ = static_cast<uint8_t>(low_mask_ | (1u << e.vl));
  for (const VlArbEntry& e : high_.entries)
    if (e.weight > 0) high_mask_ = static_cast<uint8_t>(high_mask_ | (1u << e.vl));
  low_.Index();
  high_.Index();
}

void VlArbiter::Table::Index() {
  of_vl.fill(0);
  if (entries.size() > 64) return;  // PickInTable walks
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].weight > 0 && entries[i].vl < kMaxClasses) of_vl[entries[i].vl] |= uint64_t{1} << i;
}

}  // namespace lossless::flowctl
