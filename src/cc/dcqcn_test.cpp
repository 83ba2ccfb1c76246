// One test per DCQCN rule for each preset (docs/model/dcqcn.md), with exact
// expected values computed from the rules.
#include "cc/dcqcn.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace lossless::cc {
namespace {

using units::Bytes;
using units::Rate;
using units::Time;

constexpr double kG = 1e9;
constexpr double kM = 1e6;
const Time kT0 = Time::Us(7);
const Rate kLine = Rate::Gbps(400);

void ExpectRel(double actual, double expected, const char* what) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::abs(expected)) << what;
}

// ---- paper preset ----

TEST(DcqcnPaper, StartsAtLineRateWithNoTimers) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  EXPECT_EQ(rp.rate(), kLine);
  EXPECT_EQ(rp.NextDeadline(), Time::Max());
  rp.OnBytesSent(Bytes(50'000'000), kT0);  // not counted before a CNP
  EXPECT_EQ(rp.byte_count(), 0);
  EXPECT_EQ(rp.rate(), kLine);
}

TEST(DcqcnPaper, FirstCnpCutsAndArmsTimers) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  rp.OnCnp(kT0);
  EXPECT_EQ(rp.rate(), Rate::Gbps(200));
  ExpectRel(rp.target_rate_bps(), 400 * kG, "rt");
  EXPECT_EQ(rp.alpha(), 1.0);
  EXPECT_EQ(rp.NextDeadline(), kT0 + Time::Us(55));
  EXPECT_EQ(rp.last_cut(), kT0);
}

TEST(DcqcnPaper, AlphaDecaysWithoutCnp) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(55));
  ExpectRel(rp.alpha(), 255.0 / 256, "one decay");
  rp.Advance(kT0 + Time::Us(110));
  ExpectRel(rp.alpha(), std::pow(255.0 / 256, 2), "two decays");
}

TEST(DcqcnPaper, AlphaRisesOnCnpAndTimerRestarts) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  const double g = 1.0 / 256;
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(110));
  const double a2 = std::pow(1 - g, 2);
  const double rc = rp.rate_bps();
  rp.OnCnp(kT0 + Time::Us(120));
  ExpectRel(rp.alpha(), (1 - g) * a2 + g, "alpha after CNP");
  ExpectRel(rp.rate_bps(), rc * (1 - a2 / 2), "cut uses alpha before its update");
  ExpectRel(rp.target_rate_bps(), rc, "rt = rc");
  EXPECT_EQ(rp.NextDeadline(), kT0 + Time::Us(175));
  rp.Advance(kT0 + Time::Us(174));
  ExpectRel(rp.alpha(), (1 - g) * a2 + g, "no decay before K after the CNP");
}

TEST(DcqcnPaper, FastRecoveryTakesFStepsTowardsTarget) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  rp.OnCnp(kT0);
  for (int n = 1; n <= 5; ++n) {
    rp.Advance(kT0 + Time::Us(55) * n);
    ExpectRel(rp.rate_bps(), 400 * kG - 200 * kG / std::pow(2, n), "rc = rt - gap/2^n");
    ExpectRel(rp.target_rate_bps(), 400 * kG, "rt unchanged");
    EXPECT_EQ(rp.timer_count(), n);
  }
}

TEST(DcqcnPaper, AdditiveIncreaseAfterFStages) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(1));  // rt = 200, rc = 100
  const Time base = kT0 + Time::Us(1);
  rp.Advance(base + Time::Us(55) * 5);
  ExpectRel(rp.target_rate_bps(), 200 * kG, "rt after F fast-recovery events");
  const double rc5 = rp.rate_bps();
  rp.Advance(base + Time::Us(55) * 6);
  ExpectRel(rp.target_rate_bps(), 200 * kG + 40 * kM, "rt + R_AI");
  ExpectRel(rp.rate_bps(), (200 * kG + 40 * kM + rc5) / 2, "rc");
}

TEST(DcqcnPaper, HyperIncreaseWhenBothCountersExceedF) {
  DcqcnParams p = DcqcnParams::Paper();
  p.byte_counter = Bytes(1'000'000);
  DcqcnReactionPoint rp(p, kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(1));  // rt = 200, rc = 100
  double rc = 100 * kG, rt = 200 * kG;
  // Six byte-counter events at once: b = 0..4 fast recovery, b = 5 additive.
  rp.OnBytesSent(Bytes(6'000'000), kT0 + Time::Us(2));
  for (int b = 0; b < 6; ++b) {
    if (b == 5) rt += 40 * kM;
    rc = (rt + rc) / 2;
  }
  EXPECT_EQ(rp.byte_count(), 6);
  ExpectRel(rp.rate_bps(), rc, "rc after byte events");
  ExpectRel(rp.target_rate_bps(), rt, "rt after byte events");
  // Timer events with b = 6: t = 0..5 additive (min(t, b) <= F), t = 6 hyper.
  for (int t = 0; t <= 7; ++t) {
    rp.Advance(kT0 + Time::Us(1 + 55 * (t + 1)));
    rt += t >= 6 ? 400 * kM : 40 * kM;
    rc = (rt + rc) / 2;
    ExpectRel(rp.target_rate_bps(), rt, "rt");
    ExpectRel(rp.rate_bps(), rc, "rc");
  }
}

