// The link layer's core (fabric/network.hpp): construction, event dispatch,
// and the packet path: a port's kick, TryTransmit (PAUSE and FCPs first, then
// the egress queues, then the host's NIC), a frame's arrival and delivery to
// the next switch's egress queue or to the host. The models the path calls
// live beside it: switch_queue.cpp, switch_route.cpp, pfc_link.cpp,
// ib_link.cpp, link_state.cpp, the host side in nic.cpp (class Nics), a
// distributed run's links in remote.cpp.
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

Network::Network(sim::Simulator& sim, const topology::Topology& topo, const NetworkConfig& cfg)
    : sim_(sim), topo_(topo), routes_(topo_), cfg_(cfg), nics_(*this, sim_, cfg_, pool_, ports_) {
  for (uint32_t sw = 0; sw < routes_.num_switches(); ++sw) {
    const uint32_t node = routes_.NodeOfSwitch(sw);
    Switch s;
    s.node = node;
    s.salt = sim::Mix(sim_.seed(), node, 0x5a17);
    s.rng = sim_.MakeRng(node, kRngSpray);
    s.routes = &routes_;
    switches_.push_back(s);
  }
  ports_.resize(routes_.num_ports());
  prefetch_ = ports_.size() * sizeof(Port) >= kPrefetchFromBytes;
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
  if (prefetch_) PrefetchAhead();
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

void Network::DropPacket(PacketRef r, Port* at) {
  ++drops_;
  nics_.CountDrop(pool_[r].flow);
  if (at != nullptr) {
    ++at->stats.classes[pool_[r].tclass].drops;
    nics_.NoteLoss(pool_[r].flow, static_cast<uint32_t>(at - ports_.data()));
  }
  pool_.Free(r);
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
