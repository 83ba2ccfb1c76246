#include "rdma/rc.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace lossless::rdma {

Time RcConfig::Timeout() const {
  // 4.096 us x 2^t (IBA vol. 1, 9.7.6.1.3, "Local ACK Timeout"); t = 0 disables it.
  if (timeout_exp == 0) return Time::Zero();
  return Time::Ns(4096) * (int64_t{1} << timeout_exp);
}

void RcConfig::Check() const {
  if (timeout_exp < 0 || timeout_exp > 31)
    throw std::invalid_argument(
        fmt::format("transport.timeout: expected an exponent from 0 (none) to 31, got {}",
                    timeout_exp));
  if (retry_cnt < 0 || retry_cnt > 7)
    throw std::invalid_argument(
        fmt::format("transport.retry_cnt: expected 0 to 7, got {}", retry_cnt));
  if (ack_every < 1 || ack_every > 65536)
    throw std::invalid_argument(
        fmt::format("transport.ack_every: expected 1 to 65536 packets, got {}", ack_every));
  if (ooo && go_back_0)
    throw std::invalid_argument(
        "transport.go_back: expected n with out-of-order placement (go-back-0 restarts "
        "whole messages and places nothing out of order)");
  if (ooo_capacity < 1 || ooo_capacity > (1 << 20))
    throw std::invalid_argument(
        fmt::format("transport.ooo_capacity: expected 1 to 1048576 packets, got {}",
                    ooo_capacity));
  if (qps_per_connection < 1 || qps_per_connection > 128)
    throw std::invalid_argument(
        fmt::format("transport.qps_per_connection: expected 1 to 128, got {}",
                    qps_per_connection));
  if (reorder_window.ps() < 0)
    throw std::invalid_argument("transport.reorder_window: expected a time of zero or more");
}

// --- requester ---------------------------------------------------------------

RcRequester::RcRequester(const RcConfig& cfg, int32_t mtu_payload)
    : timeout_ps_(cfg.Timeout().ps()), mtu_(mtu_payload), retries_left_(cfg.retry_cnt), cfg_(cfg) {
  if (mtu_payload <= 0) throw std::invalid_argument("RC requester: MTU payload must be positive");
}

void RcRequester::Post(int64_t bytes, uint64_t tag) {
  if (bytes <= 0) throw std::invalid_argument(fmt::format("RC post of {} bytes", bytes));
  const uint64_t packets = static_cast<uint64_t>((bytes + mtu_ - 1) / mtu_);
  if (end_ + packets > (uint64_t{1} << 32))
    throw std::length_error("RC queue pair: more than 2^32 packets posted (PSNs would wrap)");
  msgs_.push({end_, packets, bytes, tag});
  end_ += packets;
  if (cur_ + 1 == msgs_.size) LoadCur();  // it is the current message
}

void RcRequester::LoadCur() {
  if (cur_ >= msgs_.size) return;  // nothing to send: Peek is not called
  const Message& m = msgs_.at(static_cast<uint32_t>(cur_));
  cur_end_ = m.first + m.packets;
  cur_last_payload_ = static_cast<int32_t>(m.bytes - static_cast<int64_t>(m.packets - 1) * mtu_);
}

Segment RcRequester::Peek() const {
  Segment s;
  s.psn = static_cast<uint32_t>(nxt_);
  s.last = nxt_ + 1 == cur_end_;
  s.payload = s.last ? cur_last_payload_ : mtu_;
  s.retransmission = nxt_ < sent_max_;
  return s;
}

void RcRequester::Advance(Time now) {
  if (una_ == nxt_) timer_start_ = now.ps();  // the first packet outstanding starts the timer
  if (nxt_ < sent_max_) ++retransmitted_;
  ++nxt_;
  sent_max_ = std::max(sent_max_, nxt_);
  if (nxt_ == cur_end_) {
    ++cur_;
    LoadCur();
  }
}

size_t RcRequester::MessageOf(uint64_t psn) const {
  if (psn >= end_) return msgs_.size;
  // The last message that starts at or before `psn` (messages are in PSN order).
  uint32_t lo = 0, hi = msgs_.size;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (psn < msgs_.at(mid).first) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return static_cast<size_t>(lo) - 1;
}

void RcRequester::Acknowledge(uint64_t upto, Time now, std::vector<uint64_t>& done) {
  upto = std::min(upto, sent_max_);  // nothing beyond what was sent can be acknowledged
  if (upto <= una_) return;
  una_ = upto;
  timer_start_ = now.ps();  // forward progress restarts the timer ...
  retries_left_ = cfg_.retry_cnt;  // ... and restores the retries
  size_t popped = 0;
  while (!msgs_.empty() && msgs_.front().first + msgs_.front().packets <= una_) {
    done.push_back(msgs_.front().tag);
    msgs_.pop();
    ++popped;
  }
  cur_ = cur_ >= popped ? cur_ - popped : 0;
  if (nxt_ < una_) {
    nxt_ = una_;
    cur_ = MessageOf(nxt_);
  }
  LoadCur();
}

void RcRequester::OnAck(uint32_t psn, Time now, std::vector<uint64_t>& done) {
  if (failed_) return;
  Acknowledge(uint64_t{psn} + 1, now, done);
}

bool RcRequester::UseRetry() {
  if (retries_left_ == 0) {
    failed_ = true;
    return false;
  }
  --retries_left_;
  return true;
}

