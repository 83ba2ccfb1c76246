#include "collective/ring_engine.hpp"

#include <algorithm>
#include <utility>
#include <stdexcept>

#include <fmt/format.h>

#include "collective/post_arg.hpp"

namespace lossless::collective {
namespace {

bool IsChain(RingPlan plan) { return plan == RingPlan::kBroadcast || plan == RingPlan::kReduce; }

}  // namespace

int RingSteps(RingPlan plan, int64_t n) {
  return static_cast<int>(plan == RingPlan::kAllReduce ? 2 * (n - 1) : n - 1);
}

int64_t RingParts(RingPlan plan, int64_t n) { return IsChain(plan) ? 1 : n; }

int64_t PartAt(RingPlan plan, int64_t n, int64_t p, int64_t k) {
  switch (plan) {
    case RingPlan::kAllReduce:
      return k < n - 1 ? ((p - k) % n + n) % n : ((p + 1 - (k - n + 1)) % n + n) % n;
    case RingPlan::kReduceScatter:
    case RingPlan::kAllGather:
      return ((p - k) % n + n) % n;
    case RingPlan::kBroadcast:
    case RingPlan::kReduce:
      return k == p && p < n - 1 ? 0 : -1;
  }
  return -1;
}

void SetNcclSimpleSteps(RingSpec& spec) {
  constexpr int64_t kStep = int64_t{512} << 10;  // NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8
  constexpr int kNcclSteps = 8;
  const int chunk_steps = IsChain(spec.plan) ? 1 : 4;  // *_CHUNKSTEPS
  const int slice_steps = IsChain(spec.plan) ? 1 : 2;  // *_SLICESTEPS
  spec.chunk_bytes = chunk_steps * kStep;
  spec.slice_bytes = slice_steps * kStep;
  spec.slots = kNcclSteps / slice_steps;
}

void SetNcclSteps(RingSpec& spec, Protocol p, units::Rate gpu_rate, int64_t simple_buffsize) {
  spec.wire = WireOf(p, gpu_rate);
  if (p == Protocol::kSimple) {
    SetNcclSimpleSteps(spec);
    const int64_t step = simple_buffsize / 8;
    spec.slice_bytes = spec.slice_bytes / (int64_t{512} << 10) * step;
    spec.chunk_bytes = spec.chunk_bytes / (int64_t{512} << 10) * step;
    return;
  }
  // LL and LL128: chunk = slice = one step, NCCL_STEPS slots.
  const Collective c = spec.plan == RingPlan::kAllReduce       ? Collective::kAllReduce
                       : spec.plan == RingPlan::kBroadcast      ? Collective::kBroadcast
                       : spec.plan == RingPlan::kReduce         ? Collective::kReduce
                       : spec.plan == RingPlan::kAllGather      ? Collective::kAllGather
                                                                : Collective::kReduceScatter;
  spec.chunk_bytes = spec.slice_bytes = ChunkBytes(c, Algorithm::kRing, p);
  spec.slots = 8;
}

RingEngine::RingEngine(sim::Simulator& sim, fabric::Network& net, const RingSpec& spec)
    : sim_(sim), net_(net), spec_(spec) {
  if (spec_.rings.empty() || spec_.rings[0].ranks.size() < 2 || spec_.bytes < 0 ||
      spec_.chunk_bytes <= 0 || spec_.slice_bytes <= 0 || spec_.slots <= 0 ||
      spec_.cts_bytes <= 0 || spec_.gpus_per_node <= 0 || spec_.nics_per_node <= 0 ||
      spec_.nvlink_rate.bps() <= 0)
    throw std::invalid_argument("ring engine: expected rings of 2+ ranks and positive sizes");
  const int64_t n = static_cast<int64_t>(spec_.rings[0].ranks.size());
  uint32_t max_rank = 0;
  for (const Ring& ring : spec_.rings) {
    std::vector<uint32_t> a = ring.ranks, b = spec_.rings[0].ranks;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b || std::adjacent_find(a.begin(), a.end()) != a.end())
      throw std::invalid_argument("ring engine: every ring must order the same distinct ranks");
    if (ring.nic >= static_cast<uint32_t>(spec_.nics_per_node))
      throw std::invalid_argument(fmt::format("ring engine: NIC {} of {}", ring.nic,
                                              spec_.nics_per_node));
    max_rank = std::max(max_rank, a.back());
  }
  if (spec_.qps_per_connection < 1 || spec_.qps_per_connection > 128)
    throw std::invalid_argument(fmt::format("ring engine: {} queue pairs per connection, "
                                            "expected 1 to 128",
                                            spec_.qps_per_connection));
  const uint32_t g = static_cast<uint32_t>(spec_.gpus_per_node);
  const uint32_t nics = static_cast<uint32_t>(spec_.nics_per_node);
  if ((max_rank / g + 1) * nics > net_.num_hosts())
    throw std::invalid_argument(fmt::format("ring engine: rank {} needs {} hosts, the network "
                                            "has {}",
                                            max_rank, (max_rank / g + 1) * nics, net_.num_hosts()));
  staging_ = RailStaging(spec_.rail_paths, spec_.nics_per_node, net_.num_hosts());
  nv_busy_.assign(max_rank + 1, 0);
  write_busy_.assign(max_rank + 1, 0);
  gpu_entity_.assign(max_rank + 1, 0);
  for (uint32_t& e : gpu_entity_) e = sim_.AddEntity();
  // A connection from rank a to rank b on `nic`: NVLink inside a node, else
  // an RC queue pair between the two nodes' NICs of that rail.
  auto connect = [&](uint32_t a, uint32_t b, uint32_t nic, uint32_t record, uint32_t to, bool cts) {
    Conn c;
    QpSet qps;
    c.rank = record;
    c.to = to;
    c.cts = cts;
    const uint32_t conn = static_cast<uint32_t>(conns_.size());
    if (a / g == b / g) {
      c.nvlink = true;
      c.id = static_cast<uint32_t>(nv_.size());
      nv_.push_back({a, conn});
    } else {
      // Data connections open NCCL_IB_QPS_PER_CONNECTION queue pairs, each a
      // flow of its own (its own entropy); clear-to-send keeps one.
      qps = QpSet(net_, a / g * nics + nic, b / g * nics + nic, cts ? 1 : spec_.qps_per_connection,
                  spec_.split_data_on_qps);
      c.id = qps.first();
      const uint32_t end = qps.first() + qps.size();
      if (qp_conn_.size() < end) qp_conn_.resize(end, UINT32_MAX);
      for (uint32_t id = qps.first(); id < end; ++id) qp_conn_[id] = conn;
    }
    conns_.push_back(c);
    qps_.push_back(std::move(qps));
    return conn;
  };
  for (const Ring& ring : spec_.rings) {
    const size_t base = ranks_.size();
    for (int64_t p = 0; p < n; ++p) {
      Rank r;
      r.rank = ring.ranks[static_cast<size_t>(p)];
      r.prev = static_cast<uint32_t>(base + static_cast<size_t>((p + n - 1) % n));
      r.next = static_cast<uint32_t>(base + static_cast<size_t>((p + 1) % n));
      ranks_.push_back(std::move(r));
    }
    for (size_t i = base; i < ranks_.size(); ++i) {
      Rank& r = ranks_[i];
      r.channel = static_cast<uint32_t>(&ring - spec_.rings.data());
      const uint32_t rec = static_cast<uint32_t>(i);
      r.data = connect(r.rank, ranks_[r.next].rank, ring.nic, rec, r.next, false);
      r.host = r.rank / g * nics + ring.nic;
      r.cts = connect(r.rank, ranks_[r.prev].rank, ring.nic, rec, r.prev, true);
    }
  }
  steps_ = RingSteps(spec_.plan, n);
  parts_ = RingParts(spec_.plan, n);
  chunk_slices_ =
      static_cast<int32_t>((spec_.chunk_bytes + spec_.slice_bytes - 1) / spec_.slice_bytes);
  net_.set_transport_observer(this);
  owned_records_ = ranks_.size();
}

