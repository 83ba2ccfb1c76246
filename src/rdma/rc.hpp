#pragma once
// Reliable Connected (RC) transport of RDMA, engine-free: the requester and
// responder state machines of one queue pair (QP), as InfiniBand RC and
// RoCE v2 RC run them (InfiniBand Architecture Specification vol. 1, ch. 9:
// packet sequence numbers, ACK/NAK, the local ACK timeout and the retry
// counter). The caller (fabric/nic.cpp) owns the packets, the wire and the
// timer; a model says what to send next, what to answer and when it next
// needs a call (docs/model/transport.md).
//
// - Messages are posted in order and segmented into packets of at most the
//   path MTU's payload, numbered by consecutive PSNs. The last packet of a
//   message asks for an acknowledgement.
// - The responder acknowledges cumulatively: an ACK carries the last PSN it
//   has placed in order. In order mode (per-flow routing), the first packet
//   beyond the expected PSN (ePSN) draws one sequence-error NAK carrying the
//   ePSN and is discarded, as are later ones until the ePSN arrives (a NAK is
//   repeated when the requester is seen to have gone back and the ePSN is
//   missing again). With
//   out-of-order placement (per-packet adaptive routing or spraying), packets
//   beyond the ePSN are placed by PSN and a NAK is sent only when a gap
//   outlives the reorder window.
// - Go-back-N: a NAK rewinds the requester to the NAK's PSN; a local ACK
//   timeout rewinds it to the oldest unacknowledged PSN. Go-back-0 (old
//   NICs, Guo et al., SIGCOMM 2016): a loss restarts the whole message, and
//   the responder discards the part of the message it had placed.
// - The local ACK timeout is 4.096 us x 2^t (t = 0: no timeout, as the IBA
//   defines it). Timeouts and sequence-error NAKs each use one retry; forward
//   progress (the oldest unacknowledged PSN advancing) restores the count.
//   With no retry left the QP fails (the caller ends the run and names the QP).
#include <cstdint>
#include <vector>

#include "base/ring.hpp"
#include "units/units.hpp"

namespace lossless::rdma {

using units::Time;

struct RcConfig {
  // Local ACK timeout exponent t: 4.096 us x 2^t; 0 = none; 1-31. NCCL's
  // default NCCL_IB_TIMEOUT is 20 (4.295 s; NCCL src/transport/net_ib).
  int timeout_exp = 20;
  // Retries after a timeout or a sequence-error NAK before the QP fails;
  // 0-7 (NCCL_IB_RETRY_CNT default 7).
  int retry_cnt = 7;
  bool go_back_0 = false;
  // The responder acknowledges every `ack_every` packets placed (and always
  // the last packet of a message). 1 = every packet.
  int ack_every = 1;
  // Out-of-order placement by PSN (per-packet routing); off = in order.
  bool ooo = false;
  // With ooo: a gap older than this draws a NAK.
  Time reorder_window = Time::Us(16);
  // With ooo: PSNs beyond the ePSN the responder can place (more are dropped).
  int32_t ooo_capacity = 4096;
  // Queue pairs per connection of the collective engines (1-128;
  // NCCL_IB_QPS_PER_CONNECTION, default 1) and whether each message is split
  // over them (NCCL_IB_SPLIT_DATA_ON_QPS, default 0: one QP per message in
  // turn). The transport itself runs one QP at a time; the engines open
  // these (collective/ring_engine.hpp).
  int qps_per_connection = 1;
  bool split_data_on_qps = false;

  Time Timeout() const;
  // Throws std::invalid_argument naming the field for values out of range.
  void Check() const;
};

// One packet to send: its PSN, payload and whether it ends its message.
struct Segment {
  uint32_t psn = 0;
  int32_t payload = 0;
  bool last = false;
  bool retransmission = false;  // this PSN was sent before
};

class alignas(64) RcRequester {
 public:
  RcRequester(const RcConfig& cfg, int32_t mtu_payload);

  // Queues a message of `bytes` (> 0) with the caller's `tag`. Throws
  // std::length_error beyond 2^32 packets on one QP (PSNs would wrap).
  void Post(int64_t bytes, uint64_t tag);

  bool HasToSend() const { return nxt_ < end_; }
  // The next packet (HasToSend() must be true) and moving past it; `now`
  // starts the ACK timer if nothing was outstanding.
  Segment Peek() const;
  void Advance(Time now);

  // A cumulative ACK up to and including `psn`. Appends the tags of the
  // messages it completes to `done`. Late or duplicate ACKs do nothing.
  void OnAck(uint32_t psn, Time now, std::vector<uint64_t>& done);
  // A sequence-error NAK: the responder expects `epsn` (everything before it
  // is acknowledged). Rewinds; returns false when no retry was left (the QP
  // has failed).
  bool OnNak(uint32_t epsn, Time now, std::vector<uint64_t>& done);
  // When the ACK timer fires (Time::Max() when it is not running).
  Time Deadline() const;
  // The timer fired at `now` (>= Deadline()): rewinds to the oldest
  // unacknowledged PSN; returns false when no retry was left.
  bool OnTimeout(Time now);

