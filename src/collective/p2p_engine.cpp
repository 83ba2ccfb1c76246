#include "collective/p2p_engine.hpp"

#include <algorithm>
#include <utility>
#include <stdexcept>

#include <fmt/format.h>

#include "collective/post_arg.hpp"

namespace lossless::collective {

int P2pChannelsPerPeer(int comm_channels, int ranks) {
  int p2p = 1;
  while (p2p < comm_channels) p2p *= 2;
  int per_peer = 2;
  while (per_peer * ranks > p2p * 4 && per_peer > 1) per_peer /= 2;
  return per_peer;
}

P2pEngine::P2pEngine(sim::Simulator& sim, fabric::Network& net, const P2pSpec& spec)
    : sim_(sim), net_(net), spec_(spec) {
  if (spec_.ranks < 2 || spec_.gpus_per_node <= 0 || spec_.nics_per_node <= 0 ||
      spec_.net_chunk_bytes <= 0 || spec_.nvlink_chunk_bytes <= 0 || spec_.slots <= 0 ||
      spec_.cts_bytes <= 0 || spec_.nvlink_rate.bps() <= 0 || spec_.channels_per_peer <= 0 ||
      spec_.qps_per_connection < 1 || spec_.qps_per_connection > 128)
    throw std::invalid_argument(
        "p2p engine: expected 2+ ranks, positive sizes and 1 to 128 queue pairs per connection");
  if (spec_.pattern == P2pPattern::kSend &&
      (spec_.send_from == spec_.send_to || spec_.send_from >= spec_.ranks ||
       spec_.send_to >= spec_.ranks))
    throw std::invalid_argument("p2p engine: a send needs two different ranks of the group");
  const uint32_t g = static_cast<uint32_t>(spec_.gpus_per_node);
  const uint32_t nics = static_cast<uint32_t>(spec_.nics_per_node);
  const uint32_t n = spec_.ranks;
  if (((n - 1) / g + 1) * nics > net_.num_hosts())
    throw std::invalid_argument(fmt::format("p2p engine: {} ranks need {} hosts, the network has {}",
                                            n, ((n - 1) / g + 1) * nics, net_.num_hosts()));
  out_.assign(n, {});
  in_.assign(n, {});
  auto open = [&](uint32_t a, uint32_t b) {
    Conn c;
    c.src = a;
    c.dst = b;
    c.nvlink = a / g == b / g;
    c.chunk = c.nvlink ? spec_.nvlink_chunk_bytes : spec_.net_chunk_bytes;
    const uint32_t id = static_cast<uint32_t>(conns_.size());
    if (!c.nvlink) {
      // PXN: both ends use the NIC of the destination GPU's rail.
      const uint32_t rail = b % g * nics / g;
      c.host = a / g * nics + rail;
      const uint32_t peer = b / g * nics + rail;
      c.data = QpSet(net_, c.host, peer, spec_.qps_per_connection, spec_.split_data_on_qps);
      c.cts_qp = net_.AddQp(fabric::FlowSpec::Of(peer, c.host, 0));
      qp_conn_.resize(std::max<size_t>(qp_conn_.size(), c.cts_qp + 1), UINT32_MAX);
      for (uint32_t q = 0; q < c.data.size(); ++q) qp_conn_[c.data.first() + q] = 2 * id;
      qp_conn_[c.cts_qp] = 2 * id + 1;
    }
    conns_.push_back(c);
    out_[a].push_back(id);
    in_[b].push_back(id);
  };
  // NCCL's p2p schedule visits peers at distance 1, 2, ... (src/enqueue.cc,
  // (rank + i) mod N): the connections are opened and progressed in that order.
  for (int ch = 0; ch < spec_.channels_per_peer; ++ch) {
    if (spec_.pattern == P2pPattern::kAllToAll) {
      for (uint32_t a = 0; a < n; ++a)
        for (uint32_t i = 1; i < n; ++i) open(a, (a + i) % n);
    } else if (spec_.pattern == P2pPattern::kSend) {
      open(spec_.send_from, spec_.send_to);
    } else {
      for (uint32_t a = 0; a < n; ++a) open(a, (a + 1) % n);
    }
  }
  nv_busy_.assign(n, 0);
  gpu_entity_.assign(n, 0);
  for (uint32_t& e : gpu_entity_) e = sim_.AddEntity();
  sent_.assign(n, 0);
  net_sent_.assign(n, 0);
  recv_.assign(n, 0);
  rank_done_.assign(n, false);
  owned_ranks_ = n;
}

void P2pEngine::set_ownership(GpuOwnership own) {
  own_ = std::move(own);
  owned_ranks_ = 0;
  for (uint32_t r = 0; r < spec_.ranks; ++r) owned_ranks_ += own_.Owns(r) ? 1 : 0;
}

void P2pEngine::AddBytesStillToArrive(std::vector<int64_t>& by_host) const {
  for (const Conn& c : conns_) {
    if (c.nvlink || !own_.Owns(c.dst)) continue;
    const uint32_t peer = net_.flows()[c.data.first()].spec.dst;
    for (int64_t k = c.received + spec_.slots; k < c.msgs; ++k)
      by_host[peer] += std::min(c.chunk, c.bytes - k * c.chunk);
  }
}

void P2pEngine::Begin(int64_t bytes, units::Time now) {
  if (bytes <= 0) throw std::invalid_argument("p2p collective of no bytes");
  if (started_ && !done()) throw std::logic_error("p2p engine: the previous collective runs");
  const uint32_t n = spec_.ranks;
  started_ = true;
  ranks_done_ = 0;
  net_.set_transport_observer(this);
  std::fill(sent_.begin(), sent_.end(), 0);
  std::fill(net_sent_.begin(), net_sent_.end(), 0);
  std::fill(recv_.begin(), recv_.end(), 0);
  std::fill(rank_done_.begin(), rank_done_.end(), false);
  nic_sent_.assign(net_.num_hosts(), 0);
  const int64_t k = spec_.channels_per_peer;
  for (size_t id = 0; id < conns_.size(); ++id) {
    Conn& c = conns_[id];
    // Peer q's share of the send buffer (alltoall; the rank's own share
    // stays put) or the whole message (sendrecv), split over the channels.
    const int64_t pair = spec_.pattern == P2pPattern::kAllToAll
                             ? bytes / n + (c.dst < static_cast<uint32_t>(bytes % n) ? 1 : 0)
                             : bytes;
    const int64_t ch = static_cast<int64_t>(id / (conns_.size() / static_cast<size_t>(k)));
    c.bytes = pair / k + (ch < pair % k ? 1 : 0);
    c.posted = c.sent_done = c.received = c.cts_back = 0;
    c.msgs = (c.bytes + c.chunk - 1) / c.chunk;
    c.credits = c.send_slots = spec_.slots;
  }
  start_ = finish_ = now;
  // Ranks without a connection (a send's bystanders) are done at once.
  for (uint32_t r = 0; r < n; ++r)
    if (out_[r].empty() && in_[r].empty() && own_.Owns(r)) MaybeDone(r, now);
  launched_ = spec_.launch_latency.ps() == 0;
  if (!launched_) {
    own_.ScheduleLaunch(sim_, now + spec_.launch_latency, 0, gpu_entity_[0], this, kLaunch);
    return;
  }
  for (uint32_t c = 0; c < conns_.size(); ++c)
    if (own_.Owns(conns_[c].src)) Progress(c);
  for (uint32_t r = 0; r < n; ++r)
    if (own_.Owns(r)) MaybeDone(r, now);
}

void P2pEngine::Progress(uint32_t id) {
  if (!launched_) return;
  Conn& c = conns_[id];
  while (c.posted < c.bytes && c.credits > 0 && c.send_slots > 0) {
    const int64_t b = std::min(c.chunk, c.bytes - c.posted);
    c.posted += b;
    --c.credits;
    --c.send_slots;
    sent_[c.src] += b;
    if (!c.nvlink) {
      net_sent_[c.src] += b;
      nic_sent_[c.host] += b;
    }
    Post(2 * id, b);
  }
}

void P2pEngine::Post(uint32_t lane, int64_t bytes) {
  const Conn& c = conns_[lane / 2];
  if (!c.nvlink && spec_.net_hop_latency.ps() > 0) {
    // The proxy posts it a hop latency later; same delay for all, so in order.
    const uint32_t gpu = lane % 2 == 0 ? c.src : c.dst;
    sim_.Schedule(sim_.Now() + spec_.net_hop_latency, gpu_entity_[gpu], this, kNetPost,
                  PostArg(lane, bytes));
    return;
  }
  PostNow(lane, bytes);
}

void P2pEngine::PostNow(uint32_t lane, int64_t bytes) {
  Conn& c = conns_[lane / 2];
  const bool cts = lane % 2 == 1;
  if (!c.nvlink) {
    if (cts) {
      net_.PostSend(c.cts_qp, bytes, 0);
    } else {
      c.data.Post(net_, bytes);
    }
    return;
  }
  const uint32_t gpu = cts ? c.dst : c.src;
  sim_.Schedule(NvArrival(gpu, bytes), gpu_entity_[gpu], this, cts ? kNvCts : kNvData, lane / 2);
}

units::Time P2pEngine::NvArrival(uint32_t gpu, int64_t bytes) {
  // The sender's NVLink egress sends one message at a time, in order.
  const int64_t begin = std::max(sim_.Now().ps(), nv_busy_[gpu]);
  const int64_t end = begin + units::SerializationTime(units::Bytes(bytes), spec_.nvlink_rate).ps();
  nv_busy_[gpu] = end;
  return units::Time::Ps(end + spec_.nvlink_latency.ps() + spec_.nvlink_hop_latency.ps());
}

void P2pEngine::OnEvent(uint32_t kind, uint64_t arg) {
  const uint32_t x = static_cast<uint32_t>(arg);
  switch (kind) {
    case kLaunch:
      launched_ = true;
      for (uint32_t c = 0; c < conns_.size(); ++c)
        if (own_.Owns(conns_[c].src)) Progress(c);
      return;
    case kNetPost:
      PostNow(PostLane(arg), PostBytes(arg));
      return;
    case kNvData:
      // Delivered is also complete for the sender.
      DataArrived(x, sim_.Now());
      SendDone(x, sim_.Now());
      return;
    case kNvCts:
      CtsArrived(x, sim_.Now());
      return;
  }
}

void P2pEngine::OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) {
  if (qp >= qp_conn_.size() || qp_conn_[qp] == UINT32_MAX || qp_conn_[qp] % 2 == 1) return;
  const uint32_t id = qp_conn_[qp] / 2;
  for (uint32_t k = conns_[id].data.SendDone(tag); k > 0; --k) SendDone(id, at);
}

