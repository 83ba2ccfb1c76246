#include "node/node.hpp"

#include <string>

#include <gtest/gtest.h>

namespace lossless::node {
namespace {

std::string Fixture(const std::string& rel) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/" + rel;
}

double Gbs(units::Rate r) {
  return static_cast<double>(r.bps()) / 8e9;
}

TEST(NodePresets, DatasheetFiguresPerDirection) {
  const Location here{"<test>", 0, "--gpu"};
  // Datasheet NVLink figures are bidirectional: 600, 900, 900, 1800 GB/s.
  EXPECT_DOUBLE_EQ(Gbs(FindNodePreset("a100", here).nvlink_rate) * 2, 600);
  EXPECT_DOUBLE_EQ(Gbs(FindNodePreset("H100", here).nvlink_rate) * 2, 900);
  EXPECT_DOUBLE_EQ(Gbs(FindNodePreset("h200", here).nvlink_rate) * 2, 900);
  EXPECT_DOUBLE_EQ(Gbs(FindNodePreset("b200", here).nvlink_rate) * 2, 1800);
  EXPECT_EQ(FindNodePreset("a100", here).pcie_gen, 4);
  EXPECT_EQ(FindNodePreset("b200", here).pcie_gen, 5);
  for (const NodePreset& p : NodePresets()) {
    EXPECT_EQ(p.gpus_per_node, 8) << p.name;
    EXPECT_EQ(p.pcie_lanes, 16) << p.name;
    EXPECT_FALSE(p.source.empty()) << p.name;
  }
  try {
    FindNodePreset("v100", here);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().field, "--gpu");
    EXPECT_NE(std::string(e.what()).find("a100, h100, h200 or b200"), std::string::npos);
  }
}

TEST(NodePresets, DefaultConfigIsTheH100PresetAndTheEnginesOldDefaults) {
  NodeConfig d;
  NodeConfig h;
  h.ApplyPreset(FindNodePreset("h100", {}));
  EXPECT_EQ(d.nvlink_rate, h.nvlink_rate);
  EXPECT_EQ(d.nvlink_latency, h.nvlink_latency);
  EXPECT_EQ(d.pcie_gen, h.pcie_gen);
  EXPECT_DOUBLE_EQ(d.nccl_nvlink_gbs, h.nccl_nvlink_gbs);
  EXPECT_EQ(d.nvlink_rate, units::Rate::Gbps(3600));
  EXPECT_EQ(d.nvlink_latency, units::Time::Ns(600));
}

TEST(Pcie, PayloadRateAfterCodingAndTlpOverhead) {
  // Gen4 x16: 16 GT/s x 16 x 128/130 = 31.51 GB/s raw, x 256/276 = 29.22.
  EXPECT_NEAR(Gbs(PciePayloadRate(4, 16)), 16.0 * 16 / 8 * 128 / 130 * 256 / 276, 1e-6);
  EXPECT_NEAR(Gbs(PciePayloadRate(4, 16)), 29.22, 0.01);
  EXPECT_NEAR(Gbs(PciePayloadRate(5, 16)), 58.45, 0.01);
  // Gen3 x8 after coding is "about 8 GB/s" (Intel AN 829), x 0.9275 of TLPs.
  EXPECT_NEAR(Gbs(PciePayloadRate(3, 8)), 7.877 * 256 / 276, 0.01);
  // Gen2 8b/10b.
  EXPECT_NEAR(Gbs(PciePayloadRate(2, 16)), 8.0 * 256 / 276, 1e-6);
}

TEST(Rails, DefaultIsOneRailPerGpuAtPixWithGdr) {
  NodeConfig cfg;
  const std::vector<RailPath> rails = Rails(cfg, 8);
  ASSERT_EQ(rails.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(rails[k].gpu, k);
    EXPECT_EQ(rails[k].hop, PcieHop::kPix);
    EXPECT_TRUE(rails[k].gdr);
    EXPECT_EQ(rails[k].nic_rate, PciePayloadRate(5, 16));
    EXPECT_EQ(rails[k].stage_rate.bps(), 0);
  }
}

TEST(Rails, WithoutGdrASharedSwitchHalvesTheRateAndEveryMessageBounces) {
  NodeConfig cfg;
  cfg.gdr = false;
  const std::vector<RailPath> rails = Rails(cfg, 2);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_FALSE(rails[0].gdr);
  EXPECT_EQ(rails[0].nic_rate.bps(), PciePayloadRate(5, 16).bps() / 2);
  EXPECT_EQ(rails[0].stage_rate, rails[0].nic_rate);
  EXPECT_EQ(rails[0].stage_latency, cfg.host_bounce_latency);
}

