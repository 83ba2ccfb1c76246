// PFC decisions and pause arithmetic alone (flowctl/pfc.hpp), no engine:
// IEEE 802.1Qbb thresholds (XOFF, XON hysteresis, headroom) and the
// 512-bit-time quantum of IEEE 802.3 Annex 31B.
#include "flowctl/pfc.hpp"

#include <gtest/gtest.h>

namespace lossless::flowctl {
namespace {

constexpr int64_t kFrame = 4'200;

PfcConfig Config(int64_t xoff, int64_t headroom, int64_t xon = -1, bool global = false) {
  PfcConfig c;
  c.enabled = true;
  c.priorities = 1u << 3 | 1u << 4;
  c.xoff = units::Bytes(xoff);
  c.headroom = units::Bytes(headroom);
  if (xon >= 0) c.xon = units::Bytes(xon);
  c.global = global;
  return c;
}

TEST(PfcThresholds, XoffAboveTheThresholdXonOneFrameBelowByDefault) {
  const PfcThresholds t(Config(100'000, 50'000), kFrame);
  EXPECT_EQ(t.xon_bytes(), 100'000 - kFrame);
  PfcIngress in;
  PfcThresholds::Add(in, 3, 100'000);
  EXPECT_FALSE(t.AboveXoff(in, 3));  // at the threshold: not yet
  PfcThresholds::Add(in, 3, 1);
  EXPECT_TRUE(t.AboveXoff(in, 3));
  EXPECT_FALSE(t.AboveXoff(in, 4));  // per priority
  PfcThresholds::Remove(in, 3, kFrame);
  EXPECT_FALSE(t.AtOrBelowXon(in, 3));  // one byte above XON: hysteresis holds
  PfcThresholds::Remove(in, 3, 1);
  EXPECT_TRUE(t.AtOrBelowXon(in, 3));
  EXPECT_EQ(in.total, 100'000 - kFrame);
}

TEST(PfcThresholds, AnExplicitXonIsKept) {
  const PfcThresholds t(Config(100'000, 50'000, 20'000), kFrame);
  EXPECT_EQ(t.xon_bytes(), 20'000);
}

TEST(PfcThresholds, HeadroomAdmitsUpToXoffPlusHeadroom) {
  const PfcThresholds t(Config(100'000, 50'000), kFrame);
  PfcIngress in;
  PfcThresholds::Add(in, 3, 148'000);
  EXPECT_FALSE(t.Overruns(in, 3, 2'000));  // exactly xoff + headroom
  EXPECT_TRUE(t.Overruns(in, 3, 2'001));
  EXPECT_FALSE(t.Overruns(in, 4, 2'001));  // another priority's own count
}

TEST(PfcThresholds, GlobalPauseDecidesOnThePortTotal) {
  const PfcThresholds t(Config(100'000, 50'000, -1, /*global=*/true), kFrame);
  EXPECT_EQ(t.classes(), 0xFF);
  EXPECT_EQ(t.FrameClasses(2), 0xFF);
  PfcIngress in;
  PfcThresholds::Add(in, 0, 60'000);
  PfcThresholds::Add(in, 5, 40'001);
  EXPECT_TRUE(t.AboveXoff(in, 0));
  EXPECT_TRUE(t.AboveXoff(in, 7));  // a class holding nothing: the port is above
  const PfcThresholds per(Config(100'000, 50'000), kFrame);
  EXPECT_EQ(per.classes(), 1u << 3 | 1u << 4);
  EXPECT_EQ(per.FrameClasses(3), 1u << 3);
  EXPECT_FALSE(per.AboveXoff(in, 0));
}

TEST(PfcPauseTime, AQuantumIs512BitTimes) {
  // 0xFFFF quanta: 65,535 x 512 bits = 33,553,920 bits.
  EXPECT_EQ(PauseDurationPs(0xFFFF, 400'000'000'000), 83'884'800);
  EXPECT_EQ(PauseDurationPs(0xFFFF, 100'000'000'000), 335'539'200);
  EXPECT_EQ(PauseDurationPs(1, 100'000'000'000), 5'120);
  EXPECT_EQ(PauseDurationPs(0, 100'000'000'000), 0);
  EXPECT_EQ(RefreshIntervalPs(0xFFFF, 400'000'000'000), 41'942'400);
  EXPECT_EQ(RefreshIntervalPs(0, 400'000'000'000), 1);  // never a zero-time refresh loop
}

TEST(PfcPauseTime, PausedTimeChangeCountsExtensionsAndCuts) {
  EXPECT_EQ(PausedTimeChange(0, 500, 100), 400);     // a fresh pause from now
  EXPECT_EQ(PausedTimeChange(500, 800, 100), 300);   // extended
  EXPECT_EQ(PausedTimeChange(500, 100, 100), -400);  // XON cuts the rest off
  EXPECT_EQ(PausedTimeChange(50, 80, 100), 0);       // both in the past
}

}  // namespace
}  // namespace lossless::flowctl
