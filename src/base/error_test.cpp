#include "base/error.hpp"

#include <new>

#include <gtest/gtest.h>

namespace lossless {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("kmin", "kmin"), 0u);
  EXPECT_EQ(EditDistance("kmin", "kmax"), 2u);
  EXPECT_EQ(EditDistance("rate_aii", "rate_ai"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(FindNearestName, AbbreviationRanksBeforeAShortNameFewerEditsAway) {
  const std::vector<std::string> dcqcn = {"g", "rate_ai", "rate_hai", "min_rate"};
  // "rai" is 3 edits from "g" and 4 from "rate_ai", but abbreviates rate_ai.
  NearestName n = FindNearestName("rai", dcqcn);
  EXPECT_EQ(n.name, "rate_ai");
  EXPECT_TRUE(n.abbreviation);
  EXPECT_EQ(n.distance, 4u);
  EXPECT_TRUE(n.Close(0));
  // Without an abbreviation the edit distance decides, ties to the earlier.
  n = FindNearestName("rate_aii", dcqcn);
  EXPECT_EQ(n.name, "rate_ai");
  EXPECT_FALSE(n.abbreviation);
  EXPECT_EQ(n.distance, 1u);
  EXPECT_EQ(FindNearestName("x", {"ab", "ac"}).name, "ab");
  // One letter abbreviates nothing; a far name is not close.
  n = FindNearestName("q", {"quanta", "zz"});
  EXPECT_FALSE(n.abbreviation);
  EXPECT_EQ(n.name, "zz");
  EXPECT_FALSE(FindNearestName("zzzzzz", {"kmin"}).Close(3));
  // The first letter must match: "ai" does not abbreviate rate_ai.
  EXPECT_FALSE(FindNearestName("ai", {"rate_ai"}).abbreviation);
  // Dotted names: the last component is abbreviated, the path must match.
  const std::vector<std::string> paths = {"fabric.dcqcn.g", "fabric.dcqcn.rate_ai",
                                          "fabric.pfc.rate_ai_like"};
  EXPECT_EQ(FindNearestName("fabric.dcqcn.rai", paths).name, "fabric.dcqcn.rate_ai");
  EXPECT_TRUE(FindNearestName("fabric.dcqcn.rai", paths).abbreviation);
  EXPECT_FALSE(FindNearestName("fabric.ecn.rai", paths).abbreviation);
  EXPECT_TRUE(FindNearestName("anything", {}).name.empty());
  EXPECT_FALSE(FindNearestName("anything", {}).Close(100));
}

TEST(AllocationContext, KeepsTheInnermostScopeAnExceptionLeft) {
  try {
    AllocationContext outer("reading s.yaml");
    AllocationContext inner("building 9 flows");
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    EXPECT_EQ(FailedContext(), "building 9 flows");
  }
  {
    // A handled exception inside a scope that then ends normally is over.
    AllocationContext outer("outer");
    try {
      AllocationContext inner("inner");
      throw 1;
    } catch (int) {
    }
  }
  EXPECT_EQ(FailedContext(), "");
  try {
    AllocationContext only("the only one");
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    EXPECT_EQ(FailedContext(), "the only one");
  }
}

}  // namespace
}  // namespace lossless
