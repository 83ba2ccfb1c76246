#include "parallel/engine.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace lossless::parallel {

static_assert(std::endian::native == std::endian::little,
              "the batch format is little-endian and copied as is");

namespace {
struct BatchHeader {
  uint32_t version = WindowEngine::kBatchVersion;
  uint32_t count = 0;
  int64_t window_end = 0;
};
static_assert(sizeof(BatchHeader) == 16);

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU time of the calling thread: the work of a window, apart from the time
// the rank was descheduled (this machine's other jobs) or waited.
int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

WindowEngine::WindowEngine(Comm& comm, sim::Simulator& sim, units::Time lookahead,
                           std::vector<int> neighbours, Deliver deliver)
    : WindowEngine(comm, sim, lookahead, std::move(neighbours), 0,
                   [d = std::move(deliver)](const RemoteEvent& e, const char*) { d(e); }) {}

WindowEngine::WindowEngine(Comm& comm, sim::Simulator& sim, units::Time lookahead,
                           std::vector<int> neighbours, uint32_t payload_bytes,
                           DeliverPayload deliver)
    : comm_(comm),
      sim_(sim),
      lookahead_ps_(lookahead.ps()),
      neighbours_(std::move(neighbours)),
      slot_of_rank_(static_cast<size_t>(comm.Size()), -1),
      payload_bytes_(payload_bytes),
      outbox_(neighbours_.size()),
      out_count_(neighbours_.size(), 0),
      deliver_(std::move(deliver)) {
  if (lookahead_ps_ <= 0)
    throw std::invalid_argument(fmt::format(
        "window engine: expected a lookahead above zero, got {} ps (a cut link without delay)",
        lookahead_ps_));
  for (size_t i = 0; i < neighbours_.size(); ++i) {
    const int r = neighbours_[i];
    if (r < 0 || r >= comm.Size() || r == comm.Rank() || slot_of_rank_[static_cast<size_t>(r)] >= 0)
      throw std::invalid_argument(fmt::format(
          "window engine: neighbour rank {} of rank {} (of {}) is out of range, this rank or "
          "listed twice",
          r, comm.Rank(), comm.Size()));
    slot_of_rank_[static_cast<size_t>(r)] = static_cast<int>(i);
  }
  complete_ = neighbours_.size() + 1 == static_cast<size_t>(comm.Size());
}

uint64_t WindowEngine::Send(int rank, units::Time at, uint32_t source, uint32_t target,
                            uint32_t kind, uint64_t arg, const void* payload) {
  const int slot = rank >= 0 && rank < comm_.Size() ? slot_of_rank_[static_cast<size_t>(rank)] : -1;
  if (slot < 0)
    throw std::logic_error(
        fmt::format("window engine: rank {} sent an event for entity {} to rank "
                    "{}, which is not one of its neighbours",
                    comm_.Rank(), target, rank));
  // The conservative guarantee: nothing crosses ranks closer than the
  // lookahead, so no event lands in the window it was created in.
  if (at.ps() < sim_.Now().ps() + lookahead_ps_)
    throw std::logic_error(fmt::format(
        "window engine: an event for entity {} from entity {} at {} ps crosses ranks less than "
        "the lookahead ({} ps) after its creator's clock ({} ps)",
        target, source, at.ps(), lookahead_ps_, sim_.Now().ps()));
  const RemoteEvent e{at.ps(), sim_.DrawKey(source), kind, target, arg};
  std::string& box = outbox_[static_cast<size_t>(slot)];
  const size_t at_byte = box.size();
  box.resize(at_byte + sizeof e + payload_bytes_);
  std::memcpy(box.data() + at_byte, &e, sizeof e);
  if (payload_bytes_ > 0) {
    if (payload != nullptr)
      std::memcpy(box.data() + at_byte + sizeof e, payload, payload_bytes_);
    else
      std::memset(box.data() + at_byte + sizeof e, 0, payload_bytes_);
  }
  ++out_count_[static_cast<size_t>(slot)];
  ++stats_.sent;
  sent_min_ = std::min(sent_min_, at.ps());
  return e.key;
}

FailureFound::FailureFound(int64_t t, uint64_t k)
    : std::runtime_error(fmt::format(
          "window engine: a failure at {} ps (key {}); the run is to be re-run to it", t, k)),
      time_ps(t),
      key(k) {}

void WindowVerdict::Pack(int64_t next, bool holds, int64_t bound, int64_t* lanes, int64_t failure) {
  lanes[0] = next;
  lanes[1] = holds ? 0 : 1;  // min: 1 only when no rank holds
  // The minimum of -bound is -(the largest bound). Bounds are times >= 0, so
  // their negations are <= 0; a holder without a bound (INT64_MIN, which has
  // no negation) packs as INT64_MAX - 1, which any holder's bound beats (the
  // stop is at the latest clearing, so one bound suffices), and a rank that
  // holds nothing as INT64_MAX, which anything beats.
  lanes[2] = !holds ? INT64_MAX : bound == INT64_MIN ? INT64_MAX - 1 : -bound;
  lanes[3] = failure;  // min: the earliest
}

WindowVerdict WindowVerdict::Unpack(const int64_t* reduced) {
  WindowVerdict v;
  v.next = reduced[0];
  v.all_clear = reduced[1] == 1;
  v.stop_not_before = reduced[2] == INT64_MAX       ? INT64_MAX
                      : reduced[2] == INT64_MAX - 1 ? INT64_MIN
                                                    : -reduced[2];
  v.failure = reduced[3];
  return v;
}

template <class Fn>
auto WindowEngine::Waiting(Fn fn) {
  const auto t0 = std::chrono::steady_clock::now();
  if constexpr (std::is_void_v<decltype(fn())>) {
    fn();
    stats_.wait_s += Seconds(std::chrono::steady_clock::now() - t0);
  } else {
    auto r = fn();
    stats_.wait_s += Seconds(std::chrono::steady_clock::now() - t0);
    return r;
  }
}

// A window's work is this thread's CPU time from the end of the previous
// exchange (delivering its batch included) to the packing of the window's
// lanes, less what collectives inside it took (Collective). Two clock reads
// per window: reading the thread's CPU clock is a system call (1.6-2.3 us
// each on this machine, measured), and four per window, around each part,
// cost about 30 ms per rank over the 3,507 windows of the 1,024-host
// fat-tree run, a tenth of its critical path (docs/benchmarks.md).
void WindowEngine::StartWork() {
  work_from_ns_ = ThreadCpuNs();
}

int64_t WindowEngine::EndWork() {
  const int64_t w = std::max<int64_t>(0, ThreadCpuNs() - work_from_ns_ - excluded_ns_);
  excluded_ns_ = 0;
  return w;
}

template <class Fn>
void WindowEngine::Collective(Fn fn) {
  const int64_t c0 = ThreadCpuNs();
  Waiting(fn);
  excluded_ns_ += ThreadCpuNs() - c0;
}

void WindowEngine::PackLanes(const StopRule* rule, int64_t ran_before) {
  // The verdict, the window's work (CPU ns, for the largest over the
  // ranks: WindowStats::critical_cpu_s), the model's lanes.
  const size_t n = WindowVerdict::kLanes + 1 + model_lanes_.count;
  lanes_.assign(n, INT64_MAX);
  const bool holds = rule != nullptr && rule->pending() > 0;
  const int64_t bound = !holds                 ? INT64_MAX
                        : rule->earliest_clear ? rule->earliest_clear(ran_before)
                                               : INT64_MIN;
  my_bound_ = holds ? bound : INT64_MIN;
  WindowVerdict::Pack(std::min(sim_.NextTime().ps(), sent_min_), holds, bound, lanes_.data(),
                      fail_time_);
  if (model_lanes_.count > 0) model_lanes_.fill(lanes_.data() + WindowVerdict::kLanes + 1);
  const int64_t work = EndWork();
  lanes_[WindowVerdict::kLanes] = -work;
  stats_.cpu_s += 1e-9 * static_cast<double>(work);
  sent_min_ = INT64_MAX;
}

WindowVerdict WindowEngine::TakeLanes() {
  stats_.critical_cpu_s += -1e-9 * static_cast<double>(lanes_[WindowVerdict::kLanes]);
  if (model_lanes_.count > 0) model_lanes_.take(lanes_.data() + WindowVerdict::kLanes + 1);
  return WindowVerdict::Unpack(lanes_.data());
}

WindowVerdict WindowEngine::Reduce(const StopRule* rule, int64_t ran_before) {
  PackLanes(rule, ran_before);
  Waiting([&] { comm_.AllreduceMinLanes(lanes_.data(), lanes_.size()); });
  ++stats_.reductions;
  return TakeLanes();
}

void WindowEngine::ExchangeBatches(int64_t end, bool with_lanes) {
  using Clock = std::chrono::steady_clock;
  std::vector<Outgoing>& out = out_;
  out.resize(neighbours_.size());
  const size_t lane_bytes = with_lanes ? lanes_.size() * sizeof(int64_t) : 0;
  for (size_t i = 0; i < neighbours_.size(); ++i) {
    BatchHeader h;
    h.count = out_count_[i];
    h.window_end = end;
    out[i].peer = neighbours_[i];
    out[i].bytes.resize(sizeof h + lane_bytes + outbox_[i].size());
    std::memcpy(out[i].bytes.data(), &h, sizeof h);
    if (lane_bytes > 0) std::memcpy(out[i].bytes.data() + sizeof h, lanes_.data(), lane_bytes);
    if (!outbox_[i].empty())
      std::memcpy(out[i].bytes.data() + sizeof h + lane_bytes, outbox_[i].data(),
                  outbox_[i].size());
    outbox_[i].clear();
    out_count_[i] = 0;
  }
  for (const Outgoing& o : out) stats_.sent_bytes += o.bytes.size();
  const auto t0 = Clock::now();
  comm_.ExchangeInto(out, neighbours_, in_);
  const std::vector<std::string>& got = in_;
  stats_.wait_s += Seconds(Clock::now() - t0);
  ++stats_.exchanges;
  const size_t record = sizeof(RemoteEvent) + payload_bytes_;
  StartWork();  // the next window's work starts with delivering this batch
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string& b = got[i];
    BatchHeader h;
    if (b.size() < sizeof h) throw std::runtime_error("window engine: a batch without header");
    std::memcpy(&h, b.data(), sizeof h);
    if (h.version != kBatchVersion || h.window_end != end ||
        b.size() != sizeof h + lane_bytes + size_t{h.count} * record)
      throw std::runtime_error(fmt::format(
          "window engine: rank {} got a malformed batch from rank {} (version {}, window end "
          "{} ps, expected {}, {} bytes for {} events)",
          comm_.Rank(), neighbours_[i], h.version, h.window_end, end, b.size(), h.count));
    for (size_t l = 0; l < lane_bytes / sizeof(int64_t); ++l) {
      int64_t x = 0;
      std::memcpy(&x, b.data() + sizeof h + l * sizeof x, sizeof x);
      lanes_[l] = std::min(lanes_[l], x);
    }
    for (uint32_t k = 0; k < h.count; ++k) {
      RemoteEvent e;
      const char* rec = b.data() + sizeof h + lane_bytes + size_t{k} * record;
      std::memcpy(&e, rec, sizeof e);
      deliver_(e, rec + sizeof e);
      ++stats_.received;
    }
  }
}

