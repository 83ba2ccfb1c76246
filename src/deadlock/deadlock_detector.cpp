#include "deadlock/deadlock_detector.hpp"

#include <algorithm>
#include <functional>
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
    ScheduleOwn(at, kCheck);
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
    ScheduleOwn(units::Time::Ps(at), kConfirm);
    return;
  }
  if (kind == kConfirm && confirm_at_ == Now().ps()) {
    confirm_at_ = -1;
    Confirm();
  }
}

void DeadlockDetector::Confirm() {
  auto c = graph_.FindCycle();
  if (!c || c->formed.ps() == last_confirmed_) return;
  if (Now() - c->formed < persist_) {
    // A cycle that closed later: confirm it in its turn.
    confirm_at_ = (c->formed + persist_).ps();
    ScheduleOwn(units::Time::Ps(confirm_at_), kConfirm);
    return;
  }
  last_confirmed_ = c->formed.ps();
  ++count_;
  if (!first_) {
    DeadlockVerdict v;
    v.formed = c->formed;
    v.detected = Now();
    v.hops = c->hops;
    for (const WaitHop& h : c->hops)
      v.labels.push_back(BufferLabel(net_.routing(), h.port, h.priority, net_.config().pfc.global));
    first_ = std::move(v);
  }
  if (stop_run_) {
    if (external_)
      external_stop_ = external_now_;
    else
      sim_.Stop();
  }
}

void DeadlockDetector::ScheduleOwn(units::Time at, uint32_t kind) {
  if (!external_) {
    sim_.Schedule(at, entity_, this, kind, 0);
    return;
  }
  own_.push_back({std::max(at.ps(), external_now_), sim_.DrawKey(entity_), kind});
  std::push_heap(own_.begin(), own_.end(), std::greater<>());
}

void DeadlockDetector::StartExternal(bool count_events) {
  if (check_pending_ || confirm_at_ >= 0)
    throw std::logic_error("deadlock detector: events queued before a distributed run");
  external_ = true;
  count_events_ = count_events;
}

void DeadlockDetector::RunExternalThrough(int64_t t) {
  while (external_stop_ < 0 && !own_.empty() && own_.front().time <= t) {
    std::pop_heap(own_.begin(), own_.end(), std::greater<>());
    const Own e = own_.back();
    own_.pop_back();
    external_now_ = e.time;
    if (count_events_) sim_.CountEvent(units::Time::Ps(e.time), e.key, e.kind);
    OnEvent(e.kind, 0);
  }
  if (external_stop_ < 0 && t > external_now_) external_now_ = t;
}

int64_t DeadlockDetector::NextExternalTime() const {
  return own_.empty() ? INT64_MAX : own_.front().time;
}

std::string DeadlockDetector::CycleText(const DeadlockVerdict& v) {
  std::string out;
  for (const std::string& l : v.labels) out += l + " -> ";
  if (!v.labels.empty()) out += v.labels.front();
  return out;
}

}  // namespace lossless::deadlock
