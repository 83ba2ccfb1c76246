#pragma once
// A message that waits out the proxy's hop latency before it is posted
// travels in its event's argument, so nothing is kept per connection while it
// waits: the lane (a connection, or one direction of one) in the low 24 bits,
// its bytes in the high 40.
#include <cstdint>
#include <stdexcept>

namespace lossless::collective {

inline constexpr uint32_t kPostLanes = 1u << 24;

inline uint64_t PostArg(uint32_t lane, int64_t bytes) {
  // Checked on every post: more than 2^24 lanes, or a message of a TiB or
  // more (a chunking defect), would not fit.
  if (lane >= kPostLanes || bytes < 0 || bytes >= (int64_t{1} << 40)) [[unlikely]]
    throw std::length_error("collective message too large for a delayed post");
  return static_cast<uint64_t>(bytes) << 24 | lane;
}
inline uint32_t PostLane(uint64_t arg) { return static_cast<uint32_t>(arg & (kPostLanes - 1)); }
inline int64_t PostBytes(uint64_t arg) { return static_cast<int64_t>(arg >> 24); }

}  // namespace lossless::collective
