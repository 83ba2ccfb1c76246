#pragma once
// Runs a scenario: builds the topology and network, adds its flows, runs the
// engine, and gathers the results. Deterministic: the same scenario and seed
// give the same RunResult except the wall-clock fields in `timing`.
#include <cstdint>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace lossless::scenario {

struct Percentiles {
  units::Time min, median, p99, max, mean;
};

struct LinkUse {
  std::string name;
  double utilization = 0;  // busy time / simulated time
};

// Counters of one link direction (sending port), listed when any is non-zero
// among PAUSE frames, paused time, ECN marks and drops.
struct PortCounters {
  std::string name;
  uint64_t pause_tx = 0;
  uint64_t pause_rx = 0;
  double paused_fraction = 0;
  uint64_t ecn_marks = 0;
  uint64_t drops = 0;
  uint64_t lossless_drops = 0;
  uint64_t cnps = 0;
  uint64_t watchdog_actions = 0;  // PFC watchdog (switch ports)
  uint64_t watchdog_drops = 0;
  units::Time watchdog_first = units::Time::Max();  // Max() = never acted
  uint64_t rx_stall_drops = 0;                      // stalled NIC (host ports)
  uint64_t pause_storm_warnings = 0;                // NIC stall prevention events
  uint64_t pause_storm_errors = 0;
};

// Online deadlock detection (deadlock.detect).
struct DeadlockReport {
  bool enabled = false;
  uint64_t count = 0;              // deadlocks confirmed (re-formed ones count again)
  units::Time formed, detected;    // of the first
  std::vector<std::string> cycle;  // its buffers, "switch:port:priority", in wait order
};

struct RunTiming {
  double build_s = 0;
  double run_s = 0;
  double packet_hops_per_s = 0;
  double peak_rss_mb = 0;
};

struct RunResult {
  std::string name;
  std::string preset;
  uint64_t seed = 0;
  std::string topology;
  uint32_t hosts = 0;
  uint32_t switches = 0;
  uint32_t links = 0;
  std::string routing;
  std::string stop_reason;  // "completed", "time limit", "flows incomplete", "deadlock"
  units::Time sim_time;     // time of the last event
  uint64_t flows = 0;
  uint64_t flows_done = 0;
  Percentiles fct;  // over completed flows
  units::Time max_packet_latency;
  double mean_link_utilization = 0;  // over link directions that carried traffic
  double max_link_utilization = 0;
  std::vector<LinkUse> busiest;  // up to 5
  uint64_t drops = 0;
  uint64_t lossless_drops = 0;
  uint64_t ecn_marks = 0;
  uint64_t pause_frames = 0;          // PFC frames sent (XOFF, refresh, XON)
  double max_paused_fraction = 0;     // most-paused port: paused time / simulated time
  std::string most_paused;            // its name
  std::vector<std::string> warnings;  // from the scenario
  std::vector<PortCounters> ports;    // link directions with PFC, ECN or drop activity
  uint64_t watchdog_actions = 0;      // over all switch ports
  uint64_t watchdog_drops = 0;
  units::Time watchdog_first = units::Time::Max();
  uint64_t pause_storm_errors = 0;  // NICs that stopped sending PAUSE
  uint64_t rx_stall_drops = 0;
  DeadlockReport deadlock;
  uint64_t packets = 0;
  uint64_t packet_hops = 0;
  uint64_t events = 0;
  uint64_t peak_packets_alive = 0;
  uint64_t bytes_per_packet = 0;  // memory per packet in flight
  RunTiming timing;
};

RunResult RunScenario(const Scenario& s);

// Peak resident set size of this process, in MB (from getrusage).
double PeakRssMb();

}  // namespace lossless::scenario
