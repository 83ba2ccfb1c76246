#include "rdma/rc.hpp"

#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace lossless::rdma {
namespace {

using Resp = RcResponder::Response;

RcConfig Cfg() {
  RcConfig c;
  c.timeout_exp = 10;
  c.retry_cnt = 7;
  return c;
}

// Sends everything the requester has, returning the segments.
std::vector<Segment> Drain(RcRequester& rq, Time now) {
  std::vector<Segment> out;
  while (rq.HasToSend()) {
    out.push_back(rq.Peek());
    rq.Advance(now);
  }
  return out;
}

TEST(RcConfigTest, TimeoutIs4096NsTimesTwoToTheT) {
  RcConfig c;
  c.timeout_exp = 10;
  EXPECT_EQ(c.Timeout(), Time::Ps(4'194'304'000));
  c.timeout_exp = 20;
  EXPECT_EQ(c.Timeout(), Time::Ps(4'294'967'296'000));  // 4.295 s, NCCL's default
  c.timeout_exp = 0;
  EXPECT_EQ(c.Timeout(), Time::Zero());  // no timeout
}

TEST(RcConfigTest, RefusesOutOfRangeValues) {
  RcConfig c;
  c.retry_cnt = 8;
  EXPECT_THROW(c.Check(), std::invalid_argument);
  c = RcConfig{};
  c.retry_cnt = 0;
  EXPECT_NO_THROW(c.Check());
  c.timeout_exp = 32;
  EXPECT_THROW(c.Check(), std::invalid_argument);
  c = RcConfig{};
  c.ack_every = 0;
  EXPECT_THROW(c.Check(), std::invalid_argument);
  c = RcConfig{};
  c.ooo = true;
  c.go_back_0 = true;
  EXPECT_THROW(c.Check(), std::invalid_argument);
}

TEST(RcRequesterTest, SegmentsMessagesIntoMtuPacketsWithConsecutivePsns) {
  RcRequester rq(Cfg(), 4096);
  rq.Post(10'000, 7);
  rq.Post(4096, 8);
  const auto segs = Drain(rq, Time::Zero());
  ASSERT_EQ(segs.size(), 4u);
  EXPECT_EQ(segs[0].payload, 4096);
  EXPECT_EQ(segs[1].payload, 4096);
  EXPECT_EQ(segs[2].payload, 10'000 - 2 * 4096);
  EXPECT_TRUE(segs[2].last);
  EXPECT_FALSE(segs[1].last);
  EXPECT_EQ(segs[3].payload, 4096);
  EXPECT_TRUE(segs[3].last);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(segs[i].psn, i);
    EXPECT_FALSE(segs[i].retransmission);
  }
  std::vector<uint64_t> done;
  rq.OnAck(1, Time::Us(1), done);
  EXPECT_TRUE(done.empty());
  rq.OnAck(2, Time::Us(2), done);
  EXPECT_EQ(done, std::vector<uint64_t>{7});
  rq.OnAck(3, Time::Us(3), done);
  EXPECT_EQ(done, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(rq.messages_outstanding(), 0u);
  EXPECT_EQ(rq.Deadline(), Time::Max());  // nothing outstanding, no timer
}

TEST(RcRequesterTest, AckBeyondWhatWasSentIsIgnored) {
  RcRequester rq(Cfg(), 1000);
  rq.Post(5000, 1);
  rq.Peek();
  rq.Advance(Time::Zero());  // PSN 0 only
  std::vector<uint64_t> done;
  rq.OnAck(4, Time::Us(1), done);  // bogus: PSNs 1-4 never left
  EXPECT_EQ(rq.una(), 1u);
  EXPECT_TRUE(done.empty());
}

TEST(RcInOrderTest, OneLossDrawsOneNakAndGoBackNResendsFromTheGap) {
  RcConfig cfg = Cfg();
  RcRequester rq(cfg, 1000);
  RcResponder rs(cfg);
  rq.Post(10'000, 1);  // PSNs 0-9
  const auto segs = Drain(rq, Time::Zero());
  int naks = 0, acks = 0;
  uint32_t nak_psn = 0;
  for (const Segment& s : segs) {
    if (s.psn == 3) continue;  // lost
    const Resp r = rs.OnData(s.psn, s.payload, s.last, Time::Us(1));
    if (r.send == Resp::kNak) {
      ++naks;
      nak_psn = r.psn;
    }
    if (r.send == Resp::kAck) ++acks;
    if (s.psn > 3) {
      EXPECT_TRUE(r.discarded);
    }
  }
  EXPECT_EQ(naks, 1);  // one per gap
  EXPECT_EQ(nak_psn, 3u);
  EXPECT_EQ(acks, 3);  // PSNs 0, 1, 2
  std::vector<uint64_t> done;
  ASSERT_TRUE(rq.OnNak(nak_psn, Time::Us(2), done));
  EXPECT_EQ(rq.una(), 3u);
  const auto again = Drain(rq, Time::Us(2));
  ASSERT_EQ(again.size(), 7u);
  EXPECT_EQ(again.front().psn, 3u);
  EXPECT_TRUE(again.front().retransmission);
  EXPECT_EQ(rq.retransmitted(), 7u);
  uint32_t completed = 0;
  for (const Segment& s : again) {
    const Resp r = rs.OnData(s.psn, s.payload, s.last, Time::Us(3));
    EXPECT_EQ(r.send, Resp::kAck);
    completed += r.messages;
  }
  EXPECT_EQ(completed, 1u);
  rq.OnAck(9, Time::Us(4), done);
  EXPECT_EQ(done, std::vector<uint64_t>{1});
}

TEST(RcInOrderTest, ALostRetransmissionDrawsASecondNakWhenTheRequesterGoesBack) {
  RcConfig cfg = Cfg();
  RcResponder rs(cfg);
  rs.OnData(0, 100, false, Time::Zero());
  // PSN 1 lost; 2-5 of the first round arrive: one NAK.
  int naks = 0;
  for (uint32_t psn = 2; psn <= 5; ++psn)
    naks += rs.OnData(psn, 100, false, Time::Zero()).send == Resp::kNak;
  EXPECT_EQ(naks, 1);
  // The second round: 1 lost again, 2 arrives (not above 5: the requester went back).
  Resp r = rs.OnData(2, 100, false, Time::Zero());
  EXPECT_EQ(r.send, Resp::kNak);
  EXPECT_EQ(r.psn, 1u);
  EXPECT_NE(rs.OnData(3, 100, false, Time::Zero()).send, Resp::kNak);  // same round
  r = rs.OnData(1, 100, false, Time::Zero());
  EXPECT_EQ(r.send, Resp::kAck);
  EXPECT_EQ(rs.naks_sent(), 2u);
}

TEST(RcInOrderTest, DuplicatesAreAcknowledgedAgain) {
  RcConfig cfg = Cfg();
  RcResponder rs(cfg);
  rs.OnData(0, 100, false, Time::Zero());
  const Resp r = rs.OnData(0, 100, false, Time::Zero());
  EXPECT_TRUE(r.duplicate);
  EXPECT_EQ(r.send, Resp::kAck);
  EXPECT_EQ(r.psn, 0u);
  EXPECT_EQ(r.placed_bytes, 0);
}

TEST(RcInOrderTest, AckCoalescingAcksEveryNthAndTheLastOfAMessage) {
  RcConfig cfg = Cfg();
  cfg.ack_every = 4;
  RcResponder rs(cfg);
  std::vector<uint32_t> acked;
  for (uint32_t psn = 0; psn < 10; ++psn) {
    const Resp r = rs.OnData(psn, 100, psn == 9, Time::Zero());
    if (r.send == Resp::kAck) acked.push_back(r.psn);
  }
  EXPECT_EQ(acked, (std::vector<uint32_t>{3, 7, 9}));
}

TEST(RcTimeoutTest, TailLossIsRecoveredByTheLocalAckTimeout) {
  RcConfig cfg = Cfg();
  RcRequester rq(cfg, 1000);
  rq.Post(3000, 5);
  Drain(rq, Time::Us(10));
  EXPECT_EQ(rq.Deadline(), Time::Us(10) + cfg.Timeout());
  std::vector<uint64_t> done;
  rq.OnAck(1, Time::Us(20), done);  // PSN 2 lost: the ACK restarts the timer
  EXPECT_EQ(rq.Deadline(), Time::Us(20) + cfg.Timeout());
  ASSERT_TRUE(rq.OnTimeout(rq.Deadline()));
  EXPECT_EQ(rq.Deadline(), Time::Max());  // off until the resend leaves
  const auto again = Drain(rq, Time::Us(5000));
  ASSERT_EQ(again.size(), 1u);  // exactly the lost packet
  EXPECT_EQ(again[0].psn, 2u);
  EXPECT_EQ(rq.Deadline(), Time::Us(5000) + cfg.Timeout());
  EXPECT_EQ(rq.timeouts(), 1u);
}

TEST(RcTimeoutTest, RetriesRunOutWithoutProgressAndComeBackWithIt) {
  RcConfig cfg = Cfg();
  cfg.retry_cnt = 2;
  RcRequester rq(cfg, 1000);
  rq.Post(3000, 5);
  Drain(rq, Time::Zero());
  ASSERT_TRUE(rq.OnTimeout(Time::Ms(5)));
  Drain(rq, Time::Ms(5));
  std::vector<uint64_t> done;
  rq.OnAck(0, Time::Ms(6), done);  // progress: two retries again
  ASSERT_TRUE(rq.OnTimeout(Time::Ms(11)));
  Drain(rq, Time::Ms(11));
  ASSERT_TRUE(rq.OnTimeout(Time::Ms(16)));
  Drain(rq, Time::Ms(16));
  EXPECT_FALSE(rq.OnTimeout(Time::Ms(21)));  // the third without progress
  EXPECT_TRUE(rq.failed());
  EXPECT_EQ(rq.Deadline(), Time::Max());
}

TEST(RcTimeoutTest, RetryCountZeroFailsOnTheFirstNak) {
  RcConfig cfg = Cfg();
  cfg.retry_cnt = 0;
  RcRequester rq(cfg, 1000);
  rq.Post(3000, 5);
  Drain(rq, Time::Zero());
  std::vector<uint64_t> done;
  EXPECT_FALSE(rq.OnNak(1, Time::Us(1), done));
  EXPECT_TRUE(rq.failed());
}

TEST(RcTimeoutTest, ExponentZeroMeansNoTimer) {
  RcConfig cfg = Cfg();
  cfg.timeout_exp = 0;
  RcRequester rq(cfg, 1000);
  rq.Post(3000, 5);
  Drain(rq, Time::Zero());
  EXPECT_EQ(rq.Deadline(), Time::Max());
}

TEST(RcGoBack0Test, ALossRestartsTheWholeMessageAtBothEnds) {
  RcConfig cfg = Cfg();
  cfg.go_back_0 = true;
  RcRequester rq(cfg, 1000);
  RcResponder rs(cfg);
  rq.Post(2000, 1);   // PSNs 0-1
  rq.Post(10'000, 2);  // PSNs 2-11
  const auto segs = Drain(rq, Time::Zero());
  int64_t placed = 0;
  std::vector<uint64_t> done;
  Resp nak;
  for (const Segment& s : segs) {
    if (s.psn == 6) continue;  // lost in the middle of message 2
    const Resp r = rs.OnData(s.psn, s.payload, s.last, Time::Us(1));
    placed += r.placed_bytes;
    if (r.send == Resp::kAck) rq.OnAck(r.psn, Time::Us(1), done);
    if (r.send == Resp::kNak) nak = r;
  }
  ASSERT_EQ(nak.send, Resp::kNak);
  EXPECT_EQ(nak.psn, 2u);          // the start of message 2, not the lost PSN
  EXPECT_EQ(placed, 2000);         // message 1 only: message 2's part was discarded
  EXPECT_EQ(done, std::vector<uint64_t>{1});
  ASSERT_TRUE(rq.OnNak(nak.psn, Time::Us(2), done));
  EXPECT_EQ(rq.una(), 2u);
  const auto again = Drain(rq, Time::Us(2));
  ASSERT_EQ(again.size(), 10u);
  EXPECT_EQ(again.front().psn, 2u);
}

TEST(RcOutOfOrderTest, PlacesByPsnAndNaksOnlyAGapThatOutlivesTheWindow) {
  RcConfig cfg = Cfg();
  cfg.ooo = true;
  cfg.reorder_window = Time::Us(5);
  RcResponder rs(cfg);
  // PSNs 0, 2, 3 arrive; 1 is late (reordered), then arrives: no NAK.
  EXPECT_EQ(rs.OnData(0, 100, false, Time::Us(0)).send, Resp::kAck);
  Resp r = rs.OnData(2, 100, false, Time::Us(1));
  EXPECT_EQ(r.placed_bytes, 100);
  EXPECT_NE(r.send, Resp::kNak);
  r = rs.OnData(3, 100, true, Time::Us(2));
  EXPECT_NE(r.send, Resp::kNak);
  EXPECT_EQ(r.messages, 0u);
  r = rs.OnData(1, 100, false, Time::Us(3));
  EXPECT_EQ(r.messages, 1u);  // the gap filled: PSNs 1-3 delivered, message complete
  EXPECT_EQ(r.send, Resp::kAck);
  EXPECT_EQ(r.psn, 3u);
  EXPECT_EQ(rs.epsn(), 4u);
  // PSN 4 lost: 5 at 10 us opens the gap, 6 at 14 us is within the window,
  // 7 at 16 us is past it: one NAK for PSN 4.
  EXPECT_NE(rs.OnData(5, 100, false, Time::Us(10)).send, Resp::kNak);
  EXPECT_NE(rs.OnData(6, 100, false, Time::Us(14)).send, Resp::kNak);
  r = rs.OnData(7, 100, false, Time::Us(16));
  EXPECT_EQ(r.send, Resp::kNak);
  EXPECT_EQ(r.psn, 4u);
  EXPECT_NE(rs.OnData(8, 100, false, Time::Us(17)).send, Resp::kNak);  // one per gap
  EXPECT_EQ(rs.naks_sent(), 1u);
  r = rs.OnData(4, 100, false, Time::Us(20));
  EXPECT_EQ(rs.epsn(), 9u);
  // Go-back-N resends 5-8: duplicates now.
  EXPECT_TRUE(rs.OnData(5, 100, false, Time::Us(21)).duplicate);
}

}  // namespace
// A gap no later packet reveals (the lost PSN is among the last sent) is
// NAKed by the responder's window timer, not left to the ACK timeout.
TEST(RcOutOfOrderTest, AGapNoLaterPacketRevealsIsNakedWhenTheWindowEnds) {
  RcConfig cfg = Cfg();
  cfg.ooo = true;
  cfg.reorder_window = Time::Us(5);
  RcResponder rs(cfg);
  EXPECT_EQ(rs.GapDeadline(), Time::Max());
  rs.OnData(0, 100, false, Time::Us(0));
  EXPECT_EQ(rs.GapDeadline(), Time::Max());  // no gap
  // PSN 1 lost, 2 (the last) arrives at 1 us: the gap is due at 6 us.
  EXPECT_NE(rs.OnData(2, 100, true, Time::Us(1)).send, Resp::kNak);
  EXPECT_EQ(rs.GapDeadline(), Time::Us(6));
  EXPECT_EQ(rs.OnGapTimer(Time::Us(5)).send, Resp::kNone);  // early: nothing
  const Resp r = rs.OnGapTimer(Time::Us(6));
  EXPECT_EQ(r.send, Resp::kNak);
  EXPECT_EQ(r.psn, 1u);
  EXPECT_EQ(rs.naks_sent(), 1u);
  EXPECT_EQ(rs.GapDeadline(), Time::Max());  // one NAK per gap
  EXPECT_EQ(rs.OnGapTimer(Time::Us(20)).send, Resp::kNone);
  // Go-back-N resends 1 and 2: the gap closes, no deadline left.
  rs.OnData(1, 100, false, Time::Us(8));
  EXPECT_EQ(rs.epsn(), 3u);
  EXPECT_EQ(rs.GapDeadline(), Time::Max());
  // In order (no ooo) the responder never needs the timer.
  RcResponder in_order(Cfg());
  in_order.OnData(0, 100, false, Time::Us(0));
  in_order.OnData(2, 100, true, Time::Us(1));
  EXPECT_EQ(in_order.GapDeadline(), Time::Max());
}

}  // namespace lossless::rdma
