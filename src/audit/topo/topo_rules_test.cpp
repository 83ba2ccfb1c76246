#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <string>

#include <gtest/gtest.h>

#include "audit/topo/topo_rules.hpp"
#include "formats/topo_matrix.hpp"
#include "testing/topo_matrix_fixtures.hpp"

namespace lossless::audit::topo {
namespace {

using formats::TopoLink;
using formats::TopoMatrix;
using lossless::testing::ParseTopoFixture;
using lossless::testing::ParseTopoText;

std::vector<std::string> Nics(const TopoReport& r) {
  std::vector<std::string> out;
  for (const auto& p : r.pairs) out.push_back(p.nic);
  return out;
}

TEST(TopoRules, HealthyDgxPairsEachGpuWithItsPixNic) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("dgx_h100_8gpu_8nic.txt"));
  EXPECT_EQ(r.verdict, Verdict::kPass);
  ASSERT_EQ(r.pairs.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(r.pairs[i].nic, "mlx5_" + std::to_string(i));
    EXPECT_EQ(r.pairs[i].link, TopoLink::kPix);
    EXPECT_EQ(r.pairs[i].numa_match, true);
  }
  EXPECT_FALSE(r.nccl_ib_hca.has_value());
  EXPECT_TRUE(r.findings.empty());
}

TEST(TopoRules, SwappedOrderGivesNcclIbHca) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("nic_order_swapped.txt"));
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_TRUE(r.listing_order_differs);
  EXPECT_EQ(Nics(r), (std::vector<std::string>{"mlx5_1", "mlx5_0", "mlx5_3", "mlx5_2", "mlx5_5",
                                               "mlx5_4", "mlx5_7", "mlx5_6"}));
  EXPECT_EQ(r.nccl_ib_hca, "mlx5_1,mlx5_0,mlx5_3,mlx5_2,mlx5_5,mlx5_4,mlx5_7,mlx5_6");
}

TEST(TopoRules, BondedStorageNicsLeftOutOfHcaList) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("ten_nics_bond.txt"));
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(r.unused_nics, (std::vector<std::string>{"mlx5_bond_0", "mlx5_bond_1"}));
  EXPECT_EQ(r.nccl_ib_hca, "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7");
  EXPECT_EQ(r.pairs[3].link, TopoLink::kPxb);
}

TEST(TopoRules, GpuWithoutLocalNicFailsAcrossSocket) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("gpu_without_local_nic.txt"));
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(r.pairs[3].nic, "mlx5_3");
  EXPECT_EQ(r.pairs[3].link, TopoLink::kSys);
  EXPECT_EQ(r.pairs[3].numa_match, false);
  EXPECT_EQ(r.pairs[3].verdict, Verdict::kFail);
  EXPECT_EQ(r.pairs[2].verdict, Verdict::kPass);
}

TEST(TopoRules, RootComplexCrossingFails) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("cross_root_complex.txt"));
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(r.pairs[0].link, TopoLink::kPhb);
  EXPECT_EQ(r.pairs[2].link, TopoLink::kNode);
  EXPECT_EQ(r.pairs[2].numa_match, true);
  EXPECT_NE(r.pairs[0].reason.find("root complex"), std::string::npos);
}

TEST(TopoRules, FewerNicsAreSharedEvenly) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("shared_nics_4gpu_2nic.txt"));
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(Nics(r), (std::vector<std::string>{"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1"}));
  EXPECT_EQ(r.pairs[0].shared_by, 2);
}

TEST(TopoRules, VmAllPhbIsIndeterminate) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("vm_all_phb.txt"));
  EXPECT_EQ(r.verdict, Verdict::kIndeterminate);
  EXPECT_FALSE(r.pairs[0].numa_match.has_value());
  EXPECT_EQ(r.pairs[0].verdict, Verdict::kIndeterminate);
  EXPECT_FALSE(r.nccl_ib_hca.has_value());
  EXPECT_EQ(r.pairs[7].shared_by, 2);
}

TEST(TopoRules, NoNicsIsIndeterminate) {
  TopoReport r = EvaluateTopo(ParseTopoFixture("two_gpu_no_nic.txt"));
  EXPECT_EQ(r.verdict, Verdict::kIndeterminate);
  EXPECT_TRUE(r.pairs.empty());
}

TEST(TopoRules, ExactMatchPrefixWhenNamesArePrefixes) {
  // 2 GPUs; mlx5_1 is a prefix of mlx5_10, so NCCL_IB_HCA needs '='.
  TopoMatrix m = ParseTopoText(
      "\tGPU0\tGPU1\tNIC0\tNIC1\tNIC2\n"
      "GPU0\t X \tNV4\tSYS\tPIX\tSYS\n"
      "GPU1\tNV4\t X \tSYS\tSYS\tPIX\n"
      "NIC0\tSYS\tSYS\t X \tSYS\tSYS\n"
      "NIC1\tPIX\tSYS\tSYS\t X \tSYS\n"
      "NIC2\tSYS\tPIX\tSYS\tSYS\t X \n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n"
      "  NIC2: mlx5_10\n");
  TopoReport r = EvaluateTopo(m);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(r.nccl_ib_hca, "=mlx5_1,mlx5_10");
  EXPECT_EQ(r.unused_nics, (std::vector<std::string>{"mlx5_0"}));
}

