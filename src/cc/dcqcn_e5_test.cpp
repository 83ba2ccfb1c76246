// Reference experiment E5 (docs/model/experiments.md#e5-dcqcn-reaction-point): the DCQCN reaction
// point driven directly with scripted CNPs, both presets. Expected values come from the formulas in
// docs/model/experiments.md#e5-dcqcn-reaction-point; tolerance 1e-9 relative on rates and alpha,
// event times exact (E5 allows ±1 ns).
#include <gtest/gtest.h>

#include <cmath>

#include "cc/dcqcn.hpp"

namespace lossless::cc {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace e5 {

using units::Bytes;
using units::Rate;
using units::Time;

constexpr double kG = 1e9;  // bit/s per Gb/s
constexpr double kM = 1e6;
const Time kT0 = Time::Ms(1);
const Rate kLine = Rate::Gbps(400);

void ExpectRel(double actual, double expected, const char* what) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::abs(expected)) << what;
}

DcqcnParams E5Paper() {
  DcqcnParams p = DcqcnParams::Paper();  // g 1/256, K 55us, T_INC 55us, F 5, R_MIN 100M
  p.byte_counter = Bytes(0);             // "byte counter disabled"
  return p;
}

DcqcnParams E5Firmware() {
  DcqcnParams p = DcqcnParams::ConnectXFirmware();  // 4us monitor, 300us timer, F 1, 5/50 Mbps
  EXPECT_EQ(p.alpha_period, Time::Us(55));
  EXPECT_FALSE(p.clamp_target_rate);
  EXPECT_EQ(p.rate_on_first_cnp, Rate());
  return p;
}

// Case A: one CNP at t0.
TEST(RefE5_DcqcnReactionPoint, A_PaperSingleCnpCutAndFastRecovery) {
  DcqcnReactionPoint rp(E5Paper(), kLine);
  rp.OnCnp(kT0);
  ExpectRel(rp.rate_bps(), 200 * kG, "rc after CNP");
  ExpectRel(rp.target_rate_bps(), 400 * kG, "rt after CNP");
  EXPECT_EQ(rp.alpha(), 1.0);  // exactly
  const double expected[] = {300, 350, 375, 387.5, 393.75, 396.875, 398.4375};
  for (int k = 1; k <= 7; ++k) {
    const Time at = kT0 + Time::Us(55) * k;
    ASSERT_EQ(rp.NextDeadline(), at) << "k=" << k;
    rp.Advance(at - Time::Ps(1));
    EXPECT_EQ(rp.increase_events(), k - 1);
    rp.Advance(at);
    EXPECT_EQ(rp.increase_events(), k);
    ExpectRel(rp.rate_bps(), expected[k - 1] * kG, "rc");
    ExpectRel(rp.target_rate_bps(), 400 * kG, "rt capped at LINE");
  }
}

TEST(RefE5_DcqcnReactionPoint, A_PaperAlphaDecay) {
  DcqcnReactionPoint rp(E5Paper(), kLine);
  rp.OnCnp(kT0);
  rp.Advance(kT0 + Time::Us(990) - Time::Ps(1));
  ExpectRel(rp.alpha(), std::pow(255.0 / 256, 17), "alpha before 18th update");
  rp.Advance(kT0 + Time::Us(990));
  ExpectRel(rp.alpha(), std::pow(255.0 / 256, 18), "alpha after 18th update");
  EXPECT_NEAR(rp.alpha(), 0.931974, 5e-7);
  rp.Advance(kT0 + Time::Us(55) * 177);
  EXPECT_NEAR(rp.alpha(), 0.500194, 5e-7);
  EXPECT_GE(rp.alpha(), 0.5);
  rp.Advance(kT0 + Time::Us(9790) - Time::Ps(1));
  EXPECT_GE(rp.alpha(), 0.5);
  rp.Advance(kT0 + Time::Us(9790));
  EXPECT_LT(rp.alpha(), 0.5);
  ExpectRel(rp.alpha(), std::pow(255.0 / 256, 178), "alpha after 178th update");
}

