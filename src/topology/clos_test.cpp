#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "topology/topology.hpp"

namespace lossless::topology {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace clos {

const Location kWhere{"scenario.yaml", 7, "topology"};

ClosParams Params(int64_t gpus, int radix, int tiers = 0, double o = 1.0) {
  ClosParams p;
  p.gpus = gpus;
  p.radix = radix;
  p.tiers = tiers;
  p.oversubscription = o;
  return p;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

// docs/model/clos-sizing.md#worked-counts, one row per (N, radix).
struct Row {
  int64_t gpus;
  int radix;
  int tiers;
  int64_t leaves, spines, cores, switches, links, modules;
};

class WorkedCounts : public ::testing::TestWithParam<Row> {};

TEST_P(WorkedCounts, MatchTco19) {
  const Row& r = GetParam();
  const Sizing s = SizeClos(Params(r.gpus, r.radix), kWhere);
  EXPECT_EQ(s.tiers, r.tiers);
  EXPECT_EQ(s.leaves, r.leaves);
  EXPECT_EQ(s.spines, r.spines);
  EXPECT_EQ(s.cores, r.cores);
  EXPECT_EQ(s.switches, r.switches);
  EXPECT_EQ(s.links, r.links);
  // docs/model/clos-sizing.md#optics-and-cables: N single-port NIC modules + twin-port switch
  // modules (ports / 2).
  EXPECT_EQ(r.gpus + s.switch_ports_used / 2, r.modules);
  EXPECT_EQ(s.switch_ports_used, (r.tiers == 2 ? 3 : 5) * r.gpus);
}

INSTANTIATE_TEST_SUITE_P(InfiniBandK64, WorkedCounts,
                         ::testing::Values(Row{256, 64, 2, 8, 4, 0, 12, 512, 640},
                                           Row{1024, 64, 2, 32, 16, 0, 48, 2048, 2560},
                                           Row{2048, 64, 2, 64, 32, 0, 96, 4096, 5120},
                                           Row{4096, 64, 3, 128, 128, 64, 320, 12288, 14336},
                                           Row{8192, 64, 3, 256, 256, 128, 640, 24576, 28672},
                                           Row{16384, 64, 3, 512, 512, 256, 1280, 49152, 57344}));

INSTANTIATE_TEST_SUITE_P(EthernetK128, WorkedCounts,
                         ::testing::Values(Row{256, 128, 2, 4, 2, 0, 6, 512, 640},
                                           Row{1024, 128, 2, 16, 8, 0, 24, 2048, 2560},
                                           Row{2048, 128, 2, 32, 16, 0, 48, 4096, 5120},
                                           Row{4096, 128, 2, 64, 32, 0, 96, 8192, 10240},
                                           Row{8192, 128, 2, 128, 64, 0, 192, 16384, 20480},
                                           Row{16384, 128, 3, 256, 256, 128, 640, 49152, 57344}));

// docs/model/clos-sizing.md#dgx-superpod-cross-checks, DGX SuperPOD B200 (NDR, k = 64): cables per
// layer.
struct B200Row {
  int64_t gpus, leaves, spines, cores, host_links, leaf_spine, spine_core;
};

class SuperPodB200 : public ::testing::TestWithParam<B200Row> {};

TEST_P(SuperPodB200, MatchesReferenceArchitecture) {
  const B200Row& r = GetParam();
  const Sizing s = SizeClos(Params(r.gpus, 64), kWhere);
  EXPECT_EQ(s.leaves, r.leaves);
  EXPECT_EQ(s.spines, r.spines);
  EXPECT_EQ(s.cores, r.cores);
  EXPECT_EQ(s.host_links, r.host_links);
  EXPECT_EQ(s.leaf_spine_links, r.leaf_spine);
  EXPECT_EQ(s.spine_core_links, r.spine_core);
  EXPECT_EQ(s.tiers, r.cores == 0 ? 2 : 3);
}

INSTANTIATE_TEST_SUITE_P(Rows, SuperPodB200,
                         ::testing::Values(B200Row{512, 16, 8, 0, 512, 512, 0},
                                           B200Row{1024, 32, 16, 0, 1024, 1024, 0},
                                           B200Row{2048, 64, 32, 0, 2048, 2048, 0},
                                           B200Row{4096, 128, 128, 64, 4096, 4096, 4096},
                                           B200Row{8192, 256, 256, 128, 8192, 8192, 8192},
                                           B200Row{16384, 512, 512, 256, 16384, 16384, 16384}));

// docs/model/clos-sizing.md#dgx-superpod-cross-checks, DGX SuperPOD H100 Table 4 with full
// 32-node SUs: spines rounded (docs/model/clos-sizing.md#rail-optimized).
TEST(SizeRailOptimized, SuperPodH100Table4) {
  const int64_t spines[] = {4, 8, 16, 16};
  for (int64_t su = 1; su <= 4; ++su) {
    ClosParams p = Params(256 * su, 64);
    const Sizing s = SizeRailOptimized(p, kWhere);
    EXPECT_EQ(s.tiers, 2);
    EXPECT_EQ(s.leaves, 8 * su) << su;
    EXPECT_EQ(s.spines, spines[su - 1]) << su;
    EXPECT_EQ(s.leaf_spine_links, 256 * su) << su;
    EXPECT_EQ(s.host_links, 256 * su) << su;
  }
}

TEST(SizeRailOptimized, PartialSuIsProvisionedInFull) {
  // 31 nodes (one position for UFM) still take a full SU of 8 leaves.
  const Sizing s = SizeRailOptimized(Params(248, 64), kWhere);
  EXPECT_EQ(s.leaves, 8);
  EXPECT_EQ(s.spines, 4);
  EXPECT_EQ(s.leaf_spine_links, 256);
  EXPECT_EQ(s.host_links, 248);
}

TEST(SizeRailOptimized, Errors) {
  EXPECT_EQ(
      ErrorOf([] { SizeRailOptimized(Params(250, 64), kWhere); }),
      "scenario.yaml:7: topology.gpus: expected a multiple of gpus_per_node (8), got \"250\"");
  EXPECT_EQ(ErrorOf([] { SizeRailOptimized(Params(2056, 64), kWhere); }),
            "scenario.yaml:7: topology.gpus: expected at most 2048 GPUs for a 2-tier non-blocking "
            "rail-optimized fabric of radix-64 switches with 8 GPUs per node, got 2056");
  EXPECT_NO_THROW(SizeRailOptimized(Params(2048, 64), kWhere));
}

TEST(SizeClos, SingleSwitchUpToRadix) {
  const Sizing s = SizeClos(Params(64, 64), kWhere);
  EXPECT_EQ(s.tiers, 1);
  EXPECT_EQ(s.switches, 1);
  EXPECT_EQ(s.links, 64);
  EXPECT_EQ(s.switch_ports_used, 64);
  EXPECT_EQ(SizeClos(Params(65, 64), kWhere).tiers, 2);
  EXPECT_EQ(SizeClos(Params(1, 64), kWhere).links, 1);
}

TEST(SizeClos, PartialLeavesRoundUp) {
  // 1,000 GPUs on k = 64: 32 leaves (last one with 8 hosts), 16 spines, full uplinks.
  const Sizing s = SizeClos(Params(1000, 64), kWhere);
  EXPECT_EQ(s.leaves, 32);
  EXPECT_EQ(s.spines, 16);
  EXPECT_EQ(s.links, 1000 + 32 * 32);
  // Partial pod: 2,080 GPUs = 65 leaves, the third pod has 1 leaf and 1 spine.
  const Sizing t = SizeClos(Params(2080, 64, 3), kWhere);
  EXPECT_EQ(t.pods, 3);
  EXPECT_EQ(t.leaves, 65);
  EXPECT_EQ(t.spines, 65);
  EXPECT_EQ(t.cores, 33);
}

TEST(SizeClos, Oversubscribed) {
  // 3:1 on k = 64: d = 48, u = 16; L = ceil(3000/48) = 63, S = ceil(63*16/64) = 16.
  const Sizing s = SizeClos(Params(3000, 64, 0, 3.0), kWhere);
  EXPECT_EQ(s.tiers, 2);
  EXPECT_EQ(s.down_per_leaf, 48);
  EXPECT_EQ(s.up_per_leaf, 16);
  EXPECT_EQ(s.leaves, 63);
  EXPECT_EQ(s.spines, 16);
  EXPECT_EQ(s.links, 3000 + 63 * 16);
  // 2:1 does not split 64 ports exactly: 42 down, 22 up (ratio 1.9 ≤ 2).
  const Sizing t = SizeClos(Params(4096, 64, 0, 2.0), kWhere);
  EXPECT_EQ(t.down_per_leaf, 42);
  EXPECT_EQ(t.up_per_leaf, 22);
  // 3-tier analogue: pods of 32 leaves with u = 16 spines each.
  const Sizing f = SizeClos(Params(16384, 64, 0, 3.0), kWhere);
  EXPECT_EQ(f.tiers, 3);
  EXPECT_EQ(f.leaves, 342);
  EXPECT_EQ(f.pods, 11);
  EXPECT_EQ(f.spines, 10 * 16 + 11);  // last pod: 22 leaves * 16 / 32 = 11 spines
  EXPECT_EQ(f.cores, 86);
  EXPECT_EQ(f.spine_core_links, f.spines * 32);
}

TEST(SizeClos, LimitErrorsNameTheLimit) {
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(4096, 64, 2), kWhere); }),
            "scenario.yaml:7: topology.gpus: expected at most 2048 GPUs for a 2-tier non-blocking "
            "fabric of radix-64 switches, got 4096");
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(70000, 64), kWhere); }),
            "scenario.yaml:7: topology.gpus: expected at most 65536 GPUs for a 3-tier "
            "non-blocking fabric of radix-64 switches, got 70000");
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(4000, 64, 2, 3.0), kWhere); }),
            "scenario.yaml:7: topology.gpus: expected at most 3072 GPUs for a 2-tier 3:1 "
            "oversubscribed fabric of radix-64 switches, got 4000");
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(65, 64, 1), kWhere); }),
            "scenario.yaml:7: topology.gpus: expected at most 64 GPUs for a single radix-64 "
            "switch, got 65");
  EXPECT_EQ(SizeClos(Params(65536, 64), kWhere).tiers, 3);
  EXPECT_EQ(SizeClos(Params(65536, 64), kWhere).cores, 1024);
}

