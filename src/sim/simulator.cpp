#include "sim/simulator.hpp"

#include <cassert>

namespace lossless::sim {

void Simulator::Push(const Event& e) {
  heap_.push_back(e);
  size_t i = heap_.size() - 1;
  while (i > 0) {
    size_t parent = (i - 1) / 4;
    if (!Before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
  if (heap_.size() > peak_pending_) peak_pending_ = heap_.size();
}

void Simulator::PopTop() {
  Event last = heap_.back();
  heap_.pop_back();
  size_t n = heap_.size();
  if (n == 0) return;
  size_t i = 0;
  for (;;) {
    size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    size_t end = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < end; ++c)
      if (Before(heap_[c], heap_[best])) best = c;
    if (!Before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

void Simulator::Schedule(Time at, uint32_t source, EventHandler* h, uint32_t kind, uint64_t arg) {
  assert(at >= now_);
  assert(source < entity_seq_.size());
  if (at < now_) at = now_;
  uint64_t key = (static_cast<uint64_t>(source) << 40) | (entity_seq_[source]++ & ((1ULL << 40) - 1));
  Push(Event{at.ps(), key, h, arg, kind, UINT32_MAX, 0});
  ++scheduled_;
}

EventId Simulator::ScheduleCancellable(Time at, uint32_t source, EventHandler* h, uint32_t kind,
                                       uint64_t arg) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slot_gen_.size());
    slot_gen_.push_back(0);
  }
  assert(at >= now_);
  if (at < now_) at = now_;
  uint64_t key = (static_cast<uint64_t>(source) << 40) | (entity_seq_[source]++ & ((1ULL << 40) - 1));
  Push(Event{at.ps(), key, h, arg, kind, slot, slot_gen_[slot]});
  ++scheduled_;
  return EventId{slot, slot_gen_[slot]};
}

bool Simulator::Cancel(EventId id) {
  if (!id.valid() || id.slot >= slot_gen_.size() || slot_gen_[id.slot] != id.generation) return false;
  // The event stays in the heap; bumping the generation makes it a tombstone.
  ++slot_gen_[id.slot];
  ++cancelled_;
  return true;
}

StopReason Simulator::Run(Time until, uint64_t max_events) {
  stop_ = false;
  uint64_t ran = 0;
  while (!heap_.empty()) {
    if (stop_) return StopReason::kStopped;
    if (ran >= max_events) return StopReason::kEventLimit;
    const Event e = heap_.front();
    if (e.time > until.ps()) {
      now_ = until;
      return StopReason::kTimeLimit;
    }
    PopTop();
    if (e.slot != UINT32_MAX) {
      // Slots are freed only here, so a slot is never reused while its event is queued.
      bool live = slot_gen_[e.slot] == e.generation;
      if (live) ++slot_gen_[e.slot];  // the handle no longer cancels anything
      free_slots_.push_back(e.slot);
      if (!live) continue;  // cancelled: a tombstone
    }
    now_ = Time::Ps(e.time);
    ++executed_;
    ++ran;
    e.handler->OnEvent(e.kind, e.arg);
  }
  if (stop_) return StopReason::kStopped;
  return StopReason::kQueueEmpty;
}

}  // namespace lossless::sim