// --- Ranking and pairing boundaries on generated matrices ------------------
// A matrix of G GPUs and N NICs (mlx5_0..): GPU-GPU NV12, NIC-NIC SYS, and
// GPU g - NIC k as link(g, k); symmetric, with a NIC legend.
std::string GeneratedMatrix(size_t G, size_t N,
                            const std::function<std::string(size_t, size_t)>& link) {
  auto name = [&](size_t i) {
    return i < G ? "GPU" + std::to_string(i) : "NIC" + std::to_string(i - G);
  };
  auto cell = [&](size_t a, size_t b) -> std::string {
    if (a == b) return " X ";
    if (a < G && b < G) return "NV12";
    if (a >= G && b >= G) return "SYS";
    return a < G ? link(a, b - G) : link(b, a - G);
  };
  std::string s;
  for (size_t i = 0; i < G + N; ++i) s.append("\t").append(name(i));
  s += "\n";
  for (size_t a = 0; a < G + N; ++a) {
    s += name(a);
    for (size_t b = 0; b < G + N; ++b) s.append("\t").append(cell(a, b));
    s += "\n";
  }
  s += "\nNIC Legend:\n\n";
  for (size_t k = 0; k < N; ++k)
    s += "  NIC" + std::to_string(k) + ": mlx5_" + std::to_string(k) + "\n";
  return s;
}

// Evaluates on a worker thread; a pairing that does not finish within 20 s
// (an assignment with fewer NIC slots than GPUs never ends) fails the test
// and ends the process, since the thread cannot be cancelled.
TopoReport EvaluateWithin20s(const TopoMatrix& m) {
  auto done = std::async(std::launch::async, [&] { return EvaluateTopo(m); });
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "EvaluateTopo did not finish within 20 s";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  return done.get();
}

TEST(TopoRulesBoundaries, PhbIsPreferredOverNode) {
  // GPU0 reaches NIC0 across root complexes (NODE) and NIC1 through its host
  // bridge (PHB); GPU1 reaches both across the socket. PHB is the closer of
  // the two, so GPU0 takes NIC1 although listing order suggests NIC0.
  TopoReport r = EvaluateWithin20s(ParseTopoText(GeneratedMatrix(2, 2, [](size_t g, size_t k) {
    if (g == 1) return std::string("SYS");
    return std::string(k == 0 ? "NODE" : "PHB");
  })));
  ASSERT_EQ(r.pairs.size(), 2u);
  EXPECT_EQ(r.pairs[0].nic, "mlx5_1");
  EXPECT_EQ(r.pairs[0].link, TopoLink::kPhb);
  EXPECT_EQ(r.pairs[1].nic, "mlx5_0");
  EXPECT_TRUE(r.listing_order_differs);
  // Neither PHB nor NODE is a GPUDirect-friendly path.
  EXPECT_EQ(r.pairs[0].verdict, Verdict::kFail);
  EXPECT_EQ(r.verdict, Verdict::kFail);
}

TEST(TopoRulesBoundaries, PxbPassesAndPhbFails) {
  TopoReport r = EvaluateWithin20s(ParseTopoText(GeneratedMatrix(2, 2, [](size_t g, size_t k) {
    if (g != k) return std::string("SYS");
    return std::string(g == 0 ? "PXB" : "PHB");
  })));
  ASSERT_EQ(r.pairs.size(), 2u);
  EXPECT_EQ(r.pairs[0].link, TopoLink::kPxb);
  EXPECT_EQ(r.pairs[0].verdict, Verdict::kPass);
  EXPECT_EQ(r.pairs[1].link, TopoLink::kPhb);
  EXPECT_EQ(r.pairs[1].verdict, Verdict::kFail);
}

TEST(TopoRulesBoundaries, ThreeGpusOnTwoNicsEndsAndShares) {
  // GPU0 and GPU1 sit under NIC0's switch, GPU2 under NIC1's.
  TopoReport r = EvaluateWithin20s(ParseTopoText(GeneratedMatrix(
      3, 2, [](size_t g, size_t k) { return std::string((g < 2) == (k == 0) ? "PIX" : "SYS"); })));
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(Nics(r), (std::vector<std::string>{"mlx5_0", "mlx5_0", "mlx5_1"}));
  EXPECT_EQ(r.pairs[0].shared_by, 2);
  EXPECT_EQ(r.pairs[2].shared_by, 1);
}

TEST(TopoRulesBoundaries, EightGpusOnThreeNicsEndsAndShares) {
  // GPUs 0-2 under NIC0, 3-5 under NIC1, 6-7 under NIC2.
  TopoReport r = EvaluateWithin20s(ParseTopoText(GeneratedMatrix(
      8, 3, [](size_t g, size_t k) { return std::string(g / 3 == k ? "PIX" : "SYS"); })));
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(Nics(r), (std::vector<std::string>{"mlx5_0", "mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1",
                                               "mlx5_1", "mlx5_2", "mlx5_2"}));
  EXPECT_EQ(r.pairs[0].shared_by, 3);
  EXPECT_EQ(r.pairs[7].shared_by, 2);
  EXPECT_TRUE(r.unused_nics.empty());
}

}  // namespace
}  // namespace lossless::audit::topo
