#pragma once
// Strong quantity types used at every interface that carries a quantity.
//
//   Time  — signed 64-bit count of picoseconds (range ±106 days).
//   Bytes — signed 64-bit count of bytes.
//   Rate  — signed 64-bit count of bits per second (a valid link rate is > 0).
//
// Serialization rule (exact, documented in docs/units.md):
//   SerializationTime(b, r) = ceil(b · 8 · 10^12 / r) picoseconds,
// computed in 128-bit integers, so 1 byte at 800 Gb/s is exactly 10 ps and a
// 4002-byte frame at 400 Gb/s is exactly 80,040 ps. Rounding up means a
// transmission never finishes before the last bit could have left.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.hpp"

namespace lossless::units {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time Ps(int64_t v) { return Time(v); }
  static constexpr Time Ns(int64_t v) { return Time(v * 1000); }
  static constexpr Time Us(int64_t v) { return Time(v * 1000'000); }
  static constexpr Time Ms(int64_t v) { return Time(v * 1000'000'000); }
  static constexpr Time Sec(int64_t v) { return Time(v * 1000'000'000'000); }
  static constexpr Time Max() { return Time(INT64_MAX); }
  static constexpr Time Zero() { return Time(0); }

  constexpr int64_t ps() const { return ps_; }
  constexpr double ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double ms() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr auto operator<=>(const Time&) const = default;  // NOLINT(modernize-use-nullptr)
  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time(ps_ * k); }

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t v) : v_(v) {}
  static constexpr Bytes KiB(int64_t v) { return Bytes(v * 1024); }
  static constexpr Bytes MiB(int64_t v) { return Bytes(v * 1024 * 1024); }
  constexpr int64_t count() const { return v_; }
  constexpr auto operator<=>(const Bytes&) const = default;  // NOLINT(modernize-use-nullptr)
  constexpr Bytes operator+(Bytes o) const { return Bytes(v_ + o.v_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(v_ - o.v_); }
  constexpr Bytes& operator+=(Bytes o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Bytes& operator-=(Bytes o) {
    v_ -= o.v_;
    return *this;
  }

 private:
  int64_t v_ = 0;
};

class Rate {
 public:
  constexpr Rate() = default;
  static constexpr Rate Bps(int64_t bits_per_s) { return Rate(bits_per_s); }
  static constexpr Rate Gbps(int64_t g) { return Rate(g * 1000'000'000); }
  constexpr int64_t bps() const { return bps_; }
  constexpr double gbps() const { return static_cast<double>(bps_) * 1e-9; }
  // Decimal gigabytes per second, as nccl-tests prints bandwidth.
  constexpr double GBps() const { return static_cast<double>(bps_) / 8e9; }
  constexpr auto operator<=>(const Rate&) const = default;  // NOLINT(modernize-use-nullptr)

 private:
  constexpr explicit Rate(int64_t b) : bps_(b) {}
  int64_t bps_ = 0;
};

// ceil(bytes · 8e12 / rate) ps. Precondition: rate > 0, bytes ≥ 0.
// Inline, for the collectives' per-step calls: below 2,000,000 bytes and at
// rates up to 10^18 bit/s the exact quotient fits 64 bits (8e12 · bytes +
// rate < 2^64), so it takes a hardware division; otherwise the 128-bit one.
Time SerializationTimeWide(Bytes bytes, Rate rate);
inline Time SerializationTime(Bytes bytes, Rate rate) {
  constexpr uint64_t kBitPsPerByte = 8'000'000'000'000ULL;
  const int64_t b = bytes.count(), r = rate.bps();
  if (b >= 0 && b < 2'000'000 && r > 0 && r <= 1'000'000'000'000'000'000) [[likely]]
    return Time::Ps(static_cast<int64_t>(
        (static_cast<uint64_t>(b) * kBitPsPerByte + static_cast<uint64_t>(r) - 1) /
        static_cast<uint64_t>(r)));
  return SerializationTimeWide(bytes, rate);
}
// Bytes that fit in `t` at `rate`, rounded down.
Bytes BytesInTime(Time t, Rate rate);
// Propagation delay of a cable: 5 ns per metre (docs/model/framing.md#cable-delay), exact in ps.
Time CableDelay(double metres);

// Parsing. Each throws InputError(where, "expected ..., got ...") on bad input.
//   Time : "<decimal><unit>", unit one of ps ns us µs ms s; no bare numbers;
//          must be ≥ 0 and a whole number of picoseconds.
//   Bytes: "<decimal>[unit]", unit B KB MB GB TB (10^3) KiB MiB GiB TiB (2^10);
//          K M G T alone are binary, as nccl-tests' -b/-e flags read them; a bare
//          integer is bytes. Must be ≥ 0 and whole.
//   Rate : "<decimal><unit>", unit bps Kbps Mbps Gbps Tbps (also b/s forms and
//          K M G T alone meaning bit/s); GB/s and MB/s (bytes) also accepted.
//          A bare integer is bit/s. Must be > 0.
Time ParseTime(std::string_view text, const Location& where);
Bytes ParseBytes(std::string_view text, const Location& where);
Rate ParseRate(std::string_view text, const Location& where);

// Printing, shortest exact form with the largest unit that keeps it readable:
// FormatTime(Time::Ns(1500)) == "1.5us", FormatRate(Rate::Gbps(400)) == "400Gbps",
// FormatBytes(Bytes::KiB(9)) == "9KiB", FormatBytes(Bytes(1000)) == "1000B".
std::string FormatTime(Time t);
std::string FormatBytes(Bytes b);
std::string FormatRate(Rate r);

}  // namespace lossless::units
