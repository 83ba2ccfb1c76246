#include "collective/rail_path.hpp"

#include <algorithm>
#include <stdexcept>

namespace lossless::collective {

RailStaging::RailStaging(std::vector<RailPath> paths, int nics_per_node, uint32_t hosts)
    : paths_(std::move(paths)), nics_(static_cast<uint32_t>(std::max(1, nics_per_node))) {
  if (!paths_.empty() && paths_.size() != nics_)
    throw std::invalid_argument("rail paths: expected one per NIC of a node");
  tx_busy_.assign(hosts, 0);
  rx_busy_.assign(hosts, 0);
}

const RailPath* RailStaging::Path(uint32_t host) const {
  if (paths_.empty() || host >= tx_busy_.size()) return nullptr;
  const RailPath& p = paths_[host % nics_];
  return p.Any() ? &p : nullptr;
}

int64_t RailStaging::Stage(const RailPath& p, int64_t& busy, int64_t bytes, int64_t from) const {
  int64_t t = from;
  if (p.stage_rate.bps() > 0) {
    busy = std::max(t, busy) + units::SerializationTime(units::Bytes(bytes), p.stage_rate).ps();
    t = busy + p.stage_latency.ps();
  }
  return t + p.latency.ps();
}

int64_t RailStaging::Outbound(uint32_t host, int64_t bytes, int64_t ready_ps) {
  const RailPath* p = Path(host);
  return p == nullptr ? ready_ps : Stage(*p, tx_busy_[host], bytes, ready_ps);
}

int64_t RailStaging::Inbound(uint32_t host, int64_t bytes, int64_t at_ps) {
  const RailPath* p = Path(host);
  return p == nullptr ? at_ps : Stage(*p, rx_busy_[host], bytes, at_ps);
}

}  // namespace lossless::collective