void WindowEngine::Run(units::Time until) {
  RunImpl(until, nullptr);
}

bool WindowEngine::Run(units::Time until, const StopRule& rule) {
  return RunImpl(until, &rule);
}

bool WindowEngine::RunImpl(units::Time until, const StopRule* rule) {
  // One window (docs/parallel.md#one-reduction-per-window): every rank runs
  // its events below the window's end; one integer reduction gives the next
  // window's start (the earliest event queued or sent anywhere: a sent event
  // is counted by its sender, so the reduction needs no exchange before it),
  // whether every stop condition has cleared and when the stop can come
  // first, and the model's lanes; then the batches are exchanged. A window
  // that may hold the agreed stop (StopRule) waits for one more, smaller
  // reduction, the stop verdict, in its middle.
  using Clock = std::chrono::steady_clock;
  const auto t_run = Clock::now();
  failure_stopped_ = false;
  // The reduction rides in the batches only if it does on every rank.
  fold_ = want_fold_ && Waiting([&] { return comm_.AllreduceMin(complete_ ? 1 : 0); }) == 1;
  ++stats_.reductions;
  StartWork();
  WindowVerdict v = Reduce(rule, sim_.Now().ps());
  // This rank's last event that cleared its stop conditions: (time, key).
  int64_t done_time = -1;
  uint64_t done_key = 0;
  bool stopped = false;
  auto not_stopped = [&](sim::StopReason why) {
    if (why == sim::StopReason::kStopped)
      throw std::logic_error(
          "window engine: an event called Simulator::Stop() for a reason a distributed run "
          "cannot agree on (only the stop rule's own stop is supported)");
  };
  // A bound this rank gave that its own clearing contradicts: an error in
  // the model's earliest_clear, never a silent difference.
  auto check_bound = [&](int64_t at) {
    if (at < my_bound_)
      throw std::logic_error(
          fmt::format("window engine: rank {} cleared its stop conditions at {} ps, before its "
                      "earliest_clear bound ({} ps)",
                      comm_.Rank(), at, my_bound_));
  };
  // A stop that is a failure (set_failure): this rank notes where and runs
  // nothing more. In the re-run it must be the stop point itself.
  auto failure = [&](sim::StopReason why) {
    if (why != sim::StopReason::kStopped || !failed_ || !failed_()) return false;
    frozen_ = true;
    if (!has_failure_stop_) {
      fail_time_ = sim_.Now().ps();
      fail_key_ = sim_.RunningKey();
    } else if (sim_.Now().ps() != failure_stop_time_ || sim_.RunningKey() != failure_stop_key_) {
      throw std::logic_error(fmt::format(
          "window engine: rank {} failed at {} ps (key {}) in the re-run to the failure at {} "
          "ps (key {})",
          comm_.Rank(), sim_.Now().ps(), sim_.RunningKey(), failure_stop_time_, failure_stop_key_));
    }
    return true;
  };
  // Runs this rank's events up to `to` (at most `max_events`), on past its
  // own clearing of the stop conditions (noted); a failure freezes the rank.
  auto run_on = [&](units::Time to, uint64_t max_events) {
    while (!frozen_) {
      const sim::StopReason why = sim_.Run(to, max_events);
      if (failure(why)) return;
      if (why == sim::StopReason::kStopped && rule != nullptr && rule->pending() == 0) {
        done_time = sim_.Now().ps();
        done_key = sim_.RunningKey();
        check_bound(done_time);
        if (max_events == 1) return;  // that event was the one asked for
        continue;
      }
      not_stopped(why);
      return;
    }
  };
  // Every rank leaves Run with the serial failing event: the smallest key
  // among the ranks that failed at the earliest time `t`.
  auto leave_failed = [&](int64_t t) {
    int64_t k_lane = fail_time_ == t ? static_cast<int64_t>(fail_key_) : INT64_MAX;
    Collective([&] { comm_.AllreduceMinLanes(&k_lane, 1); });
    ++stats_.reductions;
    stats_.run_s += Seconds(Clock::now() - t_run);
    throw FailureFound(t, static_cast<uint64_t>(k_lane));
  };
  const bool has_boundaries = static_cast<bool>(boundaries_.next_boundary);
  while (true) {
    const int64_t next = v.next;
    int64_t b = INT64_MAX;
    if (has_boundaries) {
      // Boundaries before the next event anywhere: every rank stands there now.
      while ((b = boundaries_.next_boundary()) < next && b <= until.ps()) {
        if (b > sim_.Now().ps()) sim_.AdvanceTo(units::Time::Ps(b));
        bool stop_here = false;
        Collective([&] { stop_here = boundaries_.reached(b, next); });
        if (stop_here) {
          boundary_stop_ = true;
          stats_.run_s += Seconds(Clock::now() - t_run);
          return false;
        }
      }
    }
    if (next > until.ps()) break;
    int64_t end = next > INT64_MAX - lookahead_ps_ ? INT64_MAX : next + lookahead_ps_;  // exclusive
    if (b < end) end = b + 1;  // the window ends at the boundary (b >= next here)
    const units::Time bound = units::Time::Ps(std::min(end - 1, until.ps()));
    ++stats_.windows;
    if (has_failure_stop_ && failure_stop_time_ <= bound.ps()) {
      // The re-run's window that holds the failure: every rank runs exactly
      // the events before it, and the failing rank the failure itself.
      const units::Time ts = units::Time::Ps(failure_stop_time_);
      if (failure_stop_time_ > 0 && sim_.NextTime() < ts)
        run_on(units::Time::Ps(failure_stop_time_ - 1), UINT64_MAX);
      while (!frozen_ && sim_.NextTime() == ts && sim_.NextKey() <= failure_stop_key_)
        run_on(ts, 1);
      sim_.AdvanceTo(ts);
      int64_t none = frozen_ ? 0 : 1;
      Collective([&] { comm_.AllreduceMinLanes(&none, 1); });
      ++stats_.reductions;
      if (none != 0)
        throw std::logic_error(fmt::format(
            "window engine: the re-run reached the failure at {} ps (key {}) without a failure "
            "on any rank",
            failure_stop_time_, failure_stop_key_));
      failure_stopped_ = true;
      break;
    }
    // The stop can be in this window only if every rank holding conditions
    // may clear before its end.
    const bool careful = rule != nullptr && !v.all_clear && v.stop_not_before <= bound.ps();
    if (careful) {
      ++stats_.careful;
      bool ran = false, paused = false;
      if (!frozen_ && rule->pending() > 0) {
        // Phase 1: a rank holding conditions runs until its last one clears
        // (where the serial run may stop) or the window ends. Events of one
        // window never depend on another rank's events of the same window, so
        // the other ranks can wait for the verdict.
        ran = true;
        const sim::StopReason why = sim_.Run(bound);
        if (!failure(why) && why == sim::StopReason::kStopped) {
          if (rule->pending() != 0) not_stopped(why);
          paused = true;
          done_time = sim_.Now().ps();
          done_key = sim_.RunningKey();
          check_bound(done_time);
        }
      }
      // The verdict: all clear, and the latest clearing time.
      int64_t verdict[2] = {rule->pending() == 0 ? 1 : 0, -done_time};
      Collective([&] { comm_.AllreduceMinLanes(verdict, 2); });
      ++stats_.reductions;
      const int64_t t_star = verdict[0] == 1 ? -verdict[1] : -1;
      if (t_star >= 0) {
        int64_t k_lane = done_time == t_star ? -static_cast<int64_t>(done_key) : INT64_MAX;
        Collective([&] { comm_.AllreduceMinLanes(&k_lane, 1); });
        ++stats_.reductions;
        const int64_t k_star = -k_lane;
        // Every rank runs to exactly the serial stop point (t*, k*).
        const units::Time ts = units::Time::Ps(t_star);
        if (t_star > 0 && sim_.NextTime().ps() < t_star)
          run_on(units::Time::Ps(t_star - 1), UINT64_MAX);
        while (!frozen_ && sim_.NextTime() == ts && sim_.NextKey() <= static_cast<uint64_t>(k_star))
          run_on(ts, 1);
        // A failure before the stop point wins: the serial run ended there.
        if (failed_ && !has_failure_stop_) {
          int64_t f = fail_time_;
          Collective([&] { comm_.AllreduceMinLanes(&f, 1); });
          ++stats_.reductions;
          if (f != INT64_MAX) leave_failed(f);
        }
        sim_.AdvanceTo(ts);
        stopped = true;
        // Events sent in this window are at or after its end, past the stop
        // point: delivered now, they wait on their targets for the next Run.
        if (flush_after_stop_) ExchangeBatches(end, false);
        break;
      }
      if (!ran || paused) run_on(bound, UINT64_MAX);
    } else {
      // Not the stop's window: a rank whose last condition clears here
      // notes where and runs on (the stop is a later rank's clearing).
      run_on(bound, UINT64_MAX);
    }
    const bool was_clear = v.all_clear;
    if (fold_) {
      PackLanes(rule, end);
      ExchangeBatches(end, true);
      v = TakeLanes();
    } else {
      v = Reduce(rule, end);
    }
    if (v.failure != INT64_MAX) leave_failed(v.failure);
    if (rule != nullptr && !careful && v.all_clear && !was_clear)
      throw std::logic_error(fmt::format(
          "window engine: the last stop condition cleared in a window ending at {} ps that the "
          "ranks' earliest_clear bounds said could not hold the stop (the latest bound was at or "
          "after it)",
          bound.ps()));
    if (!fold_) ExchangeBatches(end, false);
    if (boundaries_.after_window) Collective([&] { boundaries_.after_window(bound.ps()); });
  }
  stats_.run_s += Seconds(Clock::now() - t_run);
  return stopped;
}

}  // namespace lossless::parallel
