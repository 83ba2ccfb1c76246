#pragma once
// Runs a scenario: builds the topology and network, adds its flows, runs the
// engine, and gathers the results. Deterministic: the same scenario and seed
// give the same RunResult except the wall-clock fields in `timing`.
#include <cstdint>
#include <functional>
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

// Counters of one traffic class (PFC priority; IB VL) of a port
// (fabric::ClassStats). A PAUSE frame counts once per class it enables.
struct ClassCounters {
  int tclass = 0;
  uint64_t pause_tx = 0;
  uint64_t pause_rx = 0;
  double paused_fraction = 0;  // paused time / simulated time
  double credit_starved_fraction = 0;
  uint64_t ecn_marks = 0;
  uint64_t cnps = 0;
  uint64_t drops = 0;           // all drops of the class, including the two below
  uint64_t lossless_drops = 0;  // flow-controlled class: headroom or buffer exhausted
  uint64_t watchdog_drops = 0;  // by the PFC watchdog
  uint64_t fcp_tx = 0;          // InfiniBand flow-control packets of this VL sent / received
  uint64_t fcp_rx = 0;
};

// Counters of one link direction (sending port), listed when any is non-zero
// among PAUSE frames, paused time, ECN marks, drops, CNPs, IB flow-control
// packets, credit-starved time and watchdog / NIC stall events.
struct PortCounters {
  std::string name;
  uint64_t pause_tx = 0;
  uint64_t pause_rx = 0;
  double paused_fraction = 0;
  uint64_t ecn_marks = 0;
  uint64_t drops = 0;
  uint64_t lossless_drops = 0;
  uint64_t cnps = 0;
  uint64_t fcp_tx = 0;  // InfiniBand flow-control packets sent / received
  uint64_t fcp_rx = 0;
  double credit_starved_fraction = 0;  // a VL waited for credits
  uint64_t watchdog_actions = 0;       // PFC watchdog (switch ports)
  uint64_t watchdog_drops = 0;
  units::Time watchdog_first = units::Time::Max();  // Max() = never acted
  uint64_t rx_stall_drops = 0;                      // stalled NIC (host ports)
  uint64_t pause_storm_warnings = 0;                // NIC stall prevention events
  uint64_t pause_storm_errors = 0;
  std::vector<ClassCounters> classes{};  // classes with any non-zero counter, ascending
};

// One sampled time series (docs/series.md). Sample k (k = 1, 2, ...) is taken
// at t_k = k x interval, after every event at or before t_k; interval-based
// kinds cover (t_{k-1}, t_k].
struct Series {
  // queue_bytes, utilization, pause_frames, cnps, goodput_gbps, dcqcn_rate_gbps,
  // dcqcn_target_gbps, dcqcn_alpha
  std::string kind;
  std::string subject;    // link direction ("S->R") or flow ("flow 0 H1->R")
  std::string unit;       // "B", "fraction", "frames", "CNPs", "Gb/s"
  bool integral = false;  // values are whole numbers (written without a fraction)
  std::vector<double> values;
  double min = 0, mean = 0, max = 0;
};

struct SeriesResult {
  units::Time interval;  // 0 = sampling was off
  int64_t samples = 0;   // values per series
  std::vector<Series> list;
  uint64_t quiet_ports = 0;  // ports left out by outputs.series.ports: busy
};

// Online deadlock detection (deadlock.detect).
struct DeadlockReport {
  bool enabled = false;
  uint64_t count = 0;              // deadlocks confirmed (re-formed ones count again)
  units::Time formed, detected;    // of the first
  std::vector<std::string> cycle;  // its buffers, "switch:port:priority", in wait order
};

// faults.pause_inject: one injected PFC frame and what its receiver shows at
// the end of the run.
struct PauseInjectReport {
  std::string port;  // sending link direction ("leaf0->host0")
  units::Time at;
  uint8_t class_enable = 0;
  uint16_t quanta = 0;
  units::Time pause;     // quanta x 512 bit times at the link's rate
  std::string receiver;  // the peer's link direction ("host0->leaf0")
  // Paused time of the receiver over the whole run, per enabled class that is
  // lossless (fabric.pfc.priority): (class, ps), every PAUSE it received
  // included. A pause counts from when it takes effect (fabric.pfc.response
  // after the end of the frame's reception) to its expiry (end of reception
  // + quanta x 512 bit times) or an earlier XON.
  std::vector<std::pair<int, int64_t>> receiver_paused_ps;
};

// faults.cnp_inject: one entry's CNPs and the flow's reaction point at the end.
struct CnpInjectReport {
  uint32_t flow = 0;
  std::string subject;  // "flow 0 host0->host1"
  uint64_t cnps = 0;
  units::Time first, last;
  double rc_gbps = 0, rt_gbps = 0, alpha = 0;
  int64_t cuts = 0, increase_events = 0;
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
  std::string cc;                  // fabric.cc
  uint64_t cnps = 0;               // DCQCN CNPs or IB CC BECNs sent
  uint64_t pause_frames = 0;       // PFC frames sent (XOFF, refresh, XON)
  double max_paused_fraction = 0;  // most-paused port: paused time / simulated time
  std::string most_paused;         // its name
  bool ib_credits = false;         // InfiniBand credit flow control was on
  uint64_t fcp_frames = 0;         // IB flow-control packets sent
  double max_credit_starved_fraction = 0;
  std::string most_credit_starved;
  std::vector<std::string> warnings;  // from the scenario
  std::vector<PortCounters> ports;    // link directions with PFC, ECN or drop activity
  SeriesResult series;                // outputs.series.*
  uint64_t watchdog_actions = 0;      // over all switch ports
  uint64_t watchdog_drops = 0;
  units::Time watchdog_first = units::Time::Max();
  uint64_t pause_storm_errors = 0;  // NICs that stopped sending PAUSE
  uint64_t rx_stall_drops = 0;
  DeadlockReport deadlock;
  std::vector<PauseInjectReport> pause_injections;
  std::vector<CnpInjectReport> cnp_injections;
  uint64_t packets = 0;
  uint64_t packet_hops = 0;
  uint64_t events = 0;
  uint64_t peak_packets_alive = 0;
  uint64_t bytes_per_packet = 0;  // memory per packet in flight
  RunTiming timing;
};

// Test hooks: `before_run` sees the network once flows and faults are in
// place, before the engine runs (e.g. to install a transmit trace).
struct RunHooks {
  std::function<void(fabric::Network&)> before_run;
};

// Throws InputError (naming outputs.series.*) when the series selection names
// an unknown port, or during the run once the series would hold more than
// SeriesSpec::max_values values; naming faults.* for a host, link or flow the
// topology or traffic does not have.
RunResult RunScenario(const Scenario& s, const RunHooks& hooks = {});

// The ports (fabric::Network numbering: 2l and 2l+1 are the two directions of
// topology link l) that outputs.series.ports selects; every port for busy and
// all. Throws InputError naming outputs.series.ports for a name that matches
// no link direction of `t`.
std::vector<uint32_t> SeriesPorts(const Scenario& s, const topology::Topology& t);

// Peak resident set size of this process, in MB (from getrusage).
double PeakRssMb();

}  // namespace lossless::scenario
