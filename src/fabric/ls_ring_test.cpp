// LS-RING (docs/model/ls-ring.md): the closed form that ns-3 also
// reproduces exactly, so lossless and ns-3 are timed on identical work.
#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"

namespace lossless::fabric {
namespace {

struct LsRingResult {
  Time completion;
  uint64_t packet_hops;
  size_t flows_done;
};

LsRingResult RunLsRing(int hosts, int64_t bytes, RoutingMode routing, uint64_t seed = 1) {
  sim::Simulator sim(seed);
  topology::Topology topo = testing::LsRing(hosts, 8, 8);
  NetworkConfig cfg;
  cfg.framing = Framing::Raw(3972, 30);  // IP MTU 4000 + 2 B framing; UDP payload 3972
  cfg.sw.latency = Time::Zero();
  cfg.routing = routing;
  Network net(sim, topo, cfg);
  // The anchor sends M = ceil(bytes / 3972) whole datagrams of 3972 B.
  const int64_t sent = (bytes + 3971) / 3972 * 3972;
  for (int i = 0; i < hosts; ++i) {
    net.AddFlow(
        FlowSpec::Of(static_cast<uint32_t>(i), static_cast<uint32_t>((i + 1) % hosts), sent));
  }
  sim.Run();
  Time last;
  for (const auto& f : net.flows()) last = std::max(last, f.finish);
  return {last, net.packet_hops(), net.flows_done()};
}

TEST(LsRingClosedForm, Hosts16Bytes16MiBMatchesAnchorExactly) {
  // M = ceil(16 MiB / 3972) = 4224; completion = (M + 3) x 80.04 ns + 4 us.
  const int64_t m = 4224;
  auto r = RunLsRing(16, 16 << 20, RoutingMode::kSpray);
  EXPECT_EQ(r.flows_done, 16u);
  EXPECT_EQ(r.completion.ps(), (m + 3) * 80'040 + 4'000'000);
  EXPECT_EQ(r.completion.ps(), 342'329'080);  // 342.32908 us, as the anchor README states
  // packet-hops = M x (2N + 2L), L = N/8 leaves.
  EXPECT_EQ(r.packet_hops, static_cast<uint64_t>(m * (2 * 16 + 2 * 2)));
}

TEST(LsRingClosedForm, Hosts64Bytes64MiBMatchesAnchorExactly) {
  const int64_t m = 16896;
  auto r = RunLsRing(64, 64 << 20, RoutingMode::kSpray);
  EXPECT_EQ(r.flows_done, 64u);
  EXPECT_EQ(r.completion.ps(), 1'356'595'960);  // 1.35659596 ms
  EXPECT_EQ(r.packet_hops, static_cast<uint64_t>(m * (2 * 64 + 2 * 8)));
  EXPECT_EQ(r.packet_hops, 2'433'024u);  // the anchor table's figure
}

TEST(LsRingClosedForm, SameResultUnderEveryRoutingMode) {
  // Stride-1 ring traffic never queues, so every routing mode gives the closed form.
  for (RoutingMode m : {RoutingMode::kEcmp, RoutingMode::kDestTable, RoutingMode::kAdaptive}) {
    auto r = RunLsRing(16, 1 << 20, m);
    EXPECT_EQ(r.completion.ps(), (264 + 3) * 80'040 + 4'000'000) << RoutingModeName(m);
  }
}

}  // namespace
}  // namespace lossless::fabric