void RcRequester::Rewind(uint64_t to) {
  if (cfg_.go_back_0 && !msgs_.empty()) {
    // The whole message holding `to` again; the responder dropped its part.
    to = std::min(to, msgs_.at(static_cast<uint32_t>(MessageOf(std::min(to, end_ - 1)))).first);
    una_ = std::min(una_, to);
  }
  nxt_ = to;
  cur_ = MessageOf(nxt_);
  LoadCur();
}

bool RcRequester::OnNak(uint32_t epsn, Time now, std::vector<uint64_t>& done) {
  if (failed_) return false;
  ++naks_;
  Acknowledge(epsn, now, done);
  if (!UseRetry()) return false;
  if (uint64_t{epsn} < sent_max_) Rewind(std::max<uint64_t>(epsn, cfg_.go_back_0 ? 0 : una_));
  return true;
}

Time RcRequester::Deadline() const {
  if (timeout_ps_ == 0 || failed_ || una_ >= nxt_ || timer_start_ < 0) return Time::Max();
  return Time::Ps(timer_start_ + timeout_ps_);
}

bool RcRequester::OnTimeout(Time now) {
  if (failed_) return false;
  ++timeouts_;
  if (!UseRetry()) return false;
  Rewind(una_);
  timer_start_ = now.ps();
  return true;
}

// --- responder ---------------------------------------------------------------

RcResponder::RcResponder(const RcConfig& cfg) : cfg_(cfg) {
  if (cfg_.ooo) {
    window_.assign(static_cast<size_t>(cfg_.ooo_capacity), 0);
  }
}

bool RcResponder::Placed(uint64_t psn) const {
  return (window_[psn % window_.size()] & 1) != 0;
}

// The ePSN moved: deliver what was placed beyond it, in order.
void RcResponder::Advance(Response& r) {
  if (!cfg_.ooo) return;
  while (epsn_ < window_hi_ && Placed(epsn_)) {
    const size_t i = epsn_ % window_.size();
    const bool last = (window_[i] & 2) != 0;
    window_[i] = 0;
    ++epsn_;
    if (last) {
      ++completed_;
      ++r.messages;
      msg_start_ = epsn_;
    }
  }
}

RcResponder::Response RcResponder::OnData(uint32_t psn32, int32_t payload, bool last, Time now) {
  const uint64_t psn = psn32;
  Response r;
  auto ack_due = [&](bool force) {
    ++unacked_;
    if ((force || unacked_ >= static_cast<uint32_t>(cfg_.ack_every)) && epsn_ > 0) {
      r.send = Response::kAck;
      r.psn = static_cast<uint32_t>(epsn_ - 1);
      unacked_ = 0;
    }
  };
  if (psn < epsn_) {
    // Already placed: its ACK may have been lost; acknowledge again.
    r.duplicate = true;
    ack_due(last);
    return r;
  }
  if (psn == epsn_) {
    r.placed_bytes = payload;
    msg_bytes_ += payload;
    ++epsn_;
    if (last) {
      ++completed_;
      ++r.messages;
      msg_start_ = epsn_;
      msg_bytes_ = 0;
    }
    Advance(r);
    nak_sent_ = false;
    gap_since_ = (cfg_.ooo && window_hi_ > epsn_) ? now.ps() : -1;
    ack_due(r.messages > 0);
    return r;
  }
  // Beyond the ePSN: a gap.
  if (!cfg_.ooo) {
    r.discarded = true;
    // One NAK per gap; again only once the requester is seen to have gone
    // back (a PSN not above one already seen since the NAK: a new round),
    // so a lost retransmission costs one more round trip, not a timeout.
    const bool new_round = nak_sent_ && psn <= max_oos_;
    max_oos_ = nak_sent_ ? std::max(max_oos_, psn) : psn;
    if (new_round) max_oos_ = psn;
    if (!nak_sent_ || new_round) {
      nak_sent_ = true;
      ++naks_;
      if (cfg_.go_back_0) {
        // The message is received whole or not at all.
        r.placed_bytes = -msg_bytes_;
        epsn_ = msg_start_;
        msg_bytes_ = 0;
      }
      r.send = Response::kNak;
      r.psn = static_cast<uint32_t>(epsn_);
      unacked_ = 0;
    }
    return r;
  }
  if (psn - epsn_ >= window_.size()) {
    r.discarded = true;  // beyond what the responder can place
  } else if (Placed(psn)) {
    r.duplicate = true;
    if (nak_sent_) {
      // The requester went back and the gap is still open: a new round, which
      // may NAK again once the gap outlives another window.
      nak_sent_ = false;
      gap_since_ = now.ps();
    }
  } else {
    const size_t i = psn % window_.size();
    window_[i] = static_cast<uint8_t>(1 | (last ? 2 : 0));
    r.placed_bytes = payload;
    window_hi_ = std::max(window_hi_, psn + 1);
  }
  if (gap_since_ < 0) gap_since_ = now.ps();
  if (!nak_sent_ && now.ps() - gap_since_ >= cfg_.reorder_window.ps()) {
    Nak(r);
    return r;
  }
  ack_due(false);
  return r;
}

Time RcResponder::GapDeadline() const {
  if (!cfg_.ooo || gap_since_ < 0 || nak_sent_ || window_hi_ <= epsn_) return Time::Max();
  return Time::Ps(gap_since_ + cfg_.reorder_window.ps());
}

RcResponder::Response RcResponder::OnGapTimer(Time now) {
  Response r;
  if (GapDeadline() <= now) Nak(r);
  return r;
}

void RcResponder::Nak(Response& r) {
  nak_sent_ = true;
  ++naks_;
  r.send = Response::kNak;
  r.psn = static_cast<uint32_t>(epsn_);
  unacked_ = 0;
}

}  // namespace lossless::rdma
