// A step as two streams, with stand-in networks: an infinitely fast one, a
// fixed cost per collective and an alpha-beta one. The packet-level network
// is in fabric_comm_test.cpp.
#include "train/schedule.hpp"

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

}  // namespace schedule
}  // namespace
}  // namespace lossless::train
