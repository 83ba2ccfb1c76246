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
// - Distributed (mpirun -np K, docs/parallel.md): the generator is a pure
//   function of each host's stream and the clock, so every rank runs every
//   host's arrivals (SetOwnedHosts) under the serial keys, drawing the same
//   destinations and sizes and opening the same queue pairs in the same
//   order (so QP ids are the serial ones everywhere); only the rank that owns
//   the host's NIC posts the burst and counts it. Rank 0 merges the counters
//   (ExportCounters / ImportCounters: integers).
#include <cstdint>
#include <string>
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

  // Distributed run: from now on only hosts with owned[h] != 0 post their
  // bursts and count them (the other hosts' arrivals still run here, so the
  // streams, the queue pairs and the keys stay the serial ones).
  void SetOwnedHosts(std::vector<uint8_t> owned) { owned_ = std::move(owned); }
  // The entity of host h's arrivals (its events), for the distributed run,
  // which keeps them on every rank; and the arrivals this process ran for
  // hosts it does not own (events the serial run counts once, on the owner).
  uint32_t HostEntity(uint32_t host) const { return hosts_[host].entity; }
  size_t num_hosts() const { return hosts_.size(); }
  uint64_t replicated_events() const { return replicated_events_; }
  // Per-host bytes and bursts and the refused count of this process's hosts;
  // Import (rank 0) replaces the counters with the sums over every rank's
  // export. Throws std::runtime_error on an export of another size.
  std::string ExportCounters() const;
  void ImportCounters(const std::vector<std::string>& per_rank);

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
  std::vector<uint8_t> owned_;  // by host; empty: every host (serial)
  uint64_t replicated_events_ = 0;
};

}  // namespace lossless::workload