void P2pEngine::OnRecvComplete(uint32_t qp, units::Time at) {
  if (qp >= qp_conn_.size() || qp_conn_[qp] == UINT32_MAX) return;
  const uint32_t lane = qp_conn_[qp];
  if (lane % 2 == 1) {
    CtsArrived(lane / 2, at);
  } else {
    for (uint32_t k = conns_[lane / 2].data.RecvDone(qp); k > 0; --k) DataArrived(lane / 2, at);
  }
}

void P2pEngine::DataArrived(uint32_t id, units::Time at) {
  Conn& c = conns_[id];
  recv_[c.dst] += std::min(c.chunk, c.bytes - c.received * c.chunk);
  ++c.received;
  // The receiver copies the chunk out of its slot at once and frees it.
  max_slots_used_ = std::max(max_slots_used_, static_cast<int>(c.received - c.cts_back));
  Post(2 * id + 1, spec_.cts_bytes);
  // Only the last arrival on a connection can finish its receiver.
  if (c.received == c.msgs) MaybeDone(c.dst, at);
}

void P2pEngine::CtsArrived(uint32_t id, units::Time at) {
  Conn& c = conns_[id];
  ++c.credits;
  ++c.cts_back;
  Progress(id);
  if (c.cts_back == c.msgs && c.sent_done == c.msgs) MaybeDone(c.src, at);
}

