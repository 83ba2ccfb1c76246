// VL arbitration alone (flowctl/vl_arbiter.hpp), no engine: IBA Vol. 1,
// 7.6.9 (weights in 64-byte units, High/Low tables, LimitOfHighPriority).
#include "flowctl/vl_arbiter.hpp"

#include <array>

#include <gtest/gtest.h>

namespace lossless::flowctl {
namespace {

// Serves `n` packets of `blocks` blocks each with every VL in `eligible`
// always backlogged; returns the packets per VL.
std::array<int, kMaxClasses> Serve(const VlArbiter& arb, uint8_t eligible, int n, int32_t blocks) {
  VlArbState st;
  std::array<int, kMaxClasses> count{};
  for (int i = 0; i < n; ++i) {
    const int vl = arb.Pick(st, eligible, [&](int) { return blocks; }).vl;
    if (vl < 0) break;
    ++count[vl];
  }
  return count;
}

TEST(VlArbiter, DefaultTableServesEveryDataVlAlike) {
  IbLinkConfig c;  // 4 data VLs, both tables empty
  const VlArbiter arb(c);
  ASSERT_EQ(arb.low().size(), 4u);
  const auto n = Serve(arb, 0b1111, 400, 65);
  for (int v = 0; v < 4; ++v) EXPECT_EQ(n[v], 100) << v;
}

TEST(VlArbiter, WeightsBelowOnePacketSendOnePacketPerTurn) {
  // Weights 65 and 130 blocks with 65-block packets: 1 and 2 packets per
  // turn (an entry sends while its charged blocks are below its weight).
  IbLinkConfig c;
  c.num_vls = 2;
  c.low = {{0, 65}, {1, 130}};
  const auto n = Serve(VlArbiter(c), 0b11, 300, 65);
  EXPECT_EQ(n[0], 100);
  EXPECT_EQ(n[1], 200);
}

TEST(VlArbiter, IneligibleAndZeroWeightVlsAreSkipped) {
  IbLinkConfig c;
  c.num_vls = 3;
  c.low = {{0, 64}, {1, 0}, {2, 64}};
  const VlArbiter arb(c);
  const auto n = Serve(arb, 0b111, 100, 10);
  EXPECT_EQ(n[1], 0);
  EXPECT_EQ(n[0] + n[2], 100);
  VlArbState st;
  EXPECT_EQ(arb.Pick(st, 0b010, [](int) { return 10; }).vl, -1);  // only VL1: weight 0
  EXPECT_EQ(arb.Pick(st, 0, [](int) { return 10; }).vl, -1);
}

TEST(VlArbiter, LimitOfHighPriorityLetsLowSend) {
  // High table VL0, Low table VL1; limit 1 x 4096 B = 64 blocks of High
  // while Low waits, then one Low packet.
  IbLinkConfig c;
  c.num_vls = 2;
  c.high = {{0, 255}};
  c.low = {{1, 255}};
  c.limit_of_high = 1;
  const auto n = Serve(VlArbiter(c), 0b11, 300, 16);  // 16-block packets: 4 High, then 1 Low
  EXPECT_EQ(n[0], 240);
  EXPECT_EQ(n[1], 60);
  c.limit_of_high = 255;  // no limit: Low starves while High has packets
  const auto m = Serve(VlArbiter(c), 0b11, 300, 16);
  EXPECT_EQ(m[0], 300);
  EXPECT_EQ(m[1], 0);
}

TEST(VlArbiter, IndexedPickWalksAsTheEntryByEntryWalk) {
  // PickInTable jumps to the next entry that can serve (a bit set per VL)
  // instead of walking the table: the VL, entry and charge it leaves must
  // be the walk's, for every table shape, position, charge and eligible set,
  // including tables with entries of weight 0 and VLs outside the 8 queues.
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  auto next = [&x](uint64_t mod) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x % mod;
  };
  for (int round = 0; round < 4000; ++round) {
    std::vector<VlArbEntry> table(1 + next(64));
    for (VlArbEntry& e : table) {
      e.vl = static_cast<uint8_t>(next(10));  // 8 and 9: never eligible
      e.weight = static_cast<uint8_t>(next(4) == 0 ? 0 : 1 + next(3));
    }
    for (int k = 0; k < 8; ++k) {
      uint8_t idx_walk = static_cast<uint8_t>(next(table.size()));
      int32_t used_walk = static_cast<int32_t>(next(5));
      uint8_t idx = idx_walk;
      int32_t used = used_walk;
      const uint8_t eligible = static_cast<uint8_t>(next(256));
      const int vl_walk = VlArbiter::PickInTableWalk(table, idx_walk, used_walk, eligible);
      const int vl = VlArbiter::PickInTableIndexed(table, idx, used, eligible);
      ASSERT_EQ(vl, vl_walk) << round;
      ASSERT_EQ(idx, idx_walk) << round;
      ASSERT_EQ(used, used_walk) << round;
    }
  }
}

}  // namespace
}  // namespace lossless::flowctl
