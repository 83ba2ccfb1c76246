// Reference experiment E9, run 2 with the real Juniper watchdog timers
// (poll 100 ms, 2 stalled polls, restore 200 ms) over 1 s of simulated time
// (shared/reference/experiments.md). Slow tier.
#include <iostream>

#include <gtest/gtest.h>

#include "flowctl/e9_test_harness.hpp"

namespace lossless::flowctl {
namespace {

using e9::E9Run;
using e9::kMs;
using units::Time;

TEST(RefE9_PfcDeadlockWatchdog, Run2_RealTimersBreakDeadlockOnSchedule) {
  for (uint64_t seed : {1, 2, 3}) {
    E9Run e;
    e.seed = seed;
    e.watchdog = true;
    e.wd_poll = Time::Ms(100);
    e.wd_restore = Time::Ms(200);
    e.step = Time::Ms(1);
    e.horizon = Time::Sec(1);
    e.Run();
    std::cout << "E9 run 2 (Juniper timers), seed " << seed
              << ": t_f = " << static_cast<double>(e.t_f) / kMs
              << " ms, t_w = " << static_cast<double>(e.t_w) / kMs
              << " ms, first action on the cycle = " << static_cast<double>(e.t_w_cycle) / kMs
              << " ms, watchdog actions = " << e.wd_actions
              << ", deadlocks (re)formed = " << e.deadlocks << "\n";
    e9::ExpectWatchdogRecovery(e, /*recovery_from_first_action=*/false);
  }
}

}  // namespace
}  // namespace lossless::flowctl
