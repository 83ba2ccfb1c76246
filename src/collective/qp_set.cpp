#include "collective/qp_set.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace lossless::collective {

QpSet::QpSet(fabric::Network& net, uint32_t src, uint32_t dst, int n, bool split) : split_(split) {
  if (n < 1 || n > 128)
    throw std::invalid_argument(fmt::format("{} queue pairs per connection, expected 1 to 128", n));
  n_ = static_cast<uint32_t>(n);
  for (uint32_t q = 0; q < n_; ++q) {
    const uint32_t id = net.AddQp(fabric::FlowSpec::Of(src, dst, 0));
    if (q == 0) first_ = id;
    // Invariant (release-checked: completions are mapped back by offset).
    if (id != first_ + q) throw std::logic_error("queue pairs of a connection not consecutive");
  }
  if (n_ > 1) {
    qp_msgs_.assign(n_, {});
    qp_msgs_head_.assign(n_, 0);
  }
}

void QpSet::Post(fabric::Network& net, int64_t bytes) {
  if (n_ == 1) {
    net.PostSend(first_, bytes, 0);
    return;
  }
  const uint64_t seq = send_head_ + (send_left_.size() - send_off_);
  uint32_t parts = 0;
  if (!split_) {
    net.PostSend(first_ + next_, bytes, seq);
    qp_msgs_[next_].push_back(seq);
    next_ = next_ + 1 == n_ ? 0 : next_ + 1;
    parts = 1;
  } else {
    // A multiple of 128 B, so LL and LL128 lines stay whole; QPs past the
    // end of a short message get nothing (NCCL posts them an empty write, a
    // header-only packet, not modelled).
    constexpr int64_t kAlign = 128;
    const int64_t chunk = ((bytes + n_ - 1) / n_ + kAlign - 1) / kAlign * kAlign;
    for (uint32_t k = 0; k < n_; ++k) {
      const int64_t off = int64_t{k} * chunk;
      if (off >= bytes) break;
      const uint32_t q = (next_ + k) % n_;
      net.PostSend(first_ + q, std::min(chunk, bytes - off), seq);
      qp_msgs_[q].push_back(seq);
      ++parts;
    }
  }
  send_left_.push_back(parts);
  recv_left_.push_back(parts);
}

uint32_t QpSet::PartDone(std::vector<uint32_t>& left, size_t& off, uint64_t& head, uint64_t seq) {
  --left[off + static_cast<size_t>(seq - head)];
  uint32_t whole = 0;
  while (off < left.size() && left[off] == 0) {
    ++off;
    ++head;
    ++whole;
  }
  if (off == left.size()) {
    left.clear();
    off = 0;
  }
  return whole;
}

uint32_t QpSet::SendDone(uint64_t tag) {
  if (n_ == 1) return 1;
  return PartDone(send_left_, send_off_, send_head_, tag);
}

uint32_t QpSet::RecvDone(uint32_t qp) {
  if (n_ == 1) return 1;
  const uint32_t q = qp - first_;
  std::vector<uint64_t>& msgs = qp_msgs_[q];
  const uint64_t seq = msgs[qp_msgs_head_[q]++];
  if (qp_msgs_head_[q] == msgs.size()) {
    msgs.clear();
    qp_msgs_head_[q] = 0;
  }
  return PartDone(recv_left_, recv_off_, recv_head_, seq);
}

}  // namespace lossless::collective
