#pragma once
// Online PFC deadlock detection for a running fabric::Network: the network
// reports its node-local PFC facts (fabric::PfcWaitObserver), a WaitJoin
// turns them into wait dependencies between lossless ingress buffers as they
// start and end; this keeps them in a WaitForGraph, looks
// for a cycle when new waits appear (at most one search per simulated instant,
// never per packet), and confirms a deadlock when a cycle has stood unbroken
// for `persist` of simulated time. Vertex and edge semantics:
// wait_for_graph.hpp and docs/fabric-model.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deadlock/wait_for_graph.hpp"
#include "deadlock/wait_join.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"

namespace lossless::deadlock {

struct DeadlockVerdict {
  units::Time formed;               // when the cycle's last wait edge was set
  units::Time detected;             // formed + persist (the confirmation)
  std::vector<WaitHop> hops;        // buffers in wait order
  std::vector<std::string> labels;  // "switch:port:priority", BufferLabel
};

class DeadlockDetector final : public fabric::PfcWaitObserver,
                               public WaitSink,
                               public sim::EventHandler {
 public:
  // Installs itself as `net`'s wait observer (call before traffic starts).
  // persist > 0. With stop_run the simulation stops at the first confirmed
  // deadlock; without it the run goes on (e.g. so a PFC watchdog can break
  // the cycle) and every re-formed deadlock is counted.
  DeadlockDetector(sim::Simulator& sim, fabric::Network& net, units::Time persist, bool stop_run);
  ~DeadlockDetector() override;
  DeadlockDetector(const DeadlockDetector&) = delete;
  DeadlockDetector& operator=(const DeadlockDetector&) = delete;

  // The network's facts, joined into waits (WaitJoin).
  void OnHold(uint32_t ingress, int in_class, uint32_t egress, int out_class, bool holding,
              units::Time at) override {
    join_.OnHold(ingress, in_class, egress, out_class, holding, at);
  }
  void OnXoff(uint32_t port, int tclass, bool asserted, units::Time at) override {
    join_.OnXoff(port, tclass, asserted, at);
  }
  // A wait edge starts or ends.
  void OnWait(uint32_t from, int from_prio, uint32_t to, int to_prio, bool waiting,
              units::Time at) override;
  void OnEvent(uint32_t kind, uint64_t arg) override;

  // The first confirmed deadlock, if any.
  const std::optional<DeadlockVerdict>& first() const { return first_; }
  // Deadlocks confirmed (a cycle that breaks and forms again counts again).
  uint64_t count() const { return count_; }
  // Wait edges the network reported (set events), for tests and reports.
  uint64_t waits_seen() const { return waits_seen_; }
  // Joins labels as "a -> b -> c -> a".
  static std::string CycleText(const DeadlockVerdict& v);

  // A distributed run (docs/parallel.md, "The series sampler and the deadlock
  // detector"): the detector's own events (cycle checks, confirmations) are
  // not queued in the simulator but in the detector, under the keys the
  // serial run draws, and run by RunExternalThrough. The caller feeds the
  // network's facts from every rank in the serial (time, key) order through
  // OnHold / OnXoff, calling RunExternalThrough(t - 1) before a fact at t
  // (the detector's events at t run after the network's, as its entity comes
  // after theirs). With `count_events` its events count in the simulator's
  // events and digests (Simulator::CountEvent).
  void StartExternal(bool count_events);
  // Runs its queued events at or before `t` in (time, key) order; stops
  // early after a confirmation that stops the run (external_stop()).
  void RunExternalThrough(int64_t t);
  // Time of its earliest queued event, INT64_MAX for none.
  int64_t NextExternalTime() const;
  // The time of the confirmation that stopped the run, or -1.
  int64_t external_stop() const { return external_stop_; }

 private:
  enum Kind : uint32_t { kCheck = 0, kConfirm = 1 };
  void Confirm();
  void ScheduleOwn(units::Time at, uint32_t kind);
  units::Time Now() const { return external_ ? units::Time::Ps(external_now_) : sim_.Now(); }
  struct Own {
    int64_t time;
    uint64_t key;
    uint32_t kind;
    bool operator>(const Own& o) const { return time != o.time ? time > o.time : key > o.key; }
  };
  bool external_ = false;
  bool count_events_ = false;
  int64_t external_now_ = 0;
  int64_t external_stop_ = -1;
  std::vector<Own> own_;  // a min-heap by (time, key)

  sim::Simulator& sim_;
  fabric::Network& net_;
  units::Time persist_;
  bool stop_run_;
  uint32_t entity_;
  WaitJoin join_;
  WaitForGraph graph_;
  bool check_pending_ = false;
  int64_t confirm_at_ = -1;      // pending confirmation time, -1 = none
  int64_t last_confirmed_ = -1;  // `formed` of the last confirmed cycle
  std::optional<DeadlockVerdict> first_;
  uint64_t count_ = 0;
  uint64_t waits_seen_ = 0;
};

}  // namespace lossless::deadlock