TEST(DcqcnPaper, ScaledHyperIncreaseGrowsPerRound) {
  DcqcnParams p = DcqcnParams::Paper();
  p.byte_counter = Bytes(1'000'000);
  p.hyper_increase = HyperIncrease::kScaled;
  DcqcnReactionPoint rp(p, kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(1));
  rp.OnBytesSent(Bytes(6'000'000), kT0 + Time::Us(2));
  rp.Advance(kT0 + Time::Us(1 + 55 * 6));  // t = 0..5 done
  double rt = rp.target_rate_bps();
  rp.Advance(kT0 + Time::Us(1 + 55 * 7));  // first hyper round (t = 6, b = 6)
  ExpectRel(rp.target_rate_bps(), rt + 400 * kM, "round 1");
  rt = rp.target_rate_bps();
  rp.Advance(kT0 + Time::Us(1 + 55 * 8));  // min(7, 6) - F = 1 still round 1
  ExpectRel(rp.target_rate_bps(), rt + 400 * kM, "min(t, b) still 6");
  rt = rp.target_rate_bps();
  rp.OnBytesSent(Bytes(1'000'000), kT0 + Time::Us(442));  // b event with (8, 6): round 1
  ExpectRel(rp.target_rate_bps(), rt + 400 * kM, "byte event, round 1");
  rt = rp.target_rate_bps();
  rp.Advance(kT0 + Time::Us(1 + 55 * 9));  // (8, 7): round 2
  ExpectRel(rp.target_rate_bps(), rt + 800 * kM, "round 2");
}

TEST(DcqcnPaper, MinRateFloor) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  for (int i = 0; i < 30; ++i) rp.OnCnp(kT0 + Time::Ns(100) * i);
  EXPECT_EQ(rp.rate(), Rate::Bps(100'000'000));
  ExpectRel(rp.target_rate_bps(), 100 * kM, "rt = rc at the floor");
}

TEST(DcqcnPaper, ByteCounterCountsStagesAndKeepsRemainder) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);  // BC = 10 MB
  rp.OnCnp(kT0);
  rp.OnBytesSent(Bytes(9'999'999), kT0);
  EXPECT_EQ(rp.byte_count(), 0);
  ExpectRel(rp.rate_bps(), 200 * kG, "no event yet");
  rp.OnBytesSent(Bytes(1), kT0 + Time::Ns(1));
  EXPECT_EQ(rp.byte_count(), 1);
  ExpectRel(rp.rate_bps(), 300 * kG, "fast recovery on byte event");
  rp.OnBytesSent(Bytes(25'000'000), kT0 + Time::Ns(2));
  EXPECT_EQ(rp.byte_count(), 3);
  rp.OnBytesSent(Bytes(4'999'999), kT0 + Time::Ns(3));
  EXPECT_EQ(rp.byte_count(), 3);
  rp.OnBytesSent(Bytes(1), kT0 + Time::Ns(4));
  EXPECT_EQ(rp.byte_count(), 4);
  EXPECT_EQ(rp.timer_count(), 0);
  rp.OnCnp(kT0 + Time::Us(1));
  EXPECT_EQ(rp.byte_count(), 0);  // a cut resets the counters and the remainder
  rp.OnBytesSent(Bytes(9'999'999), kT0 + Time::Us(2));
  EXPECT_EQ(rp.byte_count(), 0);
}

TEST(DcqcnPaper, TimerBeforeEventAtSameInstant) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(55));  // the increase to 300 fires first, then the cut
  ExpectRel(rp.target_rate_bps(), 300 * kG, "rt = rc after the increase");
  ExpectRel(rp.rate_bps(), 300 * kG * (1 - (255.0 / 256) / 2), "cut of 300 with decayed alpha");
}

