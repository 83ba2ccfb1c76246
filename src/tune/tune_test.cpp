#include "tune/tune.hpp"

#include <mutex>

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "base/progress.hpp"
#include "parallel/loopback.hpp"
#include "profile/profile.hpp"
#include "units/units.hpp"

namespace lossless::tune {
namespace tune_test {

int64_t Bytes(const std::string& v) {
  return units::ParseBytes(v, {"<test>", 0, ""}).count();
}

const Axis& Find(const std::vector<Axis>& axes, const std::string& key) {
  for (const auto& a : axes)
    if (a.key == key) return a;
  throw std::logic_error("no axis " + key);
}

// A small target (the default incast, a 1 MiB all-reduce): well under a second for 3 runs.
Options Tiny() {
  Options o;
  o.fabric = "roce-untuned";
  o.levels = 1;
  o.budget = 3;
  o.target.allreduce_bytes = 1 << 20;
  o.target.iterations = 1;
  return o;
}

Loader UntunedLoader() {
  return [](const std::vector<std::string>& sets) {
    scenario::Scenario s = profile::Load("roce-untuned", 2, sets);
    s.seed = 3;
    return s;
  };
}

}  // namespace tune_test

TEST(TuneSpace, EcnThresholdsStayBelowThePfcTriggerAndKmaxAboveKmin) {
  const scenario::Scenario s = profile::Load("roce-untuned", 2);
  const auto axes = SearchSpace(s);
  const int64_t xoff = s.net.pfc.xoff.count();
  for (const auto& v : tune_test::Find(axes, "fabric.ecn.kmax").values)
    EXPECT_LT(tune_test::Bytes(v), xoff) << v;
  for (const auto& v : tune_test::Find(axes, "fabric.ecn.kmin").values)
    EXPECT_LT(tune_test::Bytes(v), xoff) << v;
  for (int levels = 1; levels <= 3; ++levels)
    for (const Index& i : CoarseGrid(axes, levels)) EXPECT_TRUE(Valid(axes, i));
  // Every value of every axis, on the level-1 grid point, is one the scenario loader accepts.
  const Index mid = CoarseGrid(axes, 1).at(0);
  for (size_t a = 0; a < axes.size(); ++a) {
    for (size_t v = 0; v < axes[a].values.size(); ++v) {
      Index i = mid;
      i[a] = v;
      if (Valid(axes, i)) {
        EXPECT_NO_THROW(profile::Load("roce-untuned", 2, Sets(axes, i))) << axes[a].key << v;
      }
    }
  }
}

TEST(TuneSpace, CoarseGridSizesAndTheMinimumBudget) {
  const auto axes = SearchSpace(profile::Load("roce-untuned", 2));
  // Level 1: one point. Level 2: Kmin {10 %, 50 %} x Kmax {30 %, 95 %} of XOFF less the
  // pair with Kmin >= Kmax (3), x Pmax 2 x increase timer 2 x first-CNP rate 2 = 24.
  EXPECT_EQ(CoarseGrid(axes, 1).size(), 1u);
  EXPECT_EQ(CoarseGrid(axes, 2).size(), 24u);
  EXPECT_EQ(MinimumBudget(axes, 2), 25);
  Options o;
  o.levels = 2;
  o.budget = 24;
  try {
    Check(axes, o);
    FAIL() << "a budget below the coarse grid was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().field, "--budget");
    EXPECT_NE(std::string(e.what()).find("expected at least 25 runs"), std::string::npos)
        << e.what();
  }
  o.budget = 25;
  EXPECT_NO_THROW(Check(axes, o));
}

TEST(TuneSpace, GridAxesOffTheGridStartAtTheBaseValue) {
  // roce-untuned runs the ConnectX firmware preset: g = 5/1024, R_AI 5 Mb/s, CNP pacing 2 us.
  const auto axes = SearchSpace(profile::Load("roce-untuned", 2));
  const Axis& g = tune_test::Find(axes, "fabric.dcqcn.g");
  EXPECT_EQ(g.values[g.start], "5/1024");
  const Axis& ai = tune_test::Find(axes, "fabric.dcqcn.rate_ai");
  EXPECT_EQ(ai.values[ai.start], "5Mbps");
  const Axis& cnp = tune_test::Find(axes, "fabric.dcqcn.cnp_interval");
  EXPECT_EQ(cnp.values[cnp.start], "2us");
}

TEST(TuneSpace, RefusesInfinibandAndFabricsWithoutDcqcn) {
  EXPECT_THROW(SearchSpace(profile::Load("ib-ndr", 2)), InputError);
  EXPECT_THROW(SearchSpace(profile::Load("roce-untuned", 2, {"fabric.cc=none"})), InputError);
}

TEST(TuneGoal, FeasiblePointsFirstThenFewerPauseFrames) {
  Target t;
  Figures base;
  base.busbw_gbs = 100;
  base.pause_frames = 1000;
  Figures quiet_slow = base, quiet = base, loud = base;
  quiet_slow.busbw_gbs = 97.9;  // 2.1 % below: outside the bound
  quiet_slow.pause_frames = 0;
  quiet.busbw_gbs = 98.1;
  quiet.pause_frames = 10;
  loud.pause_frames = 500;
  EXPECT_TRUE(Better(quiet, quiet_slow, base, t));
  EXPECT_TRUE(Better(quiet, loud, base, t));
  EXPECT_FALSE(Better(loud, quiet, base, t));
  Figures failed = quiet;
  failed.failure = "stuck";
  EXPECT_TRUE(Better(loud, failed, base, t));
}

// A whole search on a tiny target: the same result on 1, 2 and 3 loopback ranks.
TEST(TuneRun, TheResultDoesNotDependOnTheRankCount) {
  const Options o = tune_test::Tiny();
  std::vector<std::string> docs;
  for (int ranks : {1, 2, 3}) {
    std::mutex m;
    std::string doc;
    parallel::RunLoopback(ranks, [&](parallel::Comm& c) {
      const Result r = tune::Run(c, tune_test::UntunedLoader(), o);
      if (c.Rank() == 0) {
        std::lock_guard<std::mutex> lock(m);
        doc = ToJson(r, tune_test::UntunedLoader()({}), o).dump();
      }
    });
    docs.push_back(doc);
  }
  ASSERT_FALSE(docs[0].empty());
  EXPECT_EQ(docs[0], docs[1]);
  EXPECT_EQ(docs[0], docs[2]);
  const auto j = nlohmann::json::parse(docs[0]);
  EXPECT_EQ(j.at("schema"), "lossless.tune/1");
  EXPECT_EQ(j.at("runs"), 3);
  // The untuned baseline pauses under the incast (ECN starts at the PFC trigger).
  EXPECT_GT(j.at("baseline").at("figures").at("pause_frames").get<int64_t>(), 0);
}

// Ctrl-C once the baseline has run: the search stops there, the
// result holds the one run, marked interrupted, and nothing is chosen.
TEST(TuneRun, InterruptAfterTheBaselineKeepsWhatRanAndChoosesNothing) {
  const Options o = tune_test::Tiny();
  Result r;
  {
    InterruptScope scope;
    parallel::SerialComm serial;
    r = tune::Run(serial, tune_test::UntunedLoader(), o, [](int64_t done, int64_t) {
      if (done == 1) RequestInterrupt();
    });
  }
  { InterruptScope clear; }  // the flag is process-wide: clear it for the other tests
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.stop, "interrupted");
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].stage, "baseline");
  const auto j = ToJson(r, tune_test::UntunedLoader()({}), o);
  EXPECT_EQ(j.at("interrupted"), true);
  EXPECT_TRUE(j.at("chosen").is_null());
  EXPECT_EQ(j.at("runs"), 1);
  EXPECT_EQ(r.verdict.rfind("interrupted (Ctrl-C)", 0), 0u) << r.verdict;
}

}  // namespace lossless::tune
