#include "fabric/network.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "fabric/frame_time.hpp"

namespace lossless::fabric {

namespace {
constexpr uint64_t kPurposeSpray = 1;
constexpr uint64_t kPurposeLinkDrop = 2;  // injected loss of a link direction
constexpr uint64_t kPurposeBitErrors = 3;
}  // namespace

Network::Network(sim::Simulator& sim, const topology::Topology& topo, const NetworkConfig& cfg)
    : sim_(sim), topo_(topo), routes_(topo_), cfg_(cfg), nics_(*this, sim_, cfg_, pool_, ports_) {
  for (uint32_t sw = 0; sw < routes_.num_switches(); ++sw) {
    const uint32_t node = routes_.NodeOfSwitch(sw);
    Switch s;
    s.node = node;
    s.salt = sim::Mix(sim_.seed(), node, 0x5a17);
    s.rng = sim_.MakeRng(node, kPurposeSpray);
    s.routes = &routes_;
    switches_.push_back(s);
  }
  ports_.resize(routes_.num_ports());
  for (uint32_t pi = 0; pi < ports_.size(); ++pi) {
    const topology::Link& link = topo_.links[pi / 2];
    Port& p = ports_[pi];
    p.node = routes_.PortNode(pi);
    p.peer = RoutingTable::PortPeer(pi);
    p.rate_bps = link.rate.bps();
    p.delay_ps = link.delay.ps();
    p.sw = routes_.SwitchOfNode(p.node);
    if (routes_.SwitchOfNode(routes_.PortNode(p.peer)) != kNone) {
      p.rx_latency_ps = cfg_.sw.latency.ps();
      p.rx_cut_through = cfg_.sw.cut_through;
    }
    p.entity = sim_.AddEntity();
  }
  for (Switch& s : switches_) s.entity = sim_.AddEntity();
  std::vector<uint32_t> host_port(routes_.num_hosts());
  for (uint32_t r = 0; r < host_port.size(); ++r) host_port[r] = routes_.HostPort(r);
  nics_.Build(host_port);
  pfc_ = flowctl::PfcThresholds(cfg_.pfc, cfg_.framing.FrameBytes(cfg_.framing.mtu_payload));
  if (cfg_.ib_cc && !cfg_.ib.enabled)
    throw std::invalid_argument("fabric.cc: expected InfiniBand credits on for IB CC");
  if (cfg_.ib.enabled) IbInit();
  const PfcWatchdogConfig& wd = cfg_.pfc.watchdog;
  if (cfg_.pfc.enabled && wd.enabled) {
    wd.Check();
    wd_.assign(ports_.size() * kMaxClasses, WdQueue{});
    for (uint32_t sw = 0; sw < switches_.size(); ++sw) {
      const int64_t phase = wd.FirstPollPs(sim::Mix(sim_.seed(), switches_[sw].node, 0x3d09));
      sim_.Schedule(sim_.Now() + Time::Ps(phase), switches_[sw].entity, this, kWdPoll, sw);
    }
  }
}

inline void Network::PrefetchAhead() {
  // The packet path's records are spread over the whole fabric: at a few
  // thousand ports, the port, packet and peer records an event reads are
  // out of every cache by the time it runs. The events a few places behind
  // this one in its delay lane run soon, and what they read first is known
  // from their arguments: ask for it now, so the misses of several events
  // overlap instead of following one another (docs/benchmarks.md). A
  // prefetch never faults, so a stale argument costs nothing but the hint.
  uint32_t kind;
  uint64_t arg;
  if (!sim_.LaneAhead(kPrefetchAhead, kind, arg)) return;
  const uint32_t pi = static_cast<uint32_t>(arg);
  const char* port = reinterpret_cast<const char*>(ports_.data() + pi);
  if (kind == kArrival) {
    // Arrive: the wire FIFO (second line), the packet, the receiving port's first line.
    __builtin_prefetch(port + 64);
    __builtin_prefetch(&pool_[static_cast<PacketRef>(arg >> 32)]);
    __builtin_prefetch(ports_.data() + (pi ^ 1u));
  } else if (kind == kKick) {
    __builtin_prefetch(port);
    __builtin_prefetch(port + 64);
  }
}

void Network::OnEvent(uint32_t kind, uint64_t arg) {
  // Dispatch only: each kind's handler lives with its model (pfc_link.cpp,
  // ib_link.cpp; the host side's events are Nics').
  const uint32_t a32 = static_cast<uint32_t>(arg);
  PrefetchAhead();
  switch (kind) {
    case kKick: {
      Port& p = ports_[arg];
      // A kick superseded by an earlier one (see ScheduleKick) is stale.
      if (!p.kick_pending || p.kick_at != sim_.Now().ps()) break;
      p.kick_pending = false;
      TryTransmit(a32);
      break;
    }
    case kArrival:
      Arrive(a32, static_cast<PacketRef>(arg >> 32));
      break;
    case kPauseArrive:
      // arg = receiving port << 24 | class-enable << 16 | quanta.
      if (!ports_[arg >> 24].down)
        OnPauseReceived(static_cast<uint32_t>(arg >> 24), static_cast<uint8_t>(arg >> 16),
                        static_cast<uint16_t>(arg));
      break;
    case kPauseApply:
      // arg = port << 24 | class-enable << 16 | quanta; reception ended `response` ago.
      ApplyPause(static_cast<uint32_t>(arg >> 24), static_cast<uint8_t>(arg >> 16),
                 static_cast<uint16_t>(arg), sim_.Now().ps() - cfg_.pfc.response.ps());
      break;
    case kWdPoll:
      WatchdogPoll(a32);
      sim_.Schedule(sim_.Now() + cfg_.pfc.watchdog.poll, switches_[arg].entity, this, kWdPoll, arg);
      break;
    case kWdRestore:
      // arg = port << 3 | class.
      WatchdogRestored(static_cast<uint32_t>(arg >> 3), static_cast<int>(arg & 7));
      break;
    case kPauseInject:
      // arg = port << 24 | class-enable << 16 | quanta (as kPauseArrive).
      SendPause(static_cast<uint32_t>(arg >> 24), static_cast<uint8_t>(arg >> 16),
                static_cast<uint16_t>(arg));
      break;
    case kPfcRefresh:
      // arg = port << 3 | class.
      OnPfcRefresh(static_cast<uint32_t>(arg >> 3), static_cast<int>(arg & 7));
      break;
    case kFcpTimer:
      IbOnFcpTimer(a32);
      break;
    case kFcpArrive:
      // arg = the port waiting for credit (IbArmWake).
      IbOnFcpWake(a32);
      break;
    case kLinkState:
      // arg = port << 1 | up.
      SetPortUp(static_cast<uint32_t>(arg >> 1), (arg & 1) != 0);
      break;
    case kReroute:
      // arg = switch | table index << 32.
      switches_[a32].routes = reroute_tables_[arg >> 32].get();
      break;
    default:
      break;
  }
}

int64_t Network::Ser(Port& p, int64_t wire) {
  if (wire != p.cached_wire) {
    p.cached_wire = wire;
    p.cached_ser = FrameTimePs(wire, p.rate_bps);
  }
  return p.cached_ser;
}

void Network::ScheduleKick(uint32_t pi, int64_t at) {
  Port& p = ports_[pi];
  // One live kick per port: the earliest wins. A later one left in the queue
  // finds kick_at changed and does nothing.
  if (p.kick_pending && p.kick_at <= at) return;
  p.kick_pending = true;
  p.kick_at = at;
  sim_.Schedule(Time::Ps(at), p.entity, this, kKick, pi);
}

void Network::Kick(uint32_t pi) {
  Port& p = ports_[pi];
  const int64_t now = sim_.Now().ps();
  if (p.busy_until > now) {
    ScheduleKick(pi, p.busy_until);
    return;
  }
  if (p.kick_pending && p.kick_at == now) return;  // about to run
  TryTransmit(pi);
}

PacketRef Network::TakeFromQueue(Port& p, int c) {
  ClassQueue& cq = p.q[c];
  PacketRef r = cq.fifo.Pop(pool_);
  if (cq.fifo.empty()) p.nonempty = static_cast<uint8_t>(p.nonempty & ~(1u << c));
  Packet& pk = pool_[r];
  int64_t size = pk.wire - cfg_.framing.gap_overhead;
  cq.bytes -= size;
  const EcnConfig& ecn = cfg_.sw.ecn[c];
  if (p.sw != kNone && ecn.enabled && pk.ecn == kEcnEct0 && cq.bytes > ecn.kmin.count()) {
    // RED on the bytes left behind, at dequeue (docs/model/switch-buffers.md#ecn-marking).
    bool mark = cq.bytes >= ecn.kmax.count();
    if (!mark) {
      double prob = ecn.pmax * static_cast<double>(cq.bytes - ecn.kmin.count()) /
                    static_cast<double>(ecn.kmax.count() - ecn.kmin.count());
      mark = switches_[p.sw].rng.Uniform() < prob;
    }
    if (mark) {
      pk.ecn = kEcnCe;
      ++p.stats.classes[c].ecn_marks;
    }
  }
  p.queued_bytes -= size;
  if (p.sw != kNone) {
    switches_[p.sw].used_bytes -= size;
    if (cfg_.pfc.enabled) {
      if (wait_obs_ != nullptr) [[unlikely]]
        FwdCount(pk.ingress, pk.in_class, static_cast<uint32_t>(&p - ports_.data()), c, -1);
      ReleaseIngress(pk, size);
    }
    if (cfg_.ib_cc && c != kVl15Queue && pk.kind == PacketKind::kData &&
        fecn_[static_cast<size_t>(&p - ports_.data()) * kMaxClasses + c].ShouldMark(Bytes(cq.bytes),
                                                                                    Bytes(size)))
      pk.flags = static_cast<uint8_t>(pk.flags | kPacketFecn);
    // IB: the packet leaves the ingress VL buffer it was credited against.
    if (ib_on_ && c != kVl15Queue) IbRelease(pk.ingress, c, IbBlocks(pk.wire));
  }
  return r;
}

PacketRef Network::NextFromQueues(Port& p) {
  if (ib_on_) return NextFromQueuesIb(p);
  const int n = cfg_.sw.num_classes;
  const int64_t gap = cfg_.framing.gap_overhead;
  auto take = [&](int c) { return TakeFromQueue(p, c); };
  const int64_t now = sim_.Now().ps();
  auto may_send = [&](int c) { return !p.ever_paused || p.paused_until[c] <= now; };
  const unsigned strict = p.nonempty & cfg_.sw.strict_mask;
  for (unsigned m = strict; m != 0;) {
    int c = 31 - __builtin_clz(m);  // highest class first
    if (may_send(c)) return take(c);
    m &= ~(1u << c);
  }
  const unsigned shared = p.nonempty & ~cfg_.sw.strict_mask & 0xffu;
  if (shared == 0) return kNoPacket;
  if ((shared & (shared - 1)) == 0) {
    // One class competing: DWRR would serve it; skip the round.
    int c = __builtin_ctz(shared);
    return may_send(c) ? take(c) : kNoPacket;
  }
  const int64_t quantum = cfg_.framing.FrameBytes(cfg_.framing.mtu_payload);
  for (int iter = 0; iter < 2 * n + 1; ++iter) {
    int c = p.rr;
    ClassQueue& cq = p.q[c];
    int next = (c + 1) % n;
    if ((cfg_.sw.strict_mask >> c & 1) || cq.fifo.empty() || !may_send(c)) {
      if (cq.fifo.empty()) cq.deficit = 0;
      p.rr = static_cast<uint8_t>(next);
      continue;
    }
    int64_t size = pool_[cq.fifo.head].wire - gap;
    if (cq.deficit < size) {
      cq.deficit += static_cast<int32_t>(cfg_.sw.wrr_weight[c] * quantum);
      if (cq.deficit < size) {
        p.rr = static_cast<uint8_t>(next);
        continue;
      }
    }
    cq.deficit -= static_cast<int32_t>(size);
    PacketRef r = take(c);
    if (cq.fifo.empty()) {
      cq.deficit = 0;
      p.rr = static_cast<uint8_t>(next);
    }
    return r;
  }
  return kNoPacket;
}

void Network::TryTransmit(uint32_t pi) {
  Port& p = ports_[pi];
  if (p.down) return;  // SetPortUp(true) kicks the port again
  const int64_t now = sim_.Now().ps();
  if (p.busy_until > now) {  // a frame is still going out
    ScheduleKick(pi, p.busy_until);
    return;
  }
  PacketRef r = kNoPacket;
  int64_t wake = std::numeric_limits<int64_t>::max();
  // IB flow-control packets go first; the packet that follows them is chosen
  // now and starts when they end (a few hundred ps later).
  int64_t start = now;
  if (ib_on_) {
    const IbPort& ib = ib_[pi];
    if (!ib.inbox.empty() && ib.inbox.front().at <= now) IbSettle(pi);
    if (!ib.frees.empty()) {
      IbApplyFrees(pi, now);
      if (!ib.frees.empty()) wake = ib.frees.front().at;
    }
    if (ib.fcp_pending != 0) start = IbTransmitFcps(pi, now);
  }
  if (p.pause_pending) {
    // MAC control goes first, after the frame in progress; it is never paused
    // and never queued. It is consumed by the peer's MAC (no switch pipeline),
    // so it travels as its own event rather than through the wire FIFO.
    const int64_t wire = 64 + cfg_.framing.gap_overhead;
    const int64_t end = now + FrameTimePs(wire, p.rate_bps);
    p.busy_until = end;
    p.stats.busy_ps += end - now;
    ++p.stats.pause_tx;
    // XOFF classes first; XON classes (time 0) go in a frame of their own.
    const bool xoff = p.pause_mask != 0;
    const uint8_t mask = xoff ? p.pause_mask : p.xon_mask;
    for (unsigned m = mask; m != 0; m &= m - 1) ++p.stats.classes[__builtin_ctz(m)].pause_tx;
    const uint16_t quanta = xoff ? p.pause_quanta : 0;
    if (tx_trace_ != nullptr) {
      Packet pf{};
      pf.kind = PacketKind::kPause;
      pf.entropy = mask;
      pf.payload = quanta;
      pf.wire = static_cast<uint32_t>(wire);
      tx_trace_(tx_trace_ctx_, pi, pf, Time::Ps(now));
    }
    const uint64_t parg = (uint64_t{p.peer} << 24) | (uint64_t{mask} << 16) | quanta;
    if (remote_ != nullptr && cut_[pi]) [[unlikely]]
      remote_->Send(pi, Time::Ps(end + p.delay_ps), kPauseArrive, parg, nullptr);
    else
      sim_.Schedule(Time::Ps(end + p.delay_ps), p.entity, this, kPauseArrive, parg);
    if (xoff) {
      p.pause_mask = 0;
    } else {
      p.xon_mask = 0;
    }
    p.pause_pending = (p.pause_mask | p.xon_mask) != 0;
    ScheduleKick(pi, end);
    return;
  }
  if (r == kNoPacket && HasQueued(p)) {
    r = NextFromQueues(p);
    if (r == kNoPacket) wake = PausedWake(p);
  }
  if (r == kNoPacket && p.host != kNone) r = nics_.NextPacket(p, wake);
  if (r == kNoPacket) {
    if (wake != std::numeric_limits<int64_t>::max()) ScheduleKick(pi, wake);
    return;
  }
  Packet& pk = pool_[r];
  if (start != now && pk.hops == 0) pk.sent_ps = start;
  pk.flags = static_cast<uint8_t>((pk.flags & ~kPacketAfterRestore) |
                                  ((p.wd_unpaused >> pk.tclass & 1) ? kPacketAfterRestore : 0));
  const int64_t ser = Ser(p, pk.wire);
  const int64_t end = std::max(start + ser, pk.tail_ps);
  p.busy_until = end;
  p.stats.busy_ps += ser;
  if (tx_trace_ != nullptr) tx_trace_(tx_trace_ctx_, pi, pk, Time::Ps(start));
  ++p.stats.tx_packets;
  p.stats.tx_wire_bytes += pk.wire;
  ++packet_hops_;
  ++pk.hops;
  const int64_t tail = end + p.delay_ps;
  int64_t head = tail + p.rx_latency_ps;
  if (p.rx_cut_through) {
    const int64_t header = FrameTimePs(std::min<int64_t>(pk.wire, 64), p.rate_bps);
    head = start + header + p.delay_ps + p.rx_latency_ps;
  }
  pk.tail_ps = tail;
  // Every frame's arrival is keyed when it is sent, so the key is known a
  // link delay ahead: a distributed run ships it with the frame
  // (docs/parallel.md, arrival ownership). Only the wire's head has its
  // event queued (a busy link holds one pending event); each arrival queues
  // the next frame's under the key the frame keeps (Arrive), so the events
  // and their order are those of one event per frame.
  pk.next_arrive_ps = head;
  if (remote_ != nullptr) [[unlikely]] {
    if (cut_[pi]) {
      SendRemote(pi, r, head);
      r = kNoPacket;
    }
  }
  if (r != kNoPacket) {
    const uint64_t key = sim_.DrawKey(p.entity);
    pk.ingress = static_cast<uint32_t>(key);  // free on a wire (Deliver sets it)
    const bool idle_wire = p.wire.empty();
    p.wire.Push(pool_, r);
    if (idle_wire) sim_.ScheduleKeyed(Time::Ps(head), key, this, kArrival, ArrivalArg(pi, r));
  }
  const bool more = HasQueued(p) || p.pause_pending ||
                    (p.host != kNone && nics_.HasActive(p.host)) ||
                    (ib_on_ && ib_[pi].fcp_pending != 0);
  if (more) {
    ScheduleKick(pi, end);
  } else if (ib_on_ && !ib_[pi].frees.empty()) {
    ScheduleKick(pi, std::max(end, ib_[pi].frees.front().at));
  }
}

void Network::Arrive(uint32_t pi, PacketRef r) {
  Port& p = ports_[pi];
  // One event per frame, in wire order (arrival times strictly increase on
  // a wire); a frame flushed when the link went down leaves a stale event.
  if (p.wire.head != r || pool_[r].next_arrive_ps != sim_.Now().ps()) return;
  p.wire.Pop(pool_);
  // The next frame's event, under the key drawn when it was sent (frames a
  // distributed run received on a cut link came with their own events).
  if (!p.wire.empty()) {
    if (remote_ != nullptr && cut_[pi]) [[unlikely]] {
      QueueRemoteArrival(pi);
    } else {
      QueueArrival(pi, p.wire.head);
      // That frame's record was written a link delay ago and is out of the
      // caches at scale; the one behind it is read at the next arrival here,
      // a frame time from now: ask for it (a hint, like PrefetchAhead).
      const PacketRef behind = pool_[p.wire.head].next;
      if (behind != kNoPacket) __builtin_prefetch(&pool_[behind]);
    }
  }
  if (p.lossy) [[unlikely]] {
    if (LinkLoses(pi, r)) return;
  }
  Deliver(p.peer, r);
}

void Network::QueueArrival(uint32_t pi, PacketRef r) {
  const Packet& pk = pool_[r];
  sim_.ScheduleKeyed(Time::Ps(pk.next_arrive_ps), sim_.RecentKey(ports_[pi].entity, pk.ingress),
                     this, kArrival, ArrivalArg(pi, r));
}

void Network::SetLinkLoss(uint32_t port, const LinkLossConfig& loss) {
  if (port >= ports_.size()) throw std::invalid_argument(fmt::format("no port {}", port));
  if (loss.ber < 0 || loss.ber >= 1 || loss.drop_prob < 0 || loss.drop_prob > 1 ||
      loss.drop_every < 0)
    throw std::invalid_argument(fmt::format("link loss of {}: out of range", PortName(port)));
  if (loss_.empty()) loss_.resize(ports_.size());
  LinkLoss& l = loss_[port];
  l.cfg = loss;
  l.data_seen = 0;
  l.rng = sim_.MakeRng(ports_[port].entity, kPurposeLinkDrop);
  l.bits = BitErrorSampler(loss.ber, sim_.MakeRng(ports_[port].entity, kPurposeBitErrors));
  ports_[port].lossy = loss.Any();
}

bool Network::LinkLoses(uint32_t pi, PacketRef r) {
  // The frame's last bit has arrived; the receiver's MAC checks it.
  LinkLoss& l = loss_[pi];
  const Packet& pk = pool_[r];
  bool lost = false;
  if (pk.kind == PacketKind::kData) {
    ++l.data_seen;
    if (l.cfg.drop_every > 0 && l.data_seen % static_cast<uint64_t>(l.cfg.drop_every) == 0)
      lost = true;
    if (l.cfg.drop_prob > 0 && l.rng.Uniform() < l.cfg.drop_prob) lost = true;
  }
  if (l.cfg.ber > 0 && l.bits.FrameLost(static_cast<int64_t>(pk.wire) - cfg_.framing.gap_overhead))
    lost = true;
  if (!lost) return false;
  Port& p = ports_[pi];
  ++p.stats.link_losses;
  ++link_losses_;
  nics_.NoteLoss(pk.flow, pi);
  // IB: the receiver never buffers it; its blocks come back at once.
  if (ib_on_ && pk.tclass != kVl15Queue) {
    IbReceive(p.peer, pk.tclass, IbBlocks(pk.wire));
    IbRelease(p.peer, pk.tclass, IbBlocks(pk.wire));
  }
  pool_.Free(r);
  return true;
}

void Network::DropPacket(PacketRef r, Port* at) {
  ++drops_;
  nics_.CountDrop(pool_[r].flow);
  if (at != nullptr) {
    ++at->stats.classes[pool_[r].tclass].drops;
    nics_.NoteLoss(pool_[r].flow, static_cast<uint32_t>(at - ports_.data()));
  }
  pool_.Free(r);
}

int64_t Network::PausedWake(const Port& p) const {
  const int64_t now = sim_.Now().ps();
  int64_t wake = std::numeric_limits<int64_t>::max();
  for (unsigned m = p.nonempty; m != 0; m &= m - 1) {
    int c = __builtin_ctz(m);
    if (p.paused_until[c] > now) wake = std::min(wake, p.paused_until[c]);
  }
  return wake;
}

void Network::FlushQueue(uint32_t pi, int c, bool watchdog) {
  Port& p = ports_[pi];
  ClassQueue& cq = p.q[c];
  while (!cq.fifo.empty()) {
    PacketRef r = cq.fifo.Pop(pool_);
    const int64_t size = static_cast<int64_t>(pool_[r].wire) - cfg_.framing.gap_overhead;
    if (p.sw != kNone) {
      switches_[p.sw].used_bytes -= size;
      if (cfg_.pfc.enabled) {
        if (wait_obs_ != nullptr) FwdCount(pool_[r].ingress, pool_[r].in_class, pi, c, -1);
        ReleaseIngress(pool_[r], size);
      }
      if (ib_on_ && c != kVl15Queue) IbRelease(pool_[r].ingress, c, IbBlocks(pool_[r].wire));
    }
    p.queued_bytes -= size;
    if (watchdog) ++p.stats.classes[c].wd_drops;
    DropPacket(r, &p);
  }
  cq.bytes = 0;
  cq.deficit = 0;
  p.nonempty = static_cast<uint8_t>(p.nonempty & ~(1u << c));
}

void Network::SetPortUp(uint32_t pi, bool up) {
  Port& p = ports_[pi];
  if (p.down == !up) return;
  // FCPs that took effect before the change did so under the old state.
  if (ib_on_) IbSettle(pi);
  p.down = !up;
  if (!up) {
    // Lose what is on the wire and what waits in the egress queues. The
    // frames behind the head get their (now stale) arrival events all the
    // same, so the events that run do not depend on when they are queued.
    const bool chained = remote_ == nullptr || !cut_[pi];
    for (bool head = true; !p.wire.empty(); head = false) {
      if (chained && !head) QueueArrival(pi, p.wire.head);
      DropPacket(p.wire.Pop(pool_), &p);
    }
    for (int c = 0; c < kMaxClasses; ++c) FlushQueue(pi, c, false);
    p.queued_bytes = 0;
    p.nonempty = 0;
    return;
  }
  if (ib_on_) IbResetPort(pi);  // link training re-initialises flow control
  Kick(pi);
}

void Network::ScheduleLinkState(uint32_t link, bool up, Time at) {
  if (link >= ports_.size() / 2) throw std::invalid_argument(fmt::format("no link {}", link));
  for (uint32_t pi : {2 * link, 2 * link + 1})
    sim_.Schedule(std::max(at, sim_.Now()), ports_[pi].entity, this, kLinkState,
                  (uint64_t{pi} << 1) | (up ? 1 : 0));
}

void Network::Deliver(uint32_t ingress, PacketRef r) {
  const Port& in = ports_[ingress];
  Packet& pk = pool_[r];
  pk.ingress = ingress;
  if (in.host != kNone) {
    if (in.rx_stalled) [[unlikely]] {
      nics_.Hold(in.host, r);
      return;
    }
    nics_.Receive(in.host, r);
    return;
  }
  const bool credited = ib_on_ && pk.tclass != kVl15Queue;
  if (credited) IbReceive(ingress, pk.tclass, IbBlocks(pk.wire));
  uint32_t egress;
  if (pk.flags & kPacketSourceRouted) [[unlikely]] {
    const ResolvedHop& h = route_hops_[nics_.RouteOffset(pk.flow) + pk.hops - 1];
    egress = ports_[h.port].down ? kNone : h.port;
    // Other packets never change class, so their in_class (set where they
    // are made) stays equal to tclass.
    pk.in_class = pk.tclass;
    if (h.tclass >= 0) pk.tclass = static_cast<uint8_t>(h.tclass);
  } else {
    egress = Route(in.sw, pk);
  }
  if (egress == kNone) {
    if (credited) IbRelease(ingress, pool_[r].tclass, IbBlocks(pool_[r].wire));
    DropPacket(r, nullptr);
    return;
  }
  Enqueue(in.sw, egress, r);
}

void Network::Enqueue(uint32_t sw, uint32_t egress, PacketRef r) {
  Switch& s = switches_[sw];
  Port& e = ports_[egress];
  Packet& pk = pool_[r];
  const int c = pk.tclass;     // egress queue
  const int ci = pk.in_class;  // ingress accounting (differs only on a class rewrite)
  const int64_t size = static_cast<int64_t>(pk.wire) - cfg_.framing.gap_overhead;
  ClassQueue& cq = e.q[c];
  if (e.wd_active >> c & 1) [[unlikely]] {  // PFC watchdog restore period: drop arrivals
    WatchdogDrop(r, e);
    return;
  }
  const int64_t free_bytes = cfg_.sw.buffer.count() - s.used_bytes;
  const bool pfc = cfg_.pfc.enabled && (pfc_.classes() >> ci & 1);
  // IB data VLs cannot overrun: credits bound what each ingress VL buffer holds.
  const bool credited = ib_on_ && c != kVl15Queue;
  const bool lossless = pfc || credited || (cfg_.sw.lossless_mask >> c & 1);
  if (pfc) {
    Port& in = ports_[pk.ingress];
    if (pfc_.Overruns(in.ingress, ci, size) || size > free_bytes) {
      ++e.stats.classes[c].lossless_drops;  // headroom exhausted: PFC was configured too tight
      if (pk.flags & kPacketAfterRestore) [[unlikely]]
        ++e.stats.classes[c].lossless_drops_after_restore;
      DropPacket(r, &e);
      return;
    }
    flowctl::PfcThresholds::Add(in.ingress, ci, size);
    if (pfc_.AboveXoff(in.ingress, ci) && !(in.xoff_sent >> ci & 1)) AssertXoff(pk.ingress, ci);
    // Admitted (a PFC frame within headroom always fits the buffer, checked above).
    if (wait_obs_ != nullptr) [[unlikely]]
      FwdCount(pk.ingress, ci, egress, c, +1);
  }
  const bool admit =
      credited ||
      (size <= free_bytes && (lossless || static_cast<double>(cq.bytes + size) <=
                                              cfg_.sw.alpha * static_cast<double>(free_bytes)));
  if (!admit) {
    if (lossless) {
      ++e.stats.classes[c].lossless_drops;
      if (pk.flags & kPacketAfterRestore) [[unlikely]]
        ++e.stats.classes[c].lossless_drops_after_restore;
    }
    DropPacket(r, &e);
    return;
  }
  cq.fifo.Push(pool_, r);
  e.nonempty = static_cast<uint8_t>(e.nonempty | (1u << c));
  cq.bytes += size;
  e.queued_bytes += size;
  s.used_bytes += size;
  if (e.queued_bytes > e.stats.max_queue_bytes) e.stats.max_queue_bytes = e.queued_bytes;
  Kick(egress);
}

int64_t Network::BusyPsUntilNow(uint32_t port) const {
  if (merged_) return merged_ports_[port].busy_ps;
  const Port& p = ports_[port];
  return std::max<int64_t>(0,
                           p.stats.busy_ps - std::max<int64_t>(0, p.busy_until - sim_.Now().ps()));
}

PortStats Network::port_stats(uint32_t port) const {
  if (merged_) return merged_ports_[port].stats;
  PortStats st = ports_[port].stats;
  if (ib_on_) {
    // A credit-starved interval still open counts up to now.
    // FCPs that took effect but are not yet settled count as IbSettle would.
    const IbPort& s = ib_[port];
    const int64_t now = sim_.Now().ps();
    std::array<int64_t, kMaxClasses> since{};
    for (int v = 0; v < kMaxClasses; ++v) since[v] = s.vls[v].starved_since;
    for (uint32_t i = 0; i < s.inbox.size && IbFcpDue(s.inbox.at(i)); ++i) {
      const flowctl::FcpInbound& f = s.inbox.at(i);
      if (!IbFcpValid(port, f)) continue;
      ++st.classes[f.vl].fcp_rx;
      if (since[f.vl] >= 0) st.classes[f.vl].credit_starved_ps += f.at - since[f.vl];
      since[f.vl] = -1;
    }
    for (int v = 0; v < kMaxClasses; ++v)
      if (since[v] >= 0) st.classes[v].credit_starved_ps += now - since[v];
  }
  // The port totals of the per-class counters are their sums; paused time
  // under global pause is the time the port was held (PausedTotal).
  for (const ClassStats& c : st.classes) {
    st.ecn_marks += c.ecn_marks;
    st.cnp_tx += c.cnp_tx;
    st.drops += c.drops;
    st.lossless_drops += c.lossless_drops;
    st.lossless_drops_after_restore += c.lossless_drops_after_restore;
    st.wd_drops += c.wd_drops;
    st.fcp_tx += c.fcp_tx;
    st.fcp_rx += c.fcp_rx;
    st.credit_starved_ps += c.credit_starved_ps;
  }
  st.paused_ps = PausedTotal([&](int c) { return st.classes[static_cast<size_t>(c)].paused_ps; });
  return st;
}

void Network::FlowFinished() {
  if (!cfg_.stop_when_flows_done) return;
  if (remote_ != nullptr) {
    if (nics_.flows_done() == local_flows_) sim_.Stop();
    return;
  }
  if (nics_.flows_done() + nics_.persistent() == nics_.flows().size()) sim_.Stop();
}

std::string Network::PortName(uint32_t pi) const {
  return routes_.PortName(pi);
}

std::string Network::EntityName(uint32_t entity) const {
  // Ports, then switches, each registered as one consecutive run (the constructor).
  if (!ports_.empty() && entity >= ports_.front().entity &&
      entity - ports_.front().entity < ports_.size())
    return PortName(entity - ports_.front().entity);
  if (!switches_.empty() && entity >= switches_.front().entity &&
      entity - switches_.front().entity < switches_.size())
    return topo_.nodes[switches_[entity - switches_.front().entity].node].name;
  return "";
}

}  // namespace lossless::fabric
