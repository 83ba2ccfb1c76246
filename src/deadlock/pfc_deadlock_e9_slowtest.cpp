// Reference experiment E9, run 2 with the real Juniper watchdog timers
// (poll 100 ms, 2 stalled polls, restore 200 ms) over 1 s of simulated time
// (docs/deadlock.md). Slow tier.
#include <iostream>

#include <gtest/gtest.h>

#include "testing/e9_harness.hpp"

namespace lossless::deadlock {
namespace {

using e9::E9Run;
using e9::kMs;
using units::Time;

// Run 2 with the real timers and E9's 10 ms windows; checks (as amended in
// E9 after measurement) in e9::ExpectWatchdogRecovery. Why the amendments:
// with switches polling on their own phases (stagger on, the default) the
// first action can hit a queue off the cycle whose switch polls earlier
// (seed 2: first action 201.7 ms, first on the cycle 226.6 ms), so t_w is the
// first action on a cycle queue; with one poll grid for all switches every
// stalled queue, the four cycle queues among them, is flushed at the same
// poll and drops its arrivals for the 200 ms restore period, so the cycle
// links stay silent until it ends, and traffic is required to return within
// 10 ms after the last restore period ends. Both schedules: seeds 1-3 for
// the staggered one (the seed draws the phases), one seed for the grid
// (nothing else in the run is random).
void Run2Slow(bool stagger, uint64_t seed) {
  E9Run e;
  e.seed = seed;
  e.watchdog = true;
  e.wd_stagger = stagger;
  e.wd_poll = Time::Ms(100);
  e.wd_restore = Time::Ms(200);
  e.step = Time::Ms(1);
  e.horizon = Time::Sec(1);
  e.Run();
  e9::PrintRun2Summary(e, "Juniper timers", stagger, seed);
  e9::PrintWatchdogActions(e);
  e9::ExpectWatchdogRecovery(e, 10 * kMs);
}

TEST(RefE9_PfcDeadlockWatchdog, Run2_RealTimersBreakDeadlockOnSchedule) {
  for (uint64_t seed : {1, 2, 3}) Run2Slow(/*stagger=*/true, seed);
}

TEST(RefE9_PfcDeadlockWatchdog, Run2_RealTimersOnePollGrid) {
  Run2Slow(/*stagger=*/false, 1);
}

// Run 5: every flow offered at 50 Gb/s, starts jittered in [0, 10 us], seeds
// 1-20, 50 ms each. E9 asks only to report the fraction of seeds that
// deadlock (a cyclic buffer dependency is necessary, not sufficient). What is
// asserted is that the two views of a deadlock agree on every seed: the
// link-level one (a >= 1 ms interval with no priority-3 byte on the cycle
// links, after which they stay silent) and the online detector's verdict,
// which names the cycle. No PFC headroom overrun in any seed.
TEST(RefE9_PfcDeadlockWatchdog, Run5_HalfLoadReportsDeadlockFraction) {
  int deadlocked = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    E9Run e;
    e.seed = seed;
    e.horizon = Time::Ms(50);
    e.offered = units::Rate::Gbps(50);
    e.start_jitter = Time::Us(10);
    e.Run();
    const bool frozen = e.t_f >= 0;
    deadlocked += frozen;
    EXPECT_EQ(frozen, e.verdict.has_value()) << "seed " << seed;
    if (frozen) {
      EXPECT_LE(e.last_cycle_start, e.t_f) << "seed " << seed;  // silent for good
      EXPECT_EQ(e.verdict->labels.size(), 4u) << "seed " << seed;
    }
    EXPECT_EQ(e.lossless_drops, 0u) << "seed " << seed;
  }
  std::cout << "E9 run 5 (50 Gb/s per flow, 20 seeds): " << deadlocked << "/20 deadlocked\n";
  RecordProperty("deadlocked_seeds", deadlocked);
}

}  // namespace
}  // namespace lossless::deadlock
