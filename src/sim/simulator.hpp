#pragma once
// The discrete-event engine.
//
// A Simulator owns its clock, event queue and counters; there are no globals,
// so several simulations can run in one process. Events are ordered by
// (time, source entity, per-source sequence number): simultaneous events run
// in an order that depends only on which entity scheduled them and in which
// order that entity did so — not on global insertion order — so a run split
// across partitions can reproduce a serial one.
//
// Hot path: Schedule() and the dispatch loop allocate nothing once the queue
// has grown to its peak size; an entry is 32 bytes and carries its payload
// (handler index, kind, arg) inline.
//
// Delay lanes. Most events of a packet simulation are scheduled a fixed
// delay ahead of now (one frame time, frame time plus cable), and the clock
// never goes back, so the events of one delay arrive in time order. Such a
// delay, once seen often, gets a lane: a FIFO ring of entries in (time, key)
// order, of which only the head sits in the 4-ary heap as a representative.
// The heap then holds a few dozen entries instead of one per busy link, so
// its depth and cache footprint do not grow with the fabric. A near event
// without a lane of its delay goes to a spill lane (below) it can follow,
// else to the heap directly. The order of execution is exactly the
// heap-only order: lanes are sorted, and the heap merges their heads.
// Lanes are recycled: a delay that stops being frequent (the staggered start
// times of a collective, say) gives its lane up at the next review, so the
// delays of the steady state get lanes whatever came first.
// Far events. An event without a lane that is due a microsecond or more
// ahead (a timeout, a staged transfer's end, the next iteration) goes to a
// second heap, so the lanes' heads and the near events share a heap of a
// few dozen entries however many far events wait. The next event is the
// smaller of the two heaps' tops, so the order is still exactly (time, key).
#include <cstdint>
#include <vector>

#include "base/ring.hpp"
#include "sim/rng.hpp"
#include "units/units.hpp"

namespace lossless::sim {

using units::Time;

// Receives events. `kind` and `arg` are the handler's own encoding.
class EventHandler {
 public:
  virtual void OnEvent(uint32_t kind, uint64_t arg) = 0;

 protected:
  EventHandler() = default;
  // A copy is another handler: it does not inherit the original's index.
  EventHandler(const EventHandler&) {}
  EventHandler& operator=(const EventHandler&) { return *this; }
  ~EventHandler() = default;

 private:
  friend class Simulator;
  // The index the simulator that last queued an event for this handler gave
  // it (by that simulator's serial number, never reused, unlike an address),
  // so that a push reads it here instead of searching; another simulator's
  // push searches once and takes the cache over. Written by the pushes, so a
  // handler serves simulators of one thread (each `compare` task and each
  // loopback rank builds its own).
  uint64_t indexed_by_ = 0;
  uint32_t index_ = 0;
};

// Handle of a cancellable event. Default-constructed = none.
struct EventId {
  uint32_t slot = UINT32_MAX;
  uint32_t generation = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

enum class StopReason : uint8_t { kQueueEmpty, kTimeLimit, kStopped, kEventLimit };

// The events one entity ran (Simulator::EnableDigests): how many, and the sum
// modulo 2^64 of Mix(time, per-source sequence, kind) over them. A sum, so it
// does not depend on the order partial digests are added in; the (time, key)
// order of execution is fixed anyway. The event's `arg` and handler are left
// out: they hold process-local indices (packet slots, handler registration).
struct EntityDigest {
  uint64_t events = 0;
  uint64_t sum = 0;
  bool operator==(const EntityDigest&) const = default;
};

class Simulator {
 public:
  explicit Simulator(uint64_t seed)
      : seed_(seed),
        serial_(NextSerial()),
        lanes_(kSpillLanes),
        lane_state_(kSpillLanes, LaneState{kLaneSpill, 0}) {}
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Registers an entity (a component that schedules events) and returns its id.
  // Ids are dense and follow registration order, which the fabric builder keeps
  // deterministic.
  uint32_t AddEntity() {
    entity_seq_.push_back(0);
    return static_cast<uint32_t>(entity_seq_.size() - 1);
  }

  Time Now() const { return now_; }
  uint64_t seed() const { return seed_; }