TEST(DcqcnPaper, IncreaseTimerStopsBackAtLineRate) {
  DcqcnReactionPoint rp(DcqcnParams::Paper(), kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Ms(10));
  EXPECT_EQ(rp.rate(), kLine);
  const int64_t events = rp.increase_events();
  EXPECT_LT(events, 100);
  rp.Advance(kT0 + Time::Ms(20));
  EXPECT_EQ(rp.increase_events(), events);
  EXPECT_EQ(rp.NextDeadline() - kT0, Time::Us(55) * (Time::Ms(20).ps() / Time::Us(55).ps() + 1))
      << "only the alpha timer remains";
}

TEST(DcqcnPaper, MaxRateCapsRecovery) {
  DcqcnParams p = DcqcnParams::Paper();
  p.max_rate = Rate::Gbps(100);
  DcqcnReactionPoint rp(p, kLine);
  EXPECT_EQ(rp.rate(), Rate::Gbps(100));
  rp.OnCnp(kT0);
  EXPECT_EQ(rp.rate(), Rate::Gbps(50));
  rp.Advance(kT0 + Time::Ms(10));
  EXPECT_EQ(rp.rate(), Rate::Gbps(100));
}

TEST(DcqcnPaper, MinDecFactorBoundsTheCut) {
  DcqcnParams p = DcqcnParams::Paper();
  p.min_dec_factor = 0.8;
  DcqcnReactionPoint rp(p, kLine);
  rp.OnCnp(kT0);
  EXPECT_EQ(rp.rate(), Rate::Gbps(320));
}

TEST(DcqcnPaper, InvalidParamsThrow) {
  DcqcnParams p = DcqcnParams::Paper();
  p.min_rate = Rate::Gbps(500);
  EXPECT_THROW(DcqcnReactionPoint(p, kLine), InputError);
}

// ---- firmware preset ----

TEST(DcqcnFirmware, FirstCnpCutsAtNextMonitorTick) {
  DcqcnReactionPoint rp(DcqcnParams::ConnectXFirmware(), kLine);
  rp.OnCnp(kT0);
  EXPECT_EQ(rp.rate(), kLine);
  EXPECT_EQ(rp.NextDeadline(), kT0 + Time::Us(4));
  rp.Advance(kT0 + Time::Us(4));
  EXPECT_EQ(rp.rate(), Rate::Gbps(200));
  ExpectRel(rp.target_rate_bps(), 400 * kG, "no clamp at stage 0");
  EXPECT_EQ(rp.NextDeadline(), kT0 + Time::Us(55));  // alpha tick; no cut pending
}

TEST(DcqcnFirmware, AlphaTickWithoutCnpDecays) {
  const double g = 5.0 / 1024;
  DcqcnReactionPoint rp(DcqcnParams::ConnectXFirmware(), kLine);
  rp.OnCnp(kT0);  // the first CNP does not count for alpha
  rp.Advance(kT0 + Time::Us(55));
  ExpectRel(rp.alpha(), 1 - g, "first tick");
  rp.Advance(kT0 + Time::Us(110));
  ExpectRel(rp.alpha(), (1 - g) * (1 - g), "second tick");
}

TEST(DcqcnFirmware, AlphaTickWithCnpRises) {
  const double g = 5.0 / 1024;
  DcqcnReactionPoint rp(DcqcnParams::ConnectXFirmware(), kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(110));
  rp.OnCnp(kT0 + Time::Us(120));
  EXPECT_EQ(rp.alpha(), (1 - g) * (1 - g));  // bit only, no update yet
  rp.Advance(kT0 + Time::Us(165));
  ExpectRel(rp.alpha(), (1 - g) * (1 - g) * (1 - g) + g, "tick with the CNP bit");
  // The cut at t0 + 124 us used the alpha of that moment.
  EXPECT_EQ(rp.last_cut(), kT0 + Time::Us(124));
  ExpectRel(rp.rate_bps(), 200 * kG * (1 - (1 - g) * (1 - g) / 2), "second cut");
}