void RingEngine::set_ownership(GpuOwnership own) {
  own_ = std::move(own);
  owned_records_ = 0;
  for (const Rank& r : ranks_) owned_records_ += own_.Owns(r.rank) ? 1 : 0;
}

void RingEngine::AddBytesStillToArrive(std::vector<int64_t>& by_host) const {
  for (const Rank& r : ranks_) {
    if (!own_.Owns(r.rank)) continue;
    const Rank& prev = ranks_[r.prev];
    if (conns_[prev.data].nvlink) continue;
    const uint32_t ch = r.channel;
    const int32_t pos = r.prev_pos;
    Cursor c = r.recv;  // the previous rank's message at index r.received
    for (int s = 0; s < spec_.slots && c.loop < geometry_[ch].loops; ++s) Next(ch, pos, c);
    for (; c.loop < geometry_[ch].loops; Next(ch, pos, c))
      by_host[r.host] += spec_.wire.WireBytes(MsgBytes(c));
  }
}

RingEngine::Cursor RingEngine::First(uint32_t ch, int32_t pos) const {
  Cursor c;
  Settle(ch, pos, c);
  return c;
}

void RingEngine::Next(uint32_t ch, int32_t pos, Cursor& c) const {
  if (++c.slice < c.slices) return;
  if (++c.step == steps_) {
    c.step = 0;
    ++c.loop;
  }
  Settle(ch, pos, c);
}

