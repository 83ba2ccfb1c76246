// Experiment E12, checks 1-3 and 5: the bit-error model (docs/model/transport.md#bit-errors).
// Check 4 (end to end over the RC transport) is in rc_e12_test.cpp.
#include <cstdint>
#include <cstdio>

#include <gtest/gtest.h>

#include "fabric/link_loss.hpp"
#include "sim/rng.hpp"

namespace lossless::fabric {
namespace {

using units::Rate;
using units::Time;

// Check 1: P_loss of a 4,200-B frame. Against an independent evaluation (the
// alternating series 1 - (1 - b)^n = nb - C(n,2) b^2 + C(n,3) b^3 - ...)
// with relative tolerance 1e-6, and against the experiment's figures to the
// digits they are given with.
TEST(RefE12_BerLossRecovery, FrameLossProbabilityOfA4200ByteFrame) {
  const struct {
    double ber, expected, digit;  // figure and the unit of its last digit
  } cases[] = {{1e-12, 3.3600e-8, 1e-12},
               {1e-13, 3.3600e-9, 1e-13},
               {1e-15, 3.3600e-11, 1e-15},
               {1e-9, 3.35994e-5, 1e-10}};
  for (const auto& c : cases) {
    const double p = FrameLossProbability(c.ber, 4200);
    const double n = 8.0 * 4200;
    double series = 0, term = 1;
    for (int k = 1; k <= 6; ++k) {
      term *= (n - k + 1) / k * c.ber;
      series += (k % 2 == 1 ? term : -term);
    }
    EXPECT_NEAR(p / series, 1.0, 1e-6) << "BER " << c.ber;
    EXPECT_NEAR(p, c.expected, c.digit / 2) << "BER " << c.ber << ": " << p;
  }
  EXPECT_EQ(FrameLossProbability(0, 4200), 0);
}

// Check 2: mean time between losses on one 400G direction of back-to-back
// 4,200-B frames (4,220 B of link time each), relative tolerance 1e-3.
TEST(RefE12_BerLossRecovery, MeanTimeBetweenLossesAt400G) {
  const struct {
    double ber, seconds;
  } cases[] = {{1e-12, 2.512}, {1e-13, 25.12}, {1e-15, 2512}};
  for (const auto& c : cases) {
    const Time t = MeanTimeBetweenLosses(c.ber, 4200, 4220, Rate::Gbps(400));
    EXPECT_NEAR(static_cast<double>(t.ps()) / 1e12 / c.seconds, 1.0, 1e-3) << "BER " << c.ber;
  }
  EXPECT_EQ(MeanTimeBetweenLosses(0, 4200, 4220, Rate::Gbps(400)), Time::Max());
}

// Check 3: 1e8 frames of 4,200 B at BER 1e-9 (mean 3,359.9 losses): the
// count lies in the 99.99 % Poisson interval [3137, 3588]; same seed, same count.
TEST(RefE12_BerLossRecovery, SamplerCountLiesInThePoissonInterval) {
  auto count = [](uint64_t seed) {
    BitErrorSampler s(1e-9, sim::Rng(seed, 0, 3));
    int64_t lost = 0;
    for (int64_t i = 0; i < 100'000'000; ++i) lost += s.FrameLost(4200);
    return lost;
  };
  const int64_t n = count(1);
  std::printf("E12 check 3: %lld losses in 1e8 frames (mean 3359.9)\n", static_cast<long long>(n));
  EXPECT_GE(n, 3137);
  EXPECT_LE(n, 3588);
  EXPECT_EQ(count(1), n);
  EXPECT_NE(count(2), n);  // a different stream (equal by chance with probability ~1 %)
}

// A frame with several wrong bits is one loss; a zero BER loses nothing.
TEST(RefE12_BerLossRecovery, SamplerCountsAFrameOnceAndNothingAtZero) {
  BitErrorSampler dense(0.01, sim::Rng(1, 0, 3));  // ~336 wrong bits per 4,200-B frame
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(dense.FrameLost(4200));
  BitErrorSampler none(0, sim::Rng(1, 0, 3));
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(none.FrameLost(4200));
}

// Check 5: RS(544,514) codeword failure under independent errors, relative tolerance 1e-3.
TEST(RefE12_BerLossRecovery, Rs544CodewordFailureProbability) {
  EXPECT_NEAR(Rs544CodewordFailure(2.4e-4) / 8.1516e-13, 1.0, 1e-3);
  EXPECT_NEAR(Rs544CodewordFailure(1e-4) / 1.3598e-18, 1.0, 1e-3);
  EXPECT_EQ(Rs544CodewordFailure(0), 0);
}

}  // namespace
}  // namespace lossless::fabric