TEST(NicMap, DgxH100GivesEachGpuItsPixNic) {
  NodeConfig cfg;
  MapFromTopoFile(Fixture("topo/dgx_h100_8gpu_8nic.txt"), cfg);
  ASSERT_EQ(cfg.nic_of_gpu.size(), 8u);
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(cfg.nic_of_gpu[g], g);
    EXPECT_EQ(cfg.hop_of_gpu[g], PcieHop::kPix);
  }
  EXPECT_EQ(cfg.nics[3], "mlx5_3");
  const std::vector<RailPath> rails = Rails(cfg, 8);
  ASSERT_EQ(rails.size(), 8u);
  EXPECT_TRUE(rails[7].gdr);
  // A wrong map: each GPU on the other socket's NIC.
  SetNicMap("4,5,6,7,0,1,2,3", cfg, {"<cli>", 0, "--nic-map"});
  const std::vector<RailPath> wrong = Rails(cfg, 8);
  ASSERT_EQ(wrong.size(), 8u);
  for (const RailPath& r : wrong) {
    EXPECT_EQ(r.hop, PcieHop::kSys);
    EXPECT_FALSE(r.gdr);  // beyond NCCL's default GDR level (PXB)
    EXPECT_EQ(r.nic_rate, cfg.cross_socket_rate);
    EXPECT_EQ(r.stage_latency, cfg.host_bounce_latency + cfg.cross_socket_latency);
  }
}

TEST(NicMap, RealDellaA100NicsAreAcrossAHostBridgeSoNcclUsesNoGdr) {
  // tests/fixtures/real/topo: Princeton Della, 2 A100s, each with a NIC at NODE.
  NodeConfig cfg;
  cfg.ApplyPreset(FindNodePreset("a100", {}));
  MapFromTopoFile(Fixture("real/topo/della_a100_2gpu_2nic_tabs.txt"), cfg);
  EXPECT_EQ(cfg.gpus_per_node, 2);
  EXPECT_EQ(cfg.nic_of_gpu, (std::vector<int>{0, 1}));
  EXPECT_EQ(cfg.hop_of_gpu[1], PcieHop::kNode);
  const std::vector<RailPath> rails = Rails(cfg, 2);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_FALSE(rails[0].gdr);
  // Separate root ports: both crossings at the full Gen4 rate, plus the bounce.
  EXPECT_EQ(rails[0].nic_rate, PciePayloadRate(4, 16));
  EXPECT_EQ(rails[0].stage_rate, PciePayloadRate(4, 16));
  // With NCCL_NET_GDR_LEVEL=SYS NCCL would use GPUDirect RDMA there.
  cfg.gdr_level = PcieHop::kSys;
  EXPECT_TRUE(Rails(cfg, 2)[0].gdr);
}

TEST(NicMap, RealNodesWithFewerNicsThanGpusShareRails) {
  // FleetX: 8 V100s and one NIC, every GPU at NODE from it: one rail.
  NodeConfig cfg;
  MapFromTopoFile(Fixture("real/topo/fleetx_v100_8gpu_1nic_node.txt"), cfg);
  EXPECT_EQ(cfg.nic_of_gpu, std::vector<int>(8, 0));
  EXPECT_EQ(Rails(cfg, 8).size(), 1u);
  // Traverse: 4 V100s, 4 NICs, two per socket; each GPU at NODE from two of
  // them: the tie goes to the NIC fewer GPUs use, so all four NICs serve.
  NodeConfig t;
  MapFromTopoFile(Fixture("real/topo/traverse_v100_4gpu_4nic_tabs.txt"), t);
  EXPECT_EQ(t.nic_of_gpu, (std::vector<int>{0, 1, 2, 3}));
  for (PcieHop h : t.hop_of_gpu) EXPECT_EQ(h, PcieHop::kNode);
}

TEST(NicMap, BadInput) {
  NodeConfig cfg;
  const Location where{"<cli>", 0, "--nic-map"};
  EXPECT_THROW(SetNicMap("0,1,x", cfg, where), InputError);
  EXPECT_THROW(SetNicMap("0,1", cfg, where), InputError);              // not one per GPU
  EXPECT_THROW(SetNicMap("0,1,2,3,4,5,6,8", cfg, where), InputError);  // no NIC 8
  MapFromTopoFile(Fixture("topo/shared_nics_4gpu_2nic.txt"), cfg);
  EXPECT_EQ(cfg.gpus_per_node, 4);
  try {
    SetNicMap("0,1,2,0", cfg, where);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("from 0 to 1"), std::string::npos) << e.what();
  }
  // More GPUs than the preset's node.
  NodeConfig small;
  small.gpus_per_node = 4;
  try {
    MapFromTopoFile(Fixture("topo/dgx_h100_8gpu_8nic.txt"), small);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 4 GPUs"), std::string::npos) << e.what();
  }
  // A matrix without NICs.
  NodeConfig none;
  EXPECT_THROW(MapFromTopoFile(Fixture("topo/two_gpu_no_nic.txt"), none), InputError);
}

}  // namespace
}  // namespace lossless::node