// Case B: CNPs at t0 and t0 + 50 us.
TEST(RefE5_DcqcnReactionPoint, B_PaperTwoCnpsThenAdditive) {
  const DcqcnParams p = E5Paper();
  const double r_ai = static_cast<double>(p.rate_ai.bps());
  DcqcnReactionPoint rp(p, kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(50));
  ExpectRel(rp.target_rate_bps(), 200 * kG, "rt");
  ExpectRel(rp.rate_bps(), 100 * kG, "rc");
  EXPECT_EQ(rp.alpha(), 1.0);
  const double fr[] = {150, 175, 187.5, 193.75, 196.875};
  for (int k = 1; k <= 5; ++k) {
    const Time at = kT0 + Time::Us(50 + 55 * k);
    ASSERT_EQ(rp.NextDeadline(), at);
    rp.Advance(at);
    ExpectRel(rp.rate_bps(), fr[k - 1] * kG, "fast recovery rc");
    ExpectRel(rp.target_rate_bps(), 200 * kG, "rt unchanged in fast recovery");
  }
  rp.Advance(kT0 + Time::Us(50 + 55 * 6));
  ExpectRel(rp.target_rate_bps(), 200 * kG + r_ai, "rt after k=6");
  ExpectRel(rp.rate_bps(), (200 * kG + r_ai + 196.875 * kG) / 2, "rc after k=6");
  ExpectRel(rp.rate_bps(), 198.4575 * kG, "rc after k=6 with R_AI = 40 Mb/s");
  const double rc6 = rp.rate_bps();
  rp.Advance(kT0 + Time::Us(50 + 55 * 7));
  ExpectRel(rp.target_rate_bps(), 200 * kG + 2 * r_ai, "rt after k=7");
  ExpectRel(rp.rate_bps(), (200 * kG + 2 * r_ai + rc6) / 2, "rc after k=7");
}

TEST(RefE5_DcqcnReactionPoint, B_HoldsForAnyConfiguredRai) {
  DcqcnParams p = E5Paper();
  p.rate_ai = Rate::Bps(123'000'000);
  DcqcnReactionPoint rp(p, kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(50));
  rp.Advance(kT0 + Time::Us(50 + 55 * 7));
  ExpectRel(rp.target_rate_bps(), 200 * kG + 2 * 123 * kM, "rt after k=7");
}

// Case C: the phase selector, counts taken before the event.
TEST(RefE5_DcqcnReactionPoint, C_PaperPhaseSelector) {
  const int64_t f = 5;
  EXPECT_EQ(PaperIncreasePhase(0, 0, f), IncreasePhase::kFastRecovery);
  EXPECT_EQ(PaperIncreasePhase(4, 4, f), IncreasePhase::kFastRecovery);
  EXPECT_EQ(PaperIncreasePhase(5, 0, f), IncreasePhase::kAdditive);
  EXPECT_EQ(PaperIncreasePhase(0, 5, f), IncreasePhase::kAdditive);
  EXPECT_EQ(PaperIncreasePhase(5, 5, f), IncreasePhase::kAdditive);
  EXPECT_EQ(PaperIncreasePhase(6, 5, f), IncreasePhase::kAdditive);
  EXPECT_EQ(PaperIncreasePhase(6, 6, f), IncreasePhase::kHyper);
  EXPECT_EQ(PaperIncreasePhase(9, 6, f), IncreasePhase::kHyper);
}