TEST(SizeClos, RejectsBadParameters) {
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(100, 63), kWhere); }),
            "scenario.yaml:7: topology.radix: expected an even switch radix from 2 to 65536, got "
            "\"63\"");
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(100, 0), kWhere); }),
            "scenario.yaml:7: topology.radix: expected an even switch radix from 2 to 65536, got "
            "\"0\"");
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(0, 64), kWhere); }),
            "scenario.yaml:7: topology.gpus: expected at least 1 GPU, got \"0\"");
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(100, 64, 0, 0.5), kWhere); }),
            "scenario.yaml:7: topology.oversubscription: expected a ratio o of at least 1 (o:1 "
            "down:up; 1 = non-blocking), got \"0.5\"");
  EXPECT_EQ(ErrorOf([] { SizeClos(Params(100, 64, 4), kWhere); }),
            "scenario.yaml:7: topology.tiers: expected 0 (smallest that fits), 1, 2 or 3, got "
            "\"4\"");
  // A location naming one field of the block names the faulty field instead.
  EXPECT_EQ(ErrorOf([] {
              SizeClos(Params(100, 63), Location{"s.yaml", 4, "topology.gpus"});
            }),
            "s.yaml:4: topology.radix: expected an even switch radix from 2 to 65536, got \"63\"");
  // No field prefix: the field is the parameter name alone.
  EXPECT_EQ(ErrorOf([] {
              SizeClos(Params(-5, 64), Location{"<cli>", 0, ""});
            }),
            "<cli>: gpus: expected at least 1 GPU, got \"-5\"");
}

}  // namespace clos
}  // namespace
}  // namespace lossless::topology
