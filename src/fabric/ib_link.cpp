// The network's side of the InfiniBand link layer: timers, wire and counters
// around the engine-free credit and arbitration models (flowctl/ib_credits.hpp,
// flowctl/vl_arbiter.hpp; IBA Vol. 1 chapter 7; docs/fabric-model.md
// "InfiniBand credits").
//
// Ownership (docs/architecture.md, "Engine conventions"): a port is the
// receiver of its link's VL buffers and the sender into its peer's. Whether a
// periodic FCP is due is decided from the port's own record of the FCPs it
// sent (IbPort::sent), never from the peer's counters. The loss of an FCP is
// drawn from the sending port's own stream (seed, port, kRngFcpLoss).
//
// FCPs without events: an FCP crosses its link like a frame on a wire, into
// the peer's inbox (IbPort::inbox), and takes effect when its time `at` has
// come and the peer next looks at its credits (IbSettle: before every
// transmission attempt, on link state changes, and in the read-only views).
// Only a port that waits for credit needs to run when an FCP takes effect:
// it queues one wake-up event for the first FCP in its inbox (or for the next
// one to come), under the ordering key the FCP's sender drew for it when it
// sent it. An FCP on a link cut between ranks of a distributed run arrives
// as a remote event before its time (the window engine's lookahead) and goes
// into the same inbox, so the events that run, and their order, are those of
// the serial run (docs/parallel.md). An FCP due at the picosecond of the
// running event has taken effect if its key orders it before that event
// (IbFcpDue), so the order of effects is the one events would give.
#include <algorithm>

#include <fmt/format.h>

#include "fabric/network.hpp"