  // Runs h->OnEvent(kind, arg) at `at` (clamped to Now() if earlier is asked:
  // that is a programmer error caught by assert in debug builds).
  void Schedule(Time at, uint32_t source, EventHandler* h, uint32_t kind, uint64_t arg);
  // Same, returning a handle that Cancel() accepts.
  EventId ScheduleCancellable(Time at, uint32_t source, EventHandler* h, uint32_t kind,
                              uint64_t arg);
  // Cancels a pending event; returns false if it already ran or was cancelled.
  bool Cancel(EventId id);

  // Scheduling with a key drawn elsewhere, for the distributed engine
  // (docs/parallel.md): DrawKey(source) takes the next (source << 40 |
  // per-source sequence) key of `source` exactly as Schedule would, without
  // queueing anything; ScheduleKeyed queues an event under a key so drawn
  // (on this or another process), so it runs where the serial run has it.
  uint64_t DrawKey(uint32_t source) {
    return (static_cast<uint64_t>(source) << 40) | (entity_seq_[source]++ & ((1ULL << 40) - 1));
  }
  void ScheduleKeyed(Time at, uint64_t key, EventHandler* h, uint32_t kind, uint64_t arg);
  // The key DrawKey(source) returned whose low 32 bits are `low`, provided
  // fewer than 2^32 keys of `source` have been drawn since (so a record that
  // waits a short while for its event, a frame on a wire, keeps 4 bytes).
  uint64_t RecentKey(uint32_t source, uint32_t low) const {
    const uint64_t next = entity_seq_[source];
    const uint64_t seq = next - static_cast<uint32_t>(static_cast<uint32_t>(next) - low);
    return (static_cast<uint64_t>(source) << 40) | (seq & ((1ULL << 40) - 1));
  }
  // Time of the earliest queued event (a cancelled one included: a lower
  // bound), or Time::Max() when the queue is empty.
  Time NextTime() const {
    if (heap_.empty() && far_.empty()) return Time::Max();
    return Time::Ps(static_cast<int64_t>(TimeOf(Front()) ^ (1ULL << 63)));
  }

  // The key (source << 40 | sequence) of the earliest queued event, or
  // UINT64_MAX when the queue is empty (with NextTime, the distributed
  // engine's exact stop point, docs/parallel.md).
  uint64_t NextKey() const {
    if (heap_.empty() && far_.empty()) return UINT64_MAX;
    return static_cast<uint64_t>(Front().order);
  }
  // Moves the clock forward to `t` without running anything (a distributed
  // run's ranks end at the serial run's final time); never backwards.
  void AdvanceTo(Time t) {
    if (t > now_) now_ = t;
  }
  // Keeps only the queued events for which keep(key, kind, arg) is true (a
  // rank of a distributed run drops the events of entities it does not own
  // after setup). Order and keys of the kept events are unchanged.
  template <class Keep>
  void Retain(Keep keep) {
    std::vector<Entry> all(far_.begin(), far_.end());
    for (const Entry& e : heap_)
      if ((e.handler_kind >> 16) != kLaneHandler) all.push_back(e);
    for (Lane& l : lanes_) {
      for (uint32_t i = 0; i < l.size; ++i) all.push_back(l.at(i));
      l.clear();
    }
    heap_.clear();
    child_min_ = 0;
    far_.clear();
    far_time_ = UINT64_MAX;
    for (const Entry& e : all)
      if (keep(static_cast<uint64_t>(e.order), e.handler_kind & 0xFFFF, e.arg)) {
        heap_.push_back(e);
        SiftUp(heap_, heap_.size() - 1, e);
      }
  }
  // The key of the event running now (of the last one that ran, between
  // events): with Now(), where in the (time, key) order the run is; the
  // fabric uses it to tell which FCPs have taken effect. The event probe is
  // called as each event starts: the distributed engine's view of where in
  // the serial order it is. Off the serial path: Run has a loop instance
  // with the probe and one with digests (which also calls it), and runs the
  // plain one when neither is on.
  using EventProbe = void (*)(void* ctx);
  void set_event_probe(EventProbe fn, void* ctx) {
    probe_ = fn;
    probe_ctx_ = ctx;
  }
  uint64_t RunningKey() const { return running_key_; }

  // Per-entity event digests (`lossless run --digest`): from this call on,
  // every event that runs is added to its source entity's EntityDigest.
  // Off, it costs nothing per event (Run has a loop without the digest).
  void EnableDigests() { digests_on_ = true; }
  // By entity id; entities that ran nothing may be missing at the end.
  const std::vector<EntityDigest>& digests() const { return digests_; }

