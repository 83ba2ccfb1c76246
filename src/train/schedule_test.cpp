// A step as two streams, with stand-in networks: an infinitely fast one, a
// fixed cost per collective and an alpha-beta one. The packet-level network
// is in fabric_comm_test.cpp.
#include "train/schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace lossless::train {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace schedule {

// Every collective costs alpha + the ring's bytes per rank / beta.
class AlphaBetaComm final : public CommBackend {
 public:
  AlphaBetaComm(const TrainConfig& c, units::Time alpha, double bytes_per_s)
      : c_(c), alpha_(alpha), bps_(bytes_per_s) {}
  CommCost Run(CommKind kind, CommGroup group, int64_t bytes, units::Time start) override {
    CommCost c = InstantComm(c_).Run(kind, group, bytes, start);
    c.time = alpha_ +
             units::Time::Ps(static_cast<int64_t>(static_cast<double>(c.bytes_sent) / bps_ * 1e12));
    starts.push_back(start);
    return c;
  }
  CommCost Send(int /*from*/, int /*to*/, int64_t bytes, units::Time start) override {
    CommCost c;
    c.bytes_sent = bytes;
    c.time =
        alpha_ + units::Time::Ps(static_cast<int64_t>(static_cast<double>(bytes) / bps_ * 1e12));
    starts.push_back(start);
    return c;
  }
  std::vector<units::Time> starts;

 private:
  TrainConfig c_;
  units::Time alpha_;
  double bps_;
};

// A small decoder: 4 layers of 3.2 M parameters.
TrainConfig Small(Strategy s, int nodes = 2, int tp = 1) {
  TrainConfig c;
  c.model = {"small", 4, 512, 8, 8, 1408, 8000, 512, "test"};
  c.gpu = FindGpu("h100");
  c.strategy = s;
  c.nodes = nodes;
  c.gpus_per_node = 4;
  c.tp = tp;
  c.recompute = Recompute::kNone;
  c.bucket_bytes = 1 << 20;
  return c;
}

units::Time ComputeOf(const std::vector<Unit>& units, int64_t micro) {
  units::Time t;
  for (const Unit& u : units) t = t + u.forward + u.backward + u.tp_forward + u.tp_backward;
  return units::Time::Ps(t.ps() * micro);
}

// Issue 12, check 1: with an infinitely fast network the step is the compute
// model's time, TP all-reduces included, for every strategy.
TEST(TrainScheduleTest, InfinitelyFastNetworkGivesTheComputeTime) {
  for (Strategy s : {Strategy::kDdp, Strategy::kFsdp, Strategy::kHsdp}) {
    for (int tp : {1, 2}) {
      TrainConfig c = Small(s, 2, tp);
      c.global_batch = 2 * c.DpRanks();  // 2 micro-batches
      const std::vector<Unit> units = Units(c);
      std::vector<Task> tasks = BuildStep(c, units);
      InstantComm instant(c);
      const StepTimes st = Schedule(tasks, instant, units::Time::Us(5));
      EXPECT_EQ(st.step.ps(), ComputeOf(units, 2).ps()) << StrategyName(s) << " tp " << tp;
      EXPECT_EQ((st.compute + st.tp).ps(), st.step.ps());
      EXPECT_EQ(st.exposed.ps(), st.tp.ps());
      EXPECT_EQ(st.tp.ps() > 0, tp > 1);
    }
  }
}

// DDP's buckets: the gradient cut at the bucket size from the output layer
// back, all on the last micro-batch only, each after the backward piece
// holding its last byte.
TEST(TrainScheduleTest, DdpBucketsFollowTheBackwardPass) {
  TrainConfig c = Small(Strategy::kDdp);
  c.global_batch = 3 * c.DpRanks();
  const std::vector<Unit> units = Units(c);
  int64_t grad = 0;
  for (const Unit& u : units) grad += 2 * u.params;
  std::vector<Task> tasks = BuildStep(c, units);
  int64_t sum = 0;
  int buckets = 0;
  size_t first_comm = tasks.size();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!tasks[i].comm) continue;
    first_comm = std::min(first_comm, i);
    ++buckets;
    sum += tasks[i].bytes;
    ASSERT_EQ(tasks[i].deps.size(), 1u);
    EXPECT_FALSE(tasks[tasks[i].deps[0]].comm);
    if (sum < grad) {
      EXPECT_EQ(tasks[i].bytes, c.bucket_bytes);
    }
  }
  EXPECT_EQ(sum, grad);
  EXPECT_EQ(buckets, (grad + c.bucket_bytes - 1) / c.bucket_bytes);
  // The first bucket waits for part of the output layer's backward of the
  // third micro-batch, not for the whole backward.
  EXPECT_NE(tasks[first_comm].label.find("bucket 0"), std::string::npos);
  EXPECT_NE(tasks[tasks[first_comm].deps[0]].label, "backward embedding mb 2");
  EXPECT_NE(tasks[tasks[first_comm].deps[0]].label.find("backward output mb 2"), std::string::npos);
}