void P2pEngine::SendDone(uint32_t id, units::Time at) {
  Conn& c = conns_[id];
  ++c.sent_done;
  ++c.send_slots;
  Progress(id);
  if (c.cts_back == c.msgs && c.sent_done == c.msgs) MaybeDone(c.src, at);
}

void P2pEngine::MaybeDone(uint32_t rank, units::Time at) {
  // Done when its sends are acknowledged with their slots back and
  // everything addressed to it has arrived: nothing of it left in flight.
  if (rank_done_[rank]) return;
  for (uint32_t id : out_[rank]) {
    const Conn& c = conns_[id];
    if (c.sent_done < c.msgs || c.cts_back < c.msgs) return;
  }
  for (uint32_t id : in_[rank])
    if (conns_[id].received < conns_[id].msgs) return;
  rank_done_[rank] = true;
  ++ranks_done_;
  finish_ = std::max(finish_, at);
  if (done()) sim_.Stop();
}

int64_t P2pEngine::BytesSent(uint32_t rank) const { return sent_[rank]; }
int64_t P2pEngine::NetworkBytesSent(uint32_t rank) const { return net_sent_[rank]; }
int64_t P2pEngine::BytesReceived(uint32_t rank) const { return recv_[rank]; }
int64_t P2pEngine::NicBytesSent(uint32_t host) const {
  return host < nic_sent_.size() ? nic_sent_[host] : 0;
}

}  // namespace lossless::collective
