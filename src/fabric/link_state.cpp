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

}  // namespace lossless::fabric
