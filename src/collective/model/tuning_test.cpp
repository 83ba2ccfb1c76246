#include "collective/model/tuning.hpp"

#include <gtest/gtest.h>

namespace lossless::collective {
namespace {

TuningOverrides Env(std::string algo, std::string proto, int min_ch = -1, int max_ch = -1) {
  TuningOverrides o;
  o.algo = std::move(algo);
  o.proto = std::move(proto);
  o.min_channels = min_ch;
  o.max_channels = max_ch;
  return o;
}

// 16 nodes x 8 Hopper GPUs, Intel hosts, NVLink inside, latencyInter 0: the worked
// example of docs/model/collectives.md#worked-example (latency terms of NCCL 2.23-2.27).
TuningModel Example16x8(TuningOverrides o = {}) {
  CommShape shape{16, 8, GpuArch::kHopper, CpuVendor::kIntel};
  SearchGraph g;
  g.channels = 8;
  g.bw_intra_gbs = g.bw_inter_gbs = 48.0;
  return TuningModel(shape, g, o);
}

TEST(Tuning, WorkedExampleLatencies) {
  TuningModel m = Example16x8();
  const Collective ar = Collective::kAllReduce;
  // 8.4 + (254 - 30) x max(3.4, 3 x 1.0) + 30 x 14.0
  EXPECT_NEAR(m.Latency(ar, Algorithm::kRing, Protocol::kSimple), 1190.0, 1e-9);
  // 6.6 + 224 x max(0.6, 1.0) + 30 x 2.7
  EXPECT_NEAR(m.Latency(ar, Algorithm::kRing, Protocol::kLL), 311.6, 1e-9);
  // 8.4 + 2 x (7 x 4.0 + 4 x 14)
  EXPECT_NEAR(m.Latency(ar, Algorithm::kTree, Protocol::kSimple), 176.4, 1e-9);
  // 6.8 + 2 x (7 x 0.6 + 4 x 5.0)
  EXPECT_NEAR(m.Latency(ar, Algorithm::kTree, Protocol::kLL), 55.2, 1e-9);
}

TEST(Tuning, RingPlateauFactorOnlyForLargeMultiNodeAllReduce) {
  TuningModel m = Example16x8();
  const Collective ar = Collective::kAllReduce;
  const double bw = m.Bandwidth(ar, Algorithm::kRing, Protocol::kSimple);
  ASSERT_GT(bw, 0);
  // 64 bytes per channel and rank and above: latency x 1.4.
  const int64_t big = int64_t{64} * m.CommChannels() * 128;
  EXPECT_NEAR(*m.Time(ar, Algorithm::kRing, Protocol::kSimple, big),
              1190.0 * 1.4 + big / (1000 * bw), 1e-6);
  EXPECT_NEAR(*m.Time(ar, Algorithm::kRing, Protocol::kSimple, big - 1),
              1190.0 + (big - 1) / (1000 * bw), 1e-6);
}

TEST(Tuning, BandwidthRulesHopperSixteenNodes) {
  TuningModel m = Example16x8();
  const Collective ar = Collective::kAllReduce;
  const double n = 128;
  // Ring Simple: 8 x 48 busBw, algBw = busBw x n / (2(n-1)).
  EXPECT_NEAR(m.Bandwidth(ar, Algorithm::kRing, Protocol::kSimple), 384.0 * n / (2 * (n - 1)),
              1e-9);
  // Ring LL: min(llMaxBw Intel >= 3 nodes = 20.4, 0.5 x 384).
  EXPECT_NEAR(m.Bandwidth(ar, Algorithm::kRing, Protocol::kLL), 20.4 * n / (2 * (n - 1)), 1e-9);
  // Ring LL128: min(0.92 x 384, 8 x 36.7).
  EXPECT_NEAR(m.Bandwidth(ar, Algorithm::kRing, Protocol::kLL128), 8 * 36.7 * n / (2 * (n - 1)),
              1e-9);
  // Tree Simple: min(0.92 x 384, 8 x 36.0) x 0.5.
  EXPECT_NEAR(m.Bandwidth(ar, Algorithm::kTree, Protocol::kSimple), 288.0 * 0.5, 1e-9);
  // Tree LL: min(288 / 3.8, 20.4) x 0.5.
  EXPECT_NEAR(m.Bandwidth(ar, Algorithm::kTree, Protocol::kLL), 20.4 * 0.5, 1e-9);
  // Tree LL128: min(288 x 120/128, 8 x 29.0) x 0.5.
  EXPECT_NEAR(m.Bandwidth(ar, Algorithm::kTree, Protocol::kLL128), 232.0 * 0.5, 1e-9);
  // No Tree for the other collectives.
  EXPECT_EQ(m.Bandwidth(Collective::kAllGather, Algorithm::kTree, Protocol::kSimple), 0);
  EXPECT_EQ(m.Bandwidth(Collective::kBroadcast, Algorithm::kTree, Protocol::kLL), 0);
  EXPECT_GT(m.Bandwidth(Collective::kAllGather, Algorithm::kRing, Protocol::kSimple), 0);
}

TEST(Tuning, ChoosesLLForSmallTreeAtScaleAndSimpleForLarge) {
  TuningModel m = Example16x8();
  const Collective ar = Collective::kAllReduce;
  AlgoChoice small = m.Choose(ar, 8);
  EXPECT_EQ(small.algorithm, Algorithm::kTree);
  EXPECT_EQ(small.protocol, Protocol::kLL);
  EXPECT_EQ(small.channels, 1);  // 8 bytes < nc x 512 x 8 down to one channel
  AlgoChoice large = m.Choose(ar, int64_t{8} << 30);
  EXPECT_EQ(large.protocol, Protocol::kSimple);
  EXPECT_EQ(large.algorithm, Algorithm::kRing);
  EXPECT_EQ(large.channels, m.CommChannels());
  EXPECT_EQ(large.threads, 512 + 32);  // Ring/Simple adds a sync warp
  // The chosen time is the minimum over every enabled pair.
  for (int64_t size : {int64_t{1} << 10, int64_t{1} << 20, int64_t{1} << 26}) {
    AlgoChoice c = m.Choose(ar, size);
    for (Algorithm a : {Algorithm::kTree, Algorithm::kRing}) {
      for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
        if (auto t = m.Time(ar, a, p, size)) {
          EXPECT_LE(c.time_us, *t);
        }
      }
    }
  }
}

TEST(Tuning, RingTreeCrossoverMovesWithScale) {
  // On 2 nodes Ring wins earlier than on 16 nodes: the ring latency grows with n.
  auto crossover = [](int nodes) {
    CommShape shape{nodes, 8, GpuArch::kHopper, CpuVendor::kIntel};
    SearchGraph g;
    g.channels = 8;
    g.bw_intra_gbs = g.bw_inter_gbs = 48.0;
    TuningModel m(shape, g, Env("", "Simple"));
    for (int64_t s = 1024; s <= (int64_t{1} << 34); s *= 2) {
      if (m.Choose(Collective::kAllReduce, s).algorithm == Algorithm::kRing) return s;
    }
    return int64_t{0};
  };
  const int64_t x4 = crossover(4);
  const int64_t x32 = crossover(32);
  ASSERT_GT(x4, 0);
  ASSERT_GT(x32, 0);
  EXPECT_LT(x4, x32);
}

TEST(Tuning, OverridesLikeNcclEnvironment) {
  const Collective ar = Collective::kAllReduce;
  TuningModel ring = Example16x8(Env("Ring", ""));
  EXPECT_EQ(ring.Bandwidth(ar, Algorithm::kTree, Protocol::kSimple), 0);
  EXPECT_EQ(ring.Choose(ar, 8).algorithm, Algorithm::kRing);
  TuningModel no_tree = Example16x8(Env("^tree", ""));
  EXPECT_EQ(no_tree.Choose(ar, 8).algorithm, Algorithm::kRing);
  TuningModel simple = Example16x8(Env("", "Simple"));
  EXPECT_EQ(simple.Choose(ar, 8).protocol, Protocol::kSimple);
  // Per-function prefix: Tree only for all-reduce stays; broadcast forced to LL.
  TuningModel scoped = Example16x8(Env("", "allreduce:Simple;broadcast:LL"));
  EXPECT_EQ(scoped.Choose(Collective::kBroadcast, int64_t{1} << 30).protocol, Protocol::kLL);
  EXPECT_EQ(scoped.Choose(ar, 8).protocol, Protocol::kSimple);
  EXPECT_THROW(Example16x8(Env("Rign", "")), InputError);
  EXPECT_THROW(Example16x8(Env("", "LL;Simple")), InputError);  // second entry without prefix
  EXPECT_THROW(Example16x8(Env("", "allreduc:LL")), InputError);
  // Excluding everything modelled: NCCL's "no algorithm/protocol available".
  TuningModel nvls = Example16x8(Env("NVLS", ""));
  EXPECT_THROW(nvls.Choose(ar, 1024), InputError);
}

TEST(Tuning, ChannelsFromSearchAndEnvironment) {
  // 8 search channels x 2 (connect.cc) = 16; the sm90 rule does not double 16.
  EXPECT_EQ(Example16x8().CommChannels(), 16);
  EXPECT_EQ(Example16x8(Env("", "", -1, 4)).CommChannels(), 4);
  EXPECT_EQ(Example16x8(Env("", "", 32)).CommChannels(), 32);
  EXPECT_EQ(Example16x8(Env("", "", 200)).CommChannels(), 64);  // MAXCHANNELS
  // 4 search channels at 48 GB/s on Hopper, 2 nodes: 8, then doubled again (< 16, bw > 45).
  CommShape shape{2, 8, GpuArch::kHopper, CpuVendor::kIntel};
  SearchGraph g;
  g.channels = 4;
  g.bw_intra_gbs = g.bw_inter_gbs = 48.0;
  EXPECT_EQ(TuningModel(shape, g).CommChannels(), 16);
  shape.arch = GpuArch::kAmpere;
  EXPECT_EQ(TuningModel(shape, g).CommChannels(), 8);
}

TEST(Tuning, ChannelsShrinkForSmallMessages) {
  TuningModel m = Example16x8(Env("Ring", "Simple"));
  // Ring/Simple: 512 threads x 64 bytes per thread = 32 KiB per channel before adding one.
  EXPECT_EQ(m.Choose(Collective::kAllReduce, 32768 * 5).channels, 5);
  EXPECT_EQ(m.Choose(Collective::kAllReduce, 32768 * 5 - 1).channels, 4);
  // Below one channel's worth, threads halve down to 64 (a multiple of 128 halves), plus a warp.
  EXPECT_EQ(m.Choose(Collective::kAllReduce, 4096).threads, 64 + 32);
}

TEST(Tuning, DeriveSearchGraph) {
  // 8 x 400G NICs on Hopper: the sm90 inter array's 48 GB/s, one channel per NIC; no
  // duplication (sm90, 48 < 50, 8 > 4 channels).
  SearchGraph g = DeriveSearchGraph({}, 2);
  EXPECT_EQ(g.channels, 8);
  EXPECT_DOUBLE_EQ(g.bw_inter_gbs, 48.0);
  // 2 x 200G NICs on Ampere: 24 GB/s is below 25, no duplication.
  NodeHardware a100{8, 2, 25.0, 240.0, true, GpuArch::kAmpere};
  g = DeriveSearchGraph(a100, 4);
  EXPECT_EQ(g.channels, 2);
  EXPECT_DOUBLE_EQ(g.bw_inter_gbs, 24.0);
  // One Hopper node: NVLink 370.8 GB/s at 60 GB/s per channel = 6, duplicated to 12 at 30.
  g = DeriveSearchGraph({}, 1);
  EXPECT_EQ(g.channels, 12);
  EXPECT_DOUBLE_EQ(g.bw_intra_gbs, 30.0);
}

TEST(Tuning, SingleRankHasNothingToChoose) {
  CommShape one{1, 1, GpuArch::kHopper, CpuVendor::kIntel};
  TuningModel m(one, DeriveSearchGraph({}, 1));
  EXPECT_EQ(m.Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple), 0);
  AlgoChoice c = m.Choose(Collective::kAllReduce, 1024);
  EXPECT_EQ(c.channels, 1);
  EXPECT_EQ(c.time_us, 0);
}

