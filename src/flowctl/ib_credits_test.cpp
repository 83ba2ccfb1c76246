// The InfiniBand credit counters alone (flowctl/ib_credits.hpp), no engine:
// IBA Vol. 1, 7.9 (FCTBS, ABR, FCCL, 12-bit arithmetic).
#include "flowctl/ib_credits.hpp"

#include <gtest/gtest.h>

namespace lossless::flowctl {
namespace {

// A link's VL seen from both ends, as at link initialisation: the receiver
// grants `limit` blocks and the sender knows it.
struct Link {
  IbVl sender, receiver;
  explicit Link(int32_t limit) {
    receiver.limit = limit;
    sender.fccl = receiver.Fccl();
  }
  void Fcp() { sender.fccl = receiver.Fccl(); }
};

TEST(IbCredits, BlocksRoundUpTo64Bytes) {
  EXPECT_EQ(IbBlocks(64), 1);
  EXPECT_EQ(IbBlocks(65), 2);
  EXPECT_EQ(IbBlocks(4122), 65);  // a 4 KiB MTU packet with IB headers
}

TEST(IbCredits, ASenderSendsExactlyWhatTheReceiverGranted) {
  Link l(100);
  EXPECT_EQ(l.sender.Available(), 100);
  l.sender.Charge(65);
  l.receiver.Receive(65);
  EXPECT_EQ(l.sender.Available(), 35);
  l.sender.Charge(35);
  l.receiver.Receive(35);
  EXPECT_EQ(l.sender.Available(), 0);
  EXPECT_EQ(l.receiver.used, 100);
  EXPECT_EQ(l.receiver.max_used, 100);
  // The FCP before any release carries no new credit.
  l.Fcp();
  EXPECT_EQ(l.sender.Available(), 0);
  l.receiver.Release(65);
  l.Fcp();
  EXPECT_EQ(l.sender.Available(), 65);
}

TEST(IbCredits, CountersWrapModulo4096WithoutLosingCredit) {
  Link l(kMaxCredits);
  // 100 rounds of 1,000 blocks: the 12-bit counters wrap many times.
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(l.sender.Available(), kMaxCredits) << i;
    l.sender.Charge(1000);
    l.receiver.Receive(1000);
    EXPECT_EQ(l.sender.Available(), kMaxCredits - 1000);
    l.receiver.Release(1000);
    l.Fcp();
  }
  EXPECT_EQ(l.receiver.used, 0);
}

TEST(IbCredits, ALostFcpIsHealedByTheNextOne) {
  Link l(200);
  l.sender.Charge(150);
  l.receiver.Receive(150);
  l.receiver.Release(50);
  const uint16_t lost = l.receiver.Fccl();  // never reaches the sender
  l.receiver.Release(100);
  EXPECT_EQ(l.sender.Available(), 50);
  l.Fcp();  // FCCL is absolute: the later FCP carries both releases
  EXPECT_EQ(l.sender.Available(), 200);
  EXPECT_NE(lost, l.sender.fccl);
}

TEST(IbCredits, FcpGridIsTheNextMultipleOfThePeriod) {
  EXPECT_EQ(NextFcpGridPoint(0, 4096), 0);
  EXPECT_EQ(NextFcpGridPoint(1, 4096), 4096);
  EXPECT_EQ(NextFcpGridPoint(4096, 4096), 4096);
  EXPECT_EQ(NextFcpGridPoint(4097, 4096), 8192);
}

TEST(IbCredits, ConfigRefusesWhatTheModelCannotRun) {
  IbLinkConfig c;
  EXPECT_NO_THROW(c.Check(65));
  c.credits = 64;
  EXPECT_THROW(c.Check(65), std::invalid_argument);  // below one MTU packet
  c.credits = kMaxCredits + 1;
  EXPECT_THROW(c.Check(65), std::invalid_argument);
  c = IbLinkConfig{};
  c.num_vls = 8;
  EXPECT_THROW(c.Check(65), std::invalid_argument);
  c = IbLinkConfig{};
  c.low = {{4, 64}};  // VL4 with 4 data VLs
  EXPECT_THROW(c.Check(65), std::invalid_argument);
  c = IbLinkConfig{};
  c.limit_of_high = 256;
  EXPECT_THROW(c.Check(65), std::invalid_argument);
  c = IbLinkConfig{};
  c.fcp_period = units::Time::Zero();
  EXPECT_THROW(c.Check(65), std::invalid_argument);
}

}  // namespace
}  // namespace lossless::flowctl
