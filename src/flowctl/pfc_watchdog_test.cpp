// The PFC watchdog's stall decision alone (flowctl/pfc_watchdog.hpp), no
// engine; the network-level behaviour is in fabric/pfc_watchdog_test.cpp.
#include "flowctl/pfc_watchdog.hpp"

#include <gtest/gtest.h>

namespace lossless::flowctl {
namespace {

PfcWatchdogConfig Config() {
  PfcWatchdogConfig c;
  c.enabled = true;
  c.poll = units::Time::Ms(100);
  c.detect_polls = 2;
  c.threshold = 0.99;
  return c;
}

constexpr int64_t kPoll = 100'000'000'000;  // 100 ms in ps

TEST(PfcWatchdogQueue, ActsAfterDetectPollsStalledPolls) {
  const PfcWatchdogConfig c = Config();
  WatchdogQueue q;
  EXPECT_FALSE(q.Poll(c, true, 0));  // first poll: a baseline only
  EXPECT_EQ(q.stalled, 0);
  EXPECT_FALSE(q.Poll(c, true, kPoll));  // one stalled poll
  EXPECT_EQ(q.stalled, 1);
  EXPECT_TRUE(q.Poll(c, true, 2 * kPoll));  // the second: act
}

TEST(PfcWatchdogQueue, APausedShareBelowTheThresholdIsNoStall) {
  const PfcWatchdogConfig c = Config();
  WatchdogQueue q;
  q.Poll(c, true, 0);
  EXPECT_FALSE(q.Poll(c, true, kPoll / 100 * 98));  // paused 98 % < 99 %
  EXPECT_EQ(q.stalled, 0);
  const int64_t mark = kPoll / 100 * 98;
  EXPECT_FALSE(q.Poll(c, true, mark + kPoll / 100 * 99));  // exactly 99 %: stalled
  EXPECT_EQ(q.stalled, 1);
}

TEST(PfcWatchdogQueue, AMovingHeadResetsTheCount) {
  const PfcWatchdogConfig c = Config();
  WatchdogQueue q;
  q.Poll(c, true, 0);
  q.Poll(c, true, kPoll);
  EXPECT_FALSE(q.Poll(c, false, 2 * kPoll));  // it sent something
  EXPECT_EQ(q.stalled, 0);
}

TEST(PfcWatchdogConfig, FirstPollIsStaggeredWithinOnePeriod) {
  PfcWatchdogConfig c = Config();
  for (uint64_t draw : {uint64_t{0}, uint64_t{12345}, ~uint64_t{0}}) {
    const int64_t t = c.FirstPollPs(draw);
    EXPECT_GE(t, 1);
    EXPECT_LE(t, kPoll);
  }
  c.stagger = false;
  EXPECT_EQ(c.FirstPollPs(12345), kPoll);
  EXPECT_NO_THROW(c.Check());
  c.threshold = 0;
  EXPECT_THROW(c.Check(), std::invalid_argument);
}

}  // namespace
}  // namespace lossless::flowctl