TEST(DcqcnFirmware, FastRecoveryThenAdditiveThenHyperWithClampAfterIncrease) {
  const double g = 5.0 / 1024;
  DcqcnReactionPoint rp(DcqcnParams::ConnectXFirmware(), kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(304));  // cut at 4, fast recovery at 304
  EXPECT_EQ(rp.rate(), Rate::Gbps(300));
  EXPECT_EQ(rp.stage(), 1);
  rp.OnCnp(kT0 + Time::Us(310));
  rp.Advance(kT0 + Time::Us(312));
  const double a = std::pow(1 - g, 5);  // ticks at 55..275 without the bit
  ExpectRel(rp.target_rate_bps(), 300 * kG, "clamped: an increase happened since the last cut");
  double rc = 300 * kG * (1 - a / 2), rt = 300 * kG;
  ExpectRel(rp.rate_bps(), rc, "cut");
  rp.Advance(kT0 + Time::Us(612));  // stage 0 < F = 1: fast recovery
  rc = (rc + rt) / 2;
  ExpectRel(rp.rate_bps(), rc, "fast recovery");
  ExpectRel(rp.target_rate_bps(), rt, "rt");
  rp.Advance(kT0 + Time::Us(912));  // stage 1 == F: one additive step
  rt += 5 * kM;
  rc = (rc + rt) / 2;
  ExpectRel(rp.target_rate_bps(), rt, "rt + AI");
  ExpectRel(rp.rate_bps(), rc, "rc");
  for (int k = 0; k < 3; ++k) {  // stage > F: hyper
    rp.Advance(kT0 + Time::Us(1212 + 300 * k));
    rt += 50 * kM;
    rc = (rc + rt) / 2;
    ExpectRel(rp.target_rate_bps(), rt, "rt + HAI");
    ExpectRel(rp.rate_bps(), rc, "rc");
  }
}

TEST(DcqcnFirmware, ClampTargetRateAlways) {
  DcqcnParams p = DcqcnParams::ConnectXFirmware();
  p.clamp_target_rate = true;
  DcqcnReactionPoint rp(p, kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(4));
  ExpectRel(rp.target_rate_bps(), 400 * kG, "rt = rc before the first cut");
  rp.OnCnp(kT0 + Time::Us(5));
  rp.Advance(kT0 + Time::Us(8));
  ExpectRel(rp.target_rate_bps(), 200 * kG, "clamped at stage 0");
  ExpectRel(rp.rate_bps(), 100 * kG, "rc");
}

