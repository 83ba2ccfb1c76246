// The network's side of priority flow control: sending, refreshing and
// receiving PAUSE frames, ingress release and XON, the PFC watchdog's polls
// and actions, and the wait observer for online deadlock detection. The
// decisions are the engine-free models in flowctl/pfc.hpp and
// flowctl/pfc_watchdog.hpp; this file owns the frames and the timers.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fabric/network.hpp"

namespace lossless::fabric {

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
  if ((mask & p.wd_active) != 0 && cfg_.pfc.watchdog.pause_memory) [[unlikely]] {
    for (unsigned m = mask & p.wd_active; m != 0; m &= m - 1)
      wd_[static_cast<size_t>(port) * kMaxClasses + __builtin_ctz(m)].ignored_until = until;
  }
  mask = static_cast<uint8_t>(mask & ~p.wd_active);  // the watchdog ignores PAUSE while restoring
  p.wd_unpaused = static_cast<uint8_t>(p.wd_unpaused & ~mask);
  if (pause_trace_ != nullptr) [[unlikely]]
    pause_trace_(pause_trace_ctx_, port, static_cast<uint8_t>(mask & pfc_.classes()), Time::Ps(now),
                 Time::Ps(until));
  for (unsigned m = mask; m != 0; m &= m - 1) {
    int c = __builtin_ctz(m);
    // Paused time, on every flow-controlled class the frame holds (all of
    // them under global pause).
    if (pfc_.classes() >> c & 1) {
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
  if (pk.ingress == kNone || !(pfc_.classes() >> c & 1)) return;
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

int64_t Network::PausedPsUntilNow(uint32_t pi) const {
  if (merged_) return merged_ports_[pi].paused_ps;
  return PausedTotal([&](int c) { return PausedPsUntilNow(pi, c); });
}

int64_t Network::PausedPsUntilNow(uint32_t pi, int c) const {
  if (merged_) return merged_ports_[pi].paused_class[static_cast<size_t>(c)];
  if (!(pfc_.classes() >> c & 1)) return 0;
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
    for (unsigned m = pfc_.classes(); m != 0; m &= m - 1) {
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
  const uint64_t dropped = p.stats.classes[c].wd_drops;
  FlushQueue(pi, c, true);
  if (wd_trace_ != nullptr)
    wd_trace_(wd_trace_ctx_, pi, c, Time::Ps(now), false, p.stats.classes[c].wd_drops - dropped);
  // Ignore the PAUSE in force: the queue is no longer paused.
  if (p.paused_until[c] > now) {
    const int64_t cut = p.paused_until[c] - now;
    p.stats.classes[c].paused_ps -= cut;
    wd_[static_cast<size_t>(pi) * kMaxClasses + c].state.paused_acc -= cut;
    p.paused_until[c] = now;
  }
  p.wd_active = static_cast<uint8_t>(p.wd_active | (1u << c));
  wd_[static_cast<size_t>(pi) * kMaxClasses + c].state.stalled = 0;
  wd_[static_cast<size_t>(pi) * kMaxClasses + c].ignored_until = 0;
  sim_.Schedule(sim_.Now() + cfg_.pfc.watchdog.restore, p.entity, this, kWdRestore,
                (uint64_t{pi} << 3) | static_cast<uint64_t>(c));
  Kick(pi);
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
  if (was == is) return;
  // This switch's own fact; whether the peer has XOFF asserted is the
  // observer's to join (deadlock::WaitJoin).
  if (cfg_.pfc.global) in_class = out_class = kPortBufferClass;
  wait_obs_->OnHold(ingress, in_class, egress, out_class, is, sim_.Now());
}

void Network::XoffAsserted(uint32_t port, int c, bool on) {
  // `port` (a buffer) asserted or released XOFF on class c. Only a switch
  // upstream can hold packets waiting on it; under global pause XOFF changes
  // on every class at once and the port is one buffer: report it once.
  if (ports_[ports_[port].peer].sw == kNone || dense_class_[c] < 0) return;
  if (cfg_.pfc.global && c != kPortBufferClass) return;
  wait_obs_->OnXoff(port, c, on, sim_.Now());
}

void Network::OnPfcRefresh(uint32_t port, int c) {
  Port& p = ports_[port];
  // Only the latest refresh chain of an XOFF episode is live.
  if (p.refresh_at[c] != sim_.Now().ps() || !(p.xoff_sent >> c & 1)) return;
  SendPause(port, pfc_.FrameClasses(c), cfg_.pfc.quanta);
  ArmRefresh(port, c);
}

void Network::WatchdogRestored(uint32_t port, int c) {
  // The restore period ends: PFC is honoured again.
  Port& p = ports_[port];
  p.wd_active = static_cast<uint8_t>(p.wd_active & ~(1u << c));
  WdQueue& w = wd_[static_cast<size_t>(port) * kMaxClasses + c];
  w.state.stalled = -1;  // next poll: new baseline
  const int64_t now = sim_.Now().ps();
  if (wd_trace_ != nullptr) wd_trace_(wd_trace_ctx_, port, c, Time::Ps(now), true, 0);
  if (cfg_.pfc.watchdog.pause_memory && w.ignored_until > now) {
    // The pause still in force is honoured from now on (pause_memory).
    const int64_t change = flowctl::PausedTimeChange(p.paused_until[c], w.ignored_until, now);
    p.stats.classes[c].paused_ps += change;
    w.state.paused_acc += change;
    p.paused_until[c] = w.ignored_until;
    p.ever_paused = true;
    if (pause_trace_ != nullptr)
      pause_trace_(pause_trace_ctx_, port, static_cast<uint8_t>(1u << c), Time::Ps(now),
                   Time::Ps(w.ignored_until));
    return;
  }
  p.wd_unpaused = static_cast<uint8_t>(p.wd_unpaused | (1u << c));
}

}  // namespace lossless::fabric