void RingEngine::Settle(uint32_t ch, int32_t pos, Cursor& c) const {
  // The blocks of a loop (RingPlan): part PartAt(plan, n, pos, k) of the
  // loop at step k, cut into slices. In a full loop every part is one chunk;
  // only a short last loop has short or empty parts.
  const Geometry& g = geometry_[ch];
  const int32_t n = static_cast<int32_t>(spec_.rings[0].ranks.size());
  const bool chain = IsChain(spec_.plan);
  c.slice = 0;
  for (; c.loop < g.loops; ++c.loop, c.step = 0) {
    if (chain) {
      // A chain's rank sends at one step of each loop, part 0 (none at the
      // chain's end).
      if (c.step > pos || pos >= n - 1) continue;
      c.step = pos;
    }
    if (c.loop + 1 < g.loops || g.last == g.span) {
      c.bytes = spec_.chunk_bytes;
      c.slices = chunk_slices_;
      return;
    }
    for (; c.step < steps_; ++c.step) {
      // PartAt without its divisions: (pos - k) mod n for the ring plans,
      // whose steps k are below 2n.
      int32_t idx = 0;
      if (!chain) {
        idx = pos - c.step;
        if (idx < 0) idx += n;
        if (idx < 0) idx += n;
      }
      if (idx < g.full_parts) {
        c.bytes = g.part;
        c.slices = g.part_slices;
        return;
      }
      if (idx == g.full_parts && g.tail > 0) {
        c.bytes = g.tail;
        c.slices = g.tail_slices;
        return;
      }
      if (chain) break;
    }
  }
  c.step = 0;  // the end
  c.bytes = 0;
  c.slices = 0;
}

void RingEngine::Start(units::Time now, uint32_t root) { Begin(spec_.bytes, now, root); }

