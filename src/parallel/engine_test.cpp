// The window engine over the loopback Comm, on the synthetic token model
// (token_model.hpp): 1, 2, 3, 4 and 7 ranks, contiguous and random
// placements, with and without batches in random arrival order, give the
// serial run's per-entity state and event digests byte for byte.
#include "parallel/engine.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parallel/loopback.hpp"
#include "parallel/token_model.hpp"
#include "sim/simulator.hpp"

namespace lossless::parallel {
namespace {

using units::Time;

struct Outcome {
  std::string text;
  uint64_t cross = 0, ties = 0, windows = 0;
};

Outcome Distributed(const TokenModelConfig& cfg, int ranks, const std::vector<int>& placement,
                    uint64_t jitter) {
  Outcome o;
  RunLoopback(
      ranks,
      [&](Comm& comm) {
        const TokenOutcome t = RunTokens(comm, cfg, placement);
        if (comm.Rank() != 0) return;  // rank 0 writes o alone
        o.text = t.text;
        o.cross = t.cross;
        o.ties = t.ties;
        o.windows = t.stats.windows;
      },
      LoopbackOptions{jitter});
  return o;
}

class EngineRanks : public ::testing::TestWithParam<int> {};

TEST_P(EngineRanks, ContiguousAndRandomPlacementsGiveTheSerialRun) {
  const int k = GetParam();
  const TokenModelConfig cfg;
  const std::string serial = RunTokensSerial(cfg).text;
  std::vector<std::vector<int>> placements{ContiguousPlacement(cfg.units, k)};
  for (uint64_t seed = 1; seed <= 3; ++seed)
    placements.push_back(RandomPlacement(cfg.units, k, seed));
  for (size_t i = 0; i < placements.size(); ++i) {
    const std::vector<int>& p = placements[i];
    // Batches in random arrival order (loopback jitter) on the contiguous
    // placement and on one random placement.
    const std::vector<uint64_t> jitters =
        i < 2 ? std::vector<uint64_t>{0, 7} : std::vector<uint64_t>{0};
    for (uint64_t jitter : jitters) {
      const Outcome o = Distributed(cfg, k, p, jitter);
      std::string where;
      for (int r : p) where += std::to_string(r);
      EXPECT_EQ(o.text, serial) << k << " ranks, placement " << where << ", jitter " << jitter;
      std::printf(
          "%d ranks, placement %s, jitter %llu: %llu windows, %llu cross-rank events, "
          "%llu same-time ties\n",
          k, where.c_str(), static_cast<unsigned long long>(jitter),
          static_cast<unsigned long long>(o.windows), static_cast<unsigned long long>(o.cross),
          static_cast<unsigned long long>(o.ties));
      if (k > 1) {
        // docs/parallel.md: the case counts only if events crossed and tied.
        EXPECT_GT(o.cross, 0u);
        EXPECT_GT(o.ties, 0u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, EngineRanks, ::testing::Values(1, 2, 3, 4, 7));

TEST(Engine, TheReductionAsItsOwnCollectiveGivesTheSameRun) {
  // docs/parallel.md#one-reduction-per-window: where every other rank is a
  // neighbour the window's lanes ride in the batches; as a separate
  // AllreduceMinLanes (what ranks with fewer neighbours do) the output is
  // the same, with boundaries too.
  TokenModelConfig cfg;
  cfg.snapshot_every = Time::Ns(1370);
  const std::string serial = RunTokensSerial(cfg).text;
  for (bool fold : {true, false}) {
    cfg.reduce_in_exchange = fold;
    for (int k : {2, 4, 7}) {
      const Outcome o = Distributed(cfg, k, ContiguousPlacement(cfg.units, k), k == 4 ? 3 : 0);
      EXPECT_EQ(o.text, serial) << k << " ranks, reduction in the exchange " << fold;
      EXPECT_GT(o.cross, 0u);
    }
  }
}

TEST(Engine, BoundariesSeeTheSerialStateAndStopThere) {
  // Snapshots every 1.37 us (events fall on them: steps are 10 ns) gathered
  // from the owners equal the serial state after every event at or before
  // that time; a boundary that stops the run stops every rank at the
  // serial point (sim.Run(stop_at)).
  TokenModelConfig cfg;
  cfg.snapshot_every = Time::Ns(1370);
  cfg.stop_at = Time::Ns(11230);
  const std::string serial = RunTokensSerial(cfg).text;
  ASSERT_NE(serial.find("snapshot 8220000 "), std::string::npos) << serial;
  ASSERT_EQ(serial.find("snapshot 12330000 "), std::string::npos) << "after the stop";
  TokenModelConfig no_stop = cfg;
  no_stop.stop_at = Time::Max();
  EXPECT_NE(RunTokensSerial(no_stop).text, serial) << "the stop must change the output";
  for (int k : {2, 3, 7}) {
    for (const std::vector<int>& p :
         {ContiguousPlacement(cfg.units, k), RandomPlacement(cfg.units, k, 4)}) {
      const Outcome o = Distributed(cfg, k, p, k == 3 ? 11 : 0);
      EXPECT_EQ(o.text, serial) << k << " ranks";
      std::printf("boundaries, %d ranks: %llu windows, %llu cross-rank events, %llu ties\n", k,
                  static_cast<unsigned long long>(o.windows),
                  static_cast<unsigned long long>(o.cross),
                  static_cast<unsigned long long>(o.ties));
      EXPECT_GT(o.cross, 0u);
      EXPECT_GT(o.ties, 0u);
    }
  }
}

TEST(Engine, SerialRunIsNotTrivialAndItsOutputMovesWithTheModel) {
  // Thousands of events on every entity; another seed (a different fold of
  // every event) gives other bytes, so the comparison above can fail.
  TokenModelConfig cfg;
  const TokenOutcome a = RunTokensSerial(cfg);
  EXPECT_GT(a.events, 2500u);
  std::istringstream in(a.text);
  uint32_t e;
  std::string state, sum;
  uint64_t n, idle = 0;
  while (in >> e >> state >> n >> sum) idle += n == 0;
  EXPECT_EQ(idle, 0u);
  cfg.seed = 2;
  EXPECT_NE(RunTokensSerial(cfg).text, a.text);
}

namespace engine_verdict_test {

// A rank whose one condition clears at `clear_at` (Simulator::Stop at that
// event), for the StopRule below.
struct Clearer final : sim::EventHandler {
  sim::Simulator* sim = nullptr;
  int64_t pending = 1;
  void OnEvent(uint32_t, uint64_t) override {
    pending = 0;
    sim->Stop();
  }
};

}  // namespace engine_verdict_test

TEST(Engine, VerdictLanesReduceToMinimumFlagsAndLargestBound) {
  // docs/parallel.md#one-reduction-per-window: each rank packs its next
  // event, whether it holds stop conditions and its bound; the elementwise
  // minimum over 1-7 ranks is the earliest next event, "no rank holds", and
  // the largest bound among the ranks that hold (a holder without a bound
  // counts only when no holder has one; a rank holding nothing never).
  for (int k : {1, 2, 3, 7}) {
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<WindowVerdict> got(static_cast<size_t>(k));
      RunLoopback(k, [&](Comm& comm) {
        const int r = comm.Rank();
        const int64_t next = 1000 + 37 * ((r * 5 + 3) % 7);
        // variant 0: every rank holds, bound 500 + 100 r; 1: only odd ranks
        // hold; 2: rank 0 holds without a bound, the others with; 3: none holds.
        const bool holds = variant == 0 || variant == 2 || (variant == 1 && r % 2 == 1);
        const int64_t bound = variant == 2 && r == 0 ? INT64_MIN : 500 + 100 * r;
        int64_t lanes[WindowVerdict::kLanes];
        WindowVerdict::Pack(next, holds, bound, lanes);
        comm.AllreduceMinLanes(lanes, WindowVerdict::kLanes);
        got[static_cast<size_t>(r)] = WindowVerdict::Unpack(lanes);
      });
      int64_t next = INT64_MAX;
      for (int r = 0; r < k; ++r) next = std::min<int64_t>(next, 1000 + 37 * ((r * 5 + 3) % 7));
      bool any = false;
      int64_t largest = INT64_MIN;
      for (int r = 0; r < k; ++r) {
        const bool holds = variant == 0 || variant == 2 || (variant == 1 && r % 2 == 1);
        if (!holds) continue;
        any = true;
        if (!(variant == 2 && r == 0)) largest = std::max<int64_t>(largest, 500 + 100 * r);
      }
      for (int r = 0; r < k; ++r) {
        const WindowVerdict& v = got[static_cast<size_t>(r)];
        EXPECT_EQ(v.next, next) << k << " ranks, variant " << variant;
        EXPECT_EQ(v.all_clear, !any) << k << " ranks, variant " << variant;
        EXPECT_EQ(v.stop_not_before, any ? largest : INT64_MAX)
            << k << " ranks, variant " << variant << ", rank " << r;
      }
    }
  }
}

TEST(Engine, AStopBoundThatProvesWrongIsRefused) {
  // Rank 0 clears its condition at 250 ns, rank 1 at 120 ns: the serial stop
  // is at 250 ns. With true bounds (each rank its own clearing time) the
  // first window [120, 220) ns runs without a verdict (rank 1 clears in it
  // and runs on) and both ranks stop at 250 ns; a bound of 1 ms on rank 1
  // is contradicted by its clearing: an error, not a silent difference.
  for (bool lie : {false, true}) {
    bool threw = false;
    std::vector<int64_t> stopped_at(2, -1);
    std::vector<uint64_t> careful(2, 0), windows(2, 0);
    try {
      RunLoopback(2, [&](Comm& comm) {
        const int r = comm.Rank();
        sim::Simulator sim(1);
        const uint32_t e = sim.AddEntity();
        engine_verdict_test::Clearer c;
        c.sim = &sim;
        const int64_t clear_ps = r == 0 ? 250'000 : 120'000;
        sim.Schedule(Time::Ps(clear_ps), e, &c, 0, 0);
        WindowEngine engine(comm, sim, Time::Ns(100), {1 - r}, [](const RemoteEvent&) {});
        StopRule rule;
        rule.pending = [&] { return c.pending; };
        rule.earliest_clear = [&](int64_t) {
          return lie && r == 1 ? int64_t{1'000'000'000} : clear_ps;
        };
        if (engine.Run(Time::Us(10), rule)) stopped_at[static_cast<size_t>(r)] = sim.Now().ps();
        careful[static_cast<size_t>(r)] = engine.stats().careful;
        windows[static_cast<size_t>(r)] = engine.stats().windows;
      });
    } catch (const std::logic_error&) {
      threw = true;
    }
    EXPECT_EQ(threw, lie);
    if (!lie) {
      EXPECT_EQ(stopped_at[0], 250'000);
      EXPECT_EQ(stopped_at[1], 250'000);
      EXPECT_EQ(windows[0], 2u);
      EXPECT_EQ(careful[0], 1u) << "only the window holding 250 ns waits for the verdict";
    }
  }
}

namespace engine_failure_test {

// An event every 10 ns on the rank's own entity until 1 us: ranks run past
// a failure in its window.
struct Ticker final : sim::EventHandler {
  sim::Simulator* sim = nullptr;
  uint32_t entity = 0;
  int64_t ticks = 0;
  void OnEvent(uint32_t, uint64_t) override {
    ++ticks;
    if (sim->Now() < Time::Us(1)) sim->Schedule(sim->Now() + Time::Ns(10), entity, this, 0, 0);
  }
};

// A failure (WindowEngine::set_failure): Simulator::Stop with `failed` set,
// noting the event's key.
struct Failer final : sim::EventHandler {
  sim::Simulator* sim = nullptr;
  bool failed = false;
  uint64_t key = 0;
  void OnEvent(uint32_t, uint64_t) override {
    failed = true;
    key = sim->RunningKey();
    sim->Stop();
  }
};

struct Plan {
  int64_t fail_ps[2] = {-1, -1};   // a rank's failure (-1: none)
  int64_t clear_ps[2] = {-1, -1};  // a rank's stop condition clears (-1: holds none)
};

struct RankEnd {
  bool found = false;  // FailureFound thrown
  int64_t found_ps = -1;
  uint64_t found_key = 0;
  bool stopped = false;  // Run returned true (the stop rule's stop)
  bool failure_stop = false;
  int64_t now_ps = -1;
  int64_t ticks = 0;
  bool failed = false;    // this rank's failure ran
  uint64_t fail_key = 0;  // ... under this key
};

// Two ranks, each with its own entity (rank r: entity r, so at one time
// rank 0's events come first), a ticker, an optional failure and an
// optional stop condition; windows of 100 ns. With `stop_at`: the re-run.
std::vector<RankEnd> RunFailing(const Plan& plan, const FailureFound* stop_at) {
  std::vector<RankEnd> ends(2);
  RunLoopback(2, [&](Comm& comm) {
    const int r = comm.Rank();
    RankEnd& end = ends[static_cast<size_t>(r)];
    sim::Simulator sim(1);
    const uint32_t entities[2] = {sim.AddEntity(), sim.AddEntity()};
    const uint32_t own = entities[r];
    Ticker t;
    t.sim = &sim;
    t.entity = own;
    Failer f;
    f.sim = &sim;
    engine_verdict_test::Clearer c;
    c.sim = &sim;
    c.pending = plan.clear_ps[r] >= 0 ? 1 : 0;
    sim.Schedule(Time::Zero(), own, &t, 0, 0);
    if (plan.fail_ps[r] >= 0) sim.Schedule(Time::Ps(plan.fail_ps[r]), own, &f, 0, 0);
    if (plan.clear_ps[r] >= 0) sim.Schedule(Time::Ps(plan.clear_ps[r]), own, &c, 0, 0);
    WindowEngine engine(comm, sim, Time::Ns(100), {1 - r}, [](const RemoteEvent&) {});
    engine.set_failure([&f] { return f.failed; });
    if (stop_at != nullptr) engine.set_failure_stop(stop_at->time_ps, stop_at->key);
    StopRule rule;
    rule.pending = [&c] { return c.pending; };
    try {
      end.stopped = engine.Run(Time::Us(10), rule);
    } catch (const FailureFound& e) {
      end.found = true;
      end.found_ps = e.time_ps;
      end.found_key = e.key;
    }
    end.failure_stop = engine.failure_stop();
    end.now_ps = sim.Now().ps();
    end.ticks = t.ticks;
    end.failed = f.failed;
    end.fail_key = f.key;
  });
  return ends;
}

// Every rank left Run with FailureFound naming (ps, key).
void ExpectFoundOnEveryRank(const std::vector<RankEnd>& ends, int64_t ps, uint64_t key) {
  for (const RankEnd& x : ends) {
    EXPECT_TRUE(x.found);
    EXPECT_EQ(x.found_ps, ps);
    EXPECT_EQ(x.found_key, key);
  }
}

}  // namespace engine_failure_test

TEST(Engine, TheEarliestOfFailuresInOneWindowIsFoundOnEveryRank) {
  // docs/parallel.md, "A QP failure": rank 0 fails at 130 ns, rank 1 at
  // 125 ns, both in the window [100, 200) ns that each rank runs to its
  // failure: every rank throws FailureFound with rank 1's (time, key).
  using namespace engine_failure_test;
  Plan p;
  p.fail_ps[0] = 130'000;
  p.fail_ps[1] = 125'000;
  std::vector<RankEnd> e = RunFailing(p, nullptr);
  ExpectFoundOnEveryRank(e, 125'000, e[1].fail_key);
  // At one time the smaller key is the serial one: rank 0's entity.
  p.fail_ps[1] = 130'000;
  e = RunFailing(p, nullptr);
  ASSERT_NE(e[0].fail_key, e[1].fail_key);
  ExpectFoundOnEveryRank(e, 130'000, std::min(e[0].fail_key, e[1].fail_key));
  // Without set_failure a failure is the unsupported stop it was.
  EXPECT_THROW(RunLoopback(2,
                           [&](Comm& comm) {
                             sim::Simulator sim(1);
                             Failer f;
                             f.sim = &sim;
                             sim.Schedule(Time::Ns(50), sim.AddEntity(), &f, 0, 0);
                             WindowEngine engine(comm, sim, Time::Ns(100), {1 - comm.Rank()},
                                                 [](const RemoteEvent&) {});
                             engine.Run(Time::Us(1));
                           }),
               std::logic_error);
}

TEST(Engine, AFailureBeforeTheAgreedStopWinsAndOneAfterItDoesNot) {
  // Rank 0 holds a condition that clears at 250 ns (the flows-done stop);
  // rank 1 holds none and fails at 240 ns, in the stop's window: it shows
  // while rank 1 runs to the stop point, and wins (the serial run ended
  // there). Failing at 260 ns, after the stop: the stop wins.
  using namespace engine_failure_test;
  Plan p;
  p.clear_ps[0] = 250'000;
  p.fail_ps[1] = 240'000;
  std::vector<RankEnd> e = RunFailing(p, nullptr);
  ExpectFoundOnEveryRank(e, 240'000, e[1].fail_key);
  p.fail_ps[1] = 260'000;
  e = RunFailing(p, nullptr);
  for (const RankEnd& x : e) {
    EXPECT_FALSE(x.found);
    EXPECT_TRUE(x.stopped);
    EXPECT_EQ(x.now_ps, 250'000);
  }
}

TEST(Engine, TheReRunStopsEveryRankAtTheFailure) {
  // The re-run with the stop point pass 1 found: every rank has run exactly
  // the events before it (ticks at 0-120 ns: 13 each), the failing rank the
  // failure itself; Run returns false with failure_stop() on every rank. A
  // stop point where no rank fails is an error, never a silent stop.
  using namespace engine_failure_test;
  Plan p;
  p.fail_ps[0] = 130'000;
  p.fail_ps[1] = 125'000;
  p.clear_ps[0] = 900'000;
  const std::vector<RankEnd> first = RunFailing(p, nullptr);
  ASSERT_TRUE(first[0].found);
  const FailureFound at(first[0].found_ps, first[0].found_key);
  const std::vector<RankEnd> e = RunFailing(p, &at);
  for (const RankEnd& x : e) {
    EXPECT_FALSE(x.found);
    EXPECT_FALSE(x.stopped);
    EXPECT_TRUE(x.failure_stop);
    EXPECT_EQ(x.now_ps, 125'000);
    EXPECT_EQ(x.ticks, 13);
  }
  EXPECT_EQ(e[1].fail_key, at.key);
  EXPECT_TRUE(e[1].failed);
  EXPECT_FALSE(e[0].failed) << "rank 0's later failure did not run";
  const FailureFound nowhere(first[0].found_ps + 1000, first[0].found_key);
  EXPECT_THROW(RunFailing(p, &nowhere), std::logic_error);
}

TEST(Engine, AnEventCloserThanTheLookaheadIsRefused) {
  EXPECT_THROW(RunLoopback(2,
                           [&](Comm& comm) {
                             sim::Simulator sim(1);
                             sim.AddEntity();
                             WindowEngine engine(comm, sim, Time::Ns(100), {1 - comm.Rank()},
                                                 [](const RemoteEvent&) {});
                             engine.Send(1 - comm.Rank(), Time::Ns(99), 0, 0, 1, 0);
                           }),
               std::logic_error);
}

TEST(Engine, ZeroLookaheadAndBadNeighboursAreRefused) {
  sim::Simulator sim(1);
  SerialComm comm;
  EXPECT_THROW(WindowEngine(comm, sim, Time::Zero(), {}, [](const RemoteEvent&) {}),
               std::invalid_argument);
  EXPECT_THROW(WindowEngine(comm, sim, Time::Ns(100), {0}, [](const RemoteEvent&) {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace lossless::parallel