TEST(Tuning, P2pCollectivesBypassTheTable) {
  TuningModel m = Example16x8();
  AlgoChoice c = m.Choose(Collective::kAllToAll, 1 << 20);
  EXPECT_EQ(c.algorithm, Algorithm::kP2p);
  EXPECT_EQ(c.protocol, Protocol::kSimple);
}

TEST(Tuning, ChunkBytes) {
  EXPECT_EQ(ChunkBytes(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple), 2 << 20);
  EXPECT_EQ(ChunkBytes(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple), 512 << 10);
  EXPECT_EQ(ChunkBytes(Collective::kBroadcast, Algorithm::kRing, Protocol::kSimple), 512 << 10);
  EXPECT_EQ(ChunkBytes(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, 8 << 20),
            4 << 20);
  EXPECT_EQ(ChunkBytes(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL), 32768);
  EXPECT_EQ(ChunkBytes(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128), 576000);
}

TEST(Tuning, OffloadVerdicts) {
  CommShape two{2, 8, GpuArch::kHopper, CpuVendor::kIntel};
  OffloadVerdict v = OffloadNcclWouldUse(Collective::kAllReduce, two, true, false);
  EXPECT_TRUE(v.nvls_tree);
  EXPECT_FALSE(v.nvls);
  EXPECT_FALSE(v.collnet);
  EXPECT_NE(v.HeaderNote().find("NVLSTree"), std::string::npos);
  EXPECT_FALSE(OffloadNcclWouldUse(Collective::kAllReduce, two, false, false).Any());
  EXPECT_EQ(OffloadNcclWouldUse(Collective::kAllReduce, two, false, false).HeaderNote(), "");
  EXPECT_TRUE(OffloadNcclWouldUse(Collective::kAllReduce, two, false, true).collnet);
  CommShape one{1, 8, GpuArch::kHopper, CpuVendor::kIntel};
  EXPECT_TRUE(OffloadNcclWouldUse(Collective::kAllReduce, one, true, false).nvls);
  EXPECT_FALSE(OffloadNcclWouldUse(Collective::kAllReduce, one, true, false).nvls_tree);
  CommShape a100{1, 8, GpuArch::kAmpere, CpuVendor::kIntel};
  EXPECT_FALSE(OffloadNcclWouldUse(Collective::kAllReduce, a100, true, false).Any());
  EXPECT_FALSE(OffloadNcclWouldUse(Collective::kBroadcast, two, true, true).Any());
}

}  // namespace
}  // namespace lossless::collective

