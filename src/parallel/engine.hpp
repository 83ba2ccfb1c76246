#pragma once
// The conservative window engine (docs/parallel.md#the-conservative-engine):
// one sim::Simulator per rank, each running the events of the entities it
// owns, synchronised in windows so that the events every entity runs, and
// their order, are the serial run's.
//
// - An event for an entity of another rank is not scheduled: the model hands
//   it to Send(), which draws the source entity's next ordering key exactly
//   as Simulator::Schedule would (time, source << 40 | per-source sequence)
//   and buffers it for that rank. At the window's end the batches are
//   exchanged with every neighbour rank (empty ones included) and each
//   received event is handed to the model's Deliver callback, which queues
//   it with Simulator::ScheduleKeyed under the sender's key: it runs exactly
//   where the serial run has it, whatever the order batches arrived in.
// - Windows: next = AllreduceMin(earliest local event); every rank runs its
//   events with time < next + L (L = lookahead, the smallest delay of any
//   event that crosses ranks); an event created in the window is at least
//   L after its creator's clock (>= next), so none can land inside the
//   window it was created in. Send() checks t >= now + L in every build
//   (std::logic_error otherwise: a violation would corrupt results).
// - Integer times and integer reductions only.
//
// The engine knows nothing of the model: what an event's kind, target and
// arg mean, and which entity lives on which rank, are the caller's.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel/comm.hpp"
#include "sim/simulator.hpp"
#include "units/units.hpp"

