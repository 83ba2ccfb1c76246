#include "sim/simulator.hpp"

#include <cassert>

namespace lossless::sim {

void Simulator::Push(int64_t time, uint32_t source, const Payload& payload) {
  uint32_t idx = free_payload_;
  if (idx != UINT32_MAX) {
    free_payload_ = payloads_[idx].next_free;
    payloads_[idx] = payload;
  } else {
    idx = static_cast<uint32_t>(payloads_.size());
    payloads_.push_back(payload);
  }
  const uint64_t key =
      (static_cast<uint64_t>(source) << 40) | (entity_seq_[source]++ & ((1ULL << 40) - 1));
  const Entry e{(static_cast<Order>(Bias(time)) << 64) | key, idx};
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
  Push(at.ps(), source, Payload{h, arg, kind, UINT32_MAX, 0, UINT32_MAX});
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
  Push(at.ps(), source, Payload{h, arg, kind, slot, slot_gen_[slot], UINT32_MAX});
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
    const Payload pl = payloads_[top.payload];
    payloads_[top.payload].next_free = free_payload_;
    free_payload_ = top.payload;
    if (pl.slot != UINT32_MAX) {
      // Slots are freed only here, so a slot is never reused while its event is queued.
      bool live = slot_gen_[pl.slot] == pl.generation;
      if (live) ++slot_gen_[pl.slot];  // the handle no longer cancels anything
      free_slots_.push_back(pl.slot);
      if (!live) continue;  // cancelled: a tombstone
    }
    now_ = Time::Ps(static_cast<int64_t>(TimeOf(top) ^ (1ULL << 63)));
    ++executed_;
    ++ran;
    pl.handler->OnEvent(pl.kind, pl.arg);
  }
  if (stop_) return StopReason::kStopped;
  return StopReason::kQueueEmpty;
}

}  // namespace lossless::sim
