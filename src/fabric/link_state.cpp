// A link direction's losses (post-FEC bit errors and injected loss, checked
// when a frame's last bit arrives; the samplers are in link_loss.hpp) and a
// link end going down or up (its wire and queues lost; InfiniBand flow
// control re-initialised when it comes back).
#include <stdexcept>

#include <fmt/format.h>

#include "fabric/network.hpp"

namespace lossless::fabric {

void Network::SetLinkLoss(uint32_t port, const LinkLossConfig& loss) {
  if (port >= ports_.size()) throw std::invalid_argument(fmt::format("no port {}", port));
  if (loss.ber < 0 || loss.ber >= 1 || loss.drop_prob < 0 || loss.drop_prob > 1 ||
      loss.drop_every < 0)
    throw std::invalid_argument(fmt::format("link loss of {}: out of range", PortName(port)));
  if (loss_.empty()) loss_.resize(ports_.size());
  LinkLoss& l = loss_[port];
  l.cfg = loss;
  l.data_seen = 0;
  l.rng = sim_.MakeRng(ports_[port].entity, kRngLinkDrop);
  l.bits = BitErrorSampler(loss.ber, sim_.MakeRng(ports_[port].entity, kRngBitErrors));
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

void Network::SetPortUp(uint32_t pi, bool up) {
  Port& p = ports_[pi];
  if (!foreign_.empty() && foreign_[pi]) [[unlikely]] {
    // Distributed: the copy of another rank's port's event (kept only for a
    // cut link into this rank), counted on the owner's rank alone.
    copied_events_.push_back({sim_.Now().ps(), sim_.RunningKey(), kLinkState});
    if (p.down == !up) return;
    p.down = !up;
    if (!up) CopiedPortDown(pi);
    return;
  }
  if (p.down == !up) return;
  // FCPs that took effect before the change did so under the old state.
  if (ib_on_) IbSettle(pi);
  p.down = !up;
  if (!up) {
    // A cut link's frames are on the receiver's rank's copy of the wire; the
    // ones that have not arrived by now are lost, counted here.
    if (remote_ != nullptr && cut_[pi]) [[unlikely]] {
      ++wire_epoch_[pi];
      if (!in_flight_.empty()) LoseInFlight(pi);
    }
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
  // A distributed run must know at setup which ports change state (it keeps
  // their frames in flight on cut links: LoseInFlight).
  if (remote_ != nullptr)
    throw std::logic_error("ScheduleLinkState: a setup call in a distributed run");
  if (state_ports_.empty()) state_ports_.assign(ports_.size(), 0);
  for (uint32_t pi : {2 * link, 2 * link + 1}) {
    state_ports_[pi] = 1;
    sim_.Schedule(std::max(at, sim_.Now()), ports_[pi].entity, this, kLinkState,
                  (uint64_t{pi} << 1) | (up ? 1 : 0));
  }
}

uint32_t Network::LinkStateEventPort(uint32_t kind, uint64_t arg) const {
  return kind == kLinkState ? static_cast<uint32_t>(arg >> 1) : kNone;
}

void Network::LoseInFlight(uint32_t pi) {
  // The serial run drops, at this event, every frame on the port's wire: the
  // frames sent whose arrival comes after this event in (time, key) order.
  // Each is counted as the serial DropPacket counts it (port, flow, total)
  // and freed here, at this event, for the count of packets alive: the
  // frame is remade quietly and freed, and the rank's count of frames
  // handed away drops by one (the receiver's rank drops its copy quietly).
  Ring<InFlight>& f = in_flight_[pi];
  const int64_t now = sim_.Now().ps();
  const uint64_t key = sim_.RunningKey();
  Port& p = ports_[pi];
  for (; !f.empty(); f.pop()) {
    const InFlight& e = f.front();
    if (e.at < now || (e.at == now && e.key < key)) continue;  // arrived
    const PacketRef r = pool_.AllocQuiet();
    pool_[r].flow = e.flow;
    pool_[r].tclass = e.tclass;
    DropPacket(r, &p);
    --remote_out_;
    ++cut_lost_;
  }
}

void Network::CopiedPortDown(uint32_t pi) {
  // As SetPortUp drops a wire: the head's arrival event is queued already,
  // the frames behind it get theirs under the keys they came with; all of
  // them find the frame gone when they run. Frames of this wire still on
  // their way from the sender's rank come with the old count of downs and
  // are lost in DeliverRemote.
  ++wire_epoch_[pi];
  Port& p = ports_[pi];
  KeyFifo& keys = remote_keys_[pi];
  for (bool head = true; !p.wire.empty(); head = false) {
    const PacketRef r = p.wire.Pop(pool_);
    if (!head) {
      if (keys.head >= keys.keys.size())
        throw std::logic_error("distributed run: a cut link's wire copy without its keys");
      sim_.ScheduleKeyed(Time::Ps(pool_[r].next_arrive_ps), keys.keys[keys.head++], this, kArrival,
                         ArrivalArg(pi, r));
    }
    pool_.FreeQuiet(r);
    --remote_in_;
  }
  if (keys.head != keys.keys.size())
    throw std::logic_error("distributed run: a cut link's wire copy has keys left over");
  keys.keys.clear();
  keys.head = 0;
}

}  // namespace lossless::fabric