namespace lossless::parallel {

// One event as it crosses ranks: 32 bytes, little-endian, copied as is.
// `arg` must not hold a process-local index (a packet slot, a pointer).
struct RemoteEvent {
  int64_t time_ps = 0;
  uint64_t key = 0;  // the serial ordering key, drawn on the sender
  uint32_t kind = 0;
  uint32_t target = 0;  // the entity it is for (the model's numbering)
  uint64_t arg = 0;
};
static_assert(sizeof(RemoteEvent) == 32);

// What a run of windows did, on this rank.
struct WindowStats {
  uint64_t windows = 0;
  uint64_t careful = 0;     // windows that waited for a stop verdict (StopRule)
  uint64_t reductions = 0;  // integer reductions (AllreduceMin / AllreduceMinLanes)
  uint64_t exchanges = 0;   // Exchange calls
  uint64_t sent_bytes = 0;  // batch bytes this rank sent (headers included)
  uint64_t sent = 0;        // events sent to other ranks
  uint64_t received = 0;    // events received from other ranks
  double wait_s = 0;        // wall time in Exchange and AllreduceMin (waiting and transfer)
  double run_s = 0;         // wall time of the whole Run
  // CPU time (this thread's) of each window's work: from the end of the
  // previous exchange (taking in its batch) to the packing of the window's
  // reduction, less the collectives inside (stop verdicts, boundaries):
  // this rank's total, and the sum over windows of the largest over the
  // ranks (the run's critical path with free synchronisation and a core per
  // rank; every rank gets the same). Windows that end in a reduction only.
  double cpu_s = 0;
  double critical_cpu_s = 0;
};

// An agreed stop (docs/parallel.md, "Global conditions"): the serial run
// stops at the event that completes the last of a set of conditions (every
// flow done), each condition held by one rank. `pending()` is how many this
// rank still holds; the model calls Simulator::Stop() at the event that
// clears the last of them, with digests on (Simulator::RunningKey gives that
// event's key). The engine then runs every rank to exactly the serial stop
// point: the latest (time, key) over the ranks' last events of that kind.
//
// `earliest_clear(ran_before)` (optional): called on a rank holding
// conditions when every one of its events before `ran_before` has run and
// none after; returns a time before which its last condition cannot clear
// (a lower bound; INT64_MAX: never). A window that ends at or before the
// largest such bound over the ranks holding conditions cannot hold the stop,
// and runs on every rank at once with no verdict; without the function every
// window waits for one (docs/parallel.md#one-reduction-per-window). A bound
// that proves wrong (a rank clears before it, or the last clearing falls in
// a window that could not hold the stop) is std::logic_error, never a silent
// difference.
struct StopRule {
  std::function<int64_t()> pending;
  std::function<int64_t(int64_t ran_before)> earliest_clear;
};

// What every rank learns at a window's end from the window's one integer
// reduction (Comm::AllreduceMinLanes): each figure is packed into an int64
// lane whose elementwise minimum over the ranks is the figure wanted (a
// maximum as the minimum of negated values, a logical and/or as the minimum
// of 0/1), so the reduction stays integer, exact and independent of the
// order the ranks arrive in.
struct WindowVerdict {
  int64_t next = INT64_MAX;  // earliest event queued or sent anywhere (INT64_MAX: none)
  bool all_clear = true;     // no rank holds a stop condition
  // The largest earliest_clear over the ranks that hold conditions
  // (INT64_MIN when one of them has no bound, INT64_MAX when none holds).
  int64_t stop_not_before = INT64_MAX;
  // The earliest failure over the ranks (WindowEngine::set_failure): the
  // time of a rank's failing event, INT64_MAX for none.
  int64_t failure = INT64_MAX;
  static constexpr size_t kLanes = 4;
  // This rank's contribution: its own next event, whether it holds
  // conditions and its bound (`holds` false: `bound` is ignored), and the
  // time of its failure (INT64_MAX: none).
  static void Pack(int64_t next, bool holds, int64_t bound, int64_t* lanes,
                   int64_t failure = INT64_MAX);
  static WindowVerdict Unpack(const int64_t* reduced);
};

// Figures a model adds to the window's one reduction (lanes after the
// engine's own): `fill` writes this rank's `count` lanes when its window has
// run (every rank the same count), `take` gets the elementwise minimum over
// the ranks, once per window, before the batches are exchanged.
struct ModelLanes {
  size_t count = 0;
  std::function<void(int64_t* lanes)> fill;
  std::function<void(const int64_t* lanes)> take;
};

// Points of the serial run where every rank must stand at once
// (docs/parallel.md, "The series sampler and the deadlock detector"): a
// series sample, a deadlock confirmation. The engine ends a window at each
// boundary time b, so that when `reached(b, next)` is called every rank has
// run exactly its events at or before b and none after (and every event
// created so far is queued on its owner: `next` is the global earliest queued
// event, INT64_MAX for none). `next_boundary()` must give the same value on
// every rank (INT64_MAX for none); `reached` is collective and its result
// (true: the serial run stops here) must be the same on every rank.
// `after_window(bound)` (optional) is called on every rank after each
// window's exchange, with the window's last time: collective, e.g. to gather
// what the window did and move the next boundary (never before `bound`).
struct Boundaries {
  std::function<int64_t()> next_boundary;
  std::function<bool(int64_t at, int64_t next)> reached;
  std::function<void(int64_t bound)> after_window;
};

// A failure (docs/parallel.md, "A QP failure"): an event that stops the
// serial run at itself (a queue pair out of retries), on one rank. The ranks
// cannot agree on it within the window it happens in (the others have run
// their events of that window past it, and a window's events are not
// undone), so a run with WindowEngine::set_failure finds it instead: the
// rank that fails runs nothing more, the window's reduction carries the
// earliest failure time over the ranks, and when there is one every rank
// leaves Run by throwing this, with the serial failing event's (time, key):
// the smallest over the ranks' first failures (windows before had none
// anywhere, and no event of a window depends on another rank's events of the
// same window). The caller re-runs from the start with set_failure_stop.
struct FailureFound : std::runtime_error {
  FailureFound(int64_t t, uint64_t k);
  int64_t time_ps;
  uint64_t key;
};

class WindowEngine {
 public:
  using Deliver = std::function<void(const RemoteEvent&)>;
  // With a payload: every event carries `payload_bytes` bytes after its
  // record (a packet record), handed to the callback as is.
  using DeliverPayload = std::function<void(const RemoteEvent&, const char* payload)>;
  // `neighbours`: the ranks this one exchanges batches with (those it may
  // send to and receive from; with a symmetric relation, every rank that
  // lists this one must be listed). Throws std::invalid_argument for a
  // lookahead <= 0 or a neighbour that is this rank or out of range.
  WindowEngine(Comm& comm, sim::Simulator& sim, units::Time lookahead, std::vector<int> neighbours,
               Deliver deliver);
  WindowEngine(Comm& comm, sim::Simulator& sim, units::Time lookahead, std::vector<int> neighbours,
               uint32_t payload_bytes, DeliverPayload deliver);

  // Queues an event at `at` for entity `target` on rank `rank` (a neighbour)
  // under the next key of entity `source`. Call it from a running event of
  // `source` (or before Run), never for this rank's own entities. Returns
  // the key it drew (a fabric port keeps it for the frames it may lose when
  // its link goes down: docs/parallel.md, "A cut link going down").
  uint64_t Send(int rank, units::Time at, uint32_t source, uint32_t target, uint32_t kind,
                uint64_t arg, const void* payload = nullptr);

  // Runs windows until no rank has an event at or before `until`; every
  // rank then stands at the same point of the serial run (all events with
  // time <= until have run). A handler calling Simulator::Stop() is not
  // supported (the stop would need the other ranks' agreement on where):
  // std::logic_error, unless it is a failure (set_failure). Collective:
  // every rank calls it.
  void Run(units::Time until);
  // The same with an agreed stop (StopRule). Returns true when the run ended
  // at the rule's stop point (every rank's clock is then its time), false
  // when no rank had an event at or before `until`. A Simulator::Stop()
  // that leaves conditions pending (another cause) is std::logic_error.
  bool Run(units::Time until, const StopRule& rule);

