#include "collective/tree_engine.hpp"

#include <algorithm>
#include <utility>
#include <stdexcept>

#include <fmt/format.h>

#include "collective/post_arg.hpp"

namespace lossless::collective {

int64_t NcclTreeChunkBytes(int64_t bytes, int channels, int depth, int64_t step) {
  int64_t chunk = step;
  const int64_t ch = std::max(1, channels);
  while (bytes / (ch * chunk) < int64_t{depth} * 8 && chunk > 131072) chunk /= 2;
  while (bytes / (ch * chunk) < int64_t{depth} * 4 && chunk > 65536) chunk /= 2;
  while (bytes / (ch * chunk) < depth && chunk > 32768) chunk /= 2;
  return chunk;
}

int64_t NcclTreeLl128ChunkBytes(int64_t bytes, int channels, int nodes, int ranks) {
  int64_t chunk = 614400;  // NCCL_LL128 buffer / NCCL_STEPS, in line bytes
  const int64_t ch = std::max(1, channels);
  const int n = std::max(1, nodes);
  int log2 = 0;
  while ((2 << log2) <= n) ++log2;
  // NCCL's float arithmetic, with the integer division on the left.
  const float ppn = static_cast<float>(ranks) / static_cast<float>(n);
  const float nsteps = 1 + static_cast<float>(log2) + 0.1f * ppn;
  // NOLINTNEXTLINE(bugprone-integer-division): as NCCL computes it
  while (static_cast<float>(bytes / (ch * chunk)) < nsteps * 64 / ppn && chunk > 131072)
    chunk /= 2;
  // NOLINTNEXTLINE(bugprone-integer-division): as NCCL computes it
  while (static_cast<float>(bytes / (ch * chunk)) < nsteps * 16 / ppn && chunk > 32768)
    chunk /= 2;
  return chunk / 128 * 120;
}

int TreeDepth(int nodes, int gpus_per_node) {
  int log2 = 0;
  while ((2 << log2) <= nodes) ++log2;
  return gpus_per_node - 1 + log2;
}

TreeEngine::TreeEngine(sim::Simulator& sim, fabric::Network& net, const TreeSpec& spec)
    : sim_(sim), net_(net), spec_(spec) {
  if (spec_.trees.empty() || spec_.trees.size() != spec_.nics.size() ||
      spec_.trees[0].ranks.size() < 2 || spec_.gpus_per_node <= 0 || spec_.nics_per_node <= 0 ||
      spec_.chunk_bytes <= 0 || spec_.slots <= 0 || spec_.slots > INT16_MAX ||
      spec_.cts_bytes <= 0 || spec_.nvlink_rate.bps() <= 0 || spec_.qps_per_connection < 1 ||
      spec_.qps_per_connection > 128)
    throw std::invalid_argument(
        "tree engine: expected trees of 2+ ranks, a NIC per tree, "
        "positive sizes, 1 to 32,767 slots and 1 to 128 queue pairs per connection");
  n_ = static_cast<uint32_t>(spec_.trees[0].ranks.size());
  const uint32_t g = static_cast<uint32_t>(spec_.gpus_per_node);
  const uint32_t nics = static_cast<uint32_t>(spec_.nics_per_node);
  if (((n_ - 1) / g + 1) * nics > net_.num_hosts())
    throw std::invalid_argument(fmt::format("tree engine: {} ranks need {} hosts, the network has {}",
                                            n_, ((n_ - 1) / g + 1) * nics, net_.num_hosts()));
  for (size_t ch = 0; ch < spec_.trees.size(); ++ch) {
    const TreeChannel& t = spec_.trees[ch];
    int roots = 0;
    for (const TreeLinks& l : t.ranks) {
      roots += l.up < 0;
      if (l.up >= static_cast<int>(n_))
        throw std::invalid_argument("tree engine: a parent outside the ranks");
    }
    if (t.ranks.size() != n_ || roots != 1 || spec_.nics[ch] >= nics)
      throw std::invalid_argument(
          fmt::format("tree engine: channel {} is not one tree over {} ranks on a NIC of {}", ch,
                      n_, nics));
  }
  records_.resize(spec_.trees.size() * n_);
  auto open = [&](uint32_t from, uint32_t to, bool up, uint32_t nic) {
    Conn c;
    ConnRest rest;
    QpSet qps;
    c.from = from;
    c.to = to;
    c.up = up;
    const uint32_t a = records_[from].rank, b = records_[to].rank;
    c.nvlink = a / g == b / g;
    if (!c.nvlink) {
      c.host = a / g * nics + nic;
      const uint32_t peer = b / g * nics + nic;
      rest.peer = peer;
      qps = QpSet(net_, c.host, peer, spec_.qps_per_connection, spec_.split_data_on_qps);
      rest.cts_qp = net_.AddQp(fabric::FlowSpec::Of(peer, c.host, 0));
      qp_lane_.resize(std::max<size_t>(qp_lane_.size(), rest.cts_qp + 1), UINT32_MAX);
      const uint32_t id = static_cast<uint32_t>(conns_.size());
      for (uint32_t q = 0; q < qps.size(); ++q) qp_lane_[qps.first() + q] = 2 * id;
      qp_lane_[rest.cts_qp] = 2 * id + 1;
    }
    conns_.push_back(c);
    rest_.push_back(rest);
    qps_.push_back(std::move(qps));
    return static_cast<uint32_t>(conns_.size() - 1);
  };
  // Each record's children get a run of kids_, in record order.
  for (size_t ch = 0; ch < spec_.trees.size(); ++ch) {
    const uint32_t base = static_cast<uint32_t>(ch) * n_;
    for (uint32_t r = 0; r < n_; ++r) {
      records_[base + r].rank = r;
      const int up = spec_.trees[ch].ranks[r].up;
      if (up >= 0) ++records_[base + static_cast<uint32_t>(up)].num_kids;
    }
  }
  uint32_t next_kid = 0;
  for (Record& rec : records_) {
    rec.kids = next_kid;
    next_kid += rec.num_kids;
    rec.num_kids = 0;  // counted again as they are filled in
  }
  kids_.assign(next_kid, Kid{});
  for (size_t ch = 0; ch < spec_.trees.size(); ++ch) {
    const uint32_t base = static_cast<uint32_t>(ch) * n_;
    for (uint32_t r = 0; r < n_; ++r) {
      const int up = spec_.trees[ch].ranks[r].up;
      if (up < 0) continue;
      const uint32_t child = base + r, parent = base + static_cast<uint32_t>(up);
      const uint32_t u = open(child, parent, true, spec_.nics[ch]);
      const uint32_t d = open(parent, child, false, spec_.nics[ch]);
      records_[child].up_out = static_cast<int32_t>(u);
      records_[child].down_in = static_cast<int32_t>(d);
      Record& p = records_[parent];
      kids_[p.kids + p.num_kids++] = {u, d};
    }
  }
  staging_ = RailStaging(spec_.rail_paths, spec_.nics_per_node, net_.num_hosts());
  nv_busy_.assign(n_, 0);
  write_busy_.assign(n_, 0);
  gpu_entity_.assign(n_, 0);
  for (uint32_t& e : gpu_entity_) e = sim_.AddEntity();
  sent_.assign(n_, 0);
  recv_.assign(n_, 0);
  net_sent_.assign(n_, 0);
  owned_records_ = records_.size();
}

void TreeEngine::set_ownership(GpuOwnership own) {
  own_ = std::move(own);
  owned_records_ = 0;
  for (const Record& r : records_) owned_records_ += own_.Owns(r.rank) ? 1 : 0;
}

void TreeEngine::AddBytesStillToArrive(std::vector<int64_t>& by_host) const {
  for (size_t i = 0; i < conns_.size(); ++i) {
    const Conn& c = conns_[i];
    const Record& to = records_[c.to];
    if (c.nvlink || !own_.Owns(to.rank)) continue;
    for (int64_t k = int64_t{c.received} + spec_.slots; k < to.chunks; ++k)
      by_host[rest_[i].peer] += spec_.wire.WireBytes(ChunkBytes(to, k));
  }
}

void TreeEngine::Begin(int64_t bytes, units::Time now, int64_t chunk_bytes) {
  if (bytes <= 0 || chunk_bytes < 0) throw std::invalid_argument("tree all-reduce of no bytes");
  if (started_ && !done()) throw std::logic_error("tree engine: the previous all-reduce runs");
  const int64_t chunk = chunk_bytes > 0 ? chunk_bytes : spec_.chunk_bytes;
  const int64_t channels = static_cast<int64_t>(spec_.trees.size());
  // Channel 0 has the largest share (a remainder goes to the first channels).
  const int64_t most = bytes / channels + (bytes % channels > 0 ? 1 : 0);
  if ((most + chunk - 1) / chunk > INT32_MAX)
    throw std::invalid_argument(fmt::format(
        "tree all-reduce of {} B in chunks of {} B: more than 2^31 - 1 chunks per channel", bytes,
        chunk));
  started_ = true;
  records_done_ = 0;
  chunk_ = chunk;
  net_.set_transport_observer(this);
  std::fill(sent_.begin(), sent_.end(), 0);
  std::fill(recv_.begin(), recv_.end(), 0);
  std::fill(net_sent_.begin(), net_sent_.end(), 0);
  nic_sent_.assign(net_.num_hosts(), 0);
  for (size_t i = 0; i < records_.size(); ++i) {
    Record& r = records_[i];
    const int64_t ch = static_cast<int64_t>(i / n_);
    r.share = bytes / channels + (ch < bytes % channels ? 1 : 0);
    r.chunks = static_cast<int32_t>((r.share + chunk_ - 1) / chunk_);
    r.done = false;
  }
  for (Conn& c : conns_) {
    c.sent = c.received = c.consumed = 0;
    c.credits = c.send_slots = static_cast<int16_t>(spec_.slots);
  }
  for (ConnRest& c : rest_) c.arrived = 0;
  start_ = finish_ = now;
  launched_ = spec_.launch_latency.ps() == 0;
  if (!launched_) {
    own_.ScheduleLaunch(sim_, now + spec_.launch_latency, 0, gpu_entity_[0], this, kLaunch);
    return;
  }
  for (uint32_t i = 0; i < records_.size(); ++i)
    if (own_.Owns(records_[i].rank)) Progress(i);
  for (uint32_t i = 0; i < records_.size(); ++i)
    if (own_.Owns(records_[i].rank)) MaybeDone(i, now);
}

int64_t TreeEngine::ChunkBytes(const Record& r, int64_t c) const {
  return std::min(chunk_, r.share - c * chunk_);
}

void TreeEngine::Progress(uint32_t rec) {
  if (!launched_) return;
  Record& r = records_[rec];
  auto send = [&](uint32_t id) {
    Conn& o = conns_[id];
    const int64_t b = ChunkBytes(r, o.sent);
    ++o.sent;
    --o.credits;
    --o.send_slots;
    sent_[r.rank] += b;
    const int64_t wire = spec_.wire.WireBytes(b);
    if (!o.nvlink) {
      net_sent_[r.rank] += b;
      nic_sent_[o.host] += wire;
    }
    int64_t delay = 0;
    if (spec_.wire.gpu_rate.bps() > 0) {
      // The GPU writes its lines one chunk after another, over all channels.
      const int64_t now = sim_.Now().ps();
      // Lines are forwarded as they are written (a flag per line), so a
      // chunk waits for the GPU's earlier writes, not for its own.
      const int64_t begin = std::max(now, write_busy_[r.rank]);
      write_busy_[r.rank] =
          begin + units::SerializationTime(units::Bytes(b), spec_.wire.gpu_rate).ps();
      delay = begin - now;
    }
    if (!o.nvlink && staging_.Applies(o.host)) {
      const int64_t now = sim_.Now().ps();
      delay = staging_.Outbound(o.host, wire, now + delay) - now;
    }
    Post(2 * id, r.rank, wire, delay);
  };
  auto from_children = [&](int64_t c) {
    for (const Kid& k : KidsOf(r))
      if (conns_[k.up_in].received <= c) return false;
    return true;
  };
  // Reduce: chunk c goes up once every child's chunk c is here.
  if (r.up_out >= 0) {
    const uint32_t id = static_cast<uint32_t>(r.up_out);
    while (conns_[id].sent < r.chunks && conns_[id].credits > 0 && conns_[id].send_slots > 0 &&
           from_children(conns_[id].sent))
      send(id);
  }
  // Broadcast: the root sends the reduced chunk, the others forward their parent's.
  for (const Kid& k : KidsOf(r)) {
    const uint32_t id = k.down_out;
    while (conns_[id].sent < r.chunks && conns_[id].credits > 0 && conns_[id].send_slots > 0) {
      const int64_t c = conns_[id].sent;
      const bool ready = r.down_in < 0 ? from_children(c)
                                       : conns_[static_cast<uint32_t>(r.down_in)].received > c;
      if (!ready) break;
      send(id);
    }
  }
  Consume(rec);
}

bool TreeEngine::Consumable(const Conn& in, int64_t chunk) const {
  const Record& r = records_[in.to];
  // A child's chunk is done with once reduced into the up send (the root:
  // once its result went down to every child); the parent's once forwarded
  // to every child (a leaf: at once).
  if (in.up && r.up_out >= 0) return conns_[static_cast<uint32_t>(r.up_out)].sent > chunk;
  for (const Kid& k : KidsOf(r))
    if (conns_[k.down_out].sent <= chunk) return false;
  return true;
}

void TreeEngine::Consume(uint32_t rec) {
  Record& r = records_[rec];
  auto drain = [&](uint32_t id) {
    Conn& in = conns_[id];
    while (in.consumed < in.received && Consumable(in, in.consumed)) {
      ++in.consumed;
      Post(2 * id + 1, r.rank, spec_.cts_bytes);
    }
  };
  for (const Kid& k : KidsOf(r)) drain(k.up_in);
  if (r.down_in >= 0) drain(static_cast<uint32_t>(r.down_in));
}

void TreeEngine::Post(uint32_t lane, uint32_t gpu, int64_t bytes, int64_t delay_ps) {
  const Conn& c = conns_[lane / 2];
  // Data and clear-to-send (the proxies' work) both pay the hop latency.
  if (!c.nvlink) delay_ps += spec_.net_hop_latency.ps();
  if (delay_ps > 0) {
    // Per lane the delays never decrease (the GPU's writes end in order, the
    // hop latency is the same for all), so messages stay in order.
    sim_.Schedule(sim_.Now() + units::Time::Ps(delay_ps), gpu_entity_[gpu], this, kNetPost,
                  PostArg(lane, bytes));
    return;
  }
  PostNow(lane, bytes);
}

void TreeEngine::PostNow(uint32_t lane, int64_t bytes) {
  const Conn& c = conns_[lane / 2];
  const ConnRest& rest = rest_[lane / 2];
  const bool cts = lane % 2 == 1;
  if (!c.nvlink) {
    if (cts) {
      net_.PostSend(rest.cts_qp, bytes, 0);
    } else {
      qps_[lane / 2].Post(net_, bytes);
    }
    return;
  }
  // The sender's NVLink egress sends one message at a time, in order.
  const uint32_t gpu = records_[cts ? c.to : c.from].rank;
  const int64_t begin = std::max(sim_.Now().ps(), nv_busy_[gpu]);
  const int64_t end = begin + units::SerializationTime(units::Bytes(bytes), spec_.nvlink_rate).ps();
  nv_busy_[gpu] = end;
  sim_.Schedule(units::Time::Ps(end + spec_.nvlink_latency.ps() + spec_.nvlink_hop_latency.ps()),
                gpu_entity_[gpu], this, cts ? kNvCts : kNvData, lane / 2);
}

void TreeEngine::OnEvent(uint32_t kind, uint64_t arg) {
  const uint32_t x = static_cast<uint32_t>(arg);
  switch (kind) {
    case kLaunch:
      launched_ = true;
      for (uint32_t i = 0; i < records_.size(); ++i)
        if (own_.Owns(records_[i].rank)) Progress(i);
      return;
    case kNetPost:
      PostNow(PostLane(arg), PostBytes(arg));
      return;
    case kNvData:
      DataArrived(x, sim_.Now());
      SendDone(x, sim_.Now());
      return;
    case kNvCts:
      CtsArrived(x, sim_.Now());
      return;
    case kUnstaged:
      DataArrived(x, sim_.Now());
      return;
  }
}

void TreeEngine::OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) {
  if (qp >= qp_lane_.size() || qp_lane_[qp] == UINT32_MAX || qp_lane_[qp] % 2 == 1) return;
  const uint32_t id = qp_lane_[qp] / 2;
  for (uint32_t k = qps_[id].SendDone(tag); k > 0; --k) SendDone(id, at);
}

