#include "collective/model/collective.hpp"

#include <gtest/gtest.h>

namespace lossless::collective {
namespace {

const Location kCli{"<cli>", 0, "-d"};

TEST(Collective, NamesRoundTrip) {
  for (Collective c : AllCollectives()) {
    EXPECT_EQ(CollectiveFromName(CollectiveName(c)), c);
    EXPECT_EQ(CollectiveFromName(BinaryName(c)), c);
  }
  EXPECT_EQ(CollectiveFromName("allreduce"), Collective::kAllReduce);
  EXPECT_EQ(CollectiveFromName("ReduceScatter"), Collective::kReduceScatter);
  EXPECT_EQ(CollectiveFromName("all_reduce_perf"), Collective::kAllReduce);
  EXPECT_EQ(CollectiveFromName("gather"), std::nullopt);  // not modelled
  EXPECT_EQ(BinaryName(Collective::kAllToAll), "alltoall_perf");
}

TEST(Collective, UnknownNamesAreInputErrorsWithSuggestion) {
  try {
    ParseCollective("all_reduc", {"<cli>", 0, "collective"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().field, "collective");
    EXPECT_NE(e.message().find("did you mean 'all_reduce'"), std::string::npos) << e.message();
  }
  EXPECT_THROW(ParseDataType("float32", kCli), InputError);
  EXPECT_THROW(ParseDataType("Float", kCli), InputError);  // nccl-tests compares exactly
  EXPECT_THROW(ParseRedOp("add", kCli), InputError);
  EXPECT_EQ(ParseDataType("bfloat16", kCli), DataType::kBfloat16);
  EXPECT_EQ(ParseRedOp("mulsum", kCli), RedOp::kMulSum);
}

TEST(Collective, ElementSizesAndNamesFollowNcclTests) {
  const char* names[] = {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                         "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
  const int64_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  ASSERT_EQ(AllDataTypes().size(), 12u);
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(DataTypeName(AllDataTypes()[i]), names[i]);
    EXPECT_EQ(ElementSize(AllDataTypes()[i]), sizes[i]);
  }
  const char* ops[] = {"sum", "prod", "max", "min", "avg", "mulsum"};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(RedOpName(AllRedOps()[i]), ops[i]);
}

TEST(Collective, ColumnsPerBinary) {
  EXPECT_TRUE(PrintsRedOp(Collective::kAllReduce));
  EXPECT_TRUE(PrintsRedOp(Collective::kSendRecv));
  EXPECT_FALSE(PrintsRedOp(Collective::kAllGather));
  EXPECT_FALSE(PrintsRedOp(Collective::kBroadcast));
  EXPECT_TRUE(HasRoot(Collective::kReduce));
  EXPECT_FALSE(HasRoot(Collective::kAllReduce));
  EXPECT_FALSE(ChecksInPlace(Collective::kAllToAll));
  EXPECT_TRUE(ChecksInPlace(Collective::kAllGather));
}

TEST(Collective, CountsAllReduceRoundDownToElements) {
  // 1 MiB float: 262144 elements (the reference layout example).
  CollCounts c = CountsFor(Collective::kAllReduce, 1 << 20, DataType::kFloat, 4);
  EXPECT_EQ(c.count, 262144);
  EXPECT_EQ(c.size_bytes, 1 << 20);
  // 7 bytes of float: one element; 3 bytes: none ("0 0" rows).
  EXPECT_EQ(CountsFor(Collective::kAllReduce, 7, DataType::kFloat, 4).size_bytes, 4);
  EXPECT_EQ(CountsFor(Collective::kAllReduce, 3, DataType::kFloat, 4).count, 0);
}

TEST(Collective, CountsPerRankCollectivesRoundTo16BytesPerRank) {
  // 1000 bytes float on 3 ranks: count 250, 83 per rank, rounded to 4 elements: 80.
  CollCounts ag = CountsFor(Collective::kAllGather, 1000, DataType::kFloat, 3);
  EXPECT_EQ(ag.count, 80);
  EXPECT_EQ(ag.send_elems, 80);
  EXPECT_EQ(ag.recv_elems, 240);
  EXPECT_EQ(ag.size_bytes, 960);
  CollCounts rs = CountsFor(Collective::kReduceScatter, 1000, DataType::kFloat, 3);
  EXPECT_EQ(rs.send_elems, 240);
  EXPECT_EQ(rs.recv_elems, 80);
  EXPECT_EQ(rs.size_bytes, 960);
  CollCounts a2a = CountsFor(Collective::kAllToAll, 1000, DataType::kFloat, 3);
  EXPECT_EQ(a2a.count, 80);
  EXPECT_EQ(a2a.size_bytes, 960);
  // int8: groups of 16 elements; double: groups of 2.
  EXPECT_EQ(CountsFor(Collective::kAllGather, 100, DataType::kInt8, 2).count, 48);
  EXPECT_EQ(CountsFor(Collective::kAllGather, 100, DataType::kDouble, 2).count, 6);
  // Below 16 bytes per rank: zero.
  EXPECT_EQ(CountsFor(Collective::kAllGather, 60, DataType::kFloat, 4).size_bytes, 0);
}

TEST(Collective, BusBwFactors) {
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kReduceScatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllToAll, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kBroadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kReduce, 16), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kSendRecv, 16), 1.0);
}

}  // namespace
}  // namespace lossless::collective
