#pragma once
// The packet-level cases `lossless compare` runs on each profile
// (docs/compare.md#cases), each on its own simulator and network built from a
// profile (or scenario) sized by the caller. Engine-level drivers: they post
// RDMA messages and flows on fabric::Network directly and read its counters.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "perf/result.hpp"
#include "scenario/scenario.hpp"
#include "units/units.hpp"

namespace lossless::compare {

// ib_write_lat-style: `samples` ping-pongs of `bytes`-byte RDMA writes on two
// RC queue pairs between NIC 0 of the first node and NIC 0 of the last node
// of `s`'s topology, each write posted when the previous one has arrived.
// A sample is half a round trip (what ib_write_lat reports). A shared
// profile's tenants (tenants.*) send on the same fabric meanwhile.
struct LatencyResult {
  std::string path;  // "host0 -> host24 (3 switches)"
  int64_t bytes = 0;
  std::vector<double> samples_us;  // in run order
};
LatencyResult RunLatency(const scenario::Scenario& s, int64_t samples, int64_t bytes = 8);

// Incast stress: `senders` hosts on other edge switches than the target each
// send `bytes` to host 0 as RC messages, all starting together; a victim
// host, on a sender's edge switch but not itself a sender, sends a bulk RC
// flow to a host that is neither the target nor on its edge switch, and a
// probe of 64 B every `probe_every` to the same host. The victim shares
// switches and uplinks with the incast but not its destination: what it
// loses is congestion spreading (PFC pauses, or IB credits withheld). A
// shared profile's tenants send meanwhile; the counters include them.
struct IncastResult {
  int senders = 0;
  int64_t bytes_each = 0;
  std::string target, victim;  // "host0", "host9 -> host18"
  double duration_us = 0;      // until the last incast byte arrived
  double incast_gbps = 0;      // goodput into the target over the duration
  double victim_gbps = 0;      // bulk victim: bytes / completion time
  int64_t probes = 0;
  double probe_p50_us = 0, probe_p99_us = 0, probe_max_us = 0;
  // Fabric counters over the run (all ports).
  int64_t pause_frames = 0;
  double max_paused_fraction = 0;   // most-paused port: paused time / duration
  std::string most_paused;
  double max_credit_starved_fraction = 0;
  std::string most_credit_starved;
  int64_t ecn_marks = 0, cnps = 0, drops = 0, retransmissions = 0;
  // RC recovery over the run, summed over every queue pair (tenants' too):
  // NAKs received (sequence errors, or gaps that outlived the reorder window
  // with out-of-order placement) and local ACK timeouts. Without a drop or a
  // lost frame every one is spurious.
  int64_t naks = 0, ack_timeouts = 0;
  std::string failure;  // a queue pair that ran out of retries (the run stopped)
  // Timeline of the target's downlink (edge switch -> target): queue bytes per
  // sample, and the intervals the most-paused (RoCE) or most credit-starved
  // (InfiniBand) port was held, sample-resolved.
  std::string timeline_port, held_port;
  std::string held_kind;  // "paused" | "credit-starved" | ""
  double sample_us = 0;
  std::vector<double> t_us, queue_bytes;
  std::vector<std::pair<double, double>> held;  // [start, end) in us
};
IncastResult RunIncast(const scenario::Scenario& s, int senders, int64_t bytes,
                       units::Time probe_every);

// One all-reduce size repeated: iteration times (both nccl-tests halves,
// measured iterations only) and the run's link counters.
struct CollectiveRun {
  std::vector<double> iterations_us;
  perf::PerfResult perf;
  std::string failure;  // a QP that ran out of retries, a stuck collective
  bool interrupted = false;  // keep_going said stop: the run is incomplete
};
// `keep_going` (when set) is asked between slices of events; false ends the
// run early, marked interrupted.
CollectiveRun RunRepeated(const scenario::Scenario& s, const std::string& name, int64_t nodes,
                          int64_t gpus_per_node, int64_t bytes, int64_t iterations,
                          const std::function<bool()>& keep_going = {});

// Nearest-rank percentile (p in 0..100) of `v` (unsorted); 0 when empty.
double Percentile(std::vector<double> v, double p);
double Mean(const std::vector<double>& v);
// Coefficient of variation: standard deviation / mean (0 for fewer than 2 values).
double Cv(const std::vector<double>& v);

}  // namespace lossless::compare
