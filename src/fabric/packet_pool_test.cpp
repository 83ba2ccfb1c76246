// PacketPool's observer (docs/parallel.md#the-peak-of-packets-alive): a
// distributed run learns of every packet made and freed from the pool, and
// of none of the copies that carry frames across ranks (AllocQuiet,
// FreeQuiet).
#include <vector>

#include <gtest/gtest.h>

#include "fabric/packet.hpp"

namespace lossless::fabric {
namespace {
namespace packet_pool_test {

struct Log final : PacketPool::Observer {
  std::vector<int> deltas;
  void PacketsChanged(int delta) override { deltas.push_back(delta); }
};

}  // namespace packet_pool_test

TEST(PacketPool, ObserverSeesEveryAllocAndFreeButNoQuietOne) {
  PacketPool pool;
  packet_pool_test::Log log;
  const PacketRef before = pool.Alloc();  // no observer yet: not seen
  pool.set_observer(&log);
  const PacketRef a = pool.Alloc();
  const PacketRef b = pool.Alloc();
  const PacketRef q = pool.AllocQuiet();
  pool.Free(a);
  pool.FreeQuiet(q);
  pool.Free(before);
  EXPECT_EQ(log.deltas, (std::vector<int>{1, 1, -1, -1}));
  // Quiet or not, the pool's own count and peak see every packet.
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.peak(), 4u);
  // Slots freed quietly are reused like any other.
  const PacketRef c = pool.Alloc();
  EXPECT_TRUE(c == a || c == q || c == before) << c;
  pool.set_observer(nullptr);
  pool.Free(b);
  pool.Free(c);
  EXPECT_EQ(log.deltas.size(), 5u);
  EXPECT_EQ(pool.live(), 0u);
}

}  // namespace
}  // namespace lossless::fabric
