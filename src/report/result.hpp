#pragma once
// The result of one scenario run (lossless run) as plain data: what
// run::RunScenario gathers and run_report.hpp renders. Deterministic except
// the wall-clock figures in `timing`.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabric/port_stats.hpp"
#include "report/series.hpp"
#include "units/units.hpp"

namespace lossless::report {

struct Percentiles {
  units::Time min, median, p99, max, mean;
};

struct LinkUse {
  std::string name;
  double utilization = 0;  // busy time / simulated time
};

// One link direction (sending port), listed when any of PAUSE frames, paused
// time, ECN marks, drops, CNPs, IB flow-control packets, credit-starved time
// and watchdog / NIC stall events is non-zero. The counters are the fabric's
// own (fabric::PortStats, per class in stats.classes); paused_ps, of the port
// and of each class, counts a pause still in effect up to the end of the run.
// Renderers turn times into fractions of the simulated time (FractionOfRun).
struct PortCounters {
  std::string name;
  fabric::PortStats stats;
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

// One flow of the job (traffic), for the JSON's per_flow list.
struct FlowResult {
  uint32_t src = 0, dst = 0;  // host ranks
  int64_t bytes = 0;
  units::Time start;
  bool done = false;
  units::Time fct;         // when done
  int64_t bytes_left = 0;  // when not done
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
  bool interrupted = false;  // Ctrl-C ended the run early: a partial result
  std::string
      stop_reason;       // "completed", "time limit", "flows incomplete", "deadlock", "interrupted"
  units::Time sim_time;  // time of the last event
  uint64_t flows = 0;
  uint64_t flows_done = 0;
  // Flows not finished at the end of the run and the bytes they had not yet
  // delivered (reported, never an FCT of 0: docs/errors.md).
  uint64_t flows_unfinished = 0;
  int64_t bytes_left = 0;
  Percentiles fct;  // over completed flows; meaningless when flows_done == 0
  // Every flow, in flow order, when there are at most outputs.per_flow_limit
  // of them (per_flow_listed); empty otherwise.
  bool per_flow_listed = false;
  std::vector<FlowResult> per_flow;
  // The scenario's every field with its unit (Scenario::resolved) but the
  // output paths (outputs.json, outputs.series_csv).
  std::vector<std::pair<std::string, std::string>> parameters;
  units::Time max_packet_latency;
  double mean_link_utilization = 0;  // over link directions that carried traffic
  double max_link_utilization = 0;
  std::vector<LinkUse> busiest;  // up to 5
  uint64_t drops = 0;
  uint64_t lossless_drops = 0;
  // Of lossless_drops: packets a switch queue sent after its PFC watchdog
  // restore period ended and before it honoured a PAUSE again
  // (docs/deadlock.md#the-watchdog-restore-hazard).
  uint64_t lossless_drops_after_restore = 0;
  uint64_t ecn_marks = 0;
  std::string cc;                  // fabric.cc
  uint64_t cnps = 0;               // DCQCN CNPs or IB CC BECNs sent
  uint64_t pause_frames = 0;       // PFC frames sent (XOFF, refresh, XON)
  double max_paused_fraction = 0;  // most-paused port: paused time / simulated time
  std::string most_paused;         // its name
  bool ib_credits = false;         // InfiniBand credit flow control was on
  // PFC on: the headroom above XOFF of each ingress queue, bytes, and where it
  // came from (Scenario::pfc_headroom_basis); 0 and empty with PFC off.
  int64_t pfc_headroom = 0;
  std::string pfc_headroom_basis;
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
  // Transport: "raw" or "rc"; RC retransmitted data packets, NAKs received,
  // ACK timeouts; frames lost on links (bit errors, injected loss); the QP
  // that ran out of retries, if one did ("" otherwise).
  std::string transport = "raw";
  uint64_t retx_packets = 0;
  uint64_t naks = 0;
  uint64_t ack_timeouts = 0;
  uint64_t link_losses = 0;
  std::string qp_failure;
  std::vector<PauseInjectReport> pause_injections;
  std::vector<CnpInjectReport> cnp_injections;
  uint64_t packets = 0;
  uint64_t packet_hops = 0;
  uint64_t events = 0;
  uint64_t peak_packets_alive = 0;
  uint64_t bytes_per_packet = 0;  // memory per packet in flight
  RunTiming timing;
};

// `ps` as a fraction of the run's simulated time (at least 1 ps).
inline double FractionOfRun(int64_t ps, const RunResult& r) {
  return static_cast<double>(ps) / static_cast<double>(std::max<int64_t>(1, r.sim_time.ps()));
}

// The classes of `s` with any non-zero counter, ascending.
std::vector<int> ActiveClasses(const fabric::PortStats& s);

}  // namespace lossless::report