namespace lossless::fabric {

using flowctl::FcpInbound;
using flowctl::IbVl;
using flowctl::kCreditMod;
using flowctl::kFcpWireBytes;
using flowctl::kMaxCredits;
using flowctl::PendingFree;

void Network::IbInit() {
  const IbLinkConfig& ib = cfg_.ib;
  if (cfg_.pfc.enabled || cfg_.dcqcn)
    throw std::invalid_argument(
        "fabric.ib: expected either InfiniBand credits or PFC/DCQCN, not both");
  ib.Check(IbBlocks(cfg_.framing.WireBytes(cfg_.framing.mtu_payload)));
  if (cfg_.ib_cc) {
    cfg_.ib_cc_params.Validate({"<network>", 0, "fabric.ibcc"});
    fecn_.assign(ports_.size() * kMaxClasses, cc::IbFecnMarker(cfg_.fecn));
  }
  vl_arb_ = flowctl::VlArbiter(ib);
  ib_on_ = true;
  fcp_lazy_ = !ib.fcp_event_each;
  ib_.assign(ports_.size(), IbPort{});
  for (uint32_t pi = 0; pi < ports_.size(); ++pi) {
    IbPort& r = ib_[pi];
    r.fcp_loss_rng = sim_.MakeRng(pi, kRngFcpLoss);  // a stream per sending port
    r.fcp_ser = units::SerializationTime(units::Bytes(kFcpWireBytes + cfg_.framing.gap_overhead),
                                         units::Rate::Bps(ports_[pi].rate_bps))
                    .ps();
    for (int v = 0; v < kMaxClasses; ++v) {
      r.vls[v].limit = ib.credits;
      r.vls[v].fccl = static_cast<uint16_t>(ib.credits & kCreditMod);
      r.vls[v].last_fccl = r.vls[v].fccl;
      r.peer_fccl[v] = r.vls[v].fccl;  // the peer starts from the full grant
    }
  }
}

void Network::IbResetPort(uint32_t port) {
  // Link training re-initialises flow control (IBA Vol. 1, 7.9): buffers were
  // flushed with the link. As a sender the port has no credit until the
  // peer's first FCPs arrive; as a receiver it sends one on every data VL at
  // once. FCPs of the previous initialisation still on their way are void.
  IbApplyFrees(port, INT64_MAX);
  IbPort& r = ib_[port];
  ++r.epoch;
  r.sent.clear();
  for (int v = 0; v < kMaxClasses; ++v) {
    r.vls[v].fctbs = 0;
    r.vls[v].fccl = 0;
    r.vls[v].starved_since = -1;
    r.vls[v].abr = 0;
    r.vls[v].last_fccl = r.vls[v].Fccl();
    r.peer_fccl[v] = 0;
  }
  r.fcp_pending = static_cast<uint8_t>((1u << cfg_.ib.num_vls) - 1);
  r.wake_owed = false;  // nothing waits for credit any more
}

void Network::SetVlCredits(uint32_t port, int vl, int32_t blocks) {
  if (!ib_on_ || vl < 0 || vl >= kMaxClasses || blocks < 0 || blocks > kMaxCredits)
    throw std::invalid_argument("SetVlCredits: InfiniBand off or value out of range");
  if (sim_.events_executed() > 0)
    throw std::logic_error("SetVlCredits: a setup call, made after the run started");
  IbPort& r = ib_[port];
  r.vls[vl].limit = blocks;
  r.vls[vl].last_fccl = r.vls[vl].Fccl();
  // The sender learns the new grant at once (as at link initialisation; a
  // setup call before the run, not an event).
  IbPort& s = ib_[ports_[port].peer];
  s.vls[vl].fccl = static_cast<uint16_t>((s.vls[vl].fctbs + blocks - r.vls[vl].used) & kCreditMod);
  r.peer_fccl[vl] = s.vls[vl].fccl;
}

int32_t Network::IbAvailableCredits(uint32_t port, int vl) const {
  // The port's view as of now, FCPs that took effect but are not yet settled included.
  const IbPort& s = ib_[port];
  IbVl v = s.vls[vl];
  for (uint32_t i = 0; i < s.inbox.size && IbFcpDue(s.inbox.at(i)); ++i) {
    const FcpInbound& f = s.inbox.at(i);
    if (f.vl == vl && IbFcpValid(port, f)) v.fccl = f.fccl;
  }
  return v.Available();
}

int32_t Network::IbMaxBufferedBlocks(uint32_t port, int vl) const {
  return ib_[port].vls[vl].max_used;
}

bool Network::IbCanSend(uint32_t port, int vl, int32_t blocks) {
  // The caller settled the port's inbox at this time (TryTransmit).
  IbVl& s = ib_[port].vls[vl];
  if (s.Available() >= blocks) return true;
  if (s.starved_since < 0) s.starved_since = sim_.Now().ps();
  if (fcp_lazy_) IbArmWake(port);  // the next FCP to take effect runs the port again
  return false;
}

void Network::IbCharge(uint32_t port, int vl, int32_t blocks) {
  ib_[port].vls[vl].Charge(blocks);
}

void Network::IbReceive(uint32_t port, int vl, int32_t blocks) {
  ib_[port].vls[vl].Receive(blocks);
}

void Network::IbRelease(uint32_t port, int vl, int32_t blocks, bool kick) {
  IbPort& r = ib_[port];
  r.vls[vl].Release(blocks);
  if (cfg_.ib.fcp_on_release) {
    r.fcp_pending = static_cast<uint8_t>(r.fcp_pending | (1u << vl));
    if (kick) Kick(port);
  }
  IbArmFcpTimer(port);
}

void Network::IbApplyFrees(uint32_t port, int64_t upto) {
  IbPort& r = ib_[port];
  while (!r.frees.empty() && r.frees.front().at <= upto) {
    const PendingFree f = r.frees.front();
    r.frees.pop();
    IbRelease(port, f.vl, f.blocks, /*kick=*/false);  // the caller transmits
  }
}

void Network::IbArmFcpTimer(uint32_t port) {
  IbPort& r = ib_[port];
  if (r.fcp_timer) return;
  // FCPs leave on a grid of fcp_period: the next multiple at or after now.
  const int64_t at = flowctl::NextFcpGridPoint(sim_.Now().ps(), cfg_.ib.fcp_period.ps());
  r.fcp_timer = true;
  sim_.Schedule(units::Time::Ps(at), ports_[port].entity, this, kFcpTimer, port);
}

void Network::IbOnFcpTimer(uint32_t port) {
  IbPort& r = ib_[port];
  // fcp_timer stays set while this runs: the releases below must not start a
  // second chain.
  if (ports_[port].down) {
    r.fcp_timer = false;
    return;
  }
  const int64_t now = sim_.Now().ps();
  IbApplyFrees(port, now);
  // What the peer has seen by now, from this port's own record.
  IbReconcileSent(port, now);
  bool out_of_date = false;
  for (int v = 0; v < cfg_.ib.num_vls; ++v) {
    const uint16_t fccl = r.vls[v].Fccl();
    if (r.peer_fccl[v] == fccl) continue;
    out_of_date = true;
    // Send unless an FCP with this very limit is already on its way.
    bool on_its_way = false;
    for (uint32_t i = 0; i < r.sent.size && !on_its_way; ++i)
      on_its_way = r.sent.at(i).vl == v && r.sent.at(i).fccl == fccl;
    if (!on_its_way) r.fcp_pending = static_cast<uint8_t>(r.fcp_pending | (1u << v));
  }
  // Keep refreshing while the sender's view is stale (lost or in-flight FCPs).
  r.fcp_timer = out_of_date;
  if (out_of_date)
    sim_.Schedule(sim_.Now() + cfg_.ib.fcp_period, ports_[port].entity, this, kFcpTimer, port);
  if (r.fcp_pending != 0) Kick(port);
}

// Flattened (IbPushFcp and the rings inline): one FCP per packet-hop goes
// through here (docs/benchmarks.md, "A seventh pass").
[[gnu::flatten]] int64_t Network::IbTransmitFcps(uint32_t port, int64_t now) {
  Port& p = ports_[port];
  IbPort& r = ib_[port];
  const int64_t wire = kFcpWireBytes + cfg_.framing.gap_overhead;
  int64_t t = now;
  IbReconcileSent(port, now);  // keeps `sent` to the FCPs still on their way
  // Link-level control: after the frame in progress, ahead of data, never
  // credit-gated; consumed by the peer's link layer (no switch pipeline).
  while (r.fcp_pending != 0) {
    const int vl = __builtin_ctz(r.fcp_pending);
    r.fcp_pending = static_cast<uint8_t>(r.fcp_pending & ~(1u << vl));
    const uint16_t fccl = r.vls[vl].Fccl();
    r.vls[vl].last_fccl = fccl;
    if (tx_trace_ != nullptr) {
      Packet pf{};
      pf.kind = PacketKind::kControl;
      pf.tclass = static_cast<uint8_t>(vl);
      pf.payload = fccl;
      pf.seq = r.vls[vl].fctbs;  // the FCP's FCTBS
      pf.wire = static_cast<uint32_t>(wire);
      tx_trace_(tx_trace_ctx_, port, pf, units::Time::Ps(t));
    }
    const int64_t end = t + r.fcp_ser;
    p.stats.busy_ps += end - t;
    ++p.stats.classes[vl].fcp_tx;
    t = end;
    const bool lost = cfg_.ib.fcp_loss > 0 && r.fcp_loss_rng.Uniform() < cfg_.ib.fcp_loss;
    if (lost) continue;
    const int64_t at = end + p.delay_ps + cfg_.ib.credit_delay.ps();
    // Across the link into the peer's inbox, with a key drawn by this port
    // (the peer's wake-up, if it waits for credit, runs under it).
    r.sent.push({at, fccl, static_cast<uint8_t>(vl)});
    if (remote_ != nullptr && cut_[port]) [[unlikely]] {
      const uint64_t farg = uint64_t{p.peer} | (uint64_t(vl) << 32) | (uint64_t{fccl} << 35) |
                            (uint64_t{r.epoch} << 47);
      remote_->Send(port, units::Time::Ps(at), kFcpArrive, farg, nullptr);
    } else {
      IbPushFcp(p.peer, {at, sim_.DrawKey(p.entity), fccl, r.epoch, static_cast<uint8_t>(vl)});
    }
  }
  p.busy_until = t;
  return t;
}

void Network::IbReconcileSent(uint32_t port, int64_t now) {
  IbPort& r = ib_[port];
  while (!r.sent.empty() && r.sent.front().at <= now) {
    r.peer_fccl[r.sent.front().vl] = r.sent.front().fccl;
    r.sent.pop();
  }
}

void Network::IbPushFcp(uint32_t port, const FcpInbound& f) {
  IbPort& s = ib_[port];
  s.inbox.push(f);
  if (!fcp_lazy_) {  // engine check: the FCP's own event
    sim_.ScheduleKeyed(units::Time::Ps(f.at), f.key, this, kFcpArrive, port);
  } else if (s.wake_owed) {  // the port waits for credit and had no FCP to wait for
    s.wake_owed = false;
    s.wake_pending = true;
    sim_.ScheduleKeyed(units::Time::Ps(f.at), f.key, this, kFcpArrive, port);
  }
}

bool Network::IbApplyFront(uint32_t port) {
  IbPort& s = ib_[port];
  const FcpInbound f = s.inbox.front();
  s.inbox.pop();
  if (!IbFcpValid(port, f)) return false;
  IbVl& v = s.vls[f.vl];
  v.fccl = f.fccl;
  ClassStats& cs = ports_[port].stats.classes[f.vl];
  ++cs.fcp_rx;
  if (v.starved_since < 0) return false;
  cs.credit_starved_ps += f.at - v.starved_since;
  v.starved_since = -1;  // re-marked by the next attempt if still short
  return true;
}

bool Network::IbSettle(uint32_t port) {
  if (!fcp_lazy_) return false;  // engine check: each FCP at its own event
  IbPort& s = ib_[port];
  bool ended = false;
  while (!s.inbox.empty() && IbFcpDue(s.inbox.front())) ended |= IbApplyFront(port);
  return ended;
}

void Network::IbArmWake(uint32_t port) {
  IbPort& s = ib_[port];
  if (s.wake_pending || s.wake_owed) return;
  if (s.inbox.empty()) {
    s.wake_owed = true;  // IbPushFcp queues it
    return;
  }
  // Settled: the first FCP takes effect after the event running now.
  const FcpInbound& f = s.inbox.front();
  s.wake_pending = true;
  sim_.ScheduleKeyed(units::Time::Ps(f.at), f.key, this, kFcpArrive, port);
}

void Network::IbOnFcpWake(uint32_t port) {
  IbPort& s = ib_[port];
  if (!fcp_lazy_) {
    // Engine check: this event is the inbox's first FCP (a sender's FCPs run
    // in the order it sent them); it takes effect now, as an event per FCP did.
    if (IbApplyFront(port)) Kick(port);
    return;
  }
  s.wake_pending = false;
  if (IbSettle(port)) Kick(port);  // it waited for these credits
  for (int v = 0; v < kMaxClasses; ++v) {
    if (s.vls[v].starved_since >= 0) {
      IbArmWake(port);  // still short on some VL: the next FCP
      break;
    }
  }
}

PacketRef Network::NextFromQueuesIb(Port& p) {
  const uint32_t pi = static_cast<uint32_t>(&p - ports_.data());
  // VL15 (management) first: strict, and not flow controlled.
  if (p.nonempty >> kVl15Queue & 1) return TakeFromQueue(p, kVl15Queue);
  // A VL is eligible when its head packet fits in the credit available.
  uint8_t eligible = 0;
  for (unsigned m = p.nonempty; m != 0; m &= m - 1) {
    const int v = __builtin_ctz(m);
    if (IbCanSend(pi, v, IbBlocks(pool_[p.q[v].fifo.head].wire)))
      eligible = static_cast<uint8_t>(eligible | (1u << v));
  }
  if (eligible == 0) return kNoPacket;  // an FCP's arrival kicks the port
  const auto head_blocks = [&](int v) { return IbBlocks(pool_[p.q[v].fifo.head].wire); };
  const auto [vl, blocks] = vl_arb_.Pick(ib_[pi].arb, eligible, head_blocks);
  if (vl < 0) return kNoPacket;  // eligible VLs are in no table (weight 0)
  IbCharge(pi, vl, blocks);
  return TakeFromQueue(p, vl);
}

}  // namespace lossless::fabric
