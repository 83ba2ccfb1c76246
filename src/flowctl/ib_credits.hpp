#pragma once
// InfiniBand credit-based link-level flow control (IBA Vol. 1, chapter 7.9,
// "Flow control"; docs/fabric-model.md "InfiniBand credits"), engine-free:
// the configuration, the per-VL counters of both ends of a link, and the
// flow-control packets (FCPs) on their way. The network (fabric/ib_link.cpp)
// owns the timers and the wire; it asks this model whether a packet may
// start, charges and credits blocks, and carries the FCPs it builds.
//
// Counters follow the IBA names, 12 bits wide:
//   sender   FCTBS  blocks sent on the VL, mod 4096
//   receiver ABR    blocks received, mod 4096
//            FCCL   ABR + free blocks of the VL buffer, mod 4096 (sent in FCPs)
// Available credit at the sender = (FCCL - FCTBS) mod 4096. Since FCCL is
// absolute, a lost FCP is healed by any later one.
#include <array>
#include <cstdint>
#include <vector>

#include "flowctl/classes.hpp"
#include "units/units.hpp"

namespace lossless::flowctl {

// One entry of a VL arbitration table (IBA Vol. 1, 7.6.9): a VL and its
// weight in 64-byte units.
struct VlArbEntry {
  uint8_t vl = 0;
  uint8_t weight = 0;  // 64-byte units; 0 = entry skipped
  bool operator==(const VlArbEntry&) const = default;
};
inline constexpr int kVl15Queue = 7;  // queue of VL15 (management: strict, no credits)

// Every receiving port grants `credits` 64-byte blocks per data VL; a sender
// starts a packet on a VL only when its available credit covers the whole
// packet. Freed blocks are returned in 6-byte FCPs that take link time and
// propagation. Traffic classes are VLs: the SL of a flow maps to a VL at
// injection (`sl2vl`); queue 7 carries VL15.
struct IbLinkConfig {
  bool enabled = false;
  int num_vls = 4;         // data VLs 0..num_vls-1 (1..7); ConnectX-5 default 4
  int32_t credits = 2048;  // blocks per data VL per receiving port (<= 2048: 12-bit counters)
  // FCPs: one as soon as blocks are freed (when fcp_on_release), and at every
  // multiple of fcp_period while the sender's view of the credit limit is out
  // of date (a periodic FCP that would repeat what the sender already knows is
  // not modelled: it changes nothing but 6 bytes of link time).
  bool fcp_on_release = true;
  units::Time fcp_period = units::Time::Ps(4'096'000);
  units::Time rx_free_delay = units::Time::Ns(100);  // HCA: last byte in -> its blocks free (t_rx)
  units::Time credit_delay = units::Time::Ns(100);   // FCP last byte in -> credits usable (t_tx)
  double fcp_loss = 0;                               // probability that an FCP is lost (tests)
  // Engine check (tests only, not a scenario field): every FCP runs as an
  // event of its own and takes effect there, never earlier; the reference
  // the FCP inbox (fabric/ib_link.cpp) is compared against.
  bool fcp_event_each = false;
  std::vector<VlArbEntry> high;                      // high-priority table
  std::vector<VlArbEntry> low;  // low-priority table; both empty = every data VL at 64
  int limit_of_high = 16;       // 4096-byte units; 255 = no limit
  std::array<uint8_t, 16> sl2vl{0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, kVl15Queue};

  // Throws std::invalid_argument, naming the scenario field, for a value the
  // model cannot run: VLs outside 1..7, credits below one MTU packet
  // (`mtu_blocks`) or above 2048, a zero FCP period, table entries naming an
  // absent VL, a High limit outside 0..255. The scenario refuses these with
  // file and line first (scenario/read_flowctl.cpp); this is the model's own
  // guard for programmatic configurations.
  void Check(int32_t mtu_blocks) const;
};

inline constexpr uint16_t kCreditMod = 0xFFF;  // 12-bit counters
inline constexpr int32_t kMaxCredits = 2048;
inline constexpr int64_t kFcpWireBytes = 6;  // Op, FCTBS, VL, FCCL, LPCRC

// 64-byte blocks a packet occupies, from its bytes on the link without the
// inter-frame gap.
inline int32_t IbBlocks(int64_t bytes) {
  return static_cast<int32_t>((bytes + 63) / 64);
}

// One VL of one port, both roles, in half a cache line: the port sends into
// its peer's VL buffer (sender counters) and receives into its own (receiver
// counters).
struct IbVl {
  // Sender side.
  uint16_t fccl = 0;   // credit limit last received, mod 4096
  uint16_t fctbs = 0;  // blocks sent, mod 4096
  // Receiver side.
  uint16_t abr = 0;        // blocks received, mod 4096
  uint16_t last_fccl = 0;  // carried by the last FCP sent
  int32_t used = 0;        // blocks held
  int32_t limit = 0;       // blocks granted
  int32_t max_used = 0;
  int64_t starved_since = -1;  // sender: waiting for credits since

  // Sender: credit available, and a packet of `blocks` started.
  int32_t Available() const { return (fccl - fctbs) & kCreditMod; }
  void Charge(int32_t blocks) { fctbs = static_cast<uint16_t>((fctbs + blocks) & kCreditMod); }
  // Receiver: the limit an FCP would carry now; a packet came in; its blocks
  // left the buffer.
  uint16_t Fccl() const { return static_cast<uint16_t>((abr + limit - used) & kCreditMod); }
  void Receive(int32_t blocks) {
    abr = static_cast<uint16_t>((abr + blocks) & kCreditMod);
    used += blocks;
    if (used > max_used) max_used = used;
  }
  void Release(int32_t blocks) { used -= blocks; }
};

// An FCP on its way to a sender: it takes effect at `at` (its last byte in
// plus the credit delay). The network carries each FCP as a link event owned
// by the receiving port; the port that sent it keeps its own copy of the
// ones not lost, to know what its peer will have seen (fabric/ib_link.cpp).
struct FcpInFlight {
  int64_t at = 0;
  uint16_t fccl = 0;
  uint8_t vl = 0;
};
// An FCP as its receiver (the data sender) holds it until it takes effect:
// the credit limit applies once `at` is reached, read when the port next
// looks at its credits; `key` is the ordering key the FCP's sender drew for
// it, under which a wake-up runs if the port waits for credit at `at`
// (fabric/ib_link.cpp, "FCPs without events").
struct FcpInbound {
  int64_t at = 0;
  uint64_t key = 0;
  uint16_t fccl = 0;
  uint16_t epoch = 0;
  uint8_t vl = 0;
};
// Blocks an HCA frees at `at` (t_rx after the packet's last byte came in).
struct PendingFree {
  int64_t at = 0;
  int32_t blocks = 0;
  uint8_t vl = 0;
};

// The first FCP grid point at or after `now`: periodic FCPs leave on
// multiples of the period.
inline int64_t NextFcpGridPoint(int64_t now, int64_t period) {
  return (now + period - 1) / period * period;
}

}  // namespace lossless::flowctl
