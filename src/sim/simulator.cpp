#include "sim/simulator.hpp"

#include <atomic>
#include <cassert>

namespace lossless::sim {

namespace {

[[gnu::noinline]] uint32_t FindHandler(std::vector<EventHandler*>& handlers, EventHandler* h) {
  uint32_t i = 0;
  while (i < handlers.size() && handlers[i] != h) ++i;
  if (i == handlers.size()) {
    // A handful per simulation (network, sampler, detector); 16 bits of index.
    assert(i < 0xFFFF);
    handlers.push_back(h);
  }
  return i;
}

// The delay slot of a delay (LaneFor), a multiplicative hash to 8 bits.
[[gnu::always_inline]] inline size_t DelaySlotOf(int64_t delay) {
  return (static_cast<uint64_t>(delay) * 0x9E3779B97F4A7C15ULL) >> 56;
}

}  // namespace

uint64_t Simulator::NextSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Inline here: every Push and ScheduleKeyed asks. The index sits in the
// handler (EventHandler::index_), whose record the caller has at hand.
[[gnu::always_inline]] inline uint32_t Simulator::HandlerIndex(EventHandler* h) {
  if (h->indexed_by_ != serial_) [[unlikely]] {
    h->index_ = FindHandler(handlers_, h);
    h->indexed_by_ = serial_;
  }
  return h->index_;
}

[[gnu::always_inline]] inline void Simulator::LanePush(uint32_t lane, const Entry& e) {
  Lane& l = lanes_[lane];
  if (l.size == 0) {
    Entry rep = e;
    rep.handler_kind = kLaneHandler << 16 | lane;
    heap_.push_back(rep);
    child_min_ = 0;
    SiftUp(heap_, heap_.size() - 1, rep);
  }
  l.push(e);
  ++lane_state_[lane].uses;
}

// The common case, inline in every push: the delay holds a lane that has
// entries and the event follows its tail. The rest (a lane's first entry,
// the votes for lanes, spill lanes, the heaps) is out of line, so the
// callers' hot paths stay small.
[[gnu::always_inline]] inline void Simulator::PushEntry(const Entry& e, int64_t time) {
  const int64_t delay = time - now_.ps();
  const DelaySlot& ds = delay_slots_[DelaySlotOf(delay)];
  Lane* l = ds.delay == delay && ds.lane != UINT32_MAX ? &lanes_[ds.lane] : nullptr;
  if (l != nullptr && l->size != 0 && Before(l->back(), e)) [[likely]] {
    l->push(e);
    ++lane_state_[ds.lane].uses;
  } else {
    PushSlow(e, delay);
  }
  if ((++scheduled_ & (kLaneEpoch - 1)) == 0) [[unlikely]]
    ReviewLanes();
}

// Without a lane for its delay, or as an equal-time entry with a smaller key
// than that lane's tail (a lane must stay sorted), a far event goes to the
// far heap (spill lanes for far events were tried: the timers there are
// rarely scheduled in time order), a near one to the first spill lane it can
// follow, else to the near heap.
void Simulator::PushSlow(const Entry& e, int64_t delay) {
  const uint32_t lane = LaneFor(delay);
  if (lane != UINT32_MAX && (lanes_[lane].size == 0 || Before(lanes_[lane].back(), e))) {
    LanePush(lane, e);
  } else if (delay >= kFarPs) {
    far_.push_back(e);
    SiftUp(far_, far_.size() - 1, e);
    far_time_ = TimeOf(far_.front());
  } else {
    uint32_t s = 0;
    while (s < kSpillLanes && lanes_[s].size != 0 && !Before(lanes_[s].back(), e)) ++s;
    if (s < kSpillLanes) {
      LanePush(s, e);
    } else {
      heap_.push_back(e);
      child_min_ = 0;
      SiftUp(heap_, heap_.size() - 1, e);
    }
  }
}

// Inline in Schedule (every kick, timer and engine event) and ScheduleCancellable.
[[gnu::always_inline]] inline void Simulator::Push(int64_t time, uint32_t source, EventHandler* h,
                                                   uint32_t kind, uint64_t arg, uint32_t slot) {
  assert(kind <= 0xFFFF);
  const uint64_t key =
      (static_cast<uint64_t>(source) << 40) | (entity_seq_[source]++ & ((1ULL << 40) - 1));
  const Entry e{(static_cast<Order>(Bias(time)) << 64) | key, arg, HandlerIndex(h) << 16 | kind,
                slot};
  PushEntry(e, time);
}

void Simulator::ScheduleKeyed(Time at, uint64_t key, EventHandler* h, uint32_t kind, uint64_t arg) {
  assert(at >= now_);
  assert(kind <= 0xFFFF);
  assert((key >> 40) < entity_seq_.size());
  if (at < now_) at = now_;
  const Entry e{(static_cast<Order>(Bias(at.ps())) << 64) | key, arg, HandlerIndex(h) << 16 | kind,
                UINT32_MAX};
  PushEntry(e, at.ps());
}

void Simulator::Digest(const Entry& e) {
  const uint64_t key = static_cast<uint64_t>(e.order);
  running_key_ = key;
  if (probe_ != nullptr) probe_(probe_ctx_);
  const uint64_t source = key >> 40;
  if (source >= digests_.size()) digests_.resize(source + 1);
  EntityDigest& d = digests_[source];
  ++d.events;
  d.sum += Mix(TimeOf(e) ^ (1ULL << 63), key & ((1ULL << 40) - 1), e.handler_kind & 0xFFFF);
}

void Simulator::CountEvent(Time at, uint64_t key, uint32_t kind) {
  ++executed_;
  if (!digests_on_) return;
  const uint64_t source = key >> 40;
  if (source >= digests_.size()) digests_.resize(source + 1);
  EntityDigest& d = digests_[source];
  ++d.events;
  d.sum += Mix(static_cast<uint64_t>(at.ps()), key & ((1ULL << 40) - 1), kind & 0xFFFF);
}

size_t Simulator::pending() const {
  size_t n = heap_.size() + far_.size();
  for (const Lane& l : lanes_) n += l.size == 0 ? 0 : l.size - 1;  // its head is in heap_
  return n;
}

uint32_t Simulator::LaneFor(int64_t delay) {
  static_assert(kDelaySlots == 256);
  const size_t slot = DelaySlotOf(delay);
  DelaySlot& d = delay_slots_[slot];
  if (d.delay == delay) {
    if (d.lane != UINT32_MAX) return d.lane;
    if (++d.votes >= kLaneAfter) {
      d.lane = NewLane();
      if (d.lane != UINT32_MAX) lane_state_[d.lane].slot = static_cast<uint32_t>(slot);
      return d.lane;
    }
  } else if (d.lane == UINT32_MAX) {
    // A slot without a lane goes to the delay seen most often there
    // (majority vote), so one-off delays (start times) never win a lane.
    if (d.votes == 0) {
      d.delay = delay;
      d.votes = 1;
    } else {
      --d.votes;
    }
  }
  return UINT32_MAX;
}

uint32_t Simulator::NewLane() {
  if (!free_lanes_.empty()) {
    const uint32_t lane = free_lanes_.back();
    free_lanes_.pop_back();
    return lane;
  }
  if (lanes_.size() >= kSpillLanes + kMaxLanes) return UINT32_MAX;
  lanes_.emplace_back();
  lane_state_.push_back({kLaneFree, 0});
  return static_cast<uint32_t>(lanes_.size() - 1);
}

void Simulator::ReviewLanes() {
  // Which delay holds which lane changes no order (every lane is sorted and
  // the heap merges their heads), only how much work a push and a pop take.
  for (uint32_t i = 0; i < lanes_.size(); ++i) {
    LaneState& st = lane_state_[i];
    if (st.slot < kDelaySlots && st.uses < kLaneKeepUses) {
      DelaySlot& d = delay_slots_[st.slot];
      d = DelaySlot{};  // the slot votes afresh
      st.slot = kLaneDetached;
    }
    st.uses = 0;
    if (st.slot == kLaneDetached && lanes_[i].size == 0) {
      st.slot = kLaneFree;
      free_lanes_.push_back(i);
    }
  }
}

// Inline in the sifts: ReplaceTop calls it about once per event when the
// spill lanes' next entries leave the top (docs/benchmarks.md, "An eighth pass").
[[gnu::always_inline]] inline size_t Simulator::MinChild(const std::vector<Entry>& h, size_t first,
                                                         size_t n) {
  if (first + 4 <= n) {
    size_t b01 = Before(h[first + 1], h[first]) ? first + 1 : first;
    size_t b23 = Before(h[first + 3], h[first + 2]) ? first + 3 : first + 2;
    return Before(h[b23], h[b01]) ? b23 : b01;
  }
  size_t best = first;
  for (size_t c = first + 1; c < n; ++c)
    if (Before(h[c], h[best])) best = c;
  return best;
}

void Simulator::PopTop(std::vector<Entry>& h) {
  // Floyd's bottom-up deletion: walk the hole down along the smallest
  // children to a leaf, then sift the former last entry up from there.
  const Entry last = h.back();
  h.pop_back();
  const size_t n = h.size();
  if (n == 0) return;
  size_t i = 0;
  for (size_t first = 1; first < n; first = 4 * i + 1) {
    const size_t best = MinChild(h, first, n);
    h[i] = h[best];
    i = best;
  }
  SiftUp(h, i, last);
}

// Inline in RunLoop, its one caller. The lane that ran often has the next
// entry too, so a compare with the top's children's minimum, kept from the
// last sift while nothing else changed heap_, decides those without a sift.
[[gnu::always_inline]] inline void Simulator::ReplaceTop(uint32_t lane, const Entry& next) {
  std::vector<Entry>& h = heap_;
  if (next.order < child_min_) [[likely]] {
    h[0].order = next.order;  // the top is this lane's representative already
    return;
  }
  Entry e = next;
  e.handler_kind = kLaneHandler << 16 | lane;
  // Top-down with an early stop (the replacement is usually close to the
  // top, so this beats Floyd's walk to a leaf).
  const size_t n = h.size();
  if (n <= 1) {
    h[0] = e;
    child_min_ = ~Order{0};
    return;
  }
  size_t best = MinChild(h, 1, n);
  if (!Before(h[best], e)) {
    h[0] = e;
    child_min_ = h[best].order;
    return;
  }
  child_min_ = 0;
  size_t i = 0;
  for (;;) {
    h[i] = h[best];
    i = best;
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    best = MinChild(h, first, n);
    if (!Before(h[best], e)) break;
  }
  h[i] = e;
}

void Simulator::SiftUp(std::vector<Entry>& h, size_t i, const Entry& e) {
  while (i > 0) {
    size_t parent = (i - 1) / 4;
    if (!Before(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
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
  // Three instances of the loop, so that digests and the probe off cost
  // nothing per event.
  if (digests_on_) return RunLoop<true, false>(until, max_events);
  if (probe_ != nullptr) return RunLoop<false, true>(until, max_events);
  return RunLoop<false, false>(until, max_events);
}

template <bool kDigests, bool kProbe>
StopReason Simulator::RunLoop(Time until, uint64_t max_events) {
  stop_ = false;
  uint64_t ran = 0;
  while (!heap_.empty() || !far_.empty()) {
    if (stop_) return StopReason::kStopped;
    if (ran >= max_events) return StopReason::kEventLimit;
    // far_ holds the top when heap_ is empty or far_'s top is earlier (its
    // time alone decides unless the two times are equal).
    bool far = true;
    if (!heap_.empty()) {
      const uint64_t near_time = TimeOf(heap_.front());
      far = far_time_ < near_time ||
            (far_time_ == near_time && !far_.empty() && Before(far_.front(), heap_.front()));
    }
    const Entry& head = far ? far_.front() : heap_.front();
    if (TimeOf(head) > Bias(until.ps())) {
      now_ = until;
      running_key_ = UINT64_MAX;  // everything due by `until` has run
      return StopReason::kTimeLimit;
    }
    run_lane_ = UINT32_MAX;
    Entry top;
    if (far) [[unlikely]] {
      top = head;
      PopTop(far_);
      far_time_ = far_.empty() ? UINT64_MAX : TimeOf(far_.front());
    } else if ((head.handler_kind >> 16) == kLaneHandler) {
      // A lane's representative: the event is the lane's head.
      const uint32_t lane = head.handler_kind & 0xFFFF;
      run_lane_ = lane;
      Lane& l = lanes_[lane];
      top = l.front();
      l.pop();
      if (l.size > 0) {
        ReplaceTop(lane, l.front());
      } else {
        PopTop(heap_);
        child_min_ = 0;
      }
    } else {
      top = head;
      PopTop(heap_);
      child_min_ = 0;
    }
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
    running_key_ = static_cast<uint64_t>(top.order);
    if constexpr (kDigests) Digest(top);
    if constexpr (kProbe) probe_(probe_ctx_);
    run_handler_ = top.handler_kind >> 16;
    handlers_[top.handler_kind >> 16]->OnEvent(top.handler_kind & 0xFFFF, top.arg);
  }
  if (stop_) return StopReason::kStopped;
  return StopReason::kQueueEmpty;
}

}  // namespace lossless::sim
