// The fault flags of `lossless train` (train/faults.hpp): grammar, ranges and
// the errors bad input gets.
#include "train/faults.hpp"

#include <string>

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless::train {
namespace {

TrainConfig Config() {
  TrainConfig c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  c.steps = 10;
  return c;
}

std::string ErrorOf(void (*f)(const std::string&), const std::string& v) {
  try {
    f(v);
  } catch (const InputError& e) {
    return e.where().field + ": " + e.message();
  }
  return "no error";
}

TEST(TrainFaultsTest, SlowGpuParsesRankFactorAndSteps) {
  const SlowGpu a = ParseSlowGpu("3:1.5@2", Config());
  EXPECT_EQ(a.rank, 3);
  EXPECT_DOUBLE_EQ(a.factor, 1.5);
  EXPECT_EQ(a.first, 2);
  EXPECT_EQ(a.last, 9);  // to the last step
  const SlowGpu b = ParseSlowGpu("15:4@0-0", Config());
  EXPECT_EQ(b.rank, 15);
  EXPECT_EQ(b.first, 0);
  EXPECT_EQ(b.last, 0);
}

TEST(TrainFaultsTest, DegradeAndStallParse) {
  const LinkDegrade d = ParseDegrade("host0<->leaf0=1e-7@4-6", Config());
  EXPECT_EQ(d.link, "host0<->leaf0");
  EXPECT_DOUBLE_EQ(d.ber, 1e-7);
  EXPECT_EQ(d.first, 4);
  EXPECT_EQ(d.last, 6);
  const NicStall st = ParseStallNic("9@1:300", Config());
  EXPECT_EQ(st.host, 9);
  EXPECT_EQ(st.step, 1);
  EXPECT_EQ(st.duration, units::Time::Us(300));
}

TEST(TrainFaultsTest, BadInputNamesTheFlagAndWhatWasExpected) {
  auto slow = [](const std::string& v) { ParseSlowGpu(v, Config()); };
  auto degrade = [](const std::string& v) { ParseDegrade(v, Config()); };
  auto stall = [](const std::string& v) { ParseStallNic(v, Config()); };
  EXPECT_EQ(ErrorOf(slow, "16:2@1"),
            "--slow-gpu: expected a GPU rank from 0 to 15 (2 nodes x 8 GPUs), got 16");
  EXPECT_NE(ErrorOf(slow, "3:1@1").find("--slow-gpu: expected a slowdown factor above 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(slow, "3:2@10").find("expected steps within 0 to 9 (--steps 10)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(slow, "3:2@5-4").find("first <= last"), std::string::npos);
  EXPECT_NE(ErrorOf(slow, "3:2").find("expected RANK:FACTOR@STEP"), std::string::npos);
  EXPECT_NE(ErrorOf(degrade, "host0<->leaf0=2@1").find("--degrade: expected a bit error rate"),
            std::string::npos);
  EXPECT_NE(ErrorOf(degrade, "host0<->leaf0@1").find("expected LINK=BER@STEP"), std::string::npos);
  EXPECT_NE(ErrorOf(stall, "0@1").find("--stall-nic: expected HOST@STEP:US"), std::string::npos);
  EXPECT_NE(ErrorOf(stall, "0@1:0").find("expected a stall of 0 < US <= 1e6"), std::string::npos);
  EXPECT_NE(ErrorOf(stall, "0@x:5").find("expected a step after '@'"), std::string::npos);
}

TEST(TrainFaultsTest, ActiveStepsAndTheComputeFactor) {
  Faults f;
  EXPECT_FALSE(f.Any());
  EXPECT_EQ(f.FirstStep(), -1);
  f.slow_gpus.push_back({0, 1.5, 2, 3});
  f.slow_gpus.push_back({1, 3.0, 3, 5});
  f.stalls.push_back({0, 7, units::Time::Us(10)});
  EXPECT_EQ(f.FirstStep(), 2);
  EXPECT_FALSE(f.ActiveAt(1));
  EXPECT_TRUE(f.ActiveAt(2));
  EXPECT_FALSE(f.ActiveAt(6));
  EXPECT_TRUE(f.ActiveAt(7));
  EXPECT_DOUBLE_EQ(f.ComputeFactor(1), 1.0);
  EXPECT_DOUBLE_EQ(f.ComputeFactor(2), 1.5);
  EXPECT_DOUBLE_EQ(f.ComputeFactor(3), 3.0);  // the slowest GPU sets the pace
}

TEST(TrainFaultsTest, PercentileInterpolatesBetweenRanks) {
  EXPECT_DOUBLE_EQ(StepPercentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(StepPercentile({5}, 99), 5);
  EXPECT_DOUBLE_EQ(StepPercentile({1, 2, 3, 4}, 50), 2.5);
  EXPECT_DOUBLE_EQ(StepPercentile({4, 1, 3, 2}, 100), 4);
  EXPECT_NEAR(StepPercentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 100}, 99), 91.81, 1e-9);  // 9 + 0.91 x 91
}

}  // namespace
}  // namespace lossless::train
