#pragma once
// InfiniBand VL arbitration (IBA Vol. 1, 7.6.9), engine-free: a High and a
// Low priority table of (VL, weight) entries, each served weighted round
// robin, and the LimitOfHighPriority that lets the Low table send once the
// High table has sent that much while Low waited. The network asks which VL
// to serve among those whose head packet has credit.
#include <array>
#include <cstdint>
#include <vector>

#include "flowctl/ib_credits.hpp"

namespace lossless::flowctl {

// Arbitration state of one port.
struct VlArbState {
  uint8_t hi_idx = 0, lo_idx = 0;
  int32_t hi_used = 0, lo_used = 0;  // blocks charged to the current entry
  int32_t high_sent = 0;             // blocks the High table sent while Low waited
};

class VlArbiter {
 public:
  VlArbiter() = default;
  // Tables from the configuration; both empty = every data VL in Low at 64.
  explicit VlArbiter(const IbLinkConfig& cfg);

  // The VL to serve and the blocks of its head packet.
  struct Choice {
    int vl = -1;  // -1: every eligible VL is in no table
    int32_t blocks = 0;
  };
  // The VL to serve among `eligible` (bit v = VL v has a head packet with
  // credit for it), charging the head packet's blocks (`head_blocks(v)`) to
  // the table entry that sends it.
  template <class HeadBlocks>
  Choice Pick(VlArbState& a, uint8_t eligible, HeadBlocks head_blocks) const {
    const bool low_waits = (eligible & low_mask_) != 0;
    if (!low_waits) a.high_sent = 0;
    int vl = -1;
    bool from_high = false;
    if ((eligible & high_mask_) != 0 &&
        (limit_of_high_ == 255 || !low_waits || a.high_sent < limit_blocks_)) {
      vl = PickInTable(high_, a.hi_idx, a.hi_used, eligible);
      from_high = vl >= 0;
    }
    if (vl < 0) vl = PickInTable(low_, a.lo_idx, a.lo_used, eligible);
    if (vl < 0) return {};
    const int32_t blocks = head_blocks(vl);
    if (from_high) {
      a.hi_used += blocks;
      if (low_waits) a.high_sent += blocks;
    } else {
      a.lo_used += blocks;
      a.high_sent = 0;
    }
    return {vl, blocks};
  }

  const std::vector<VlArbEntry>& low() const { return low_.entries; }

 private:
  // Weighted round robin over one table: an entry may start a packet while
  // the blocks charged to it are below its weight (so the last packet may
  // overrun, and a weight below one packet still sends one); then the
  // arbiter moves to the next entry, which starts from zero. Entries of
  // weight 0 and VLs not in `eligible` are skipped. Returns the VL or -1.
  // Inline, without a division or a walk over the entries it skips: it
  // runs once per packet an IB port sends, and with one VL busy out of
  // four the walk was most of it. `of_vl` holds, per VL, the bit set of
  // the entries (of weight > 0) that serve it; tables of more than 64
  // entries take the walk (PickInTableWalk, which is also the reference).
  struct Table {
    std::vector<VlArbEntry> entries;
    std::array<uint64_t, kMaxClasses> of_vl{};  // bit i: entry i serves the VL (weight > 0)
    void Index();
  };
  static int PickInTable(const Table& t, uint8_t& idx, int32_t& used, uint8_t eligible) {
    const size_t n = t.entries.size();
    if (n == 0 || eligible == 0) return -1;
    if (n > 64) return PickInTableWalk(t.entries, idx, used, eligible);
    const VlArbEntry& e = t.entries[idx];
    if (e.weight > 0 && (eligible >> e.vl & 1) && used < e.weight) return e.vl;
    // The walk from here would stop at the first entry after idx (cyclically,
    // idx itself last) that serves an eligible VL, starting it from zero.
    uint64_t q = 0;
    for (unsigned m = eligible; m != 0; m &= m - 1) q |= t.of_vl[__builtin_ctz(m)];
    used = 0;
    if (q == 0) {  // the walk goes once round and one more step, in vain
      idx = static_cast<uint8_t>(idx + 1u == n ? 0 : idx + 1u);
      return -1;
    }
    const uint64_t after = idx >= 63 ? 0 : q & (~uint64_t{0} << (idx + 1));
    idx = static_cast<uint8_t>(__builtin_ctzll(after != 0 ? after : q));
    return t.entries[idx].vl;
  }

 public:
  // The entry-by-entry walk PickInTable stands for (tests compare the two).
  static int PickInTableWalk(const std::vector<VlArbEntry>& table, uint8_t& idx, int32_t& used,
                             uint8_t eligible) {
    const size_t n = table.size();
    if (n == 0 || eligible == 0) return -1;
    for (size_t k = 0; k <= n; ++k) {
      const VlArbEntry& e = table[idx];
      if (e.weight > 0 && (eligible >> e.vl & 1) && used < e.weight) return e.vl;
      idx = static_cast<uint8_t>(idx + 1u == n ? 0 : idx + 1u);
      used = 0;
    }
    return -1;
  }
  static int PickInTableIndexed(const std::vector<VlArbEntry>& table, uint8_t& idx, int32_t& used,
                                uint8_t eligible) {
    Table t{table, {}};
    t.Index();
    return PickInTable(t, idx, used, eligible);
  }

 private:
  Table high_;
  Table low_;  // effective Low table
  uint8_t low_mask_ = 0;         // VLs with a Low entry of weight > 0
  uint8_t high_mask_ = 0;        // VLs with a High entry of weight > 0
  int limit_of_high_ = 16;       // 4096-byte units; 255 = no limit
  int32_t limit_blocks_ = 16 * 4096 / 64;
};

}  // namespace lossless::flowctl
