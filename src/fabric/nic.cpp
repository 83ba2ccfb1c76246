// The host side of the network (fabric/nic.hpp): NICs that inject flows
// (round robin over active flows, per-flow pacing, PCIe cap, IB credits at
// injection), receive packets, answer ECN marks and FECNs with CNPs/BECNs,
// run the DCQCN and IB CC reaction points' timers, the RC transport, and the
// stalled-NIC fault (pause storm). The engine-free congestion-control models
// are in src/cc/, the transport's in src/rdma/; what the NIC asks of the link
// layer (kicks, credits, PAUSE, drops) goes through net_.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "fabric/frame_time.hpp"
#include "fabric/nic.hpp"

#include "fabric/network.hpp"

namespace lossless::fabric {

void Nics::Build(const std::vector<uint32_t>& host_port) {
  nics_.resize(host_port.size());
  for (uint32_t r = 0; r < nics_.size(); ++r) {
    nics_[r].port = host_port[r];
    nics_[r].pcie_bps = cfg_.nic.pcie_rate.bps();
    ports_[host_port[r]].host = r;
  }
  if (cfg_.dcqcn) {
    np_.assign(nics_.size(), cc::DcqcnNotificationPoint(cfg_.dcqcn_params));
    np_deadline_.assign(nics_.size(), INT64_MAX);
  }
}

void Nics::OnEvent(uint32_t kind, uint64_t arg) {
  const uint32_t a32 = static_cast<uint32_t>(arg);
  switch (kind) {
    case kFlowStart:
      StartFlow(a32);
      break;
    case kCcTimer:
      OnCcTimer(a32);
      break;
    case kNpTimer:
      OnNpTimer(a32);
      break;
    case kIbCcTimer:
      OnIbCcTimer(a32);
      break;
    case kCnpInject:
      OnCnp(a32);
      break;
    case kRcTimer:
      OnRcTimer(a32);
      break;
    case kRcGapTimer:
      OnRcGapTimer(a32);
      break;
    case kVirtPost:
      OnVirtPost(a32);
      break;
    case kNicStall:
      OnNicStall(a32);
      break;
    case kNicResume:
      NicResume(a32);
      break;
    case kNicStorm:
      // arg = host << 1 | error.
      OnNicStorm(static_cast<uint32_t>(arg >> 1), (arg & 1) != 0);
      break;
    default:
      break;
  }
}

void Nics::SetPcieRate(uint32_t host, Rate rate) {
  if (host >= nics_.size() || rate.bps() < 0)
    throw std::invalid_argument(
        fmt::format("PCIe rate of host {}: no such host or negative", host));
  nics_[host].pcie_bps = rate.bps();
}

uint32_t Nics::AddQp(const FlowSpec& spec) {
  FlowSpec qp = spec;
  qp.rc = true;
  qp.bytes = 0;
  qp.start = sim_.Now();
  return AddFlow(qp);
}

void Nics::PostSend(uint32_t qp, int64_t bytes, uint64_t tag) {
  if (qp >= flows_.size() || flow_state_[qp].rc == kNone || bytes <= 0)
    throw std::invalid_argument(fmt::format("bad post of {} bytes to QP {}", bytes, qp));
  if (!cfg_.virt.enabled()) {
    PostToNic(qp, bytes, tag);
    return;
  }
  // The message reaches the NIC after its own delay, but never before the
  // QP's previous message: one pending event per message, in posting order.
  const uint32_t q = flow_state_[qp].rc;
  const int64_t at = std::max(sim_.Now().ps() + VirtDelayPs(flows_[qp].spec.src), virt_last_[q]);
  virt_last_[q] = at;
  virt_wait_[q].emplace_back(bytes, tag);
  sim_.Schedule(Time::Ps(at), SourceEntity(qp), this, kVirtPost, qp);
}

void Nics::PostToNic(uint32_t qp, int64_t bytes, uint64_t tag) {
  flows_[qp].spec.bytes += bytes;
  rcq_[flow_state_[qp].rc].Post(bytes, tag);
  Activate(qp);
}

void Nics::OnVirtPost(uint32_t qp) {
  auto& wait = virt_wait_[flow_state_[qp].rc];
  const auto [bytes, tag] = wait.front();
  wait.pop_front();
  PostToNic(qp, bytes, tag);
}

int64_t Nics::VirtDelayPs(uint32_t host) {
  if (virt_rng_.empty()) {
    virt_rng_.reserve(nics_.size());
    for (uint32_t h = 0; h < nics_.size(); ++h)
      virt_rng_.push_back(sim_.MakeRng(h, 0x76697274));  // "virt"
  }
  int64_t d = cfg_.virt.latency.ps();
  if (cfg_.virt.jitter.ps() > 0) {
    const double u = virt_rng_[host].Uniform();  // [0, 1): -log1p(-u) is finite
    d += std::llround(-static_cast<double>(cfg_.virt.jitter.ps()) * std::log1p(-u));
  }
  return d;
}

void Nics::Activate(uint32_t f) {
  FlowState& fs = flow_state_[f];
  if (fs.active) return;
  fs.active = true;
  Nic& nic = nics_[flows_[f].spec.src];
  nic.active.push_back(f);
  net_.Kick(nic.port);
}

void Nics::Deactivate(uint32_t f) {
  FlowState& fs = flow_state_[f];
  if (!fs.active) return;
  fs.active = false;
  Nic& nic = nics_[flows_[f].spec.src];
  const auto it = std::find(nic.active.begin(), nic.active.end(), f);
  const size_t i = static_cast<size_t>(it - nic.active.begin());
  nic.active.erase(it);
  if (nic.cursor > i) --nic.cursor;
  if (nic.cursor >= nic.active.size()) nic.cursor = 0;
}

uint32_t Nics::AddFlow(const FlowSpec& spec) {
  const bool qp = spec.rc && spec.bytes == 0;  // AddQp: messages come later
  if (spec.src >= nics_.size() || spec.dst >= nics_.size() || spec.src == spec.dst ||
      (spec.bytes <= 0 && !qp)) {
    throw std::invalid_argument(
        fmt::format("bad flow {} -> {} ({} bytes)", spec.src, spec.dst, spec.bytes));
  }
  uint32_t f = static_cast<uint32_t>(flows_.size());
  FlowStats st;
  st.spec = spec;
  if (st.spec.tclass < 0) st.spec.tclass = cfg_.nic.data_class;
  // Checked before anything of the flow is kept (a bad VL or route throws).
  FlowState fs;
  fs.entropy = static_cast<uint16_t>(0xC000 | (sim::Mix(sim_.seed(), f, 0xe7) & 0x3FFF));
  fs.tclass = static_cast<uint8_t>(st.spec.tclass);
  if (net_.ib_on_) {
    // IB: the flow's SL selects its VL (one SL2VL table for the fabric).
    const int sl = st.spec.tclass;
    const int vl = sl >= 0 && sl < 16 ? cfg_.ib.sl2vl[sl] : -1;
    if (vl < 0 || (vl >= cfg_.ib.num_vls && vl != kVl15Queue))
      throw std::invalid_argument(fmt::format("flow SL {} maps to no configured VL", sl));
    fs.tclass = static_cast<uint8_t>(vl);
  }
  fs.rate_bps = spec.rate.bps();
  fs.max_payload = spec.max_payload > 0 ? spec.max_payload : cfg_.framing.mtu_payload;
  fs.route_off = spec.route.empty() ? kNone : net_.ResolveRoute(f, spec);
  flows_.push_back(st);
  if (cfg_.dcqcn) {
    int64_t line = ports_[nics_[spec.src].port].rate_bps;
    rp_.emplace_back(cfg_.dcqcn_params, Rate::Bps(line));
    rp_deadline_.push_back(INT64_MAX);
  }
  if (cfg_.ib_cc) {
    ibcc_rp_.emplace_back(cfg_.ib_cc_params);
    ibcc_deadline_.push_back(INT64_MAX);
  }
  if (spec.rc) {
    if (rcq_.empty()) cfg_.rc.Check();
    fs.rc = static_cast<uint32_t>(rcq_.size());
    rcq_.emplace_back(cfg_.rc, fs.max_payload);
    rcr_.emplace_back(cfg_.rc);
    rc_timer_at_.push_back(INT64_MAX);
    rc_gap_at_.push_back(INT64_MAX);
    if (cfg_.virt.enabled()) {
      virt_wait_.emplace_back();
      virt_last_.push_back(0);
    }
    if (qp) {
      fs.persistent = true;
      ++persistent_;
    } else {
      rcq_.back().Post(spec.bytes, f);
    }
  }
  flow_state_.push_back(fs);
  if (qp) return f;
  Time start = spec.start;
  if (cfg_.virt.enabled()) start = std::max(start, sim_.Now()) + Time::Ps(VirtDelayPs(spec.src));
  if (start <= sim_.Now()) {
    StartFlow(f);
  } else {
    sim_.Schedule(start, HostEntity(spec.src), this, kFlowStart, f);
  }
  return f;
}

PacketRef Nics::NextPacket(Port& p, int64_t& wake_at) {
  Nic& nic = nics_[p.host];
  if (nic.active.empty()) return kNoPacket;
  const int64_t now = sim_.Now().ps();
  if (nic.next_ps > now) {
    wake_at = nic.next_ps;
    return kNoPacket;
  }
  const size_t n = nic.active.size();
  // Round robin from the cursor (no division on this per-packet path).
  size_t i = nic.cursor < n ? nic.cursor : 0;
  for (size_t k = 0; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
    uint32_t f = nic.active[i];
    FlowState& fs = flow_state_[f];
    const int64_t ready =
        p.ever_paused ? std::max(fs.next_ps, p.paused_until[fs.tclass]) : fs.next_ps;
    if (ready > now) {
      wake_at = std::min(wake_at, ready);
      continue;
    }
    FlowStats& st = flows_[f];
    const bool rc = fs.rc != kNone;
    rdma::Segment seg;
    int64_t payload;
    if (rc) [[unlikely]] {
      // Invariant (checked in release: a violation would send a made-up packet).
      if (!rcq_[fs.rc].HasToSend())
        throw std::logic_error("RC queue pair on the NIC's round robin with nothing to send");
      seg = rcq_[fs.rc].Peek();
      payload = seg.payload;
    } else {
      payload = std::min<int64_t>(fs.max_payload, st.spec.bytes - st.sent_bytes);
    }
    if (net_.ib_on_ && fs.tclass != kVl15Queue) {
      // Whole-packet credit rule; an FCP's arrival kicks the port again.
      const int32_t blocks = net_.IbBlocks(cfg_.framing.WireBytes(payload));
      const uint32_t pi = static_cast<uint32_t>(&p - ports_.data());
      if (!net_.IbCanSend(pi, fs.tclass, blocks)) continue;
      net_.IbCharge(pi, fs.tclass, blocks);
    }
    PacketRef r = pool_.Alloc();
    Packet& pk = pool_[r];
    pk.sent_ps = now;
    pk.next_arrive_ps = 0;
    pk.tail_ps = 0;
    pk.flow = f;
    pk.src = st.spec.src;
    pk.dst = st.spec.dst;
    pk.seq = rc ? seg.psn : fs.next_seq++;
    pk.payload = static_cast<uint32_t>(payload);
    pk.wire = static_cast<uint32_t>(cfg_.framing.WireBytes(payload));
    pk.next = kNoPacket;
    pk.entropy = fs.entropy;
    pk.tclass = fs.tclass;
    pk.ecn = cfg_.nic.ect ? kEcnEct0 : kEcnNotEct;
    pk.kind = PacketKind::kData;
    pk.hops = 0;
    pk.flags = fs.route_off != kNone ? kPacketSourceRouted : 0;
    if (rc && seg.last) pk.flags |= kPacketLast;
    pk.in_class = fs.tclass;
    pk.ingress = kNone;
    ++packets_created_;
    if (rc && seg.retransmission) [[unlikely]] {
      ++st.retx_packets;
      ++p.stats.retx_packets;
    } else {
      st.sent_bytes += payload;
    }
    ++st.packets;
    if (cfg_.dcqcn) rp_[f].OnBytesSent(Bytes(pk.wire), sim_.Now());
    if (fs.rate_bps > 0) fs.next_ps = now + FrameTimePs(pk.wire, fs.rate_bps);
    if (fs.gap_ps > 0) fs.next_ps = now + net_.Ser(p, pk.wire) + fs.gap_ps;  // IB CC
    if (nic.pcie_bps > 0) {
      nic.next_ps = now + FrameTimePs(payload, nic.pcie_bps);
    }
    bool finished;
    if (rc) {
      rcq_[fs.rc].Advance(sim_.Now());
      ArmRcTimer(f);
      finished = !rcq_[fs.rc].HasToSend();
    } else {
      finished = st.sent_bytes >= st.spec.bytes;
    }
    if (finished) {
      fs.active = false;
      nic.active.erase(nic.active.begin() + static_cast<std::ptrdiff_t>(i));
      nic.cursor = i < nic.active.size() ? i : 0;
    } else {
      nic.cursor = i + 1 == n ? 0 : i + 1;
    }
    return r;
  }
  return kNoPacket;
}

void Nics::InjectCnp(uint32_t flow, Time at) {
  if (!cfg_.dcqcn || flow >= rp_.size())
    throw std::invalid_argument(fmt::format("CNP injection into flow {} without DCQCN", flow));
  sim_.Schedule(std::max(at, sim_.Now()), SourceEntity(flow), this, kCnpInject, flow);
}

void Nics::ArmCcTimer(uint32_t f) {
  int64_t at = rp_[f].NextDeadline().ps();
  if (at == Time::Max().ps() || SourceDone(f) || at >= rp_deadline_[f]) return;
  rp_deadline_[f] = at;
  sim_.Schedule(Time::Ps(at), SourceEntity(f), this, kCcTimer, f);
}

void Nics::ArmNpTimer(uint32_t h) {
  int64_t at = np_[h].NextDeadline().ps();
  if (at == Time::Max().ps() || at >= np_deadline_[h]) return;
  np_deadline_[h] = at;
  sim_.Schedule(Time::Ps(at), HostEntity(h), this, kNpTimer, h);
}

void Nics::SendCnp(uint32_t host, uint32_t flow, int cls) {
  // A CNP is a small packet (BTH + 16 reserved bytes) from the flow's
  // receiver back to its sender: DCQCN's on the strict CNP class, IB CC's
  // BECN on the flow's own VL (credit flow controlled like data).
  ++ports_[nics_[host].port].stats.classes[cls].cnp_tx;
  ++cnps_;
  SendControl(host, flow, PacketKind::kCnp, cls, 16, 0, 0);
}

void Nics::SendControl(uint32_t host, uint32_t flow, PacketKind kind, int cls, int32_t payload,
                       uint32_t seq, uint8_t flags) {
  Port& p = ports_[nics_[host].port];
  PacketRef r = pool_.Alloc();
  Packet& c = pool_[r];
  c = Packet{};
  c.sent_ps = sim_.Now().ps();
  c.flow = flow;
  c.src = host;
  c.dst = host == flows_[flow].spec.src ? flows_[flow].spec.dst : flows_[flow].spec.src;
  c.seq = seq;
  c.flags = flags;
  c.payload = static_cast<uint32_t>(payload);
  c.wire = static_cast<uint32_t>(cfg_.framing.WireBytes(payload));
  c.next = kNoPacket;
  c.entropy = flow_state_[flow].entropy;
  c.tclass = static_cast<uint8_t>(cls);
  c.in_class = static_cast<uint8_t>(cls);
  c.ecn = kEcnNotEct;
  c.kind = kind;
  c.ingress = kNone;
  p.q[cls].fifo.Push(pool_, r);
  p.nonempty = static_cast<uint8_t>(p.nonempty | (1u << cls));
  const int64_t size = c.wire - cfg_.framing.gap_overhead;
  p.q[cls].bytes += size;
  p.queued_bytes += size;
  net_.Kick(nics_[host].port);
}

void Nics::OnBecn(uint32_t f) {
  if (SourceDone(f)) return;
  ibcc_rp_[f].OnBecn(sim_.Now());
  flow_state_[f].gap_ps = ibcc_rp_[f].InjectionGap().ps();
  ArmIbCcTimer(f);
}

void Nics::ArmIbCcTimer(uint32_t f) {
  const int64_t at = ibcc_rp_[f].NextDeadline().ps();
  if (at == Time::Max().ps() || SourceDone(f) || at >= ibcc_deadline_[f]) return;
  ibcc_deadline_[f] = at;
  sim_.Schedule(Time::Ps(at), SourceEntity(f), this, kIbCcTimer, f);
}

void Nics::OnCnp(uint32_t f) {
  if (SourceDone(f)) return;
  rp_[f].OnCnp(sim_.Now());
  SetPacedRate(f, rp_[f].rate().bps());
  ArmCcTimer(f);
}

void Nics::SetPacedRate(uint32_t f, int64_t bps) {
  FlowState& fs = flow_state_[f];
  const int64_t old = fs.rate_bps;
  fs.rate_bps = bps;
  const int64_t now = sim_.Now().ps();
  if (old <= 0 || bps <= 0 || old == bps || fs.next_ps <= now) return;
  // The bits the last packet still owes the rate limiter are paid at the new
  // rate. Without this a queue pair cut to the minimum rate (1 Mb/s on the
  // firmware preset: 33 ms per 4 KiB frame) would wait out that gap long
  // after its rate had recovered.
  __extension__ using I128 = __int128;
  const I128 left = fs.next_ps - now;
  fs.next_ps = now + static_cast<int64_t>(left * old / bps);
  if (fs.active) net_.ScheduleKick(nics_[flows_[f].spec.src].port, fs.next_ps);
}

void Nics::Receive(uint32_t host, PacketRef r) {
  // The packet is read through `pk()`, never held as a reference across a
  // call: sending a CNP or a credit update allocates from the pool, which
  // may move every packet (a long-delay fabric grew it under a reference
  // here and the run crashed).
  auto pk = [this, r]() -> const Packet& { return pool_[r]; };
  if (net_.ib_on_ && pk().tclass != kVl15Queue) {
    // The HCA consumes the packet at once and frees its blocks t_rx later.
    const uint32_t port = nics_[host].port;
    const uint8_t vl = pk().tclass;
    const int32_t blocks = net_.IbBlocks(pk().wire);
    net_.IbReceive(port, vl, blocks);
    if (cfg_.ib.rx_free_delay.ps() == 0) {
      net_.IbRelease(port, vl, blocks);
    } else {
      // Freed by the port itself when it next looks (no event unless idle then).
      const int64_t at = sim_.Now().ps() + cfg_.ib.rx_free_delay.ps();
      net_.ib_[port].frees.push({at, blocks, vl});
      net_.ScheduleKick(port, std::max(at, ports_[port].busy_until));
    }
  }
  if (pk().kind == PacketKind::kCnp) {
    const uint32_t flow = pk().flow;
    const bool mine = pk().dst == host;
    if (cfg_.dcqcn && mine) OnCnp(flow);
    if (cfg_.ib_cc && mine) OnBecn(flow);
    pool_.Free(r);
    return;
  }
  if (pk().kind == PacketKind::kAck) {
    if (pk().dst == host) {
      RcReceiveAck(r);
    } else {
      net_.DropPacket(r, nullptr);
    }
    return;
  }
  if ((pk().flags & kPacketFecn) && pk().dst == host)
    SendCnp(host, pk().flow, pk().tclass);  // BECN
  if (cfg_.dcqcn && pk().ecn == kEcnCe && pk().dst == host) {
    if (np_[host].OnEcnMarkedPacket(pk().flow, sim_.Now()))
      SendCnp(host, pk().flow, cfg_.cnp_class);
    ArmNpTimer(host);
  }
  FlowStats& st = flows_[pk().flow];
  if (pk().dst != host) {
    net_.DropPacket(r, nullptr);
    return;
  }
  if (flow_state_[pk().flow].rc != kNone) [[unlikely]] {
    RcReceiveData(host, r);
    return;
  }
  const Time now = sim_.Now();
  st.recv_bytes += pk().payload;
  Time latency = now - Time::Ps(pk().sent_ps);
  if (latency > st.max_latency) st.max_latency = latency;
  pool_.Free(r);
  if (st.recv_bytes == st.spec.bytes) {
    Finished(st, now);
  }
}

// --- RC transport ------------------------------------------------------------

void Nics::RcReceiveData(uint32_t host, PacketRef r) {
  const Packet& pk = pool_[r];
  const uint32_t f = pk.flow;
  FlowState& fs = flow_state_[f];
  FlowStats& st = flows_[f];
  const Time now = sim_.Now();
  const rdma::RcResponder::Response resp = rcr_[fs.rc].OnData(
      pk.seq, static_cast<int32_t>(pk.payload), (pk.flags & kPacketLast) != 0, now);
  st.recv_bytes += resp.placed_bytes;
  if (resp.placed_bytes > 0) {
    const Time latency = now - Time::Ps(pk.sent_ps);
    if (latency > st.max_latency) st.max_latency = latency;
  }
  pool_.Free(r);
  // ACKs and NAKs ride the data's class (IB: its VL, credit flow controlled).
  if (resp.send == rdma::RcResponder::Response::kAck) {
    SendControl(host, f, PacketKind::kAck, fs.tclass, 4, resp.psn, 0);  // BTH + AETH
  } else if (resp.send == rdma::RcResponder::Response::kNak) {
    SendControl(host, f, PacketKind::kAck, fs.tclass, 4, resp.psn, kPacketNak);
  }
  if (cfg_.rc.ooo) ArmRcGapTimer(f);
  for (uint32_t k = 0; k < resp.messages; ++k) {
    if (transport_obs_ != nullptr) transport_obs_->OnRecvComplete(f, now);
  }
  if (resp.messages > 0 && !fs.persistent && !st.done() && st.recv_bytes == st.spec.bytes) {
    Finished(st, now);
  }
}

void Nics::RcReceiveAck(PacketRef r) {
  const Packet& pk = pool_[r];
  const uint32_t f = pk.flow;
  const uint32_t psn = pk.seq;
  const bool nak = (pk.flags & kPacketNak) != 0;
  pool_.Free(r);
  rdma::RcRequester& rq = rcq_[flow_state_[f].rc];
  if (rq.failed()) return;
  rc_done_.clear();
  const Time now = sim_.Now();
  if (nak) {
    ++flows_[f].naks;
    if (!rq.OnNak(psn, now, rc_done_)) {
      QpFail(f);
      return;
    }
  } else {
    rq.OnAck(psn, now, rc_done_);
  }
  if (transport_obs_ != nullptr) {
    for (uint64_t tag : rc_done_) transport_obs_->OnSendComplete(f, tag, now);
  }
  // An ACK beyond the requester's next PSN (the responder had placed a
  // rewound range out of order) can leave nothing to send.
  if (rq.HasToSend())
    Activate(f);
  else
    Deactivate(f);
  ArmRcTimer(f);
}

void Nics::ArmRcTimer(uint32_t f) {
  const uint32_t q = flow_state_[f].rc;
  const int64_t at = rcq_[q].Deadline().ps();
  // One pending event per QP at most: an earlier one re-arms when it fires.
  if (at == Time::Max().ps() || rc_timer_at_[q] <= at) return;
  rc_timer_at_[q] = at;
  sim_.Schedule(Time::Ps(at), SourceEntity(f), this, kRcTimer, f);
}

void Nics::OnRcTimer(uint32_t f) {
  const uint32_t q = flow_state_[f].rc;
  if (rc_timer_at_[q] != sim_.Now().ps()) return;  // superseded by an earlier one
  rc_timer_at_[q] = INT64_MAX;
  rdma::RcRequester& rq = rcq_[q];
  if (rq.Deadline() <= sim_.Now()) {
    ++flows_[f].timeouts;
    if (!rq.OnTimeout(sim_.Now())) {
      QpFail(f);
      return;
    }
    if (rq.HasToSend()) Activate(f);
  }
  ArmRcTimer(f);
}

void Nics::ArmRcGapTimer(uint32_t f) {
  const uint32_t q = flow_state_[f].rc;
  const int64_t at = rcr_[q].GapDeadline().ps();
  if (at == Time::Max().ps() || rc_gap_at_[q] <= at) return;
  rc_gap_at_[q] = at;
  sim_.Schedule(Time::Ps(at), HostEntity(flows_[f].spec.dst), this, kRcGapTimer, f);
}

void Nics::OnRcGapTimer(uint32_t f) {
  const uint32_t q = flow_state_[f].rc;
  if (rc_gap_at_[q] != sim_.Now().ps()) return;  // superseded by an earlier one
  rc_gap_at_[q] = INT64_MAX;
  const rdma::RcResponder::Response resp = rcr_[q].OnGapTimer(sim_.Now());
  if (resp.send == rdma::RcResponder::Response::kNak)
    SendControl(flows_[f].spec.dst, f, PacketKind::kAck, flow_state_[f].tclass, 4, resp.psn,
                kPacketNak);
  ArmRcGapTimer(f);
}

std::string Nics::LossWhere(uint32_t port) const {
  return port != kNone ? fmt::format("last loss on link {}", net_.PortName(port))
                       : std::string("no loss seen on a link (congestion drop or none)");
}

void Nics::NoteLoss(uint32_t flow, uint32_t port) {
  if (last_loss_.size() <= flow) last_loss_.resize(flows_.size());
  last_loss_[flow] = {sim_.Now().ps(), sim_.RunningKey(), port};
}

LastLoss Nics::LastLossOf(uint32_t flow) const {
  return flow < last_loss_.size() ? last_loss_[flow] : LastLoss{};
}

void Nics::ImportQpFailure(QpFailure fail, uint32_t loss_port) {
  fail.what = fail.what.substr(0, fail.head_len) + LossWhere(loss_port);
  qp_failure_.assign(1, std::move(fail));
}

void Nics::QpFail(uint32_t f) {
  if (!qp_failure_.empty()) return;
  const FlowStats& st = flows_[f];
  const FlowState& fs = flow_state_[f];
  const rdma::RcRequester& rq = rcq_[fs.rc];
  const std::string where = LossWhere(LastLossOf(f).port);
  QpFailure fail;
  fail.qp = f;
  fail.at = sim_.Now();
  fail.what = fmt::format(
      "QP {} (host {} -> host {}, first link {}): retry count {} exhausted at {} after {} ACK "
      "timeout(s) and {} NAK(s), PSN {} unacknowledged; {}",
      f, st.spec.src, st.spec.dst, net_.PortName(nics_[st.spec.src].port), cfg_.rc.retry_cnt,
      units::FormatTime(sim_.Now()), rq.timeouts(), rq.naks(), rq.una(), where);
  fail.head_len = fail.what.size() - where.size();
  qp_failure_.push_back(std::move(fail));
  sim_.Stop();
}

bool Nics::SourceDone(uint32_t f) const {
  const FlowState& fs = flow_state_[f];
  if (fs.persistent) return false;
  const FlowStats& st = flows_[f];
  if (fs.rc == kNone) return st.sent_bytes >= st.spec.bytes;
  const rdma::RcRequester& rq = rcq_[fs.rc];
  return st.sent_bytes >= st.spec.bytes && rq.una() == rq.end();
}

void Nics::Finished(FlowStats& st, Time now) {
  st.finish = now;
  ++flows_done_;
  net_.FlowFinished();
}

void Nics::StallReceive(uint32_t host, Time from, Time until) {
  if (host >= nics_.size() || until <= from)
    throw std::invalid_argument(fmt::format("bad NIC stall of host {}", host));
  sim_.Schedule(std::max(from, sim_.Now()), HostEntity(host), this, kNicStall, host);
  if (until != Time::Max()) sim_.Schedule(until, HostEntity(host), this, kNicResume, host);
}

int64_t Nics::HeldBytes(uint32_t host) const {
  int64_t sum = 0;
  for (int64_t b : ports_[nics_[host].port].ingress.bytes) sum += b;
  return sum;
}

void Nics::Hold(uint32_t host, PacketRef r) {
  Nic& nic = nics_[host];
  Port& p = ports_[nic.port];
  const Packet& pk = pool_[r];
  const int c = pk.tclass;
  const int64_t size = static_cast<int64_t>(pk.wire) - cfg_.framing.gap_overhead;
  const int64_t now = sim_.Now().ps();
  if (net_.pfc_.Overruns(p.ingress, c, size)) {
    ++p.stats.rx_stall_drops;
    net_.DropPacket(r, nullptr);
    return;
  }
  nic.held.Push(pool_, r);
  flowctl::PfcThresholds::Add(p.ingress, c, size);
  if (nic.stuck_since < 0) {
    nic.stuck_since = now;
    const int64_t timeout = cfg_.nic.pause_storm_timeout.ps();
    if (timeout > 0) {
      sim_.Schedule(Time::Ps(now + timeout / 100 * 85), p.entity, this, kNicStorm,
                    uint64_t{host} << 1);
      sim_.Schedule(Time::Ps(now + timeout), p.entity, this, kNicStorm, (uint64_t{host} << 1) | 1);
    }
  }
  const bool pfc = cfg_.pfc.enabled && (net_.pfc_.classes() >> c & 1);
  if (pfc && !nic.storm_stop && net_.pfc_.AboveXoff(p.ingress, c) && !(p.xoff_sent >> c & 1))
    net_.AssertXoff(nic.port, c);
}

void Nics::NicResume(uint32_t host) {
  Nic& nic = nics_[host];
  Port& p = ports_[nic.port];
  nic.stalled = false;
  p.rx_stalled = false;
  nic.storm_stop = false;
  nic.stuck_since = -1;
  while (!nic.held.empty()) {
    PacketRef r = nic.held.Pop(pool_);
    const int64_t size = static_cast<int64_t>(pool_[r].wire) - cfg_.framing.gap_overhead;
    flowctl::PfcThresholds::Remove(p.ingress, pool_[r].tclass, size);
    Receive(host, r);
  }
  for (unsigned m = p.xoff_sent; m != 0; m &= m - 1) {
    const int c = __builtin_ctz(m);
    net_.SendPause(nic.port, static_cast<uint8_t>(1u << c), 0);
    if (net_.wait_obs_ != nullptr) net_.XoffAsserted(nic.port, c, false);
  }
  p.xoff_sent = 0;
}

void Nics::OnCcTimer(uint32_t f) {
  if (rp_deadline_[f] != sim_.Now().ps()) return;  // superseded
  rp_deadline_[f] = INT64_MAX;
  rp_[f].Advance(sim_.Now());
  SetPacedRate(f, rp_[f].rate().bps());
  ArmCcTimer(f);
}

void Nics::OnNpTimer(uint32_t h) {
  if (np_deadline_[h] != sim_.Now().ps()) return;
  np_deadline_[h] = INT64_MAX;
  due_cnps_.clear();
  np_[h].Advance(sim_.Now(), due_cnps_);
  for (const auto& d : due_cnps_) SendCnp(h, d.qp, cfg_.cnp_class);
  ArmNpTimer(h);
}

void Nics::OnIbCcTimer(uint32_t f) {
  if (ibcc_deadline_[f] != sim_.Now().ps()) return;  // superseded
  ibcc_deadline_[f] = INT64_MAX;
  ibcc_rp_[f].Advance(sim_.Now());
  flow_state_[f].gap_ps = ibcc_rp_[f].InjectionGap().ps();
  ArmIbCcTimer(f);
}

void Nics::OnNicStall(uint32_t host) {
  Nic& nic = nics_[host];
  nic.stalled = true;
  ports_[nic.port].rx_stalled = true;
}

void Nics::OnNicStorm(uint32_t host, bool error) {
  // Warning at 85 % of the timeout, error at 100 %.
  Nic& nic = nics_[host];
  Port& p = ports_[nic.port];
  const int64_t timeout = cfg_.nic.pause_storm_timeout.ps();
  const int64_t due = nic.stuck_since + (error ? timeout : timeout / 100 * 85);
  if (!nic.stalled || nic.stuck_since < 0 || due != sim_.Now().ps()) return;  // stale
  if (!error) {
    ++p.stats.pause_storm_warnings;
    return;
  }
  ++p.stats.pause_storm_errors;
  nic.storm_stop = true;
  // Stop sending PAUSE: no more refreshes, no XON; the upstream pause
  // simply expires.
  for (unsigned m = p.xoff_sent; m != 0; m &= m - 1) {
    const int c = __builtin_ctz(m);
    if (net_.wait_obs_ != nullptr) net_.XoffAsserted(nic.port, c, false);
  }
  p.xoff_sent = 0;
}

}  // namespace lossless::fabric
