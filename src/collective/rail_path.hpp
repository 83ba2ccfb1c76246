#pragma once
// A rail's GPU-to-NIC path as the collective engines apply it
// (docs/model/node.md#pcie-and-gpudirect-rdma; src/node/node.hpp computes
// it): without GPUDirect RDMA every data message bounces through host
// memory at both ends, and a path across the socket adds latency. The NIC's
// own rate cap is the fabric's (fabric::Network::SetNicPcieRate).
#include <cstdint>
#include <vector>

#include "units/units.hpp"

namespace lossless::collective {

struct RailPath {
  units::Rate stage_rate;     // host-memory copy rate; 0 = GPUDirect RDMA (no staging)
  units::Time stage_latency;  // the host-memory hop per staged message
  units::Time latency;        // extra per message at each end (across the socket)
  bool Any() const { return stage_rate.bps() > 0 || latency.ps() > 0; }
};

// Per network host (NIC), the staging copies in each direction, one message
// after another per NIC and direction. Host h uses paths[h % nics_per_node]
// (rail-optimized numbering); no paths: nothing applies.
class RailStaging {
 public:
  RailStaging() = default;
  // Throws std::invalid_argument when paths is neither empty nor one per NIC.
  RailStaging(std::vector<RailPath> paths, int nics_per_node, uint32_t hosts);
  bool Applies(uint32_t host) const { return Path(host) != nullptr; }
  // When a data message of `bytes` whose GPU side is ready at `ready_ps`
  // reaches host's NIC (sender), or reaches its GPU after the NIC received
  // it whole at `at_ps` (receiver). Each returns its input when nothing
  // applies.
  int64_t Outbound(uint32_t host, int64_t bytes, int64_t ready_ps);
  int64_t Inbound(uint32_t host, int64_t bytes, int64_t at_ps);

 private:
  const RailPath* Path(uint32_t host) const;
  int64_t Stage(const RailPath& p, int64_t& busy, int64_t bytes, int64_t from) const;
  std::vector<RailPath> paths_;
  uint32_t nics_ = 1;
  std::vector<int64_t> tx_busy_, rx_busy_;
};

}  // namespace lossless::collective
