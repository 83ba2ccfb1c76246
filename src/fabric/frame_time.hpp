#pragma once
// Serialization time of a frame on the packet path: units::SerializationTime
// (ceil(bytes * 8 * 1e12 / bit rate) picoseconds) in 64-bit arithmetic, which
// is exact below 2,305,843 bytes (8e12 * bytes < 2^64), so every frame takes
// a hardware division instead of a 128-bit library one. Larger or odd inputs
// go to the 128-bit function; the results are equal wherever both apply.
#include <cstdint>

#include "units/units.hpp"

namespace lossless::fabric {

inline int64_t FrameTimePs(int64_t bytes, int64_t bps) {
  constexpr uint64_t kBitPsPerByte = 8'000'000'000'000ULL;  // 8 bits x 1e12 ps per s
  if (bytes >= 0 && bytes < 2'000'000 && bps > 0) [[likely]] {
    const uint64_t r = static_cast<uint64_t>(bps);
    return static_cast<int64_t>((static_cast<uint64_t>(bytes) * kBitPsPerByte + r - 1) / r);
  }
  return units::SerializationTime(units::Bytes(bytes), units::Rate::Bps(bps)).ps();
}

}  // namespace lossless::fabric