void RingEngine::Begin(int64_t bytes, units::Time now, uint32_t root) {
  if (bytes <= 0) throw std::invalid_argument("ring collective of no bytes");
  if (!done() && started_) throw std::logic_error("ring engine: the previous collective runs");
  const int64_t n = static_cast<int64_t>(spec_.rings[0].ranks.size());
  // The chain's start in each channel's ring: the root (broadcast) or the
  // rank after it (reduce, so that the chain ends at the root).
  std::vector<int64_t> start(spec_.rings.size(), 0);
  if (IsChain(spec_.plan)) {
    for (size_t ch = 0; ch < spec_.rings.size(); ++ch) {
      const auto& order = spec_.rings[ch].ranks;
      const auto it = std::find(order.begin(), order.end(), root);
      if (it == order.end())
        throw std::invalid_argument(fmt::format("ring engine: root {} is not in the rings", root));
      start[ch] = (it - order.begin() + (spec_.plan == RingPlan::kReduce ? 1 : 0)) % n;
    }
  }
  started_ = true;
  bytes_ = bytes;
  ranks_done_ = 0;
  net_.set_transport_observer(this);  // another engine may have had it meanwhile
  nic_sent_.assign(net_.num_hosts(), 0);
  const int64_t channels = static_cast<int64_t>(spec_.rings.size());
  geometry_.assign(spec_.rings.size(), Geometry{});
  for (size_t ch = 0; ch < spec_.rings.size(); ++ch) {
    // Each channel reduces its own share of the buffer (NCCL splits the
    // buffer over channels chunk by chunk; the shares are the same), in
    // loops of parts x chunk bytes.
    Geometry& g = geometry_[ch];
    g.share = bytes / channels + (static_cast<int64_t>(ch) < bytes % channels);
    g.span = parts_ * spec_.chunk_bytes;
    g.loops = static_cast<int32_t>((g.share + g.span - 1) / g.span);
    g.last = g.share - int64_t{g.loops - 1} * g.span;
    // The last loop's parts: full_parts of `part` bytes, then a tail, then
    // none: clamp(last - idx x part, 0, part).
    g.part = (g.last + parts_ - 1) / parts_;
    if (g.part > 0) {
      g.full_parts = static_cast<int32_t>(g.last / g.part);
      g.tail = g.last - int64_t{g.full_parts} * g.part;
    }
    auto slices = [&](int64_t b) {
      return static_cast<int32_t>((b + spec_.slice_bytes - 1) / spec_.slice_bytes);
    };
    g.part_slices = slices(g.part);
    g.tail_slices = slices(g.tail);
    const size_t base = ch * static_cast<size_t>(n);
    for (int64_t p = 0; p < n; ++p) {
      Rank& r = ranks_[base + static_cast<size_t>(p)];
      // The plan sees the hops after the chain's start.
      r.pos = static_cast<int32_t>((p - start[ch] + n) % n);
      r.prev_pos = static_cast<int32_t>((p - 1 - start[ch] + 2 * n) % n);
      r.next_send = r.sends_done = r.received = r.consumed = 0;
      r.credits = spec_.slots;
      r.send_slots = spec_.slots;
      r.sent_bytes = r.net_bytes = 0;
      r.done = false;
      const uint32_t c32 = static_cast<uint32_t>(ch);
      r.send = First(c32, r.pos);
      r.recv = r.consume = r.staged = First(c32, r.prev_pos);
      uint64_t total = 0;
      for (Cursor c = r.send; c.loop < g.loops; Next(c32, r.pos, c)) {
        total += static_cast<uint64_t>(c.slices);  // a block at a time
        c.slice = c.slices - 1;
      }
      if (total > UINT32_MAX)
        throw std::invalid_argument(fmt::format(
            "ring collective: {} messages per rank and channel, expected at most {} (a larger "
            "slice or fewer bytes)",
            total, UINT32_MAX));
      r.total = static_cast<uint32_t>(total);
    }
  }
  start_ = now;
  finish_ = now;
  launched_ = spec_.launch_latency.ps() == 0;
  if (!launched_) {
    // The kernel launch: nothing moves before it.
    own_.ScheduleLaunch(sim_, now + spec_.launch_latency, ranks_[0].rank,
                        gpu_entity_[ranks_[0].rank], this, kLaunch);
    return;
  }
  for (size_t i = 0; i < ranks_.size(); ++i)
    if (own_.Owns(ranks_[i].rank)) Progress(i);
  for (size_t i = 0; i < ranks_.size(); ++i)
    if (own_.Owns(ranks_[i].rank)) MaybeDone(i, now);
}

void RingEngine::PostData(size_t i, int64_t payload) {
  const Rank& r = ranks_[i];
  int64_t delay = 0;
  if (spec_.wire.gpu_rate.bps() > 0) {
    // The GPU writes its channels' lines one message after another.
    const int64_t now = sim_.Now().ps();
    // Lines are forwarded as they are written (a flag per line), so a
    // message waits for the GPU's earlier writes, not for its own.
    const int64_t begin = std::max(now, write_busy_[r.rank]);
    write_busy_[r.rank] =
        begin + units::SerializationTime(units::Bytes(payload), spec_.wire.gpu_rate).ps();
    delay = begin - now;
  }
  const int64_t wire = spec_.wire.WireBytes(payload);
  if (!conns_[r.data].nvlink) {
    nic_sent_[r.host] += wire;
    if (staging_.Applies(r.host)) {
      const int64_t now = sim_.Now().ps();
      delay = staging_.Outbound(r.host, wire, now + delay) - now;
    }
  }
  Post(r.data, wire, delay);
}


void RingEngine::Post(uint32_t conn, int64_t bytes, int64_t delay_ps) {
  const Conn& c = conns_[conn];
  // A clear-to-send pays the hop latency too: it is the receiver's proxy
  // posting a buffer and the sender's proxy noticing it, which is where
  // NCCL's network hop latency is spent (docs/model/collective-engine.md).
  if (!c.nvlink) delay_ps += spec_.net_hop_latency.ps();
  if (delay_ps > 0) {
    // The proxy posts it a hop latency later (and after the GPU wrote it):
    // per connection the delays never decrease, so messages stay in order.
    sim_.Schedule(sim_.Now() + units::Time::Ps(delay_ps), gpu_entity_[ranks_[c.rank].rank], this,
                  kNetPost, PostArg(conn, bytes));
    return;
  }
  PostNow(conn, bytes);
}