// With compute set to zero a DDP step is its bucket all-reduces one after
// another (the packet-level version: fabric_comm_test.cpp).
TEST(TrainScheduleTest, ZeroComputeDdpStepIsTheSumOfItsAllReduces) {
  TrainConfig c = Small(Strategy::kDdp);
  std::vector<Unit> units = Units(c);
  for (Unit& u : units) u.forward = u.backward = u.tp_forward = u.tp_backward = units::Time::Zero();
  std::vector<Task> tasks = BuildStep(c, units);
  AlphaBetaComm ab(c, units::Time::Us(20), 50e9);
  const StepTimes st = Schedule(tasks, ab, units::Time::Zero());
  units::Time sum;
  for (const Task& t : tasks)
    if (t.comm) sum = sum + t.cost.time;
  EXPECT_EQ(st.step.ps(), sum.ps());
  EXPECT_EQ(st.dp_comm.ps(), sum.ps());
  EXPECT_GT(st.collectives, 5);
}

// FSDP: a unit's forward waits for its all-gather, its backward for the
// second all-gather, each reduce-scatter for its backward; the gathers run
// one unit ahead, so a slow network makes the step its collectives' sum.
TEST(TrainScheduleTest, FsdpComputeWaitsForItsGathers) {
  TrainConfig c = Small(Strategy::kFsdp);
  const std::vector<Unit> units = Units(c);
  std::vector<Task> tasks = BuildStep(c, units);
  const size_t n = units.size();
  int gathers = 0, scatters = 0;
  for (const Task& t : tasks) {
    if (!t.comm) continue;
    gathers += t.kind == CommKind::kAllGather;
    scatters += t.kind == CommKind::kReduceScatter;
  }
  EXPECT_EQ(gathers, 2 * static_cast<int>(n));
  EXPECT_EQ(scatters, static_cast<int>(n));
  AlphaBetaComm slow(c, units::Time::Ms(10), 1e12);
  const StepTimes st = Schedule(tasks, slow, units::Time::Zero());
  for (const Task& t : tasks) {
    for (size_t d : t.deps) EXPECT_GE(t.start.ps(), tasks[d].finish.ps()) << t.label;
    if (!t.comm && t.label.rfind("forward", 0) == 0) {
      ASSERT_EQ(t.deps.size(), 1u) << t.label;
      EXPECT_EQ(tasks[t.deps[0]].kind, CommKind::kAllGather);
    }
  }
  // 3n collectives of about 10 ms each on one stream; compute is far shorter.
  EXPECT_GE(st.step.ps(), st.dp_comm.ps());
  EXPECT_LT(st.step.ps(), (st.dp_comm + st.compute).ps());
  EXPECT_GT(st.exposed.ps(), st.dp_comm.ps() * 9 / 10);
  // Nothing runs on the stream out of order: starts never go back.
  for (size_t i = 1; i < slow.starts.size(); ++i)
    EXPECT_GE(slow.starts[i].ps(), slow.starts[i - 1].ps());
}

// Issue 12, overlap: DDP's exposed communication shrinks as buckets get
// smaller (more of it hides behind the backward pass) until the per-bucket
// latency dominates and it grows again.
TEST(TrainScheduleTest, DdpExposedCommunicationIsUShapedInBucketSize) {
  TrainConfig c = Small(Strategy::kDdp);
  c.model = FindModel("7b");
  c.tp = 2;
  auto exposed = [&](int64_t bucket) {
    c.bucket_bytes = bucket;
    std::vector<Task> tasks = BuildStep(c, Units(c));
    AlphaBetaComm ab(c, units::Time::Us(50), 100e9);
    return Schedule(tasks, ab, units::Time::Zero()).exposed;
  };
  const units::Time one_bucket = exposed(int64_t{16} << 30);
  const units::Time mid = exposed(int64_t{25} << 20);
  const units::Time tiny = exposed(int64_t{64} << 10);
  EXPECT_LT(mid.ps(), one_bucket.ps() / 2);
  EXPECT_GT(tiny.ps(), 2 * mid.ps());
}

// A pipeline of `pp` stages over the small decoder of 8 layers; `m`
// micro-batches.
TrainConfig Pipe(int pp, int64_t m, int nodes = 4) {
  TrainConfig c = Small(Strategy::kDdp, nodes);
  c.model.layers = 8;
  c.pp = pp;
  c.global_batch = m * c.DpRanks();
  return c;
}

// Units with the embedding and output layer taking no time: every stage
// computes the same (2 layers each at pp 4).
std::vector<Unit> EqualStages(const TrainConfig& c) {
  std::vector<Unit> units = Units(c);
  for (Unit* u : {&units.front(), &units.back()}) u->forward = u->backward = units::Time::Zero();
  return units;
}