namespace lossless::collective {
namespace {

TuningModel FourNodes(int gpus = 8, CpuVendor cpu = CpuVendor::kIntel, SearchGraph g = {},
                      TuningOverrides o = {}) {
  if (g.bw_inter_gbs == 0) {
    g.channels = 8;
    g.bw_intra_gbs = g.bw_inter_gbs = 48.0;
  }
  return TuningModel(CommShape{4, gpus, GpuArch::kHopper, cpu}, g, o);
}

TEST(TuningRules, LatencyInterAddsOnceAndTwiceForSimple) {
  SearchGraph g;
  g.channels = 8;
  g.bw_intra_gbs = g.bw_inter_gbs = 48.0;
  g.latency_inter_us = 2.0;
  TuningModel m = FourNodes(8, CpuVendor::kIntel, g);
  EXPECT_NEAR(m.Latency(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL),
              6.6 + 56 * 1.0 + 6 * 4.7, 1e-9);
  EXPECT_NEAR(m.Latency(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple),
              8.4 + 56 * 3.4 + 6 * 18.0, 1e-9);
}

TEST(TuningRules, OneGpuPerNodeUsesTheTreeNetLatency) {
  TuningModel m = FourNodes(1);
  EXPECT_NEAR(m.Latency(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL), 6.6 + 6 * 5.0,
              1e-9);
}

TEST(TuningRules, NetOverheadByCpuAndOverride) {
  TuningOverrides half;
  half.net_overhead_us = 0.5;
  TuningModel m = FourNodes(8, CpuVendor::kIntel, {}, half);
  EXPECT_NEAR(m.Latency(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple),
              8.4 + 56 * 3.4 + 6 * 14.0, 1e-9);
  EXPECT_NEAR(m.Latency(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL),
              6.6 + 56 * 0.6 + 6 * 2.7, 1e-9);
  TuningModel amd = FourNodes(8, CpuVendor::kAmd);
  EXPECT_NEAR(amd.Latency(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL),
              6.6 + 56 * 2.0 + 6 * 2.7, 1e-9);
  // The AMD row of llMaxBws on >= 3 nodes: 19.0 instead of Intel's 20.4.
  EXPECT_NEAR(amd.Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL),
              19.0 * 32 / 62, 1e-9);
}

TEST(TuningRules, BroadcastAndAllGatherRings) {
  TuningModel m = FourNodes();
  EXPECT_NEAR(m.Latency(Collective::kBroadcast, Algorithm::kRing, Protocol::kLL), 6.6 + 32 * 2.7,
              1e-9);
  EXPECT_NEAR(m.Latency(Collective::kReduce, Algorithm::kRing, Protocol::kSimple), 8.4 + 32 * 14.0,
              1e-9);
  EXPECT_NEAR(m.Bandwidth(Collective::kBroadcast, Algorithm::kRing, Protocol::kSimple),
              384.0 * 32 / 32, 1e-9);
  EXPECT_NEAR(m.Latency(Collective::kAllGather, Algorithm::kRing, Protocol::kSimple),
              8.4 + 28 * 3.4 + 3 * 14.0, 1e-9);
  EXPECT_NEAR(m.Bandwidth(Collective::kReduceScatter, Algorithm::kRing, Protocol::kSimple),
              384.0 * 32 / 31, 1e-9);
  // One node: NVLink latencies, the Tree entry for Simple.
  TuningModel one(CommShape{1, 8, GpuArch::kHopper, CpuVendor::kIntel}, DeriveSearchGraph({}, 1));
  EXPECT_NEAR(one.Latency(Collective::kBroadcast, Algorithm::kRing, Protocol::kLL), 6.6 + 8 * 0.6,
              1e-9);
  EXPECT_NEAR(one.Latency(Collective::kBroadcast, Algorithm::kRing, Protocol::kSimple),
              8.4 + 8 * 4.0, 1e-9);
}

TEST(TuningRules, TreePatternAndCorrectionFactor) {
  SearchGraph plain;
  plain.channels = 8;
  plain.bw_intra_gbs = plain.bw_inter_gbs = 48.0;
  plain.plain_tree_pattern = true;
  TuningModel base = FourNodes();
  TuningModel m = FourNodes(8, CpuVendor::kIntel, plain);
  const double bw = base.Bandwidth(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple);
  EXPECT_NEAR(m.Bandwidth(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple), bw * 0.85,
              1e-9);
  // 4096 B: log2(4096 >> 6) = 6, LL factor 0.7; Simple at 64 B: index 0, 0.9.
  const double ll_bw = base.Bandwidth(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL);
  const double ll_lat = base.Latency(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL);
  EXPECT_NEAR(*base.Time(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL, 4096),
              ll_lat + 4096 / (1000 * ll_bw * 0.7), 1e-9);
  const double s_lat = base.Latency(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple);
  EXPECT_NEAR(*base.Time(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple, 64),
              s_lat + 64 / (1000 * bw * 0.9), 1e-9);
  // Below 64 B and from 512 MiB on: no correction.
  EXPECT_NEAR(*base.Time(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple, 63),
              s_lat + 63 / (1000 * bw), 1e-9);
  const int64_t big = int64_t{1} << 29;
  EXPECT_NEAR(*base.Time(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple, big),
              s_lat + big / (1000 * bw), 1e-6);
}

TEST(TuningRules, Ll128PathRuleAndExplicitProto) {
  SearchGraph unsafe;
  unsafe.channels = 8;
  unsafe.bw_intra_gbs = unsafe.bw_inter_gbs = 48.0;
  unsafe.ll128_paths_ok = false;
  EXPECT_EQ(FourNodes(8, CpuVendor::kIntel, unsafe)
                .Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128),
            0);
  EXPECT_GT(FourNodes().Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128), 0);
  TuningOverrides named;
  named.proto = "LL128";
  EXPECT_GT(FourNodes(8, CpuVendor::kIntel, unsafe, named)
                .Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128),
            0);
  // "^LL" sets every other protocol explicitly, LL128 included (parseList).
  TuningOverrides not_ll;
  not_ll.proto = "^LL";
  TuningModel m = FourNodes(8, CpuVendor::kIntel, unsafe, not_ll);
  EXPECT_GT(m.Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128), 0);
  EXPECT_EQ(m.Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL), 0);
  // A prefix for another function leaves all-reduce on the default rule.
  TuningOverrides other;
  other.proto = "broadcast:LL128";
  EXPECT_EQ(FourNodes(8, CpuVendor::kIntel, unsafe, other)
                .Bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128),
            0);
}

TEST(TuningRules, SimpleRingThreadsOnSlowPci) {
  // bwIntra x channels <= PCI_BW (12 GB/s): Ring/Simple gets 256 threads, + a sync warp.
  SearchGraph slow;
  slow.channels = 2;
  slow.bw_intra_gbs = slow.bw_inter_gbs = 6.0;
  slow.intra_nvlink = false;
  TuningOverrides ring;
  ring.algo = "Ring";
  ring.proto = "Simple";
  TuningModel m = FourNodes(8, CpuVendor::kIntel, slow, ring);
  EXPECT_EQ(m.Choose(Collective::kAllReduce, int64_t{1} << 30).threads, 256 + 32);
  // PCI latencies inside the node.
  EXPECT_NEAR(m.Latency(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple),
              8.4 + 56 * 5.7 + 6 * 14.0, 1e-9);
}

}  // namespace
}  // namespace lossless::collective