void RingEngine::PostNow(uint32_t conn, int64_t bytes) {
  const Conn& c = conns_[conn];
  if (!c.nvlink) {
    qps_[conn].Post(net_, bytes);
    return;
  }
  // The sender's NVLink egress sends one message at a time, in order.
  const NvConn& v = nv_[c.id];
  const int64_t now = sim_.Now().ps();
  const int64_t start = std::max(now, nv_busy_[v.src_gpu]);
  const int64_t end =
      start + units::SerializationTime(units::Bytes(bytes), spec_.nvlink_rate).ps();
  nv_busy_[v.src_gpu] = end;
  sim_.Schedule(
      units::Time::Ps(end + spec_.nvlink_latency.ps() + spec_.nvlink_hop_latency.ps()),
      gpu_entity_[v.src_gpu], this, kNvDelivered, conn);
}

void RingEngine::OnEvent(uint32_t kind, uint64_t arg) {
  const uint32_t conn = static_cast<uint32_t>(arg);
  if (kind == kUnstaged) {
    Delivered(conn, sim_.Now());
    return;
  }
  if (kind == kLaunch) {
    launched_ = true;
    for (size_t i = 0; i < ranks_.size(); ++i)
      if (own_.Owns(ranks_[i].rank)) Progress(i);
    return;
  }
  if (kind == kNetPost) {
    PostNow(PostLane(arg), PostBytes(arg));
    return;
  }
  // An NVLink message has arrived: it is received and its send is complete.
  Delivered(conn, sim_.Now());
  if (!conns_[conn].cts) {
    const size_t i = conns_[conn].rank;
    if (step_obs_ != nullptr) StepDone(i, sim_.Now());
    ++ranks_[i].sends_done;
    ++ranks_[i].send_slots;
    Progress(i);
    MaybeDone(i, sim_.Now());
  }
}

void RingEngine::Progress(size_t i) {
  if (!launched_) return;
  Rank& r = ranks_[i];
  while (r.next_send < r.total) {
    if (r.credits == 0 || r.send_slots == 0) break;
    const Cursor& m = r.send;
    // After the first step a slice forwards the previous rank's slice of the
    // step before: it must have arrived.
    if (m.step > 0 && !r.recv.After(m.loop, m.step - 1, m.slice)) break;
    const int64_t bytes = MsgBytes(m);
    PostData(i, bytes);
    if (step_obs_ != nullptr) {
      step_obs_->OnStepPost(
          {r.rank, r.channel, ranks_[r.next].rank, m.loop, m.step, bytes, conns_[r.data].nvlink},
          sim_.Now());
    }
    --r.credits;
    --r.send_slots;
    r.sent_bytes += bytes;
    if (!conns_[r.data].nvlink) r.net_bytes += bytes;
    ++r.next_send;
    Next(r.channel, r.pos, r.send);
    ++messages_;
  }
  FreeSlots(i);
}

void RingEngine::FreeSlots(size_t i) {
  Rank& r = ranks_[i];
  while (r.consumed < r.received) {
    // The previous rank's message at index `consumed`: its slot is free once
    // this rank has forwarded it (its slice of the next step has left), or
    // at once if it is of the last step.
    const Cursor& q = r.consume;
    if (q.step + 1 < steps_ && !r.send.After(q.loop, q.step + 1, q.slice)) break;
    ++r.consumed;
    Next(r.channel, r.prev_pos, r.consume);
    Post(r.cts, spec_.cts_bytes);
  }
}

void RingEngine::MaybeDone(size_t i, units::Time at) {
  Rank& r = ranks_[i];
  // Done when its data is sent and acknowledged, everything it expects has
  // arrived and been released, and every receive slot it lent the next rank
  // has come back: nothing of this collective is left in flight.
  if (r.done || r.sends_done < r.total || r.received < ranks_[r.prev].total ||
      r.consumed < r.received || r.credits < spec_.slots)
    return;
  r.done = true;
  ++ranks_done_;
  finish_ = std::max(finish_, at);
  if (done()) sim_.Stop();  // the caller's Run returns here
}