// One micro-batch's forward and backward on one stage (stage 0 of equal stages).
units::Time StageTime(const TrainConfig& c, const std::vector<Unit>& units, int stage) {
  units::Time t;
  for (size_t u = 0; u < units.size(); ++u)
    if (UnitStage(c, u) == stage)
      t = t + units[u].forward + units[u].backward + units[u].tp_forward + units[u].tp_backward;
  return t;
}

// 1F1B's order (Narayanan et al. 2021, figure 4): stage s runs pp - s - 1
// warm-up forwards, then one forward one backward, then the rest backwards.
TEST(TrainPipelineTest, OneFOneBOrder) {
  EXPECT_EQ(OneFOneB(4, 0, 6), (std::vector<int64_t>{1, 2, 3, 4, -1, 5, -2, 6, -3, -4, -5, -6}));
  EXPECT_EQ(OneFOneB(4, 3, 3), (std::vector<int64_t>{1, -1, 2, -2, 3, -3}));
  EXPECT_EQ(OneFOneB(4, 1, 1), (std::vector<int64_t>{1, -1}));  // fewer micro-batches than warm-up
}

// Issue 12, pipeline check 1: with an infinitely fast network and equal
// stages a 1F1B step is (m + P - 1) x (forward + backward of one micro-batch
// on one stage) (Narayanan et al. 2021, section 2.2.1), to the picosecond (the
// stated tolerance: 1 ps per task for the bucket pieces' rounding); with the
// output layer on the last stage it lies between that formula over the
// average stage and over the busiest stage.
TEST(TrainPipelineTest, InfinitelyFastNetworkGivesTheOneFOneBFormula) {
  for (int pp : {2, 4}) {
    for (int64_t m : {1, 2, 3, 8}) {
      for (int tp : {1, 2}) {
        TrainConfig c = Pipe(pp, m);
        c.tp = tp;
        c.global_batch = m * c.DpRanks();
        const std::vector<Unit> units = EqualStages(c);
        std::vector<Task> tasks = BuildStep(c, units);
        InstantComm instant(c);
        const StepTimes st = Schedule(tasks, instant, units::Time::Us(3));
        const units::Time t = StageTime(c, units, 0);
        for (int s = 1; s < pp; ++s) ASSERT_EQ(StageTime(c, units, s).ps(), t.ps());
        const int64_t formula = (m + pp - 1) * t.ps();
        EXPECT_NEAR(static_cast<double>(st.step.ps()), static_cast<double>(formula),
                    static_cast<double>(tasks.size()))
            << "pp " << pp << " m " << m << " tp " << tp;
        // The busiest stage computes m micro-batches; the rest is the bubble.
        const StepTimes b = WithBubble(st, st.step, pp);
        EXPECT_NEAR(static_cast<double>((b.compute + b.tp).ps()), static_cast<double>(m * t.ps()),
                    static_cast<double>(tasks.size()));
        EXPECT_NEAR(static_cast<double>(b.bubble.ps()), static_cast<double>((pp - 1) * t.ps()),
                    static_cast<double>(tasks.size()));
        EXPECT_EQ(b.exposed.ps(), b.tp.ps());  // exposed: TP all-reduces only
      }
    }
  }
  TrainConfig c = Pipe(4, 8);
  c.model = FindModel("7b");
  c.global_batch = 8 * c.DpRanks();
  const std::vector<Unit> units = Units(c);
  std::vector<Task> tasks = BuildStep(c, units);
  InstantComm instant(c);
  const StepTimes st = Schedule(tasks, instant, units::Time::Zero());
  units::Time sum, most;
  for (int s = 0; s < 4; ++s) {
    sum = sum + StageTime(c, units, s);
    most = std::max(most, StageTime(c, units, s));
  }
  const double avg = static_cast<double>(sum.ps()) / 4;
  std::printf(
      "7b pp 4 m 8: step %.3f ms, formula over the average stage %.3f, over the busiest "
      "%.3f\n",
      static_cast<double>(st.step.ps()) / 1e9, 11 * avg / 1e9,
      11 * static_cast<double>(most.ps()) / 1e9);
  EXPECT_GE(static_cast<double>(st.step.ps()), 11 * avg);
  EXPECT_LE(st.step.ps(), 11 * most.ps());
  EXPECT_EQ(st.busiest_stage, 3);  // the output layer's
}