void TreeEngine::OnRecvComplete(uint32_t qp, units::Time at) {
  if (qp >= qp_lane_.size() || qp_lane_[qp] == UINT32_MAX) return;
  const uint32_t lane = qp_lane_[qp];
  if (lane % 2 == 1) {
    CtsArrived(lane / 2, at);
    return;
  }
  const Conn& c = conns_[lane / 2];
  ConnRest& rest = rest_[lane / 2];
  for (uint32_t k = qps_[lane / 2].RecvDone(qp); k > 0; --k) {
    if (staging_.Applies(rest.peer)) {
      // The receiving end of the path, before the rank sees the chunk.
      const int64_t bytes = spec_.wire.WireBytes(ChunkBytes(records_[c.to], rest.arrived++));
      sim_.Schedule(units::Time::Ps(staging_.Inbound(rest.peer, bytes, at.ps())),
                    gpu_entity_[records_[c.to].rank], this, kUnstaged, lane / 2);
    } else {
      DataArrived(lane / 2, at);
    }
  }
}

void TreeEngine::DataArrived(uint32_t conn, units::Time at) {
  Conn& c = conns_[conn];
  const Record& to = records_[c.to];
  recv_[to.rank] += ChunkBytes(to, c.received);
  ++c.received;
  Progress(c.to);
  max_slots_used_ = std::max(max_slots_used_, static_cast<int>(c.received - c.consumed));
  MaybeDone(c.to, at);
}

