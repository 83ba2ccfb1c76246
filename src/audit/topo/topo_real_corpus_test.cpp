// Every real `nvidia-smi topo -m` capture under tests/fixtures/real/topo/ parses and gets
// the verdict an expert would give; tests/fixtures/real/SOURCES.md says where each comes
// from and why. A file in that folder without an entry here fails the test.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audit/topo/topo_rules.hpp"
#include "formats/topo_matrix.hpp"

namespace lossless::audit::topo {
namespace {

using formats::TopoLink;

const std::string kDir = std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/real/topo/";

TopoReport Evaluate(const std::string& name) {
  std::ifstream in(kDir + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return EvaluateTopo(formats::ParseTopoMatrix(in, name));
}

struct Case {
  const char* sample;
  Verdict verdict;
  int64_t gpus, nics;
  // Per GPU, in GPU order: the NIC it is paired with, the link, and how many GPUs share it.
  std::vector<std::string> nic;
  std::vector<TopoLink> link;
  int64_t shared_by;
};

TEST(TopoRealCorpus, EveryCaptureGetsTheExpertVerdict) {
  const auto PIX = TopoLink::kPix, NODE = TopoLink::kNode, SYS = TopoLink::kSys;
  const std::vector<std::string> one(8, "mlx5_0");
  const std::vector<Case> cases = {
      // DGX-1-like V100 box with one EDR HCA behind GPU2/GPU3's switch: GPUs 4-7 reach it
      // across the socket link, GPUs 0-1 across root complexes.
      {"dlperf_v100_8gpu_1nic.txt", Verdict::kFail, 8, 1, one,
       {NODE, NODE, PIX, PIX, SYS, SYS, SYS, SYS}, 8},
      // V100 box, one HCA on a root port of its own: every GPU reaches it at NODE.
      {"fleetx_v100_8gpu_1nic_node.txt", Verdict::kFail, 8, 1, one,
       {NODE, NODE, NODE, NODE, NODE, NODE, NODE, NODE}, 8},
      // 4 x RTX 6000 Ada, two dual-port ConnectX cards, one per socket, on root ports of
      // their own: the nearest NIC of every GPU is NODE, and a NIC per GPU is available.
      {"stelline_rtx6000ada_4gpu_4nic.txt", Verdict::kFail, 4, 4,
       {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}, {NODE, NODE, NODE, NODE}, 1},
      // Princeton Della: a 2-GPU A100 node, a NIC per socket, each on its own root port;
      // old tab-separated layout with the NICs named by device.
      {"della_a100_2gpu_2nic_tabs.txt", Verdict::kFail, 2, 2, {"mlx5_0", "mlx5_1"},
       {NODE, NODE}, 1},
      // Princeton Traverse (POWER9, NV3 pairs): two dual-port cards, NUMA nodes 0 and 8.
      {"traverse_v100_4gpu_4nic_tabs.txt", Verdict::kFail, 4, 4,
       {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}, {NODE, NODE, NODE, NODE}, 1},
  };
  std::set<std::string> listed;
  for (const Case& c : cases) listed.insert(c.sample);
  for (const auto& e : std::filesystem::directory_iterator(kDir))
    EXPECT_TRUE(listed.count(e.path().filename().string()))
        << e.path().filename().string() << " has no expected verdict here";
  for (const Case& c : cases) {
    TopoReport r = Evaluate(c.sample);
    EXPECT_EQ(r.verdict, c.verdict) << c.sample;
    EXPECT_EQ(r.gpus, c.gpus) << c.sample;
    EXPECT_EQ(r.nics, c.nics) << c.sample;
    ASSERT_EQ(r.pairs.size(), c.nic.size()) << c.sample;
    for (size_t i = 0; i < r.pairs.size(); ++i) {
      EXPECT_EQ(r.pairs[i].nic, c.nic[i]) << c.sample << " GPU" << i;
      EXPECT_EQ(r.pairs[i].link, c.link[i]) << c.sample << " GPU" << i;
      EXPECT_EQ(r.pairs[i].shared_by, c.shared_by) << c.sample << " GPU" << i;
      EXPECT_EQ(r.pairs[i].verdict, c.link[i] == PIX ? Verdict::kPass : Verdict::kFail)
          << c.sample << " GPU" << i;
    }
    EXPECT_FALSE(r.nccl_ib_hca.has_value()) << c.sample;
  }
}

}  // namespace
}  // namespace lossless::audit::topo
