#include "fabric/link_loss.hpp"

#include <cmath>
#include <limits>

namespace lossless::fabric {

double FrameLossProbability(double ber, int64_t frame_bytes) {
  return -std::expm1(8.0 * static_cast<double>(frame_bytes) * std::log1p(-ber));
}

units::Time MeanTimeBetweenLosses(double ber, int64_t frame_bytes, int64_t wire_bytes,
                                  units::Rate rate) {
  const double p = FrameLossProbability(ber, frame_bytes);
  if (p <= 0) return units::Time::Max();
  const double frames_per_s = rate.bps() / (8.0 * static_cast<double>(wire_bytes));
  const double seconds = 1.0 / (p * frames_per_s);
  if (seconds * 1e12 >= static_cast<double>(units::Time::Max().ps())) return units::Time::Max();
  return units::Time::Ps(static_cast<int64_t>(std::llround(seconds * 1e12)));
}

double Rs544CodewordFailure(double ber_pre) {
  // Symbol error probability, then P[Binomial(544, ps) > 15] summed in log
  // space (the terms fall fast; the first ones dominate).
  constexpr int kSymbols = 544, kCorrectable = 15;
  const double ps = -std::expm1(10.0 * std::log1p(-ber_pre));
  if (ps <= 0) return 0;
  if (ps >= 1) return 1;
  const double lp = std::log(ps), lq = std::log1p(-ps);
  double sum = 0;
  for (int k = kCorrectable + 1; k <= kSymbols; ++k) {
    const double log_term = std::lgamma(kSymbols + 1.0) - std::lgamma(k + 1.0) -
                            std::lgamma(kSymbols - k + 1.0) + k * lp + (kSymbols - k) * lq;
    sum += std::exp(log_term);
  }
  return sum;
}

BitErrorSampler::BitErrorSampler(double ber, sim::Rng rng)
    : log1m_ber_(std::log1p(-ber)), rng_(rng) {
  bits_to_error_ = Gap();
}

int64_t BitErrorSampler::Gap() {
  if (log1m_ber_ == 0) return INT64_MAX;
  // Geometric number of good bits: floor(log(U) / log(1 - ber)), U in (0, 1].
  const double u = 1.0 - rng_.Uniform();
  const double g = std::floor(std::log(u) / log1m_ber_);
  if (g >= 4e18) return INT64_MAX / 2;  // beyond any run
  return static_cast<int64_t>(g);
}

bool BitErrorSampler::FrameLost(int64_t frame_bytes) {
  const int64_t bits = 8 * frame_bytes;
  if (bits_to_error_ >= bits) {
    bits_to_error_ -= bits;
    return false;
  }
  // A wrong bit in this frame; skip any further ones inside it.
  int64_t left = bits - bits_to_error_ - 1;  // bits of the frame after the wrong one
  int64_t gap = Gap();
  while (gap < left) {
    left -= gap + 1;
    gap = Gap();
  }
  bits_to_error_ = gap - left;
  return true;
}

}  // namespace lossless::fabric