  // Boundaries for the following Run calls (see Boundaries). With them, Run
  // may also end at a boundary whose `reached` returned true: every rank then
  // stands at that time (its clock moved there) and boundary_stop() is true.
  void set_boundaries(Boundaries b) { boundaries_ = std::move(b); }
  void set_model_lanes(ModelLanes l) { model_lanes_ = std::move(l); }
  // When every other rank is a neighbour (two ranks; a leaf-spine fabric cut
  // any way), the window's reduction rides in the batches: each rank sends
  // its lanes to every other and takes the minimum itself, one exchange per
  // window instead of an exchange and a reduction. On by default where it
  // applies; off, the reduction is its own collective (tests run both).
  // Whether every rank has every other as a neighbour is agreed at the
  // start of each Run (one more reduction).
  void set_reduce_in_exchange(bool on) { want_fold_ = on; }
  bool boundary_stop() const { return boundary_stop_; }
  // Failures (FailureFound): `failed` tells, when Simulator::Run returned
  // kStopped on this rank, whether the event that stopped it was a failure.
  // Without a stop point (the first pass) Run throws FailureFound on every
  // rank once a window holds a failure anywhere. With one (the re-run,
  // set_failure_stop), every rank runs exactly the events before (time, key)
  // and the event at it, which must be a failure on one rank (else
  // std::logic_error), and Run returns false with failure_stop() true. The
  // stop point holds for every later Run call (`lossless perf`: the
  // collective that holds it ends there).
  void set_failure(std::function<bool()> failed) { failed_ = std::move(failed); }
  void set_failure_stop(int64_t time_ps, uint64_t key) {
    has_failure_stop_ = true;
    failure_stop_time_ = time_ps;
    failure_stop_key_ = key;
  }
  bool failure_stop() const { return failure_stopped_; }
  // A run that goes on after an agreed stop (`lossless perf`: one collective
  // after another, each ended by the stop rule): the window the stop ended
  // still exchanges its batches, so the events its ranks sent to others
  // before the stop (all after the stop point: at or after the window's
  // end) are queued on their targets before the next Run. Off by default (a
  // run ends at its stop).
  void set_flush_after_stop(bool on) { flush_after_stop_ = on; }

  const WindowStats& stats() const { return stats_; }

  // Batch format: a header {u32 version, u32 count, i64 window_end}, the
  // window's reduction lanes when they ride in the batches (int64 each;
  // every rank knows how many), then `count` records: a RemoteEvent and the
  // engine's payload_bytes.
  static constexpr uint32_t kBatchVersion = 3;

 private:
  // With `lanes`: they ride in every batch (fold_) and come back reduced.
  void ExchangeBatches(int64_t end, bool with_lanes);
  void PackLanes(const StopRule* rule, int64_t ran_before);
  void StartWork();
  int64_t EndWork();
  // A collective inside a window's work: its time is waiting, not work.
  template <class Fn>
  void Collective(Fn fn);
  WindowVerdict TakeLanes();
  bool RunImpl(units::Time until, const StopRule* rule);
  // The window's one reduction: the verdict and the model's lanes.
  WindowVerdict Reduce(const StopRule* rule, int64_t ran_before);
  // Time spent in a collective or an exchange.
  template <class Fn>
  auto Waiting(Fn fn);
  Comm& comm_;
  sim::Simulator& sim_;
  int64_t lookahead_ps_;
  std::vector<int> neighbours_;
  std::vector<int> slot_of_rank_;  // rank -> index into neighbours_, or -1
  uint32_t payload_bytes_ = 0;
  std::vector<std::string> outbox_;  // records (RemoteEvent + payload) per neighbour
  std::vector<uint32_t> out_count_;
  // The batches sent and received, kept from window to window so that their
  // memory is reused (Comm::ExchangeInto).
  std::vector<Outgoing> out_;
  std::vector<std::string> in_;
  DeliverPayload deliver_;
  WindowStats stats_;
  Boundaries boundaries_;
  ModelLanes model_lanes_;
  std::vector<int64_t> lanes_;
  int64_t sent_min_ = INT64_MAX;  // earliest event sent since the last reduction
  int64_t my_bound_ = INT64_MIN;  // this rank's last earliest_clear
  bool complete_ = false;         // every other rank is a neighbour
  bool want_fold_ = true;         // set_reduce_in_exchange
  bool fold_ = false;             // the reduction rides in the batches (agreed in Run)
  int64_t work_from_ns_ = 0;      // this thread's CPU clock when the window's work began
  int64_t excluded_ns_ = 0;       // CPU time in collectives since then (not work)
  bool boundary_stop_ = false;
  bool flush_after_stop_ = false;
  std::function<bool()> failed_;
  int64_t fail_time_ = INT64_MAX;  // this rank's failure in this pass: (time, key)
  uint64_t fail_key_ = 0;
  bool frozen_ = false;  // this rank failed: it runs no further event
  bool has_failure_stop_ = false;
  int64_t failure_stop_time_ = 0;
  uint64_t failure_stop_key_ = 0;
  bool failure_stopped_ = false;
};

}  // namespace lossless::parallel
