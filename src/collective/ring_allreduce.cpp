#include "collective/ring_allreduce.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace lossless::collective {
namespace {

struct Block {
  int64_t first = 0;   // index of its first message in the rank's list
  int64_t slices = 0;  // messages of this (loop, step)
};

// The messages of the rank at ring position p, in order (loop, step, slice),
// and the (loop, step) blocks that index them.
void BuildSends(const RingAllReduceSpec& s, int64_t bytes, int64_t n, int64_t p,
                std::vector<std::pair<int64_t, int>>& out,  // (bytes, step)
                std::vector<std::vector<Block>>& blocks) {
  const int64_t steps = 2 * (n - 1);
  for (int64_t offset = 0; offset < bytes; offset += n * s.chunk_bytes) {
    const int64_t loop = std::min(n * s.chunk_bytes, bytes - offset);
    const int64_t part = (loop + n - 1) / n;
    std::vector<Block>& b = blocks.emplace_back(static_cast<size_t>(steps));
    for (int64_t k = 0; k < steps; ++k) {
      const int64_t idx = k < n - 1 ? ((p - k) % n + n) % n : ((p + 1 - (k - n + 1)) % n + n) % n;
      const int64_t c = std::clamp(loop - idx * part, int64_t{0}, part);
      b[static_cast<size_t>(k)].first = static_cast<int64_t>(out.size());
      const int64_t slices = (c + s.slice_bytes - 1) / s.slice_bytes;
      b[static_cast<size_t>(k)].slices = slices;
      for (int64_t j = 0; j < slices; ++j)
        out.emplace_back(std::min(s.slice_bytes, c - j * s.slice_bytes), static_cast<int>(k));
    }
  }
}

}  // namespace

RingAllReduce::RingAllReduce(fabric::Network& net, const RingAllReduceSpec& spec)
    : net_(net), spec_(spec) {
  if (spec_.rings.empty() || spec_.rings[0].size() < 2 || spec_.bytes <= 0 ||
      spec_.chunk_bytes <= 0 || spec_.slice_bytes <= 0 || spec_.slots <= 0 || spec_.cts_bytes <= 0)
    throw std::invalid_argument("ring all-reduce: expected rings of 2+ ranks and positive sizes");
  const int64_t n = static_cast<int64_t>(spec_.rings[0].size());
  for (const auto& ring : spec_.rings) {
    std::vector<uint32_t> a = ring, b = spec_.rings[0];
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b || std::adjacent_find(a.begin(), a.end()) != a.end())
      throw std::invalid_argument("ring all-reduce: every ring must order the same distinct hosts");
  }
  for (size_t c = 0; c < spec_.rings.size(); ++c) {
    const std::vector<uint32_t>& ring = spec_.rings[c];
    const size_t base = ranks_.size();
    std::vector<std::vector<std::vector<Block>>> blocks(static_cast<size_t>(n));
    std::vector<std::vector<std::pair<int64_t, int>>> lists(static_cast<size_t>(n));
    // Each channel reduces its own share of the buffer (NCCL splits the
    // buffer over channels chunk by chunk; the shares are the same).
    const int64_t channels = static_cast<int64_t>(spec_.rings.size());
    const int64_t share = spec_.bytes / channels + (static_cast<int64_t>(c) < spec_.bytes % channels);
    for (int64_t p = 0; p < n; ++p) BuildSends(spec_, share, n, p, lists[p], blocks[p]);
    for (int64_t p = 0; p < n; ++p) {
      Rank r;
      r.host = ring[static_cast<size_t>(p)];
      r.prev = base + static_cast<size_t>((p + n - 1) % n);
      r.next = base + static_cast<size_t>((p + 1) % n);
      r.credits = spec_.slots;
      r.send_slots = spec_.slots;
      const auto& prev_blocks = blocks[static_cast<size_t>((p + n - 1) % n)];
      for (size_t l = 0; l < blocks[p].size(); ++l) {
        for (size_t k = 0; k < blocks[p][l].size(); ++k) {
          const Block& mine = blocks[p][l][k];
          for (int64_t j = 0; j < mine.slices; ++j) {
            Msg m;
            m.bytes = lists[p][static_cast<size_t>(mine.first + j)].first;
            if (k > 0) m.dep = static_cast<int32_t>(prev_blocks[l][k - 1].first + j);
            r.sends.push_back(m);
          }
        }
      }
      ranks_.push_back(std::move(r));
    }
    // What each rank receives is its previous rank's list; mark which of
    // those its own sends forward.
    for (int64_t p = 0; p < n; ++p) {
      Rank& r = ranks_[base + static_cast<size_t>(p)];
      r.needed_by.assign(ranks_[r.prev].sends.size(), -1);
      for (size_t j = 0; j < r.sends.size(); ++j)
        if (r.sends[j].dep >= 0) r.needed_by[static_cast<size_t>(r.sends[j].dep)] = static_cast<int32_t>(j);
    }
    for (size_t i = base; i < ranks_.size(); ++i) {
      Rank& r = ranks_[i];
      r.data_qp = net_.AddQp(fabric::FlowSpec::Of(r.host, ranks_[r.next].host, 0));
      r.cts_qp = net_.AddQp(fabric::FlowSpec::Of(r.host, ranks_[r.prev].host, 0));
      const uint32_t top = std::max(r.data_qp, r.cts_qp) + 1;
      if (qp_rank_.size() < top) {
        qp_rank_.resize(top, UINT32_MAX);
        qp_is_cts_.resize(top, 0);
      }
      qp_rank_[r.data_qp] = static_cast<uint32_t>(i);
      qp_rank_[r.cts_qp] = static_cast<uint32_t>(i);
      qp_is_cts_[r.cts_qp] = 1;
    }
  }
  net_.set_transport_observer(this);
}

