#pragma once
// PFC watchdog on switch egress queues, engine-free: its configuration and
// the stall decision of one (egress port, lossless priority) at a poll.
// Vendors document the mechanism (Juniper "PFC watchdog", NVIDIA Cumulus
// "PFC watchdog", SONiC "PFC Watchdog" design), not a standard; the default
// timings are Juniper's. The network polls on the switch's timer, tells the
// model what it saw, and when the model says so drops the queue and ignores
// PAUSE for `restore` (docs/fabric-model.md "PFC watchdog").
#include <cstdint>
#include <stdexcept>

#include "units/units.hpp"

namespace lossless::flowctl {

// Per (switch egress port, lossless priority), polled every `poll`: the
// queue is stalled at a poll if during the whole preceding interval it held
// packets, started none of them and was paused for at least `threshold` of
// the interval. After `detect_polls` consecutive stalled polls the watchdog
// acts: it drops the queue's packets and, for `restore`, drops its arrivals
// and ignores received PAUSE for that priority; then PFC is honoured again.
// Drops are counted as watchdog drops, not lossless drops.
struct PfcWatchdogConfig {
  bool enabled = false;
  units::Time poll = units::Time::Ms(100);
  int detect_polls = 2;
  units::Time restore = units::Time::Ms(200);
  double threshold = 0.99;  // paused fraction of the interval, (0, 1]
  // Each switch polls on its own timer. Staggered: switch s first polls at a
  // phase drawn from the seed in (0, poll] (real switches' timers are not
  // aligned); else every switch polls at multiples of `poll`.
  bool stagger = true;
  // PAUSE frames received during the restore period: ignored and forgotten
  // (false), or ignored but still setting the queue's pause timer (true), so
  // that a pause in force when the period ends is honoured at once. Not
  // documented by vendors; false is the reading of "PFC disabled on the queue
  // for the recovery time" (docs/deadlock.md#the-watchdog-restore-hazard).
  bool pause_memory = false;

  // Throws std::invalid_argument unless poll > 0, restore >= 0,
  // detect_polls >= 1 and threshold in (0, 1] (the scenario checks these
  // with file and line first).
  void Check() const {
    if (poll.ps() <= 0 || restore.ps() < 0 || detect_polls < 1 || !(threshold > 0) ||
        threshold > 1) {
      throw std::invalid_argument(
          "PFC watchdog: poll > 0, restore >= 0, detect_polls >= 1 and "
          "threshold in (0, 1] expected");
    }
  }
  // First poll of a switch: `draw` is a value from the seed for the switch.
  int64_t FirstPollPs(uint64_t draw) const {
    return stagger ? 1 + static_cast<int64_t>(draw % static_cast<uint64_t>(poll.ps())) : poll.ps();
  }
};

// What the watchdog remembers of one queue between polls.
struct WatchdogQueue {
  int64_t paused_acc = 0;   // paused time counted up to the pause end in force
  int64_t paused_mark = 0;  // paused time up to the last poll
  int32_t stalled = -1;     // consecutive stalled polls; -1 = no baseline yet

  // A poll: `same_head` = the queue holds the very packet it held at its
  // head at the last poll (it held packets all the interval and sent none:
  // only sending removes a head); `paused` = its paused time up to now.
  // Returns true when the watchdog acts now.
  bool Poll(const PfcWatchdogConfig& cfg, bool same_head, int64_t paused) {
    const double need = cfg.threshold * static_cast<double>(cfg.poll.ps());
    const bool stall =
        stalled >= 0 && same_head && static_cast<double>(paused - paused_mark) >= need;
    stalled = stall ? stalled + 1 : 0;
    paused_mark = paused;
    return stalled >= cfg.detect_polls;
  }
};

}  // namespace lossless::flowctl