TEST(DcqcnFirmware, RateOnFirstCnp) {
  DcqcnParams p = DcqcnParams::ConnectXFirmware();
  p.rate_on_first_cnp = Rate::Gbps(50);
  DcqcnReactionPoint rp(p, kLine);
  rp.OnCnp(kT0);
  EXPECT_EQ(rp.rate(), Rate::Gbps(50));
  ExpectRel(rp.target_rate_bps(), 50 * kG, "rt");
  rp.Advance(kT0 + Time::Us(4));
  EXPECT_EQ(rp.rate(), Rate::Gbps(25));
  rp.OnCnp(kT0 + Time::Us(5));
  rp.Advance(kT0 + Time::Us(8));
  EXPECT_EQ(rp.rate(), Rate::Bps(12'500'000'000));  // only the first CNP sets the rate
}

TEST(DcqcnFirmware, MinRateFloor) {
  DcqcnReactionPoint rp(DcqcnParams::ConnectXFirmware(), kLine);
  for (int i = 0; i < 30; ++i) rp.OnCnp(kT0 + Time::Us(4) * i + Time::Us(1));
  rp.Advance(kT0 + Time::Us(4 * 30 + 4));
  EXPECT_EQ(rp.cuts(), 30);
  EXPECT_EQ(rp.rate(), Rate::Bps(1'000'000));  // 400G / 2^19 < 1 Mb/s
}

TEST(DcqcnFirmware, CnpAtTickInstantWaitsForNextTick) {
  DcqcnReactionPoint rp(DcqcnParams::ConnectXFirmware(), kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(4));
  rp.OnCnp(kT0 + Time::Us(8));  // the tick at 8 us ran (nothing pending) before this CNP
  EXPECT_EQ(rp.NextDeadline(), kT0 + Time::Us(12));
  rp.Advance(kT0 + Time::Us(12));
  EXPECT_EQ(rp.cuts(), 2);
}

TEST(DcqcnFirmware, NoByteCounter) {
  DcqcnReactionPoint rp(DcqcnParams::ConnectXFirmware(), kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(4));
  rp.OnBytesSent(Bytes(1'000'000'000), kT0 + Time::Us(5));
  EXPECT_EQ(rp.increase_events(), 0);
  EXPECT_EQ(rp.rate(), Rate::Gbps(200));
}

// ---- notification point ----

TEST(DcqcnNotificationPoint, PaperWindowedOneCnpPerInterval) {
  DcqcnNotificationPoint np(DcqcnParams::Paper());  // 50 us, windowed
  std::vector<DcqcnNotificationPoint::DeferredCnp> out;
  EXPECT_TRUE(np.OnEcnMarkedPacket(1, kT0));
  EXPECT_FALSE(np.OnEcnMarkedPacket(1, kT0 + Time::Us(10)));
  EXPECT_FALSE(np.OnEcnMarkedPacket(1, kT0 + Time::Us(20)));
  EXPECT_EQ(np.NextDeadline(), kT0 + Time::Us(50));
  np.Advance(kT0 + Time::Us(50) - Time::Ps(1), out);
  EXPECT_TRUE(out.empty());
  np.Advance(kT0 + Time::Us(50), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].qp, 1u);
  EXPECT_EQ(out[0].at, kT0 + Time::Us(50));
  EXPECT_EQ(np.NextDeadline(), Time::Max());
  EXPECT_FALSE(np.OnEcnMarkedPacket(1, kT0 + Time::Us(99)));  // window from the deferred CNP
  EXPECT_EQ(np.NextDeadline(), kT0 + Time::Us(100));
  out.clear();
  np.Advance(kT0 + Time::Us(200), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].at, kT0 + Time::Us(100));
  EXPECT_TRUE(np.OnEcnMarkedPacket(1, kT0 + Time::Us(150)));  // exactly N after: at once
  EXPECT_EQ(np.cnps_sent(), 4);
}

TEST(DcqcnNotificationPoint, QuietWindowSendsNothing) {
  DcqcnNotificationPoint np(Time::Us(50), CnpMode::kWindowed);
  EXPECT_TRUE(np.OnEcnMarkedPacket(3, kT0));
  EXPECT_EQ(np.NextDeadline(), Time::Max());
  EXPECT_TRUE(np.OnEcnMarkedPacket(3, kT0 + Time::Us(60)));
}

TEST(DcqcnNotificationPoint, FirmwareSuppressDropsMarksInsideInterval) {
  DcqcnNotificationPoint np(DcqcnParams::ConnectXFirmware());  // 2 us, suppress
  EXPECT_TRUE(np.OnEcnMarkedPacket(9, kT0));
  EXPECT_FALSE(np.OnEcnMarkedPacket(9, kT0 + Time::Ns(1999)));
  EXPECT_EQ(np.NextDeadline(), Time::Max());
  EXPECT_TRUE(np.OnEcnMarkedPacket(9, kT0 + Time::Us(2)));
  EXPECT_EQ(np.cnps_sent(), 2);
}

TEST(DcqcnNotificationPoint, QpsAreIndependentAndOrderedByTimeThenQp) {
  DcqcnNotificationPoint np(Time::Us(50), CnpMode::kWindowed);
  EXPECT_TRUE(np.OnEcnMarkedPacket(7, kT0));
  EXPECT_TRUE(np.OnEcnMarkedPacket(2, kT0));
  EXPECT_TRUE(np.OnEcnMarkedPacket(5, kT0 + Time::Us(1)));
  EXPECT_FALSE(np.OnEcnMarkedPacket(7, kT0 + Time::Us(2)));
  EXPECT_FALSE(np.OnEcnMarkedPacket(5, kT0 + Time::Us(3)));
  EXPECT_FALSE(np.OnEcnMarkedPacket(2, kT0 + Time::Us(4)));
  std::vector<DcqcnNotificationPoint::DeferredCnp> out;
  np.Advance(kT0 + Time::Ms(1), out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].qp, 2u);
  EXPECT_EQ(out[1].qp, 7u);
  EXPECT_EQ(out[1].at, kT0 + Time::Us(50));
  EXPECT_EQ(out[2].qp, 5u);
  EXPECT_EQ(out[2].at, kT0 + Time::Us(51));
}

TEST(DcqcnNotificationPoint, DueCnpFiredInsideMarkCallIsHandedOutLater) {
  DcqcnNotificationPoint np(Time::Us(50), CnpMode::kWindowed);
  EXPECT_TRUE(np.OnEcnMarkedPacket(1, kT0));
  EXPECT_FALSE(np.OnEcnMarkedPacket(1, kT0 + Time::Us(1)));
  // The caller did not advance to t0 + 50 us; the mark at 60 us sees the
  // deferred CNP (sent at 50 us) as the last one.
  EXPECT_FALSE(np.OnEcnMarkedPacket(1, kT0 + Time::Us(60)));
  EXPECT_EQ(np.NextDeadline(), kT0 + Time::Us(50));
  std::vector<DcqcnNotificationPoint::DeferredCnp> out;
  np.Advance(kT0 + Time::Us(60), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].at, kT0 + Time::Us(50));
  EXPECT_EQ(np.NextDeadline(), kT0 + Time::Us(100));
}

TEST(DcqcnNotificationPoint, ZeroIntervalCnpPerMark) {
  DcqcnNotificationPoint np(Time::Zero(), CnpMode::kWindowed);
  EXPECT_TRUE(np.OnEcnMarkedPacket(1, kT0));
  EXPECT_TRUE(np.OnEcnMarkedPacket(1, kT0));
}

}  // namespace
}  // namespace lossless::cc
