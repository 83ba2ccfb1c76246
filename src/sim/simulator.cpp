#include "sim/simulator.hpp"

#include <cassert>

namespace lossless::sim {

uint32_t Simulator::HandlerIndex(EventHandler* h) {
  if (h == last_handler_) return last_handler_index_;
  uint32_t i = 0;
  while (i < handlers_.size() && handlers_[i] != h) ++i;
  if (i == handlers_.size()) {
    // A handful per simulation (network, sampler, detector); 16 bits of index.
    assert(i < 0xFFFF);
    handlers_.push_back(h);
  }
  last_handler_ = h;
  last_handler_index_ = i;
  return i;
}

void Simulator::Push(int64_t time, uint32_t source, EventHandler* h, uint32_t kind, uint64_t arg,
                     uint32_t slot) {
  assert(kind <= 0xFFFF);
  const uint64_t key =
      (static_cast<uint64_t>(source) << 40) | (entity_seq_[source]++ & ((1ULL << 40) - 1));
  const Entry e{(static_cast<Order>(Bias(time)) << 64) | key, arg, HandlerIndex(h) << 16 | kind,
                slot};
  heap_.push_back(e);
  SiftUp(heap_.size() - 1, e);
  if (heap_.size() > peak_pending_) peak_pending_ = heap_.size();
  ++scheduled_;
}

void Simulator::PopTop() {
  // Floyd's bottom-up deletion: walk the hole down along the smallest
  // children to a leaf, then sift the former last entry up from there.
  const Entry last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return;
  size_t i = 0;
  for (;;) {
    size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    if (first + 4 <= n) {
      size_t b01 = Before(heap_[first + 1], heap_[first]) ? first + 1 : first;
      size_t b23 = Before(heap_[first + 3], heap_[first + 2]) ? first + 3 : first + 2;
      best = Before(heap_[b23], heap_[b01]) ? b23 : b01;
    } else {
      for (size_t c = first + 1; c < n; ++c)
        if (Before(heap_[c], heap_[best])) best = c;
    }
    heap_[i] = heap_[best];
    i = best;
  }
  SiftUp(i, last);
}

void Simulator::SiftUp(size_t i, const Entry& e) {
  while (i > 0) {
    size_t parent = (i - 1) / 4;
    if (!Before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Simulator::Schedule(Time at, uint32_t source, EventHandler* h, uint32_t kind, uint64_t arg) {
  assert(at >= now_);
  assert(source < entity_seq_.size());
  if (at < now_) at = now_;
  Push(at.ps(), source, h, kind, arg, UINT32_MAX);
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
    slot_sched_gen_.push_back(0);
  }
  assert(at >= now_);
  if (at < now_) at = now_;
  slot_sched_gen_[slot] = slot_gen_[slot];
  Push(at.ps(), source, h, kind, arg, slot);
  return EventId{slot, slot_gen_[slot]};
}

bool Simulator::Cancel(EventId id) {
  if (!id.valid() || id.slot >= slot_gen_.size() || slot_gen_[id.slot] != id.generation)
    return false;
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
    const Entry top = heap_.front();
    if (TimeOf(top) > Bias(until.ps())) {
      now_ = until;
      return StopReason::kTimeLimit;
    }
    PopTop();
    if (top.slot != UINT32_MAX) {
      // Slots are freed only here, so a slot is never reused while its event is queued.
      bool live = slot_gen_[top.slot] == slot_sched_gen_[top.slot];
      if (live) ++slot_gen_[top.slot];  // the handle no longer cancels anything
      free_slots_.push_back(top.slot);
      if (!live) continue;  // cancelled: a tombstone
    }
    now_ = Time::Ps(static_cast<int64_t>(TimeOf(top) ^ (1ULL << 63)));
    ++executed_;
    ++ran;
    handlers_[top.handler_kind >> 16]->OnEvent(top.handler_kind & 0xFFFF, top.arg);
  }
  if (stop_) return StopReason::kStopped;
  return StopReason::kQueueEmpty;
}

}  // namespace lossless::sim
