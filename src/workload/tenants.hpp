#pragma once
// Other tenants' traffic on a shared fabric (scenario tenants.*,
// docs/model/shared-cloud.md). Each host's NIC port is shared with other
// tenants' virtual machines (SR-IOV virtual functions of the same physical
// port): besides the job's traffic the NIC sends their bursts, on the job's
// data class (the same switch queues), to hosts chosen uniformly among the
// other hosts, so they cross leaf uplinks and spines like the job's.
//
// - Arrivals per host are Poisson; burst sizes are exponential with mean
//   `mean_burst` (at least 1 byte). The arrival rate is chosen so that each
//   host offers `load` x its link's payload capacity (link rate x MTU payload
//   / MTU wire bytes) on average; the bursts are RC messages on one queue pair
//   per (host, destination), opened at that pair's first burst.
// - Each host draws from its own streams (seed, host, "tenant"), one
//   pending arrival event per host: bursts are generated as time advances,
//   never ahead, so memory stays bounded (queue pairs: at most one per pair of
//   hosts that exchanged a burst) and a run ends when its workload ends (the
//   network or the collective stops the engine; no burst starts at or after
//   `until`).
// - A tenant's send queue is finite: a burst drawn for a queue pair that
//   already has `max_outstanding` messages unacknowledged is not posted
//   (counted in refused()). At the loads a profile sets this never happens;
//   it bounds memory when the fabric stalls (a PFC deadlock, a stuck run).
// - The queue pairs are persistent (Network::AddQp): they never count as
//   flows to finish, and a transport observer hears of their completions
//   under QP ids it does not own.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fabric/network.hpp"
#include "sim/rng.hpp"
#include "sim/simulator.hpp"
#include "units/units.hpp"

namespace lossless::workload {

struct TenantConfig {
  double load = 0;                         // share of each host link, 0..1; 0 = no traffic
  int64_t mean_burst = int64_t{1} << 20;   // bytes, > 0
  units::Time until = units::Time::Max();  // no burst starts at or after this
  size_t max_outstanding = 64;             // messages per queue pair
};

class TenantTraffic final : public sim::EventHandler {
 public:
  // Schedules every host's first arrival (from Now()). Throws
  // std::invalid_argument for load outside [0, 1] or mean_burst <= 0. With
  // load 0 or fewer than 2 hosts it does nothing.
  TenantTraffic(sim::Simulator& sim, fabric::Network& net, const TenantConfig& cfg);

  // Bytes and bursts posted so far by host `host`'s tenants, and in total.
  int64_t BytesPosted(uint32_t host) const { return host < hosts_.size() ? hosts_[host].bytes : 0; }
  int64_t bytes_posted() const;
  int64_t bursts() const;
  // Mean time between one host's bursts (what load and mean_burst give it;
  // zero when there is no tenant traffic).
  units::Time MeanGap(uint32_t host) const {
    return units::Time::Ps(host < hosts_.size() ? hosts_[host].gap_ps : 0);
  }
  size_t queue_pairs() const { return qps_.size(); }
  // Whether flow (queue pair) `qp` of the network is one of the tenants'.
  bool Owns(uint32_t qp) const { return qp < own_.size() && own_[qp]; }
  int64_t refused() const { return refused_; }

  void OnEvent(uint32_t kind, uint64_t arg) override;

 private:
  struct Host {
    uint32_t entity = 0;
    int64_t gap_ps = 0;  // mean inter-arrival time
    sim::Rng rng;
    int64_t bytes = 0;
    int64_t bursts = 0;
  };
  void ScheduleNext(uint32_t host);

  sim::Simulator& sim_;
  fabric::Network& net_;
  TenantConfig cfg_;
  std::vector<Host> hosts_;
  std::unordered_map<uint64_t, uint32_t> qps_;  // src << 32 | dst -> QP
  std::vector<bool> own_;                       // by network flow id
  int64_t refused_ = 0;
};

}  // namespace lossless::workload