  // Runs events in order until the queue is empty, the next event is later
  // than `until` (the clock then stops at `until`), Stop() is called, or
  // `max_events` have run.
  StopReason Run(Time until = Time::Max(), uint64_t max_events = UINT64_MAX);
  // Ends Run() after the current event.
  void Stop() { stop_ = true; }

  // A random stream for (entity, purpose); see rng.hpp.
  Rng MakeRng(uint64_t entity, uint64_t purpose) const { return Rng(seed_, entity, purpose); }

  // A prefetch hint for the running handler: the kind and arg of the event
  // `ahead` places (>= 1) behind the running one in its delay lane, when the
  // running event came from a lane and that event is for the same handler.
  // Lanes are in execution order, so that event runs soon; the handler may
  // prefetch what it will touch (a hint only: nothing may depend on it).
  bool LaneAhead(uint32_t ahead, uint32_t& kind, uint64_t& arg) const {
    if (run_lane_ == UINT32_MAX) return false;
    const Lane& l = lanes_[run_lane_];
    if (ahead > l.size) return false;
    const Entry& e = l.at(ahead - 1);
    if ((e.handler_kind >> 16) != run_handler_) return false;
    kind = e.handler_kind & 0xFFFF;
    arg = e.arg;
    return true;
  }

  // Where the running event waited: a delay lane, a spill lane, or neither
  // (a heap). For tests and diagnostics; nothing may depend on it.
  enum class Queue : uint8_t { kHeap, kSpillLane, kDelayLane };
  Queue RunningFrom() const {
    if (run_lane_ == UINT32_MAX) return Queue::kHeap;
    return run_lane_ < kSpillLanes ? Queue::kSpillLane : Queue::kDelayLane;
  }

  uint64_t events_executed() const { return executed_; }
  // An event under `key` that ran outside this queue at `at` (a distributed
  // run replays the deadlock detector's and the series sampler's events at
  // window boundaries, docs/parallel.md): counted in events_executed() and,
  // with digests on, in its entity's digest as if it had run here. Neither
  // the clock nor the event probe sees it.
  void CountEvent(Time at, uint64_t key, uint32_t kind);
  uint64_t events_scheduled() const { return scheduled_; }
  uint64_t events_cancelled() const { return cancelled_; }
  // Events queued (a cancelled one until it is popped), counted when asked
  // (a sample, a test) rather than kept at every push and pop.
  size_t pending() const;

