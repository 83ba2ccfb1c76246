// The in-process loopback Comm: collectives, batches, agreement on errors.
#include "parallel/loopback.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parallel/comm.hpp"

namespace lossless::parallel {
namespace {

class LoopbackRanks : public ::testing::TestWithParam<int> {};

TEST_P(LoopbackRanks, CollectivesGiveEveryRankTheSameAnswer) {
  const int k = GetParam();
  std::mutex m;
  std::vector<int64_t> mins(static_cast<size_t>(k), -1);
  std::vector<std::string> bcast(static_cast<size_t>(k));
  std::vector<std::string> gathered;
  RunLoopback(k, [&](Comm& c) {
    EXPECT_EQ(c.Size(), k);
    // Rank r offers 100 - 7r: the minimum is the last rank's.
    const int64_t mn = c.AllreduceMin(100 - 7 * c.Rank());
    c.Barrier();
    const std::string b = c.Broadcast(c.Rank() == 0 ? "from zero" : "ignored");
    auto g = c.Gather("rank" + std::to_string(c.Rank()));
    std::lock_guard<std::mutex> lock(m);
    mins[static_cast<size_t>(c.Rank())] = mn;
    bcast[static_cast<size_t>(c.Rank())] = b;
    if (c.Rank() == 0) {
      gathered = g;
    } else {
      EXPECT_TRUE(g.empty());
    }
  });
  for (int r = 0; r < k; ++r) {
    EXPECT_EQ(mins[static_cast<size_t>(r)], 100 - 7 * (k - 1));
    EXPECT_EQ(bcast[static_cast<size_t>(r)], "from zero");
  }
  ASSERT_EQ(gathered.size(), static_cast<size_t>(k));
  for (int r = 0; r < k; ++r)
    EXPECT_EQ(gathered[static_cast<size_t>(r)], "rank" + std::to_string(r));
}

TEST_P(LoopbackRanks, LanesReduceElementwiseToTheMinimum) {
  // Lane i of rank r is (i + 3r) % 5 - 2 r: each lane's minimum comes from a
  // different rank; negative values and INT64_MAX pass through.
  const int k = GetParam();
  std::mutex m;
  std::vector<std::vector<int64_t>> got(static_cast<size_t>(k));
  RunLoopback(
      k,
      [&](Comm& c) {
        std::vector<int64_t> lanes(6);
        for (int i = 0; i < 5; ++i) lanes[static_cast<size_t>(i)] = (i + 3 * c.Rank()) % 5 - 2 * c.Rank();
        lanes[5] = c.Rank() == k - 1 ? INT64_MAX - 1 : INT64_MAX;
        c.AllreduceMinLanes(lanes.data(), lanes.size());
        std::lock_guard<std::mutex> lock(m);
        got[static_cast<size_t>(c.Rank())] = lanes;
      },
      LoopbackOptions{k == 3 ? 9u : 0u});
  std::vector<int64_t> want(6, INT64_MAX);
  for (int r = 0; r < k; ++r)
    for (int i = 0; i < 5; ++i)
      want[static_cast<size_t>(i)] = std::min<int64_t>(want[static_cast<size_t>(i)], (i + 3 * r) % 5 - 2 * r);
  want[5] = INT64_MAX - 1;
  for (int r = 0; r < k; ++r) EXPECT_EQ(got[static_cast<size_t>(r)], want) << "rank " << r;
}

// Ring exchange over many windows, with jitter: each rank sends window w's
// batch to both neighbours and must receive exactly their window-w batches,
// in the order it names them, whatever the order they arrived in.
class LoopbackRing : public ::testing::TestWithParam<int> {};

TEST_P(LoopbackRing, ExchangeDeliversEachWindowsBatchInOrder) {
  const int k = GetParam();  // >= 3: two distinct neighbours
  std::atomic<int> checked{0};
  RunLoopback(
      k,
      [&](Comm& c) {
        const int left = (c.Rank() + k - 1) % k, right = (c.Rank() + 1) % k;
        for (int w = 0; w < 50; ++w) {
          const std::string tag = std::to_string(c.Rank()) + "@" + std::to_string(w);
          // Window 7 sends an empty batch: it must still arrive (as empty).
          const std::string body = w == 7 ? std::string() : tag;
          auto in = c.Exchange({{right, body}, {left, body}}, {left, right});
          // A wrong count throws (ending every rank) rather than leaving peers waiting.
          if (in.size() != 2) throw std::runtime_error("expected two batches");
          const std::string l = std::to_string(left) + "@" + std::to_string(w);
          const std::string r = std::to_string(right) + "@" + std::to_string(w);
          EXPECT_EQ(in[0], w == 7 ? "" : l);
          EXPECT_EQ(in[1], w == 7 ? "" : r);
          // The window's end: the global minimum of every rank's proposal.
          EXPECT_EQ(c.AllreduceMin(1000 + w * 10 + c.Rank()), 1000 + w * 10);
          ++checked;
        }
      },
      LoopbackOptions{42});
  EXPECT_EQ(checked.load(), 50 * k);
}

INSTANTIATE_TEST_SUITE_P(Ranks, LoopbackRanks, ::testing::Values(1, 2, 3, 4, 7));
INSTANTIATE_TEST_SUITE_P(Ranks, LoopbackRing, ::testing::Values(3, 4, 7));

TEST(Loopback, TwoRanksExchangeWithEachOther) {
  std::vector<std::string> got(2);
  RunLoopback(2, [&](Comm& c) {
    const int peer = 1 - c.Rank();
    auto in = c.Exchange({{peer, "from " + std::to_string(c.Rank())}}, {peer});
    got[static_cast<size_t>(c.Rank())] = in.at(0);
  });
  EXPECT_EQ(got[0], "from 1");
  EXPECT_EQ(got[1], "from 0");
}

TEST(Loopback, AnExceptionOnOneRankEndsTheOthersInsteadOfHanging) {
  try {
    RunLoopback(4, [](Comm& c) {
      if (c.Rank() == 2) throw std::runtime_error("rank two failed");
      c.Barrier();  // ranks 0, 1, 3 wait here for rank 2, which never comes
    });
    FAIL() << "expected the exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank two failed");  // the cause, not the aborted waits
  }
}

TEST(Loopback, RunAgreedMakesEveryRankFailWithTheLowestFailingRanksMessage) {
  std::mutex m;
  std::vector<std::string> seen(3);
  RunLoopback(3, [&](Comm& c) {
    try {
      RunAgreed(c, [&] {
        if (c.Rank() >= 1) throw std::runtime_error("bad input " + std::to_string(c.Rank()));
      });
      ADD_FAILURE() << "rank " << c.Rank() << " did not throw";
    } catch (const RankError& e) {
      std::lock_guard<std::mutex> lock(m);
      seen[static_cast<size_t>(c.Rank())] = e.what();
    }
    c.Barrier();  // still in step after the failure
  });
  for (const auto& s : seen) EXPECT_EQ(s, "rank 1: bad input 1");
}

TEST(Loopback, RunAgreedPassesWhenNoRankFails) {
  std::atomic<int> ran{0};
  RunLoopback(3, [&](Comm& c) { RunAgreed(c, [&] { ++ran; }); });
  EXPECT_EQ(ran.load(), 3);
}

TEST(SerialComm, IsOneRankAndHasNoPeers) {
  SerialComm c;
  EXPECT_EQ(c.Size(), 1);
  EXPECT_EQ(c.AllreduceMin(5), 5);
  EXPECT_EQ(c.Gather("x"), std::vector<std::string>{"x"});
  EXPECT_EQ(c.Broadcast("y"), "y");
  EXPECT_THROW(c.Exchange({{1, "z"}}, {}), std::logic_error);
}

}  // namespace
}  // namespace lossless::parallel