void TreeEngine::CtsArrived(uint32_t conn, units::Time at) {
  Conn& c = conns_[conn];
  ++c.credits;
  Progress(c.from);
  MaybeDone(c.from, at);
}

void TreeEngine::SendDone(uint32_t conn, units::Time at) {
  Conn& c = conns_[conn];
  ++c.send_slots;
  Progress(c.from);
  MaybeDone(c.from, at);
}

void TreeEngine::MaybeDone(uint32_t rec, units::Time at) {
  Record& r = records_[rec];
  if (r.done) return;
  // Its data sent, acknowledged and its slots back; everything it expects
  // arrived and released: nothing of this all-reduce left in flight. Every
  // send complete and every credit back: sent in full, and send slots and
  // credits all free again (Conn).
  auto out_done = [&](uint32_t id) {
    const Conn& c = conns_[id];
    return c.sent == r.chunks && c.send_slots == spec_.slots && c.credits == spec_.slots;
  };
  auto in_done = [&](uint32_t id) {
    return conns_[id].received == r.chunks && conns_[id].consumed == r.chunks;
  };
  if (r.up_out >= 0 &&
      (!in_done(static_cast<uint32_t>(r.down_in)) || !out_done(static_cast<uint32_t>(r.up_out))))
    return;
  for (const Kid& k : KidsOf(r))
    if (!in_done(k.up_in)) return;
  for (const Kid& k : KidsOf(r))
    if (!out_done(k.down_out)) return;
  r.done = true;
  ++records_done_;
  finish_ = std::max(finish_, at);
  if (done()) sim_.Stop();
}

int64_t TreeEngine::BytesSent(uint32_t rank) const { return sent_[rank]; }
int64_t TreeEngine::BytesReceived(uint32_t rank) const { return recv_[rank]; }
int64_t TreeEngine::NetworkBytesSent(uint32_t rank) const { return net_sent_[rank]; }
int64_t TreeEngine::NicBytesSent(uint32_t host) const {
  return host < nic_sent_.size() ? nic_sent_[host] : 0;
}

}  // namespace lossless::collective