// Case D: 20 CNPs 1 us apart.
TEST(RefE5_DcqcnReactionPoint, D_PaperCnpBurstHitsMinRate) {
  DcqcnReactionPoint rp(E5Paper(), kLine);
  double expected = 400 * kG;
  for (int i = 1; i <= 20; ++i) {
    const double before = rp.rate_bps();
    rp.OnCnp(kT0 + Time::Us(i - 1));
    expected = std::max(100 * kM, expected / 2);
    EXPECT_EQ(rp.alpha(), 1.0) << "CNP " << i;
    ExpectRel(rp.target_rate_bps(), before, "rt = rc before the cut");
    ExpectRel(rp.rate_bps(), expected, "rc");
    if (i == 11) {
      ExpectRel(rp.rate_bps(), 195.3125 * kM, "rc after the 11th CNP");
    }
    if (i >= 12) {
      EXPECT_EQ(rp.rate(), Rate::Bps(100'000'000)) << "CNP " << i;
    }
  }
  EXPECT_EQ(rp.cuts(), 20);
}

// Case E: firmware, CNPs at t0 and t0 + 2 us → exactly one cut at t0 + 4 us.
TEST(RefE5_DcqcnReactionPoint, E_FirmwareOneCutPerMonitorPeriod) {
  DcqcnReactionPoint rp(E5Firmware(), kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(2));
  EXPECT_EQ(rp.NextDeadline(), kT0 + Time::Us(4));
  rp.Advance(kT0 + Time::Us(4) - Time::Ps(1));
  EXPECT_EQ(rp.cuts(), 0);
  ExpectRel(rp.rate_bps(), 400 * kG, "no cut before the monitor tick");
  rp.Advance(kT0 + Time::Us(4));
  EXPECT_EQ(rp.cuts(), 1);
  EXPECT_LE(std::abs((rp.last_cut() - (kT0 + Time::Us(4))).ps()), Time::Ns(1).ps());
  ExpectRel(rp.rate_bps(), 200 * kG, "rc");
  ExpectRel(rp.target_rate_bps(), 400 * kG, "rt not clamped: no increase since the last cut");
  rp.Advance(kT0 + Time::Us(250));
  EXPECT_EQ(rp.cuts(), 1);
}

// Case F: CNPs at t0, t0 + 2 us, t0 + 6 us → second cut at t0 + 8 us.
TEST(RefE5_DcqcnReactionPoint, F_FirmwareSecondCutNextPeriod) {
  DcqcnReactionPoint rp(E5Firmware(), kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(2));
  rp.OnCnp(kT0 + Time::Us(6));
  rp.Advance(kT0 + Time::Us(8) - Time::Ps(1));
  EXPECT_EQ(rp.cuts(), 1);
  rp.Advance(kT0 + Time::Us(8));
  EXPECT_EQ(rp.cuts(), 2);
  EXPECT_EQ(rp.last_cut(), kT0 + Time::Us(8));
  EXPECT_EQ(rp.alpha(), 1.0);  // first alpha tick is at t0 + 55 us
  ExpectRel(rp.rate_bps(), 100 * kG, "rc");
  ExpectRel(rp.target_rate_bps(), 400 * kG, "rt");
}

// Case G: as E, then no CNP: increase events every 300 us after the cut.
TEST(RefE5_DcqcnReactionPoint, G_FirmwareRecoveryStages) {
  DcqcnReactionPoint rp(E5Firmware(), kLine);
  rp.OnCnp(kT0);
  rp.OnCnp(kT0 + Time::Us(2));
  const Time cut = kT0 + Time::Us(4);
  rp.Advance(cut);
  const double expected[] = {300, 350, 375};
  for (int k = 1; k <= 3; ++k) {
    const Time at = cut + Time::Us(300) * k;
    rp.Advance(at - Time::Ps(1));
    EXPECT_EQ(rp.increase_events(), k - 1);
    rp.Advance(at);
    EXPECT_EQ(rp.increase_events(), k);
    EXPECT_EQ(rp.stage(), k);
    ExpectRel(rp.rate_bps(), expected[k - 1] * kG, "rc");
    ExpectRel(rp.target_rate_bps(), 400 * kG, "rt stays at LINE");
  }
}

}  // namespace e5
}  // namespace
}  // namespace lossless::cc