 private:
  // Heap entries are 32 bytes: the order key and the payload. Ordering is
  // (time, key) with key = (source << 40) | sequence.
  __extension__ using Order = unsigned __int128;
  struct Entry {
    Order order;  // (biased time << 64) | key: one unsigned compare orders it
    uint64_t arg;
    uint32_t handler_kind;  // handler index << 16 | kind
    uint32_t slot;          // cancellation slot, or UINT32_MAX
  };
  // A lane's representative in the heap: a copy of the lane's head whose
  // handler index is kLaneHandler and whose kind is the lane number.
  static constexpr uint32_t kLaneHandler = 0xFFFF;
  static constexpr size_t kMaxLanes = 64;
  static constexpr uint32_t kLaneAfter = 64;  // sightings of a delay before it gets a lane
  // Every kLaneEpoch scheduled events, a lane that took fewer than
  // kLaneKeepUses of them is detached from its delay (it drains, then is free).
  static constexpr uint64_t kLaneEpoch = uint64_t{1} << 16;
  static constexpr uint32_t kLaneKeepUses = 64;
  static constexpr uint32_t kLaneFree = UINT32_MAX;          // LaneState::slot: unused
  static constexpr uint32_t kLaneDetached = UINT32_MAX - 1;  // draining, takes no pushes
  // Spill lanes (the first kSpillLanes lanes, held by no delay): a near event
  // that no delay lane takes goes to the first of them whose tail it does not
  // order before, and to the heap only when it orders before all their tails.
  // Events without a steady delay (a kick at the rest of a frame in progress,
  // an NVLink delivery after the egress's earlier messages) are mostly
  // scheduled in time order anyway, so a FIFO takes them at the cost of a
  // compare with its tail instead of a sift through the heap at each end.
  static constexpr uint32_t kSpillLanes = 4;
  static constexpr uint32_t kLaneSpill = UINT32_MAX - 2;
  using Lane = base::Ring<Entry>;
  struct LaneState {
    uint32_t slot;  // its delay slot, or kLaneDetached / kLaneFree
    uint32_t uses;  // pushes in this epoch
  };
  // Open-addressed by delay; a slot votes for the delay seen most there.
  struct DelaySlot {
    int64_t delay = -1;
    uint32_t votes = 0;
    uint32_t lane = UINT32_MAX;
  };
  static constexpr size_t kDelaySlots = 256;
  static constexpr int64_t kFarPs = 1'000'000;  // events this far ahead without a lane: far_
  static bool Before(const Entry& a, const Entry& b) { return a.order < b.order; }
  static uint64_t TimeOf(const Entry& e) { return static_cast<uint64_t>(e.order >> 64); }
  static uint64_t Bias(int64_t t) { return static_cast<uint64_t>(t) ^ (1ULL << 63); }
  void Push(int64_t time, uint32_t source, EventHandler* h, uint32_t kind, uint64_t arg,
            uint32_t slot);
  [[gnu::always_inline]] inline void PushEntry(const Entry& e, int64_t time);
  [[gnu::always_inline]] inline void LanePush(uint32_t lane, const Entry& e);
  [[gnu::noinline]] void PushSlow(const Entry& e, int64_t delay);
  [[gnu::cold, gnu::noinline]] void Digest(const Entry& e);
  template <bool kDigests, bool kProbe>
  StopReason RunLoop(Time until, uint64_t max_events);
  uint32_t HandlerIndex(EventHandler* h);
  void Insert(const Entry& e);
  uint32_t LaneFor(int64_t delay);
  [[gnu::cold, gnu::noinline]] uint32_t NewLane();
  [[gnu::cold, gnu::noinline]] void ReviewLanes();
  // The earliest queued entry of heap_ and far_ (one of them not empty).
  const Entry& Front() const {
    return far_.empty() || (!heap_.empty() && Before(heap_.front(), far_.front())) ? heap_.front()
                                                                                   : far_.front();
  }
  // 4-ary heap operations on heap_ or far_.
  [[gnu::always_inline]] static inline size_t MinChild(
      const std::vector<Entry>& h, size_t first,
      size_t n);  // smallest of the children from `first`
  static void PopTop(std::vector<Entry>& h);
  // Replaces heap_'s top, the representative of `lane`, by the lane's next
  // entry, keeping child_min_.
  void ReplaceTop(uint32_t lane, const Entry& next);
  static void SiftUp(std::vector<Entry>& h, size_t i, const Entry& e);  // place e at or above `i`

  static uint64_t NextSerial();  // 1, 2, ... (thread-safe)
  uint64_t seed_;
  uint64_t serial_;  // EventHandler::indexed_by_
  Time now_;
  bool stop_ = false;
  std::vector<Entry> heap_;  // 4-ary min-heap: lane heads and near events
  std::vector<Entry> far_;   // 4-ary min-heap: events kFarPs or more ahead without a lane
  // The smallest order among heap_'s top's children (all ones when it has
  // none), or 0 when not known: a lane's next entry below it stays at the
  // top without a sift. Any change to heap_ but such a top replacement
  // sets it to 0 (no entry orders below 0, so 0 sends every entry to the sift).
  Order child_min_ = 0;
  std::vector<Lane> lanes_;
  std::vector<LaneState> lane_state_;  // by lane
  std::vector<uint32_t> free_lanes_;
  DelaySlot delay_slots_[kDelaySlots];
  uint32_t run_lane_ = UINT32_MAX;       // lane of the running event (LaneAhead), or none
  uint32_t run_handler_ = 0;             // handler index of the running event
  std::vector<EventHandler*> handlers_;  // the handlers seen, by index
  std::vector<uint64_t> entity_seq_;
  std::vector<uint32_t> slot_gen_;
  std::vector<uint32_t> slot_sched_gen_;  // generation when the slot's event was scheduled
  std::vector<uint32_t> free_slots_;
  bool digests_on_ = false;
  uint64_t running_key_ = 0;
  EventProbe probe_ = nullptr;
  void* probe_ctx_ = nullptr;
  std::vector<EntityDigest> digests_;
  uint64_t executed_ = 0, scheduled_ = 0, cancelled_ = 0;
  uint64_t far_time_ = UINT64_MAX;  // TimeOf(far_.front()), UINT64_MAX when far_ is empty
};

}  // namespace lossless::sim