// Issue 12, pipeline check 2: the bubble's share of the step falls as the
// micro-batches grow, as (P - 1)/(m + P - 1) with equal stages.
TEST(TrainPipelineTest, BubbleFractionFallsAsMicroBatchesGrow) {
  double last = 1;
  for (int64_t m : {1, 2, 4, 8, 16, 32}) {
    const TrainConfig c = Pipe(4, m);
    std::vector<Task> tasks = BuildStep(c, EqualStages(c));
    InstantComm instant(c);
    StepTimes st = Schedule(tasks, instant, units::Time::Zero());
    st = WithBubble(st, st.step, 4);
    const double frac = static_cast<double>(st.bubble.ps()) / static_cast<double>(st.step.ps());
    EXPECT_NEAR(frac, 3.0 / static_cast<double>(m + 3), 1e-6) << m;
    EXPECT_LT(frac, last) << m;
    last = frac;
  }
}

// Sends: a forward waits for the previous stage's activation, a backward
// for the next stage's gradient, and a stage's next pass for its own send
// (Megatron's p2p waits on its requests); each stage all-reduces its own
// gradient in buckets during its last backward. With a slow network the
// sends are exposed and the bubble stays the infinitely fast one's.
TEST(TrainPipelineTest, SendsCarryTheDependenciesBetweenStages) {
  const int pp = 4;
  const int64_t m = 5;
  const TrainConfig c = Pipe(pp, m);
  const std::vector<Unit> units = Units(c);
  std::vector<Task> tasks = BuildStep(c, units);
  int sends = 0;
  std::vector<int64_t> grad(pp, 0), bucketed(pp, 0);
  for (size_t u = 0; u < units.size(); ++u) grad[UnitStage(c, u)] += 2 * units[u].params;
  for (const Task& t : tasks) {
    if (t.p2p) {
      ++sends;
      EXPECT_EQ(t.bytes, c.PipeBytes());
      EXPECT_EQ(std::abs(t.peer - t.stage), 1);
      ASSERT_EQ(t.deps.size(), 1u);
      EXPECT_FALSE(tasks[t.deps[0]].comm);
      EXPECT_EQ(tasks[t.deps[0]].stage, t.stage);
    } else if (t.comm) {
      bucketed[t.stage] += t.bytes;
      EXPECT_EQ(tasks[t.deps[0]].label.find("mb " + std::to_string(m - 1)) != std::string::npos,
                true)
          << t.label;
    }
  }
  EXPECT_EQ(sends, 2 * (pp - 1) * static_cast<int>(m));
  for (int s = 0; s < pp; ++s) EXPECT_EQ(bucketed[s], grad[s]) << "stage " << s;
  // Every compute pass of stage s > 0 (forward) or s < pp - 1 (backward)
  // waits for a send from a neighbour.
  for (const Task& t : tasks) {
    if (t.comm || t.label.find(" stage ") == std::string::npos) continue;
    const bool fwd = t.label.rfind("forward", 0) == 0;
    if (fwd ? t.stage == 0 : t.stage == pp - 1) continue;
    bool from_neighbour = false;
    for (size_t d : t.deps)
      from_neighbour |=
          tasks[d].p2p && tasks[d].peer == t.stage && tasks[d].stage == t.stage + (fwd ? -1 : 1);
    EXPECT_TRUE(from_neighbour) << t.label;
  }
  // A stage's next pass waits for the send its previous pass made.
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!tasks[i].p2p) continue;
    size_t next = i + 1;
    while (next < tasks.size() && (tasks[next].comm || tasks[next].stage != tasks[i].stage)) ++next;
    if (next == tasks.size()) continue;
    const std::vector<size_t>& d = tasks[next].deps;
    EXPECT_NE(std::find(d.begin(), d.end(), i), d.end()) << tasks[next].label;
  }
  AlphaBetaComm slow(c, units::Time::Us(100), 10e9);
  const StepTimes st = Schedule(tasks, slow, units::Time::Zero());
  for (const Task& t : tasks)
    for (size_t d : t.deps) EXPECT_GE(t.start.ps(), tasks[d].finish.ps()) << t.label;
  std::vector<Task> free_tasks = BuildStep(c, units);
  InstantComm instant(c);
  const StepTimes ideal = Schedule(free_tasks, instant, units::Time::Zero());
  const StepTimes b = WithBubble(st, ideal.step, pp);
  EXPECT_GT(b.step.ps(), ideal.step.ps());
  EXPECT_GT(b.pp_comm.ps(), 0);
  EXPECT_EQ(b.pp_bytes, 2 * (pp - 1) * m * c.PipeBytes());
  EXPECT_EQ((b.compute + b.bubble + b.exposed).ps(), b.step.ps());
  EXPECT_EQ(b.exposed.ps(), (b.step - ideal.step + b.tp).ps());
  // The backend saw non-decreasing starts although stages overlap.
  for (size_t i = 1; i < slow.starts.size(); ++i)
    EXPECT_GE(slow.starts[i].ps(), slow.starts[i - 1].ps());
}

}  // namespace schedule
}  // namespace
}  // namespace lossless::train