  bool failed() const { return failed_; }
  uint32_t una() const { return static_cast<uint32_t>(una_); }
  uint32_t end() const { return static_cast<uint32_t>(end_); }
  size_t messages_outstanding() const { return msgs_.size; }
  uint64_t naks() const { return naks_; }
  uint64_t timeouts() const { return timeouts_; }
  uint64_t retransmitted() const { return retransmitted_; }

 private:
  struct Message {
    uint64_t first = 0;  // PSN of its first packet
    uint64_t packets = 0;
    int64_t bytes = 0;
    uint64_t tag = 0;
  };
  void Acknowledge(uint64_t upto, Time now, std::vector<uint64_t>& done);  // PSNs < upto
  void Rewind(uint64_t to);
  bool UseRetry();
  size_t MessageOf(uint64_t psn) const;

  // Loads the current message's end and last payload (cur_end_,
  // cur_last_payload_) after cur_ or msgs_ changed.
  void LoadCur();

  // What every packet reads first, in one cache line (with the object's
  // alignment): Peek, Advance and Deadline touch nothing else unless a
  // message ends.
  uint64_t nxt_ = 0;          // next PSN to send
  uint64_t sent_max_ = 0;     // PSN after the highest ever sent
  uint64_t end_ = 0;          // PSN after the last posted packet
  uint64_t una_ = 0;          // oldest unacknowledged PSN
  uint64_t cur_end_ = 0;      // PSN after the current message (msgs_[cur_])
  int64_t timer_start_ = -1;  // when the ACK timer was (re)started; -1 = off
  int64_t timeout_ps_ = 0;    // 0 = none
  int32_t mtu_ = 0;
  int32_t cur_last_payload_ = 0;  // payload of the current message's last packet
  size_t cur_ = 0;                // msgs_ index of the message holding nxt_
  base::Ring<Message> msgs_;      // not yet acknowledged, in PSN order
  bool failed_ = false;
  int retries_left_ = 0;
  RcConfig cfg_;
  uint64_t naks_ = 0, timeouts_ = 0, retransmitted_ = 0;
};

class RcResponder {
 public:
  explicit RcResponder(const RcConfig& cfg);

  // What the responder does with an arriving data packet.
  struct Response {
    enum Kind : uint8_t { kNone, kAck, kNak } send = kNone;
    uint32_t psn = 0;         // ACK: last PSN placed in order; NAK: the expected PSN
    int64_t placed_bytes = 0; // payload placed for the first time by this packet
    uint32_t messages = 0;    // messages completed (delivered in order) by this packet
    bool duplicate = false;   // an already placed PSN (discarded)
    bool discarded = false;   // out of sequence and not placed
  };
  Response OnData(uint32_t psn, int32_t payload, bool last, Time now);

  // Out-of-order placement: when the open gap will have outlived the reorder
  // window with no NAK out for it (Time::Max() when none is due). The NIC
  // calls OnGapTimer then, so a gap that no later packet reveals (a loss at
  // the tail of the traffic) costs one window, not an ACK timeout.
  Time GapDeadline() const;
  // At or after GapDeadline(): the NAK for the gap (kNone when none is due).
  Response OnGapTimer(Time now);

  uint32_t epsn() const { return static_cast<uint32_t>(epsn_); }
  uint64_t messages_completed() const { return completed_; }
  uint64_t naks_sent() const { return naks_; }

 private:
  bool Placed(uint64_t psn) const;
  void Advance(Response& r);
  // Out-of-order placement: the NAK for the open gap (one per gap).
  void Nak(Response& r);

  RcConfig cfg_;
  uint64_t epsn_ = 0;       // expected PSN: everything before it is placed in order
  uint64_t msg_start_ = 0;  // first PSN of the message in progress
  int64_t msg_bytes_ = 0;   // bytes of it placed in order (go-back-0 discards them)
  bool nak_sent_ = false;   // a NAK for the current gap is out
  uint64_t max_oos_ = 0;    // in order: highest PSN beyond the ePSN since that NAK
  int64_t gap_since_ = -1;  // ooo: when the current gap was first seen
  uint32_t unacked_ = 0;    // packets placed since the last ACK
  uint64_t completed_ = 0;
  uint64_t naks_ = 0;
  // ooo: placement beyond the ePSN, ring of ooo_capacity entries indexed by
  // PSN: bit 0 = placed, bit 1 = last packet of a message.
  std::vector<uint8_t> window_;
  uint64_t window_hi_ = 0;  // PSN after the highest placed beyond the ePSN
};

}  // namespace lossless::rdma
