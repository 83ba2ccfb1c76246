#include "sim/simulator.hpp"

#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace lossless::sim {
namespace {

struct Recorder : EventHandler {
  Simulator* sim = nullptr;
  std::vector<std::string> log;
  void OnEvent(uint32_t kind, uint64_t arg) override {
    log.push_back(std::to_string(sim->Now().ps()) + ":" + std::to_string(kind) + ":" +
                  std::to_string(arg));
  }
};

TEST(Simulator, RunsEventsInTimeOrder) {
  Simulator sim(1);
  Recorder r;
  r.sim = &sim;
  uint32_t e = sim.AddEntity();
  sim.Schedule(Time::Ps(30), e, &r, 1, 0);
  sim.Schedule(Time::Ps(10), e, &r, 2, 0);
  sim.Schedule(Time::Ps(20), e, &r, 3, 0);
  EXPECT_EQ(sim.Run(), StopReason::kQueueEmpty);
  EXPECT_EQ(r.log, (std::vector<std::string>{"10:2:0", "20:3:0", "30:1:0"}));
  EXPECT_EQ(sim.events_executed(), 3u);
  EXPECT_EQ(sim.Now().ps(), 30);
}

TEST(Simulator, SimultaneousEventsOrderedBySourceThenSequenceNotInsertion) {
  // Two runs insert the same events in different global orders; the result is the same.
  auto run = [](bool reversed) {
    Simulator sim(1);
    Recorder r;
    r.sim = &sim;
    uint32_t a = sim.AddEntity();
    uint32_t b = sim.AddEntity();
    if (reversed) {
      sim.Schedule(Time::Ps(5), b, &r, 20, 0);
      sim.Schedule(Time::Ps(5), b, &r, 21, 0);
      sim.Schedule(Time::Ps(5), a, &r, 10, 0);
      sim.Schedule(Time::Ps(5), a, &r, 11, 0);
    } else {
      sim.Schedule(Time::Ps(5), a, &r, 10, 0);
      sim.Schedule(Time::Ps(5), b, &r, 20, 0);
      sim.Schedule(Time::Ps(5), a, &r, 11, 0);
      sim.Schedule(Time::Ps(5), b, &r, 21, 0);
    }
    sim.Run();
    return r.log;
  };
  std::vector<std::string> expect{"5:10:0", "5:11:0", "5:20:0", "5:21:0"};
  EXPECT_EQ(run(false), expect);
  EXPECT_EQ(run(true), expect);
}

TEST(Simulator, CancelMakesATombstone) {
  Simulator sim(1);
  Recorder r;
  r.sim = &sim;
  uint32_t e = sim.AddEntity();
  EventId x = sim.ScheduleCancellable(Time::Ps(10), e, &r, 1, 0);
  EventId y = sim.ScheduleCancellable(Time::Ps(20), e, &r, 2, 0);
  EXPECT_TRUE(sim.Cancel(x));
  EXPECT_FALSE(sim.Cancel(x));  // twice
  sim.Run();
  EXPECT_EQ(r.log, (std::vector<std::string>{"20:2:0"}));
  EXPECT_FALSE(sim.Cancel(y));  // already ran
  EXPECT_EQ(sim.events_cancelled(), 1u);
  EXPECT_EQ(sim.events_executed(), 1u);
  // Slots are reused without reviving old handles.
  EventId z = sim.ScheduleCancellable(Time::Ps(30), e, &r, 3, 0);
  EXPECT_FALSE(sim.Cancel(x));
  EXPECT_TRUE(sim.Cancel(z));
}

TEST(Simulator, RunUntilStopsTheClockAtTheLimit) {
  Simulator sim(1);
  Recorder r;
  r.sim = &sim;
  uint32_t e = sim.AddEntity();
  sim.Schedule(Time::Ns(1), e, &r, 1, 0);
  sim.Schedule(Time::Ns(5), e, &r, 2, 0);
  EXPECT_EQ(sim.Run(Time::Ns(3)), StopReason::kTimeLimit);
  EXPECT_EQ(sim.Now(), Time::Ns(3));
  EXPECT_EQ(r.log.size(), 1u);
  EXPECT_EQ(sim.Run(), StopReason::kQueueEmpty);
  EXPECT_EQ(r.log.size(), 2u);
}

struct Stopper : EventHandler {
  Simulator* sim;
  int seen = 0;
  void OnEvent(uint32_t, uint64_t) override {
    if (++seen == 2) sim->Stop();
  }
};

TEST(Simulator, StopAndEventLimit) {
  Simulator sim(1);
  Stopper s;
  s.sim = &sim;
  uint32_t e = sim.AddEntity();
  for (int i = 0; i < 5; ++i) sim.Schedule(Time::Ps(i), e, &s, 0, 0);
  EXPECT_EQ(sim.Run(), StopReason::kStopped);
  EXPECT_EQ(s.seen, 2);
  EXPECT_EQ(sim.Run(Time::Max(), 1), StopReason::kEventLimit);
  EXPECT_EQ(s.seen, 3);
}

// A self-rescheduling chain with random delays: deterministic per seed.
struct Chain : EventHandler {
  Simulator* sim;
  uint32_t id;
  Rng rng;
  uint64_t sum = 0;
  void OnEvent(uint32_t, uint64_t n) override {
    sum = sum * 31 + static_cast<uint64_t>(sim->Now().ps());
    if (n > 0)
      sim->Schedule(sim->Now() + Time::Ps(static_cast<int64_t>(rng.Below(1000))), id, this, 0,
                    n - 1);
  }
};

uint64_t RunChains(uint64_t seed) {
  Simulator sim(seed);
  std::vector<Chain> chains(4);
  for (auto& c : chains) {
    c.sim = &sim;
    c.id = sim.AddEntity();
    c.rng = sim.MakeRng(c.id, 7);
    sim.Schedule(Time::Zero(), c.id, &c, 0, 1000);
  }
  sim.Run();
  uint64_t h = 0;
  for (auto& c : chains) h = h * 1000003 + c.sum;
  return h;
}

TEST(Simulator, DeterministicAndTwoSimulatorsInOneProcess) {
  EXPECT_EQ(RunChains(42), RunChains(42));
  EXPECT_NE(RunChains(42), RunChains(43));
  // Interleave two live simulators: neither disturbs the other.
  Simulator a(5), b(5);
  Recorder ra, rb;
  ra.sim = &a;
  rb.sim = &b;
  uint32_t ea = a.AddEntity(), eb = b.AddEntity();
  a.Schedule(Time::Ps(3), ea, &ra, 1, 0);
  b.Schedule(Time::Ps(7), eb, &rb, 2, 0);
  a.Run();
  b.Run();
  EXPECT_EQ(ra.log, (std::vector<std::string>{"3:1:0"}));
  EXPECT_EQ(rb.log, (std::vector<std::string>{"7:2:0"}));
}

// Delay lanes must not change the order: a storm of events, most a few fixed
// delays ahead (so they get lanes), some with random delays (a spill lane or
// the near heap below a microsecond, the far heap beyond), many
// at equal times from several sources scheduled out of key order, some
// cancelled. Every event carries its own (source, per-source index), which is
// exactly the engine's order key; the test keeps the pending set itself and
// checks that each event run is the smallest (time, source, index) pending.
struct Storm : EventHandler {
  using Key = std::tuple<int64_t, uint32_t, uint64_t>;
  Simulator* sim = nullptr;
  std::vector<uint32_t> sources;
  std::vector<uint64_t> next_index;  // per source, mirrors the engine's sequence
  Rng rng{1, 2, 3};
  std::set<Key> pending;
  std::vector<std::pair<EventId, Key>> cancellable;
  uint64_t ran = 0, out_of_order = 0, cancelled = 0, budget = 200000;
  uint64_t from[3] = {0, 0, 0};  // events run, by Simulator::Queue
  void Add(Time at, bool cancellable_event) {
    const uint32_t s = static_cast<uint32_t>(rng.Below(sources.size()));
    const Key key{at.ps(), s, next_index[s]++};
    const uint64_t arg = (uint64_t{s} << 40) | std::get<2>(key);
    pending.insert(key);
    if (cancellable_event)
      cancellable.emplace_back(sim->ScheduleCancellable(at, sources[s], this, 0, arg), key);
    else
      sim->Schedule(at, sources[s], this, 0, arg);
  }
  void OnEvent(uint32_t, uint64_t arg) override {
    const Key key{sim->Now().ps(), static_cast<uint32_t>(arg >> 40), arg & ((1ULL << 40) - 1)};
    if (pending.empty() || *pending.begin() != key) ++out_of_order;
    pending.erase(key);
    ++ran;
    ++from[static_cast<int>(sim->RunningFrom())];
    const int children = static_cast<int>(rng.Below(4));  // mean 1.5: grows to the budget
    for (int i = 0; i < children && budget > 0; ++i, --budget) {
      const uint64_t pick = rng.Below(10);
      int64_t delay = pick < 4   ? 4002
                      : pick < 7 ? 1000000
                      : pick < 8 ? 0
                      : pick < 9 ? static_cast<int64_t>(rng.Below(50000))
                                 : 1000000 + static_cast<int64_t>(rng.Below(2000000));  // far heap
      Add(sim->Now() + Time::Ps(delay), rng.Below(20) == 0);
    }
    if (!cancellable.empty() && rng.Below(8) == 0) {
      if (sim->Cancel(cancellable.back().first)) {
        ++cancelled;
        pending.erase(cancellable.back().second);
      }
      cancellable.pop_back();
    }
  }
};

TEST(Simulator, DelayLanesKeepTheExactTimeAndKeyOrder) {
  Simulator sim(1);
  Storm st;
  st.sim = &sim;
  for (int i = 0; i < 5; ++i) st.sources.push_back(sim.AddEntity());
  st.next_index.assign(st.sources.size(), 0);
  // Equal start times from every source, in scrambled order.
  for (int i = 0; i < 400; ++i) st.Add(Time::Ps(i % 7), false);
  sim.Run();
  EXPECT_EQ(st.out_of_order, 0u);
  EXPECT_TRUE(st.pending.empty());
  EXPECT_GT(st.ran, 150000u);
  EXPECT_GT(st.cancelled, 100u);
  EXPECT_EQ(sim.pending(), 0u);
  // Every way an event can wait was taken, many times.
  EXPECT_GT(st.from[static_cast<int>(Simulator::Queue::kHeap)], 1000u);
  EXPECT_GT(st.from[static_cast<int>(Simulator::Queue::kSpillLane)], 1000u);
  EXPECT_GT(st.from[static_cast<int>(Simulator::Queue::kDelayLane)], 1000u);
}

// LaneAhead names the events that will run next from the running event's
// lane: two handlers share one delay (so one lane), alternating; each event
// asks for the 1st to 4th event behind it. Once every pending event is in
// the lane, the answer must be the event that actually runs k places later
// when it is for the same handler, and "none" when it is for the other one.
struct LaneWatcher : EventHandler {
  struct Ask {
    size_t at;  // position in the run order
    uint32_t ahead;
    bool ok;
    uint64_t arg;
  };
  Simulator* sim = nullptr;
  uint32_t source = 0;
  LaneWatcher* other = nullptr;
  std::vector<std::pair<const LaneWatcher*, uint64_t>>* order = nullptr;
  std::vector<Ask>* asks = nullptr;
  uint64_t first_round_spilled = 0;  // first-round events that ran from a spill lane
  void OnEvent(uint32_t kind, uint64_t arg) override {
    const size_t at = order->size();
    order->emplace_back(this, arg);
    if (sim->Now().ps() < 100 && sim->RunningFrom() == Simulator::Queue::kSpillLane)
      ++first_round_spilled;
    for (uint32_t k = 1; k <= 4; ++k) {
      uint32_t kind_k = 0;
      uint64_t arg_k = 0;
      const bool ok = sim->LaneAhead(k, kind_k, arg_k);
      if (ok) {
        EXPECT_EQ(kind_k, kind);
      }
      asks->push_back({at, k, ok, arg_k});
    }
    // The child goes to the other handler, so the lane alternates handlers.
    if (sim->Now().ps() < 40'000)
      sim->Schedule(sim->Now() + Time::Ps(1000), source, other, kind, arg + 1000);
  }
};

TEST(Simulator, LaneAheadNamesTheEventsThatRunNextFromTheSameLane) {
  Simulator sim(1);
  std::vector<std::pair<const LaneWatcher*, uint64_t>> order;
  std::vector<LaneWatcher::Ask> asks;
  LaneWatcher a, b;
  a.sim = b.sim = &sim;
  a.source = b.source = sim.AddEntity();
  a.other = &b;
  b.other = &a;
  a.order = b.order = &order;
  a.asks = b.asks = &asks;
  // 100 events at distinct start times (distinct delays, none with a delay
  // lane: a spill lane, in time order), alternating handlers.
  for (uint64_t i = 0; i < 100; ++i)
    sim.Schedule(Time::Ps(static_cast<int64_t>(i)), a.source, i % 2 ? &b : &a, 7, i);
  sim.Run();
  EXPECT_EQ(a.first_round_spilled + b.first_round_spilled, 100u);
  uint64_t checked_same = 0, checked_other = 0, answers = 0;
  for (const LaneWatcher::Ask& q : asks) {
    // Any answer, from whatever lane, names the event that runs there.
    if (q.ok) {
      ASSERT_LT(q.at + q.ahead, order.size());
      EXPECT_EQ(order[q.at + q.ahead].first, order[q.at].first);
      EXPECT_EQ(q.arg, order[q.at + q.ahead].second);
      ++answers;
    }
    if (order[q.at].second < 3000)
      continue;  // from the third round on, all pending events are in the lane
    const size_t later = q.at + q.ahead;
    if (later >= order.size()) {
      EXPECT_FALSE(q.ok);
      continue;
    }
    if (order[later].first == order[q.at].first) {
      ASSERT_TRUE(q.ok);
      EXPECT_EQ(q.arg, order[later].second);
      ++checked_same;
    } else {
      EXPECT_FALSE(q.ok);
      ++checked_other;
    }
  }
  EXPECT_GT(checked_same, 3000u);
  EXPECT_GT(checked_other, 3000u);
  EXPECT_GT(answers, checked_same);  // the first rounds' spill lane answered too
}

// Lanes are recycled. A start-up burst (100 delays, each seen 100 times:
// more delays than there are lanes) takes every lane; then 8 chains of
// events 50 ns apart run to 3 ms. Once the burst has drained, its lanes must
// go to the steady delay: from 2 ms on, nearly every chain event must come
// from a delay lane (without recycling they would wait in a spill lane), and
// LaneAhead must answer for it (8 chains share the lane, so the next entry
// is the same handler's). The
// chains also check that time never goes back and that each burst event
// runs at its own time.
struct Chains : EventHandler {
  Simulator* sim = nullptr;
  uint32_t source = 0;
  int64_t last = 0;
  uint64_t late_events = 0, late_from_lane = 0, burst_ran = 0, errors = 0;
  void OnEvent(uint32_t kind, uint64_t arg) override {
    const int64_t now = sim->Now().ps();
    if (now < last) ++errors;
    last = now;
    if (kind == 1) {  // burst event: arg is its time
      if (static_cast<int64_t>(arg) != now) ++errors;
      ++burst_ran;
      return;
    }
    if (now >= 2'000'000'000) {
      ++late_events;
      uint32_t k = 0;
      uint64_t a = 0;
      if (sim->RunningFrom() == Simulator::Queue::kDelayLane && sim->LaneAhead(1, k, a))
        ++late_from_lane;
    }
    if (now < 3'000'000'000) sim->Schedule(Time::Ps(now + 50'000), source, this, 0, arg);
  }
};

TEST(Simulator, LanesGoToTheDelaysOfTheSteadyState) {
  Simulator sim(1);
  Chains c;
  c.sim = &sim;
  c.source = sim.AddEntity();
  for (int rep = 0; rep < 100; ++rep)
    for (int64_t d = 0; d < 100; ++d) {
      const int64_t at = 1'000'000'000 + d * 1'000'000;
      sim.Schedule(Time::Ps(at), c.source, &c, 1, static_cast<uint64_t>(at));
    }
  for (uint64_t chain = 0; chain < 8; ++chain)
    sim.Schedule(Time::Ps(static_cast<int64_t>(chain) * 1000), c.source, &c, 0, chain);
  sim.Run();
  EXPECT_EQ(c.errors, 0u);
  EXPECT_EQ(c.burst_ran, 10000u);
  EXPECT_EQ(c.late_events, 8u * 20001u);
  EXPECT_GT(c.late_from_lane, c.late_events * 9 / 10);
}

TEST(Simulator, KeyedEventsRunWhereTheirDrawnKeySaysAndDigestsCountThem) {
  // What the distributed engine does: an event whose key was drawn with
  // DrawKey (on another process) and queued with ScheduleKeyed runs exactly
  // where Schedule would have put it, among same-time events of other
  // sources, and uses up the sequence number it was drawn with.
  auto run = [](bool keyed) {
    Simulator sim(1);
    sim.EnableDigests();
    Recorder r;
    r.sim = &sim;
    const uint32_t a = sim.AddEntity(), b = sim.AddEntity();
    sim.Schedule(Time::Ps(50), b, &r, 1, 10);
    if (keyed) {
      const uint64_t k1 = sim.DrawKey(a), k2 = sim.DrawKey(a);
      sim.ScheduleKeyed(Time::Ps(50), k2, &r, 3, 30);  // queued in the other order
      sim.ScheduleKeyed(Time::Ps(50), k1, &r, 2, 20);
    } else {
      sim.Schedule(Time::Ps(50), a, &r, 2, 20);
      sim.Schedule(Time::Ps(50), a, &r, 3, 30);
    }
    sim.Schedule(Time::Ps(50), a, &r, 4, 40);  // a's third sequence number either way
    EXPECT_EQ(sim.NextTime(), Time::Ps(50));
    sim.Run();
    EXPECT_EQ(sim.NextTime(), Time::Max());
    return std::make_pair(r.log, sim.digests());
  };
  const auto plain = run(false), keyed = run(true);
  EXPECT_EQ(plain.first, (std::vector<std::string>{"50:2:20", "50:3:30", "50:4:40", "50:1:10"}));
  EXPECT_EQ(keyed.first, plain.first);
  ASSERT_EQ(plain.second.size(), 2u);
  EXPECT_EQ(plain.second[0].events, 3u);
  EXPECT_EQ(plain.second[1].events, 1u);
  EXPECT_EQ(keyed.second, plain.second);
  EXPECT_NE(plain.second[0].sum, plain.second[1].sum);
}

TEST(Simulator, RecentKeyIsTheDrawnKeyFromItsLow32Bits) {
  // A frame on a wire keeps only the low 32 bits of its arrival's key
  // (fabric::Network::TryTransmit); the whole key comes back however many
  // keys its source and others drew meanwhile (fewer than 2^32).
  Simulator sim(1);
  const uint32_t a = sim.AddEntity(), b = sim.AddEntity();
  const uint64_t first = sim.DrawKey(b);
  std::vector<uint64_t> kept;
  for (int i = 0; i < 5000; ++i) {
    kept.push_back(sim.DrawKey(i % 3 == 0 ? a : b));
    sim.DrawKey(b);
  }
  EXPECT_EQ(first >> 40, b);
  EXPECT_EQ(sim.RecentKey(b, static_cast<uint32_t>(first)), first);
  for (const uint64_t k : kept)
    ASSERT_EQ(sim.RecentKey(static_cast<uint32_t>(k >> 40), static_cast<uint32_t>(k)), k);
  EXPECT_NE(sim.RecentKey(a, static_cast<uint32_t>(first)), first);  // another source's
}

TEST(Simulator, DigestsDependOnTimeAndKind) {
  auto digest = [](int64_t t, uint32_t kind) {
    Simulator sim(1);
    sim.EnableDigests();
    Recorder r;
    r.sim = &sim;
    sim.Schedule(Time::Ps(t), sim.AddEntity(), &r, kind, 0);
    sim.Run();
    return sim.digests().at(0);
  };
  EXPECT_EQ(digest(5, 1), digest(5, 1));
  EXPECT_NE(digest(5, 1).sum, digest(6, 1).sum);
  EXPECT_NE(digest(5, 1).sum, digest(5, 2).sum);
}

// pending() counts what is queued wherever it waits (a lane, the near heap,
// the far heap; a cancelled event until it is popped): 70 events at lane
// delays, 20 near, 10 far.
TEST(Simulator, PendingCountsLanesNearAndFarEvents) {
  Simulator sim(1);
  Recorder r;
  r.sim = &sim;
  const uint32_t e = sim.AddEntity();
  size_t queued = 0;
  for (int i = 0; i < 70; ++i, ++queued) sim.Schedule(Time::Ps(4002), e, &r, 0, 0);
  for (int i = 0; i < 20; ++i, ++queued) sim.Schedule(Time::Ps(100 + i), e, &r, 0, 0);
  EventId far;
  for (int i = 0; i < 10; ++i, ++queued)
    far = sim.ScheduleCancellable(Time::Ps(2'000'000 + i), e, &r, 0, 0);
  EXPECT_EQ(sim.pending(), queued);
  EXPECT_TRUE(sim.Cancel(far));
  EXPECT_EQ(sim.pending(), queued);  // a tombstone stays queued until popped
  sim.Run(Time::Ps(150));
  EXPECT_EQ(sim.pending(), 80u);
  sim.Run(Time::Ps(10'000));
  EXPECT_EQ(sim.pending(), 10u);
  sim.Run();
  EXPECT_EQ(sim.pending(), 0u);
  EXPECT_EQ(r.log.size(), 99u);
  sim.Schedule(sim.Now() + Time::Ps(5), e, &r, 0, 0);
  sim.Schedule(sim.Now() + Time::Ps(3'000'000), e, &r, 0, 0);
  sim.Retain([](uint64_t, uint32_t, uint64_t) { return true; });
  EXPECT_EQ(sim.pending(), 2u);
}

// Events go to the handler they were scheduled for, with more handlers than
// the engine's handler cache has slots and in an order that alternates.
struct Tagged : EventHandler {
  int tag = 0;
  std::vector<int>* log = nullptr;
  void OnEvent(uint32_t kind, uint64_t) override {
    log->push_back(tag * 100 + static_cast<int>(kind));
  }
};

TEST(Simulator, EachEventReachesItsHandlerAmongMany) {
  Simulator sim(1);
  const uint32_t e = sim.AddEntity();
  std::vector<int> log, want;
  std::vector<Tagged> hs(20);
  for (int i = 0; i < 20; ++i) {
    hs[i].tag = i;
    hs[i].log = &log;
  }
  for (int k = 0; k < 200; ++k) {
    const int h = (k * 7) % 20;
    sim.Schedule(Time::Ps(k), e, &hs[h], static_cast<uint32_t>(k % 50), 0);
    want.push_back(h * 100 + k % 50);
  }
  sim.Run();
  EXPECT_EQ(log, want);
}

// A handler keeps the index its simulator gave it. The same handlers queued
// on two simulators in turn, a copy of a handler (another handler, which
// must not inherit the original's index), and a simulator made after
// another was destroyed (the handlers' index must not be taken for its own)
// each deliver to the right handler.
TEST(Simulator, HandlerIndicesHoldAcrossSimulatorsAndCopies) {
  std::vector<int> log;
  Tagged a, b;
  a.tag = 1;
  b.tag = 2;
  a.log = b.log = &log;
  {
    Simulator s1(1), s2(2);
    const uint32_t e1 = s1.AddEntity(), e2 = s2.AddEntity();
    s1.Schedule(Time::Ps(1), e1, &a, 0, 0);
    s2.Schedule(Time::Ps(1), e2, &b, 0, 0);  // b is s2's handler 0, a is s1's
    s2.Schedule(Time::Ps(2), e2, &a, 1, 0);  // a: s2's handler 1
    s1.Schedule(Time::Ps(2), e1, &b, 1, 0);  // b: s1's handler 1
    s1.Schedule(Time::Ps(3), e1, &a, 2, 0);
    s2.Schedule(Time::Ps(3), e2, &b, 2, 0);
    s1.Run();
    s2.Run();
    EXPECT_EQ(log, (std::vector<int>{100, 201, 102, 200, 101, 202}));
  }
  log.clear();
  Simulator s3(3);  // likely where s1 or s2 was
  const uint32_t e3 = s3.AddEntity();
  s3.Schedule(Time::Ps(1), e3, &b, 0, 0);
  s3.Schedule(Time::Ps(2), e3, &a, 0, 0);
  Tagged c = a;  // a copy of a handler s3 has indexed: its own handler
  c.tag = 3;
  s3.Schedule(Time::Ps(3), e3, &c, 0, 0);
  s3.Schedule(Time::Ps(4), e3, &a, 1, 0);
  s3.Run();
  EXPECT_EQ(log, (std::vector<int>{200, 100, 300, 101}));
}

TEST(Rng, StreamsAreIndependentAndUniform) {
  Rng a(1, 2, 3), b(1, 2, 3), c(1, 2, 4);
  EXPECT_EQ(a.NextU64(), b.NextU64());
  EXPECT_NE(Rng(1, 2, 3).NextU64(), c.NextU64());
  Rng r(9, 9, 9);
  std::vector<int> hist(8);
  for (int i = 0; i < 80000; ++i) ++hist[r.Below(8)];
  for (int h : hist) EXPECT_NEAR(h, 10000, 500);
  for (int i = 0; i < 1000; ++i) {
    double u = r.Uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace lossless::sim