void RingAllReduce::Start(units::Time now) {
  start_ = now;
  finish_ = now;
  for (size_t i = 0; i < ranks_.size(); ++i) Progress(i);
}

void RingAllReduce::Progress(size_t i) {
  Rank& r = ranks_[i];
  while (r.next_send < r.sends.size()) {
    const Msg& m = r.sends[r.next_send];
    if (m.dep >= 0 && r.received <= static_cast<size_t>(m.dep)) break;  // data not here yet
    if (r.credits == 0 || r.send_slots == 0) break;
    net_.PostSend(r.data_qp, m.bytes, r.next_send);
    --r.credits;
    --r.send_slots;
    r.sent_bytes += m.bytes;
    ++r.next_send;
    ++messages_;
  }
  FreeSlots(i);
}

void RingAllReduce::FreeSlots(size_t i) {
  Rank& r = ranks_[i];
  while (r.consumed < r.received) {
    const int32_t by = r.needed_by[r.consumed];
    if (by >= 0 && static_cast<size_t>(by) >= r.next_send) break;  // not forwarded yet
    ++r.consumed;
    net_.PostSend(r.cts_qp, spec_.cts_bytes, r.consumed);
  }
}

void RingAllReduce::MaybeDone(size_t i, units::Time at) {
  Rank& r = ranks_[i];
  if (r.done || r.sends_done < r.sends.size() || r.received < r.needed_by.size()) return;
  r.done = true;
  ++ranks_done_;
  finish_ = std::max(finish_, at);
}

void RingAllReduce::OnSendComplete(uint32_t qp, uint64_t, units::Time at) {
  if (qp >= qp_rank_.size() || qp_rank_[qp] == UINT32_MAX || qp_is_cts_[qp]) return;
  const size_t i = qp_rank_[qp];
  Rank& r = ranks_[i];
  ++r.sends_done;
  ++r.send_slots;
  Progress(i);
  MaybeDone(i, at);
}

void RingAllReduce::OnRecvComplete(uint32_t qp, units::Time at) {
  if (qp >= qp_rank_.size() || qp_rank_[qp] == UINT32_MAX) return;
  const Rank& sender = ranks_[qp_rank_[qp]];
  if (qp_is_cts_[qp]) {
    // `sender` freed a receive slot and told its previous rank, which may
    // send again.
    const size_t i = sender.prev;
    ++ranks_[i].credits;
    Progress(i);
    return;
  }
  const size_t i = sender.next;
  ++ranks_[i].received;
  Progress(i);
  MaybeDone(i, at);
}

int64_t RingAllReduce::BytesSent(uint32_t host) const {
  int64_t sum = 0;
  for (const Rank& r : ranks_)
    if (r.host == host) sum += r.sent_bytes;
  return sum;
}

int64_t RingAllReduce::ExpectedBytesPerRank() const {
  const int64_t n = static_cast<int64_t>(spec_.rings[0].size());
  return 2 * (n - 1) * spec_.bytes / n;
}

}  // namespace lossless::collective
