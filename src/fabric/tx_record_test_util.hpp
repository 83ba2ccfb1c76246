#pragma once
// Test helpers: a transmit trace (every frame a port starts, from
// Network::set_tx_trace) and the derived times of reference experiment E1
// (docs/model/experiments.md), shared by the Network-level E1 tests
// (pfc_test.cpp) and the scenario-level ones (scenario/inject_test.cpp).
#include <cstdint>
#include <vector>

#include "fabric/packet.hpp"
#include "units/units.hpp"

namespace lossless::fabric::testing {

struct TxRecord {
  uint32_t port;
  int tclass;
  int64_t start;
  uint32_t wire;
  PacketKind kind;
};

// Network::set_tx_trace callback; ctx is a std::vector<TxRecord>.
inline void RecordTx(void* ctx, uint32_t port, const Packet& p, units::Time start) {
  static_cast<std::vector<TxRecord>*>(ctx)->push_back({port, p.tclass, start.ps(), p.wire, p.kind});
}

// Start times of the frames `port` sent of `kind` and class `tclass` (< 0: any).
inline std::vector<int64_t> StartsOf(const std::vector<TxRecord>& tx, uint32_t port, int tclass,
                                     PacketKind kind) {
  std::vector<int64_t> out;
  for (const TxRecord& x : tx)
    if (x.port == port && x.kind == kind && (tclass < 0 || x.tclass == tclass))
      out.push_back(x.start);
  return out;
}
// The first start after t, or -1.
inline int64_t FirstAfter(const std::vector<int64_t>& starts, int64_t t) {
  for (int64_t s : starts)
    if (s > t) return s;
  return -1;
}
// The last start at or before t, or -1.
inline int64_t LastAtOrBefore(const std::vector<int64_t>& starts, int64_t t) {
  int64_t last = -1;
  for (int64_t s : starts)
    if (s <= t) last = s;
  return last;
}
// Whether a start lies in the open interval (lo, hi).
inline bool AnyIn(const std::vector<int64_t>& starts, int64_t lo, int64_t hi) {
  for (int64_t s : starts)
    if (s > lo && s < hi) return true;
  return false;
}

namespace e1 {
constexpr int64_t kT0 = 10'000'000;            // the PFC frame is sent at 10 us
constexpr int64_t kTa = kT0 + 1'680 + 50'000;  // end of its reception at A (84 B at 400G, 50 ns)
constexpr int64_t kTmax = 83'884'800;          // 65,535 quanta at 400G
constexpr int64_t kLowFrame = 184'720;         // E1's bound: one 9,236-B frame at 400G
}  // namespace e1

}  // namespace lossless::fabric::testing
