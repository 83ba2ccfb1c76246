// Egress queues at a switch (and a host port's control queues): admission to
// the shared buffer (dynamic threshold for lossy classes, PFC ingress
// accounting and headroom, InfiniBand credits), ECN marking (RED at dequeue,
// docs/model/switch-buffers.md#ecn-marking) and IB CC's FECN, scheduling
// (strict priority, then deficit-weighted round robin; the IB VL arbiter is
// in ib_link.cpp), and flushing a queue (a link going down, the PFC
// watchdog).
#include <algorithm>
#include <limits>

#include "fabric/network.hpp"

namespace lossless::fabric {

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

}  // namespace lossless::fabric
