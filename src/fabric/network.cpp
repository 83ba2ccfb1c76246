#include "fabric/network.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace lossless::fabric {

namespace {
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint64_t kPurposeSpray = 1;
}  // namespace

Network::Network(sim::Simulator& sim, const topology::Topology& topo, const NetworkConfig& cfg)
    : sim_(sim), topo_(topo), routes_(topo_), cfg_(cfg) {
  for (uint32_t sw = 0; sw < routes_.num_switches(); ++sw) {
    const uint32_t node = routes_.NodeOfSwitch(sw);
    Switch s;
    s.node = node;
    s.salt = sim::Mix(sim_.seed(), node, 0x5a17);
    s.rng = sim_.MakeRng(node, kPurposeSpray);
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
  nics_.resize(routes_.num_hosts());
  for (uint32_t r = 0; r < nics_.size(); ++r) {
    nics_[r].port = routes_.HostPort(r);
    ports_[nics_[r].port].host = r;
  }
  pfc_ = flowctl::PfcThresholds(cfg_.pfc, cfg_.framing.FrameBytes(cfg_.framing.mtu_payload));
  fc_mask_ = pfc_.classes();
  if (cfg_.dcqcn) {
    np_.assign(nics_.size(), cc::DcqcnNotificationPoint(cfg_.dcqcn_params));
    np_deadline_.assign(nics_.size(), INT64_MAX);
  }
  if (cfg_.ib_cc && !cfg_.ib.enabled)
    throw InputError({"<network>", 0, "fabric.cc"}, "expected InfiniBand credits on for IB CC");
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

uint32_t Network::Route(uint32_t sw, const Packet& p) {
  uint32_t port = RouteMinimal(sw, p);
  if (port == kNone || !ports_[port].down) return port;
  // The chosen next hop is down: take the next live candidate in table order.
  const RoutingTable::NextHops h = routes_.Next(sw, p.dst);
  uint32_t at = 0;
  while (h.ports[at] != port) ++at;
  for (uint32_t k = 1; k < h.n; ++k) {
    const uint32_t alt = h.ports[(at + k) % h.n];
    if (!ports_[alt].down) return alt;
  }
  return kNone;
}

uint32_t Network::RouteMinimal(uint32_t sw, const Packet& p) {
  const RoutingTable::NextHops next = routes_.Next(sw, p.dst);
  const uint32_t n = next.n;
  if (n <= 1) return n == 1 ? next.ports[0] : kNone;
  Switch& s = switches_[sw];
  switch (cfg_.routing) {
    case RoutingMode::kEcmp: {
      // 5-tuple: source and destination address, UDP source port (entropy),
      // UDP destination port 4791, protocol 17.
      const uint64_t h =
          sim::Mix(s.salt, (uint64_t{p.src} << 32) | p.dst, (uint64_t{p.entropy} << 16) | 4791, 17);
      return next.ports[h % n];
    }
    case RoutingMode::kDestTable:
      return next.ports[sim::Mix(s.salt, p.dst) % n];
    case RoutingMode::kAdaptive: {
      uint32_t start = static_cast<uint32_t>(sim::Mix(s.salt, p.dst, p.seq) % n);
      uint32_t best = next.ports[start];
      int64_t now = sim_.Now().ps();
      auto load = [&](uint32_t pi) {
        const Port& q = ports_[pi];
        int64_t busy = q.busy_until > now ? q.busy_until - now : 0;
        int64_t work = q.queued_bytes * 8'000'000'000'000 / q.rate_bps + busy;  // ps ahead
        // IB: a port without credit for this packet's VL counts as loaded.
        if (ib_on_ && p.tclass != kVl15Queue && IbAvailableCredits(pi, p.tclass) < IbBlocks(p.wire))
          work += int64_t{1} << 50;
        return work;
      };
      int64_t best_load = load(best);
      for (uint32_t k = 1; k < n && best_load > 0; ++k) {
        uint32_t pi = next.ports[(start + k) % n];
        int64_t l = load(pi);
        if (l < best_load) {
          best = pi;
          best_load = l;
        }
      }
      return best;
    }
    case RoutingMode::kSpray:
      return next.ports[s.rng.Below(n)];
  }
  return kNone;
}

uint32_t Network::AddFlow(const FlowSpec& spec) {
  if (spec.src >= nics_.size() || spec.dst >= nics_.size() || spec.src == spec.dst ||
      spec.bytes <= 0) {
    throw std::invalid_argument(
        fmt::format("bad flow {} -> {} ({} bytes)", spec.src, spec.dst, spec.bytes));
  }
  uint32_t f = static_cast<uint32_t>(flows_.size());
  FlowStats st;
  st.spec = spec;
  if (st.spec.tclass < 0) st.spec.tclass = cfg_.nic.data_class;
  flows_.push_back(st);
  FlowState fs;
  fs.entropy = static_cast<uint16_t>(0xC000 | (sim::Mix(sim_.seed(), f, 0xe7) & 0x3FFF));
  fs.tclass = static_cast<uint8_t>(st.spec.tclass);
  if (ib_on_) {
    // IB: the flow's SL selects its VL (one SL2VL table for the fabric).
    const int sl = st.spec.tclass;
    const int vl = sl >= 0 && sl < 16 ? cfg_.ib.sl2vl[sl] : -1;
    if (vl < 0 || (vl >= cfg_.ib.num_vls && vl != kVl15Queue))
      throw std::invalid_argument(fmt::format("flow SL {} maps to no configured VL", sl));
    fs.tclass = static_cast<uint8_t>(vl);
  }
  fs.rate_bps = spec.rate.bps();
  fs.max_payload = spec.max_payload > 0 ? spec.max_payload : cfg_.framing.mtu_payload;
  fs.route_off = kNone;
  if (!spec.route.empty()) {
    fs.route_off = static_cast<uint32_t>(route_hops_.size());
    ResolveRoute(f, spec);
  }
  if (cfg_.dcqcn) {
    int64_t line = ports_[nics_[spec.src].port].rate_bps;
    rp_.emplace_back(cfg_.dcqcn_params, Rate::Bps(line));
    rp_deadline_.push_back(INT64_MAX);
  }
  if (cfg_.ib_cc) {
    ibcc_rp_.emplace_back(cfg_.ib_cc_params);
    ibcc_deadline_.push_back(INT64_MAX);
  }
  flow_state_.push_back(fs);
  if (spec.start <= sim_.Now()) {
    StartFlow(f);
  } else {
    sim_.Schedule(spec.start, ports_[nics_[spec.src].port].entity, this, kFlowStart, f);
  }
  return f;
}

void Network::ResolveRoute(uint32_t f, const FlowSpec& spec) {
  // On error nothing of the flow is kept (AddFlow has not stored it yet
  // beyond flows_, which we pop).
  const size_t keep = route_hops_.size();
  auto fail = [&](const std::string& why) {
    route_hops_.resize(keep);
    flows_.pop_back();
    throw std::invalid_argument(
        fmt::format("flow {} ({} -> {}): route: {}", f, spec.src, spec.dst, why));
  };
  const uint32_t first = ports_[ports_[nics_[spec.src].port].peer].node;
  const uint32_t last = ports_[ports_[nics_[spec.dst].port].peer].node;
  if (spec.route.front().node != first) {
    fail(fmt::format("expected to start at the source's switch {}, got {}", topo_.nodes[first].name,
                     spec.route.front().node < topo_.nodes.size()
                         ? topo_.nodes[spec.route.front().node].name
                         : std::to_string(spec.route.front().node)));
  }
  if (spec.route.back().node != last) {
    fail(fmt::format("expected to end at the destination's switch {}", topo_.nodes[last].name));
  }
  if (spec.route.size() > 250) fail("expected at most 250 switches");
  for (size_t i = 0; i < spec.route.size(); ++i) {
    const RouteHop& h = spec.route[i];
    if (h.node >= topo_.nodes.size() || routes_.SwitchOfNode(h.node) == kNone)
      fail(fmt::format("hop {} is not a switch", i));
    if (h.tclass >= kMaxClasses) fail(fmt::format("hop {}: class {} out of range", i, h.tclass));
    uint32_t egress = kNone;
    if (i + 1 < spec.route.size()) {
      for (uint32_t pi : routes_.NodePorts(h.node)) {
        if (ports_[ports_[pi].peer].node == spec.route[i + 1].node) {
          egress = pi;
          break;
        }
      }
      if (egress == kNone) {
        fail(fmt::format("{} and {} are not linked", topo_.nodes[h.node].name,
                         spec.route[i + 1].node < topo_.nodes.size()
                             ? topo_.nodes[spec.route[i + 1].node].name
                             : std::to_string(spec.route[i + 1].node)));
      }
    } else {
      egress = routes_.HostEdgePort(spec.dst);
    }
    // A hop may not send the packet back over the link it came in on: the
    // release of its ingress buffer would then act on the port that is
    // transmitting it (and no lossless fabric routes that way).
    if (i > 0 && ports_[egress].peer == route_hops_.back().port) {
      fail(fmt::format("hop {} ({}) sends back over the link it came in on", i,
                       topo_.nodes[h.node].name));
    }
    route_hops_.push_back({egress, static_cast<int8_t>(h.tclass)});
  }
}

void Network::StartFlow(uint32_t f) {
  Nic& nic = nics_[flows_[f].spec.src];
  nic.active.push_back(f);
  Kick(nic.port);
}

void Network::OnEvent(uint32_t kind, uint64_t arg) {
  switch (kind) {
    case kKick: {
      Port& p = ports_[arg];
      // A kick superseded by an earlier one (see ScheduleKick) is stale.
      if (!p.kick_pending || p.kick_at != sim_.Now().ps()) break;
      p.kick_pending = false;
      TryTransmit(static_cast<uint32_t>(arg));
      break;
    }
    case kArrival:
      Arrive(static_cast<uint32_t>(arg));
      break;
    case kFlowStart:
      StartFlow(static_cast<uint32_t>(arg));
      break;
    case kIbCcTimer: {
      const uint32_t f = static_cast<uint32_t>(arg);
      if (ibcc_deadline_[f] != sim_.Now().ps()) break;  // superseded
      ibcc_deadline_[f] = INT64_MAX;
      ibcc_rp_[f].Advance(sim_.Now());
      flow_state_[f].gap_ps = ibcc_rp_[f].InjectionGap().ps();
      ArmIbCcTimer(f);
      break;
    }
    case kCcTimer: {
      uint32_t f = static_cast<uint32_t>(arg);
      if (rp_deadline_[f] != sim_.Now().ps()) break;  // superseded
      rp_deadline_[f] = INT64_MAX;
      rp_[f].Advance(sim_.Now());
      flow_state_[f].rate_bps = rp_[f].rate().bps();
      ArmCcTimer(f);
      break;
    }
    case kNpTimer: {
      uint32_t h = static_cast<uint32_t>(arg);
      if (np_deadline_[h] != sim_.Now().ps()) break;
      np_deadline_[h] = INT64_MAX;
      due_cnps_.clear();
      np_[h].Advance(sim_.Now(), due_cnps_);
      for (const auto& d : due_cnps_) SendCnp(h, d.qp, cfg_.cnp_class);
      ArmNpTimer(h);
      break;
    }
    case kPauseArrive: {
      // arg = receiving port << 24 | class-enable << 16 | quanta.
      uint32_t port = static_cast<uint32_t>(arg >> 24);
      if (!ports_[port].down)
        OnPauseReceived(port, static_cast<uint8_t>(arg >> 16), static_cast<uint16_t>(arg));
      break;
    }
    case kPauseApply: {
      // arg = port << 24 | class-enable << 16 | quanta; reception ended `response` ago.
      ApplyPause(static_cast<uint32_t>(arg >> 24), static_cast<uint8_t>(arg >> 16),
                 static_cast<uint16_t>(arg), sim_.Now().ps() - cfg_.pfc.response.ps());
      break;
    }
    case kWdPoll:
      WatchdogPoll(static_cast<uint32_t>(arg));
      sim_.Schedule(sim_.Now() + cfg_.pfc.watchdog.poll, switches_[arg].entity, this, kWdPoll, arg);
      break;
    case kWdRestore: {
      // arg = port << 3 | class: the restore period ends, PFC is honoured again.
      Port& p = ports_[arg >> 3];
      const int c = static_cast<int>(arg & 7);
      p.wd_active = static_cast<uint8_t>(p.wd_active & ~(1u << c));
      wd_[(arg >> 3) * kMaxClasses + c].state.stalled = -1;  // next poll takes a new baseline
      break;
    }
    case kNicStall: {
      Nic& nic = nics_[arg];
      nic.stalled = true;
      ports_[nic.port].rx_stalled = true;
      break;
    }
    case kNicResume:
      NicResume(static_cast<uint32_t>(arg));
      break;
    case kNicStorm: {
      // arg = host << 1 | error; warning at 85 % of the timeout, error at 100 %.
      Nic& nic = nics_[arg >> 1];
      Port& p = ports_[nic.port];
      const int64_t timeout = cfg_.nic.pause_storm_timeout.ps();
      const bool error = arg & 1;
      const int64_t due = nic.stuck_since + (error ? timeout : timeout / 100 * 85);
      if (!nic.stalled || nic.stuck_since < 0 || due != sim_.Now().ps()) break;  // stale
      if (!error) {
        ++p.stats.pause_storm_warnings;
        break;
      }
      ++p.stats.pause_storm_errors;
      nic.storm_stop = true;
      // Stop sending PAUSE: no more refreshes, no XON; the upstream pause
      // simply expires.
      for (unsigned m = p.xoff_sent; m != 0; m &= m - 1) {
        const int c = __builtin_ctz(m);
        if (wait_obs_ != nullptr) XoffAsserted(nic.port, c, false);
      }
      p.xoff_sent = 0;
      break;
    }
    case kPauseInject:
      // arg = port << 24 | class-enable << 16 | quanta (as kPauseArrive).
      SendPause(static_cast<uint32_t>(arg >> 24), static_cast<uint8_t>(arg >> 16),
                static_cast<uint16_t>(arg));
      break;
    case kCnpInject:
      OnCnp(static_cast<uint32_t>(arg));
      break;
    case kPfcRefresh: {
      uint32_t port = static_cast<uint32_t>(arg >> 3);
      int c = static_cast<int>(arg & 7);
      Port& p = ports_[port];
      // Only the latest refresh chain of an XOFF episode is live.
      if (p.refresh_at[c] != sim_.Now().ps() || !(p.xoff_sent >> c & 1)) break;
      SendPause(port, cfg_.pfc.global ? uint8_t{0xFF} : static_cast<uint8_t>(1u << c),
                cfg_.pfc.quanta);
      ArmRefresh(port, c);
      break;
    }
    case kFcpTimer:
      IbOnFcpTimer(static_cast<uint32_t>(arg));
      break;
    default:
      break;
  }
}

int64_t Network::Ser(Port& p, int64_t wire) {
  if (wire != p.cached_wire) {
    p.cached_wire = wire;
    p.cached_ser = units::SerializationTime(Bytes(wire), Rate::Bps(p.rate_bps)).ps();
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
  if (p.sw != kNone && ecn.enabled && pk.ecn == kEcnEct0 && cq.bytes > ecn.kmin_bytes) {
    // RED on the bytes left behind, at dequeue (fabric.md 3.1).
    bool mark = cq.bytes >= ecn.kmax_bytes;
    if (!mark) {
      double prob = ecn.pmax * static_cast<double>(cq.bytes - ecn.kmin_bytes) /
                    static_cast<double>(ecn.kmax_bytes - ecn.kmin_bytes);
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

PacketRef Network::NextFromNic(Port& p, int64_t& wake_at) {
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
    int64_t payload = std::min<int64_t>(fs.max_payload, st.spec.bytes - st.sent_bytes);
    if (ib_on_ && fs.tclass != kVl15Queue) {
      // Whole-packet credit rule; an FCP's arrival kicks the port again.
      const int32_t blocks = IbBlocks(cfg_.framing.WireBytes(payload));
      const uint32_t pi = static_cast<uint32_t>(&p - ports_.data());
      if (!IbCanSend(pi, fs.tclass, blocks)) continue;
      IbCharge(pi, fs.tclass, blocks);
    }
    PacketRef r = pool_.Alloc();
    Packet& pk = pool_[r];
    pk.sent_ps = now;
    pk.arrive_ps = 0;
    pk.tail_ps = 0;
    pk.flow = f;
    pk.src = st.spec.src;
    pk.dst = st.spec.dst;
    pk.seq = fs.next_seq++;
    pk.payload = static_cast<uint32_t>(payload);
    pk.wire = static_cast<uint32_t>(cfg_.framing.WireBytes(payload));
    pk.next = kNoPacket;
    pk.entropy = fs.entropy;
    pk.tclass = fs.tclass;
    pk.ecn = cfg_.nic.ect ? kEcnEct0 : kEcnNotEct;
    pk.kind = PacketKind::kData;
    pk.hops = 0;
    pk.flags = fs.route_off != kNone ? kPacketSourceRouted : 0;
    pk.in_class = fs.tclass;
    pk.ingress = kNone;
    ++packets_created_;
    st.sent_bytes += payload;
    ++st.packets;
    if (cfg_.dcqcn) rp_[f].OnBytesSent(Bytes(pk.wire), sim_.Now());
    if (fs.rate_bps > 0)
      fs.next_ps = now + units::SerializationTime(Bytes(pk.wire), Rate::Bps(fs.rate_bps)).ps();
    if (fs.gap_ps > 0) fs.next_ps = now + Ser(p, pk.wire) + fs.gap_ps;  // IB CC
    if (cfg_.nic.pcie_rate.bps() > 0) {
      nic.next_ps = now + units::SerializationTime(Bytes(payload), cfg_.nic.pcie_rate).ps();
    }
    if (st.sent_bytes >= st.spec.bytes) {
      nic.active.erase(nic.active.begin() + static_cast<std::ptrdiff_t>(i));
      nic.cursor = i < nic.active.size() ? i : 0;
    } else {
      nic.cursor = i + 1 == n ? 0 : i + 1;
    }
    return r;
  }
  return kNoPacket;
}

void Network::TryTransmit(uint32_t pi) {
  Port& p = ports_[pi];
  if (p.down) return;  // SetLinkUp(true) kicks the port again
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
    if (!ib_[pi].frees.empty()) {
      IbApplyFrees(pi, now);
      if (!ib_[pi].frees.empty()) wake = ib_[pi].frees.front().at;
    }
    if (ib_[pi].fcp_pending != 0) start = IbTransmitFcps(pi, now);
  }
  if (p.pause_pending) {
    // MAC control goes first, after the frame in progress; it is never paused
    // and never queued. It is consumed by the peer's MAC (no switch pipeline),
    // so it travels as its own event rather than through the wire FIFO.
    const int64_t wire = 64 + cfg_.framing.gap_overhead;
    const int64_t end = now + units::SerializationTime(Bytes(wire), Rate::Bps(p.rate_bps)).ps();
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
    sim_.Schedule(Time::Ps(end + p.delay_ps), p.entity, this, kPauseArrive,
                  (uint64_t{p.peer} << 24) | (uint64_t{mask} << 16) | quanta);
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
  if (r == kNoPacket && p.host != kNone) r = NextFromNic(p, wake);
  if (r == kNoPacket) {
    if (wake != std::numeric_limits<int64_t>::max()) ScheduleKick(pi, wake);
    return;
  }
  Packet& pk = pool_[r];
  if (start != now && pk.hops == 0) pk.sent_ps = start;
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
    int64_t header =
        units::SerializationTime(Bytes(std::min<int64_t>(pk.wire, 64)), Rate::Bps(p.rate_bps)).ps();
    head = start + header + p.delay_ps + p.rx_latency_ps;
  }
  pk.arrive_ps = head;
  pk.tail_ps = tail;
  const bool idle_wire = p.wire.empty();
  p.wire.Push(pool_, r);
  if (idle_wire) sim_.Schedule(Time::Ps(head), p.entity, this, kArrival, pi);
  const bool more = HasQueued(p) || p.pause_pending ||
                    (p.host != kNone && !nics_[p.host].active.empty()) ||
                    (ib_on_ && ib_[pi].fcp_pending != 0);
  if (more) {
    ScheduleKick(pi, end);
  } else if (ib_on_ && !ib_[pi].frees.empty()) {
    ScheduleKick(pi, std::max(end, ib_[pi].frees.front().at));
  }
}

void Network::Arrive(uint32_t pi) {
  Port& p = ports_[pi];
  if (p.wire.empty()) return;  // flushed when the link went down
  PacketRef r = p.wire.Pop(pool_);
  if (!p.wire.empty())
    sim_.Schedule(Time::Ps(pool_[p.wire.head].arrive_ps), p.entity, this, kArrival, pi);
  Deliver(p.peer, r);
}

void Network::DropPacket(PacketRef r, Port* at) {
  ++drops_;
  ++flows_[pool_[r].flow].drops;
  if (at != nullptr) {
    ++at->stats.classes[pool_[r].tclass].drops;
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

void Network::ArmRefresh(uint32_t port, int c) {
  // Refresh XOFF at half the pause time while the priority stays above XON.
  Port& p = ports_[port];
  p.refresh_at[c] = sim_.Now().ps() + flowctl::RefreshIntervalPs(cfg_.pfc.quanta, p.rate_bps);
  sim_.Schedule(Time::Ps(p.refresh_at[c]), p.entity, this, kPfcRefresh,
                (uint64_t{port} << 3) | static_cast<uint64_t>(c));
}

void Network::SendPause(uint32_t port, uint8_t mask, uint16_t quanta) {
  Port& p = ports_[port];
  // Pending XOFF classes share one pause time (the latest); pending XON
  // classes go in a separate frame. A later request for a class replaces an
  // earlier pending one.
  p.pause_pending = true;
  if (quanta == 0) {
    p.xon_mask = static_cast<uint8_t>(p.xon_mask | mask);
    p.pause_mask = static_cast<uint8_t>(p.pause_mask & ~mask);
  } else {
    p.pause_mask = static_cast<uint8_t>(p.pause_mask | mask);
    p.xon_mask = static_cast<uint8_t>(p.xon_mask & ~mask);
    p.pause_quanta = quanta;
  }
  Kick(port);
}

void Network::AssertXoff(uint32_t port, int c) {
  // With global pause one refresh chain per port, kept on slot 0: a new
  // XOFF episode replaces the chain of the previous one.
  Port& p = ports_[port];
  const uint8_t mask = pfc_.FrameClasses(c);
  p.xoff_sent = static_cast<uint8_t>(p.xoff_sent | mask);
  SendPause(port, mask, cfg_.pfc.quanta);
  ArmRefresh(port, cfg_.pfc.global ? 0 : c);
  if (wait_obs_ != nullptr)
    for (unsigned m = mask; m != 0; m &= m - 1) XoffAsserted(port, __builtin_ctz(m), true);
}

void Network::ReceivePause(uint32_t port, uint8_t class_enable, uint16_t quanta) {
  OnPauseReceived(port, class_enable, quanta);
}

void Network::InjectPause(uint32_t port, uint8_t class_enable, uint16_t quanta, Time at) {
  if (port >= ports_.size())
    throw std::invalid_argument(fmt::format("PAUSE injection on port {}", port));
  if (class_enable == 0) return;
  sim_.Schedule(std::max(at, sim_.Now()), ports_[port].entity, this, kPauseInject,
                (uint64_t{port} << 24) | (uint64_t{class_enable} << 16) | quanta);
}

void Network::InjectCnp(uint32_t flow, Time at) {
  if (!cfg_.dcqcn || flow >= rp_.size())
    throw std::invalid_argument(fmt::format("CNP injection into flow {} without DCQCN", flow));
  sim_.Schedule(std::max(at, sim_.Now()), SourceEntity(flow), this, kCnpInject, flow);
}

void Network::OnPauseReceived(uint32_t port, uint8_t mask, uint16_t quanta) {
  PortStats& st = ports_[port].stats;
  ++st.pause_rx;
  for (unsigned m = mask; m != 0; m &= m - 1) ++st.classes[__builtin_ctz(m)].pause_rx;
  if (cfg_.pfc.response.ps() == 0) {
    ApplyPause(port, mask, quanta, sim_.Now().ps());
  } else {
    sim_.Schedule(sim_.Now() + cfg_.pfc.response, ports_[port].entity, this, kPauseApply,
                  (uint64_t{port} << 24) | (uint64_t{mask} << 16) | quanta);
  }
}

void Network::ApplyPause(uint32_t port, uint8_t mask, uint16_t quanta, int64_t reception_end) {
  Port& p = ports_[port];
  const int64_t now = sim_.Now().ps();
  const int64_t until = reception_end + flowctl::PauseDurationPs(quanta, p.rate_bps);
  bool resume = false;
  mask = static_cast<uint8_t>(mask & ~p.wd_active);  // the watchdog ignores PAUSE while restoring
  for (unsigned m = mask; m != 0; m &= m - 1) {
    int c = __builtin_ctz(m);
    // Paused time, on every flow-controlled class the frame holds (all of
    // them under global pause).
    if (fc_mask_ >> c & 1) {
      const int64_t change = flowctl::PausedTimeChange(p.paused_until[c], until, now);
      p.stats.classes[c].paused_ps += change;
      if (!wd_.empty()) wd_[static_cast<size_t>(port) * kMaxClasses + c].state.paused_acc += change;
    }
    p.paused_until[c] = until;
    p.ever_paused = true;
    if (until <= now) resume = true;
  }
  if (resume) Kick(port);
}

void Network::ReleaseIngress(const Packet& pk, int64_t size) {
  const int c = pk.in_class;
  if (pk.ingress == kNone || !(fc_mask_ >> c & 1)) return;
  Port& in = ports_[pk.ingress];
  flowctl::PfcThresholds::Remove(in.ingress, c, size);
  if ((in.xoff_sent >> c & 1) && pfc_.AtOrBelowXon(in.ingress, c)) {
    const uint8_t mask = cfg_.pfc.global ? in.xoff_sent : static_cast<uint8_t>(1u << c);
    in.xoff_sent = static_cast<uint8_t>(in.xoff_sent & ~mask);
    SendPause(pk.ingress, mask, 0);
    if (wait_obs_ != nullptr)
      for (unsigned m = mask; m != 0; m &= m - 1) XoffAsserted(pk.ingress, __builtin_ctz(m), false);
  }
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

void Network::SetLinkUp(uint32_t link, bool up) {
  for (uint32_t pi : {2 * link, 2 * link + 1}) {
    Port& p = ports_[pi];
    p.down = !up;
    if (!up) {
      // Lose what is on the wire and what waits in the egress queues.
      while (!p.wire.empty()) DropPacket(p.wire.Pop(pool_), &p);
      for (int c = 0; c < kMaxClasses; ++c) FlushQueue(pi, c, false);
      p.queued_bytes = 0;
      p.nonempty = 0;
    }
  }
  if (up) {
    if (ib_on_) IbResetLink(link);  // link training re-initialises flow control
    Kick(2 * link);
    Kick(2 * link + 1);
  }
}

void Network::Deliver(uint32_t ingress, PacketRef r) {
  const Port& in = ports_[ingress];
  Packet& pk = pool_[r];
  pk.ingress = ingress;
  if (in.host != kNone) {
    if (in.rx_stalled) [[unlikely]] {
      NicRxPacket(in.host, r);
      return;
    }
    ReceiveAtHost(in.host, r);
    return;
  }
  const bool credited = ib_on_ && pk.tclass != kVl15Queue;
  if (credited) IbReceive(ingress, pk.tclass, IbBlocks(pk.wire));
  uint32_t egress;
  if (pk.flags & kPacketSourceRouted) [[unlikely]] {
    const ResolvedHop& h = route_hops_[flow_state_[pk.flow].route_off + pk.hops - 1];
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
  const int64_t free_bytes = cfg_.sw.buffer_bytes - s.used_bytes;
  const bool pfc = cfg_.pfc.enabled && (fc_mask_ >> ci & 1);
  // IB data VLs cannot overrun: credits bound what each ingress VL buffer holds.
  const bool credited = ib_on_ && c != kVl15Queue;
  const bool lossless = pfc || credited || (cfg_.sw.lossless_mask >> c & 1);
  if (pfc) {
    Port& in = ports_[pk.ingress];
    if (pfc_.Overruns(in.ingress, ci, size) || size > free_bytes) {
      ++e.stats.classes[c].lossless_drops;  // headroom exhausted: PFC was configured too tight
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
    if (lossless) ++e.stats.classes[c].lossless_drops;
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

void Network::ArmCcTimer(uint32_t f) {
  int64_t at = rp_[f].NextDeadline().ps();
  if (at == Time::Max().ps() || flows_[f].done() || at >= rp_deadline_[f]) return;
  rp_deadline_[f] = at;
  sim_.Schedule(Time::Ps(at), SourceEntity(f), this, kCcTimer, f);
}

void Network::ArmNpTimer(uint32_t h) {
  int64_t at = np_[h].NextDeadline().ps();
  if (at == Time::Max().ps() || at >= np_deadline_[h]) return;
  np_deadline_[h] = at;
  sim_.Schedule(Time::Ps(at), ports_[nics_[h].port].entity, this, kNpTimer, h);
}

void Network::SendCnp(uint32_t host, uint32_t flow, int cls) {
  // A CNP is a small packet (BTH + 16 reserved bytes) from the flow's
  // receiver back to its sender: DCQCN's on the strict CNP class, IB CC's
  // BECN on the flow's own VL (credit flow controlled like data).
  Port& p = ports_[nics_[host].port];
  PacketRef r = pool_.Alloc();
  Packet& c = pool_[r];
  c = Packet{};
  c.sent_ps = sim_.Now().ps();
  c.flow = flow;
  c.src = host;
  c.dst = flows_[flow].spec.src;
  c.payload = 16;
  c.wire = static_cast<uint32_t>(cfg_.framing.WireBytes(16));
  c.next = kNoPacket;
  c.entropy = flow_state_[flow].entropy;
  c.tclass = static_cast<uint8_t>(cls);
  c.in_class = static_cast<uint8_t>(cls);
  c.ecn = kEcnNotEct;
  c.kind = PacketKind::kCnp;
  c.ingress = kNone;
  p.q[cls].fifo.Push(pool_, r);
  p.nonempty = static_cast<uint8_t>(p.nonempty | (1u << cls));
  const int64_t size = c.wire - cfg_.framing.gap_overhead;
  p.q[cls].bytes += size;
  p.queued_bytes += size;
  ++p.stats.classes[cls].cnp_tx;
  ++cnps_;
  Kick(nics_[host].port);
}

void Network::OnBecn(uint32_t f) {
  if (flows_[f].done()) return;
  ibcc_rp_[f].OnBecn(sim_.Now());
  flow_state_[f].gap_ps = ibcc_rp_[f].InjectionGap().ps();
  ArmIbCcTimer(f);
}

void Network::ArmIbCcTimer(uint32_t f) {
  const int64_t at = ibcc_rp_[f].NextDeadline().ps();
  if (at == Time::Max().ps() || flows_[f].done() || at >= ibcc_deadline_[f]) return;
  ibcc_deadline_[f] = at;
  sim_.Schedule(Time::Ps(at), SourceEntity(f), this, kIbCcTimer, f);
}

void Network::OnCnp(uint32_t f) {
  if (flows_[f].done()) return;
  rp_[f].OnCnp(sim_.Now());
  flow_state_[f].rate_bps = rp_[f].rate().bps();
  ArmCcTimer(f);
}

void Network::ReceiveAtHost(uint32_t host, PacketRef r) {
  Packet& pk = pool_[r];
  if (ib_on_ && pk.tclass != kVl15Queue) {
    // The HCA consumes the packet at once and frees its blocks t_rx later.
    const uint32_t port = nics_[host].port;
    const int32_t blocks = IbBlocks(pk.wire);
    IbReceive(port, pk.tclass, blocks);
    if (cfg_.ib.rx_free_delay.ps() == 0) {
      IbRelease(port, pk.tclass, blocks);
    } else {
      // Freed by the port itself when it next looks (no event unless idle then).
      const int64_t at = sim_.Now().ps() + cfg_.ib.rx_free_delay.ps();
      ib_[port].frees.push({at, blocks, pk.tclass});
      ScheduleKick(port, std::max(at, ports_[port].busy_until));
    }
  }
  if (pk.kind == PacketKind::kCnp) {
    if (cfg_.dcqcn && pk.dst == host) OnCnp(pk.flow);
    if (cfg_.ib_cc && pk.dst == host) OnBecn(pk.flow);
    pool_.Free(r);
    return;
  }
  if ((pk.flags & kPacketFecn) && pk.dst == host) SendCnp(host, pk.flow, pk.tclass);  // BECN
  if (cfg_.dcqcn && pk.ecn == kEcnCe && pk.dst == host) {
    if (np_[host].OnEcnMarkedPacket(pk.flow, sim_.Now())) SendCnp(host, pk.flow, cfg_.cnp_class);
    ArmNpTimer(host);
  }
  FlowStats& st = flows_[pk.flow];
  if (pk.dst != host) {
    DropPacket(r, nullptr);
    return;
  }
  const Time now = sim_.Now();
  st.recv_bytes += pk.payload;
  Time latency = now - Time::Ps(pk.sent_ps);
  if (latency > st.max_latency) st.max_latency = latency;
  pool_.Free(r);
  if (st.recv_bytes == st.spec.bytes) {
    st.finish = now;
    ++flows_done_;
    if (cfg_.stop_when_flows_done && flows_done_ == flows_.size()) sim_.Stop();
  }
}

PortStats Network::port_stats(uint32_t port) const {
  PortStats st = ports_[port].stats;
  if (ib_on_) {
    // As if the FCPs that have arrived were applied (senders apply them lazily).
    const IbPort& s = ib_[port];
    const int64_t now = sim_.Now().ps();
    uint32_t arrived = 0;
    while (arrived < s.inbox.size && s.inbox.at(arrived).at <= now)
      ++st.classes[s.inbox.at(arrived++).vl].fcp_rx;
    for (int v = 0; v < kMaxClasses; ++v) {
      if (s.vls[v].starved_since < 0) continue;
      int64_t until = now;
      for (uint32_t i = 0; i < arrived; ++i)
        if (s.inbox.at(i).vl == v) {
          until = s.inbox.at(i).at;
          break;
        }
      st.classes[v].credit_starved_ps += until - s.vls[v].starved_since;
    }
  }
  // The port totals of the per-class counters are their sums; paused time
  // under global pause is the time the port was held (PausedTotal).
  for (const ClassStats& c : st.classes) {
    st.ecn_marks += c.ecn_marks;
    st.cnp_tx += c.cnp_tx;
    st.drops += c.drops;
    st.lossless_drops += c.lossless_drops;
    st.wd_drops += c.wd_drops;
    st.fcp_tx += c.fcp_tx;
    st.fcp_rx += c.fcp_rx;
    st.credit_starved_ps += c.credit_starved_ps;
  }
  st.paused_ps = PausedTotal([&](int c) { return st.classes[static_cast<size_t>(c)].paused_ps; });
  return st;
}

void Network::set_wait_observer(PfcWaitObserver* obs) {
  wait_obs_ = obs;
  if (obs == nullptr || !fwd_base_.empty()) return;
  num_lossless_ = 0;
  dense_class_.fill(-1);
  if (cfg_.pfc.global) {  // one buffer per ingress port: every class counts in it
    dense_class_.fill(0);
    num_lossless_ = 1;
  } else {
    for (int c = 0; c < kMaxClasses; ++c)
      if (cfg_.pfc.priorities >> c & 1) dense_class_[c] = static_cast<int8_t>(num_lossless_++);
  }
  local_index_.assign(ports_.size(), 0);
  fwd_base_.assign(ports_.size(), kNone);
  size_t total = 0;
  for (const Switch& sw : switches_) {
    const auto& np = routes_.NodePorts(sw.node);
    const size_t block = np.size() * static_cast<size_t>(num_lossless_ * num_lossless_);
    for (size_t i = 0; i < np.size(); ++i) {
      local_index_[np[i]] = static_cast<uint16_t>(i);
      fwd_base_[np[i]] = static_cast<uint32_t>(total);
      total += block;
    }
  }
  fwd_.assign(total, 0);
}

void Network::FwdCount(uint32_t ingress, int in_class, uint32_t egress, int out_class, int delta) {
  if (ingress == kNone || dense_class_[in_class] < 0 || dense_class_[out_class] < 0) return;
  const size_t radix = routes_.NodePorts(ports_[ingress].node).size();
  int32_t& n = fwd_[fwd_base_[ingress] +
                    (static_cast<size_t>(dense_class_[in_class]) * num_lossless_ +
                     static_cast<size_t>(dense_class_[out_class])) *
                        radix +
                    local_index_[egress]];
  const bool was = n > 0;
  n += delta;
  const bool is = n > 0;
  const uint32_t to = ports_[egress].peer;
  if (was != is && (ports_[to].xoff_sent >> out_class & 1)) {
    if (cfg_.pfc.global) in_class = out_class = kPortBufferClass;
    wait_obs_->OnWait(ingress, in_class, to, out_class, is, sim_.Now());
  }
}

void Network::XoffAsserted(uint32_t port, int c, bool on) {
  // `port` (a buffer) asserted or released XOFF on class c: every buffer of
  // the upstream switch with packets queued at the egress facing `port`
  // starts or stops waiting on it. Under global pause XOFF changes on every
  // class at once and the port is one buffer: report it once.
  const uint32_t egress = ports_[port].peer;
  if (ports_[egress].sw == kNone || dense_class_[c] < 0) return;
  if (cfg_.pfc.global && c != kPortBufferClass) return;
  const int classes = cfg_.pfc.global ? 1 : kMaxClasses;
  const auto& np = routes_.NodePorts(ports_[egress].node);
  const size_t radix = np.size();
  for (uint32_t in : np) {
    for (int ci = 0; ci < classes; ++ci) {
      if (dense_class_[ci] < 0) continue;
      const int32_t n = fwd_[fwd_base_[in] +
                             (static_cast<size_t>(dense_class_[ci]) * num_lossless_ +
                              static_cast<size_t>(dense_class_[c])) *
                                 radix +
                             local_index_[egress]];
      if (n > 0) wait_obs_->OnWait(in, ci, port, c, on, sim_.Now());
    }
  }
}

int64_t Network::PausedPsUntilNow(uint32_t pi) const {
  return PausedTotal([&](int c) { return PausedPsUntilNow(pi, c); });
}

int64_t Network::PausedPsUntilNow(uint32_t pi, int c) const {
  if (!(fc_mask_ >> c & 1)) return 0;
  const Port& p = ports_[pi];
  return p.stats.classes[c].paused_ps - std::max<int64_t>(0, p.paused_until[c] - sim_.Now().ps());
}

int64_t Network::PausedUpTo(uint32_t port, int c, int64_t now) const {
  // paused_acc counts paused time up to max(now, paused_until) (ApplyPause).
  return wd_[static_cast<size_t>(port) * kMaxClasses + c].state.paused_acc -
         std::max<int64_t>(0, ports_[port].paused_until[c] - now);
}

void Network::WatchdogPoll(uint32_t sw) {
  const PfcWatchdogConfig& wd = cfg_.pfc.watchdog;
  const int64_t now = sim_.Now().ps();
  for (uint32_t pi : routes_.NodePorts(switches_[sw].node)) {
    Port& p = ports_[pi];
    for (unsigned m = fc_mask_; m != 0; m &= m - 1) {
      const int c = __builtin_ctz(m);
      if (p.wd_active >> c & 1) continue;  // restoring
      WdQueue& w = wd_[static_cast<size_t>(pi) * kMaxClasses + c];
      const PacketFifo& f = p.q[c].fifo;
      const int64_t paused = PausedUpTo(pi, c, now);
      // The same packet at the head at both polls: the queue held packets all
      // the interval and sent none of them (only sending removes a head).
      const bool same_head = !f.empty() && f.head == w.head && pool_[f.head].flow == w.head_flow &&
                             pool_[f.head].seq == w.head_seq;
      const bool act = w.state.Poll(wd, same_head, paused);
      w.head = f.head;
      if (!f.empty()) {
        w.head_flow = pool_[f.head].flow;
        w.head_seq = pool_[f.head].seq;
      }
      if (act) WatchdogAct(pi, c);
    }
  }
}

void Network::WatchdogDrop(PacketRef r, Port& egress) {
  ++egress.stats.classes[pool_[r].tclass].wd_drops;
  DropPacket(r, &egress);
}

void Network::WatchdogAct(uint32_t pi, int c) {
  Port& p = ports_[pi];
  const int64_t now = sim_.Now().ps();
  ++p.stats.wd_actions;
  if (p.stats.wd_first_action_ps < 0) p.stats.wd_first_action_ps = now;
  FlushQueue(pi, c, true);
  // Ignore the PAUSE in force: the queue is no longer paused.
  if (p.paused_until[c] > now) {
    const int64_t cut = p.paused_until[c] - now;
    p.stats.classes[c].paused_ps -= cut;
    wd_[static_cast<size_t>(pi) * kMaxClasses + c].state.paused_acc -= cut;
    p.paused_until[c] = now;
  }
  p.wd_active = static_cast<uint8_t>(p.wd_active | (1u << c));
  wd_[static_cast<size_t>(pi) * kMaxClasses + c].state.stalled = 0;
  sim_.Schedule(sim_.Now() + cfg_.pfc.watchdog.restore, p.entity, this, kWdRestore,
                (uint64_t{pi} << 3) | static_cast<uint64_t>(c));
  Kick(pi);
}

void Network::StallNicReceive(uint32_t host, Time from, Time until) {
  if (host >= nics_.size() || until <= from)
    throw std::invalid_argument(fmt::format("bad NIC stall of host {}", host));
  sim_.Schedule(std::max(from, sim_.Now()), ports_[nics_[host].port].entity, this, kNicStall, host);
  if (until != Time::Max())
    sim_.Schedule(until, ports_[nics_[host].port].entity, this, kNicResume, host);
}

int64_t Network::NicHeldBytes(uint32_t host) const {
  int64_t sum = 0;
  for (int64_t b : ports_[nics_[host].port].ingress.bytes) sum += b;
  return sum;
}

void Network::NicRxPacket(uint32_t host, PacketRef r) {
  Nic& nic = nics_[host];
  Port& p = ports_[nic.port];
  const Packet& pk = pool_[r];
  const int c = pk.tclass;
  const int64_t size = static_cast<int64_t>(pk.wire) - cfg_.framing.gap_overhead;
  const int64_t now = sim_.Now().ps();
  if (pfc_.Overruns(p.ingress, c, size)) {
    ++p.stats.rx_stall_drops;
    DropPacket(r, nullptr);
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
  const bool pfc = cfg_.pfc.enabled && (fc_mask_ >> c & 1);
  if (pfc && !nic.storm_stop && pfc_.AboveXoff(p.ingress, c) && !(p.xoff_sent >> c & 1))
    AssertXoff(nic.port, c);
}

void Network::NicResume(uint32_t host) {
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
    ReceiveAtHost(host, r);
  }
  for (unsigned m = p.xoff_sent; m != 0; m &= m - 1) {
    const int c = __builtin_ctz(m);
    SendPause(nic.port, static_cast<uint8_t>(1u << c), 0);
    if (wait_obs_ != nullptr) XoffAsserted(nic.port, c, false);
  }
  p.xoff_sent = 0;
}

std::string Network::PortName(uint32_t pi) const {
  return routes_.PortName(pi);
}

}  // namespace lossless::fabric
