#include "deadlock/deadlock_detector.hpp"

#include <stdexcept>

#include "deadlock/buffer_graph.hpp"

namespace lossless::deadlock {

DeadlockDetector::DeadlockDetector(sim::Simulator& sim, fabric::Network& net, units::Time persist,
                                   bool stop_run)
    : sim_(sim),
      net_(net),
      persist_(persist),
      stop_run_(stop_run),
      entity_(sim.AddEntity()),
      join_(net, *this) {
  if (persist.ps() <= 0) throw std::invalid_argument("deadlock persistence must be above zero");
  net_.set_wait_observer(this);
}

DeadlockDetector::~DeadlockDetector() {
  net_.set_wait_observer(nullptr);
}

void DeadlockDetector::OnWait(uint32_t from, int from_prio, uint32_t to, int to_prio, bool waiting,
                              units::Time at) {
  graph_.SetWait(from, from_prio, to, to_prio, waiting, at);
  if (waiting) ++waits_seen_;
  if (waiting && !check_pending_) {
    check_pending_ = true;
    sim_.Schedule(at, entity_, this, kCheck, 0);
  }
}

void DeadlockDetector::OnEvent(uint32_t kind, uint64_t) {
  if (kind == kCheck) {
    check_pending_ = false;
    auto c = graph_.FindCycle();
    if (!c || c->formed.ps() == last_confirmed_) return;
    const int64_t at = (c->formed + persist_).ps();
    if (confirm_at_ >= 0 && confirm_at_ <= at) return;  // an earlier confirmation will re-check
    confirm_at_ = at;
    sim_.Schedule(units::Time::Ps(at), entity_, this, kConfirm, 0);
    return;
  }
  if (kind == kConfirm && confirm_at_ == sim_.Now().ps()) {
    confirm_at_ = -1;
    Confirm();
  }
}

void DeadlockDetector::Confirm() {
  auto c = graph_.FindCycle();
  if (!c || c->formed.ps() == last_confirmed_) return;
  if (sim_.Now() - c->formed < persist_) {
    // A cycle that closed later: confirm it in its turn.
    confirm_at_ = (c->formed + persist_).ps();
    sim_.Schedule(units::Time::Ps(confirm_at_), entity_, this, kConfirm, 0);
    return;
  }
  last_confirmed_ = c->formed.ps();
  ++count_;
  if (!first_) {
    DeadlockVerdict v;
    v.formed = c->formed;
    v.detected = sim_.Now();
    v.hops = c->hops;
    for (const WaitHop& h : c->hops)
      v.labels.push_back(BufferLabel(net_.routing(), h.port, h.priority, net_.config().pfc.global));
    first_ = std::move(v);
  }
  if (stop_run_) sim_.Stop();
}

std::string DeadlockDetector::CycleText(const DeadlockVerdict& v) {
  std::string out;
  for (const std::string& l : v.labels) out += l + " -> ";
  if (!v.labels.empty()) out += v.labels.front();
  return out;
}

}  // namespace lossless::deadlock
