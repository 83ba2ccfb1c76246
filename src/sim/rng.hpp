#pragma once
// Deterministic random streams. A stream is derived from (seed, entity,
// purpose) with SplitMix64, so adding an entity or drawing from one stream
// never shifts another: the same scenario and seed give the same bytes out,
// serial or partitioned. The generator is xoshiro256** (period 2^256 - 1).
#include <cstdint>

namespace lossless::sim {

constexpr uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A well-mixed 64-bit hash of up to four words (for ECMP and stream seeds).
constexpr uint64_t Mix(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0) {
  uint64_t s = a;
  uint64_t h = SplitMix64(s);
  s = h ^ b;
  h = SplitMix64(s);
  s = h ^ c;
  h = SplitMix64(s);
  s = h ^ d;
  return SplitMix64(s);
}

class Rng {
 public:
  Rng() : Rng(0, 0, 0) {}
  Rng(uint64_t seed, uint64_t entity, uint64_t purpose) {
    uint64_t s = Mix(seed, entity, purpose, 0x6c6f73736c657373ULL);  // "lossless"
    for (auto& w : s_) w = SplitMix64(s);
  }
  uint64_t NextU64() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, unbiased).
  uint64_t Below(uint64_t n) {
    __extension__ using U128 = unsigned __int128;
    uint64_t x = NextU64();
    U128 m = static_cast<U128>(x) * n;
    auto l = static_cast<uint64_t>(m);
    if (l < n) {
      uint64_t t = (0 - n) % n;
      while (l < t) {
        x = NextU64();
        m = static_cast<U128>(x) * n;
        l = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // Uniform double in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

 private:
  static constexpr uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace lossless::sim