void RingEngine::OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) {
  if (qp >= qp_conn_.size() || qp_conn_[qp] == UINT32_MAX) return;
  const uint32_t conn = qp_conn_[qp];
  if (conns_[conn].cts) return;
  for (uint32_t k = qps_[conn].SendDone(tag); k > 0; --k) SendDone(conn, at);
}

void RingEngine::SendDone(uint32_t conn, units::Time at) {
  const Conn& c = conns_[conn];
  Rank& r = ranks_[c.rank];
  if (step_obs_ != nullptr) StepDone(c.rank, at);
  ++r.sends_done;
  ++r.send_slots;
  Progress(c.rank);
  MaybeDone(c.rank, at);
}

void RingEngine::OnRecvComplete(uint32_t qp, units::Time at) {
  if (qp >= qp_conn_.size() || qp_conn_[qp] == UINT32_MAX) return;
  const uint32_t conn = qp_conn_[qp];
  for (uint32_t k = qps_[conn].RecvDone(qp); k > 0; --k) RecvDone(conn, at);
}

void RingEngine::RecvDone(uint32_t conn, units::Time at) {
  const Conn& c = conns_[conn];
  if (!c.cts) {
    Rank& receiver = ranks_[c.to];
    if (staging_.Applies(receiver.host)) {
      // The receiving end of the path, before the rank sees the message.
      const int64_t bytes = spec_.wire.WireBytes(MsgBytes(receiver.staged));
      Next(receiver.channel, receiver.prev_pos, receiver.staged);
      sim_.Schedule(units::Time::Ps(staging_.Inbound(receiver.host, bytes, at.ps())),
                    gpu_entity_[receiver.rank], this, kUnstaged, conn);
      return;
    }
  }
  Delivered(conn, at);
}

void RingEngine::Delivered(uint32_t conn, units::Time at) {
  const Conn& c = conns_[conn];
  const size_t i = c.to;
  if (c.cts) {
    // The sender freed a receive slot and told its previous rank, which may
    // send again.
    ++ranks_[i].credits;
    Progress(i);
    MaybeDone(i, at);
    return;
  }
  Rank& r = ranks_[i];
  ++r.received;  // its bytes are summed when asked (BytesReceived)
  Next(r.channel, r.prev_pos, r.recv);
  Progress(i);
  // Receive slots in use once the rank has done what it can with the arrival.
  max_slots_used_ = std::max<size_t>(max_slots_used_, r.received - r.consumed);
  MaybeDone(i, at);
}

void RingEngine::StepDone(size_t i, units::Time at) {
  step_obs_->OnStepSendDone(ranks_[i].rank,
                            static_cast<uint32_t>(i / spec_.rings[0].ranks.size()), at);
}

int64_t RingEngine::BytesSent(uint32_t rank) const {
  int64_t sum = 0;
  for (const Rank& r : ranks_)
    if (r.rank == rank) sum += r.sent_bytes;
  return sum;
}

int64_t RingEngine::NetworkBytesSent(uint32_t rank) const {
  int64_t sum = 0;
  for (const Rank& r : ranks_)
    if (r.rank == rank) sum += r.net_bytes;
  return sum;
}

int64_t RingEngine::BytesReceived(uint32_t rank) const {
  int64_t sum = 0;
  // The messages each record received from its previous rank: the first
  // `received` of that rank's sends (counted here, not per message).
  for (const Rank& r : ranks_) {
    if (r.rank != rank) continue;
    const int32_t pos = r.prev_pos;
    Cursor c = First(r.channel, pos);
    for (size_t k = 0; k < r.received; ++k, Next(r.channel, pos, c)) sum += MsgBytes(c);
  }
  return sum;
}

int64_t RingEngine::NicBytesSent(uint32_t host) const {
  return host < nic_sent_.size() ? nic_sent_[host] : 0;
}

int64_t RingEngine::ExpectedBytesPerRank() const {
  const int64_t n = static_cast<int64_t>(spec_.rings[0].ranks.size());
  switch (spec_.plan) {
    case RingPlan::kAllReduce:
      return 2 * (n - 1) * bytes_ / n;
    case RingPlan::kReduceScatter:
    case RingPlan::kAllGather:
      return (n - 1) * bytes_ / n;
    case RingPlan::kBroadcast:
    case RingPlan::kReduce:
      return 0;
  }
  return 0;
}

}  // namespace lossless::collective
