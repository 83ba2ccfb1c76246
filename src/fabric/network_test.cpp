#include "fabric/network.hpp"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "fabric/test_topologies.hpp"

namespace lossless::fabric {
namespace {

NetworkConfig RawConfig(RoutingMode routing) {
  NetworkConfig cfg;
  cfg.framing = Framing::Raw(4000, 0);
  cfg.sw.latency = Time::Zero();
  cfg.routing = routing;
  return cfg;
}

Packet MakePacket(uint32_t src, uint32_t dst, uint16_t entropy, uint32_t seq = 0) {
  Packet p{};
  p.src = src;
  p.dst = dst;
  p.entropy = entropy;
  p.seq = seq;
  return p;
}

TEST(Routing, MinimalCandidatesOnLeafSpine) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(32, 8, 4);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  uint32_t leaf0 = net.SwitchOfNode(32), spine0 = net.SwitchOfNode(36);
  EXPECT_EQ(net.Candidates(leaf0, 20).size(), 4u);   // any spine is minimal
  EXPECT_EQ(net.Candidates(leaf0, 3).size(), 1u);    // local host: its port
  EXPECT_EQ(net.Candidates(spine0, 20).size(), 1u);  // down to leaf2
}

TEST(Routing, EcmpIsDeterministicPerFlowAndSpreadsFlows) {
  sim::Simulator sim(7);
  auto topo = testing::LsRing(64, 8, 8);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  uint32_t leaf0 = net.SwitchOfNode(64);
  std::map<uint32_t, int> hist;
  for (uint32_t e = 0; e < 8000; ++e) {
    Packet p = MakePacket(1, 60, static_cast<uint16_t>(0xC000 + e));
    uint32_t port = net.RouteForTest(leaf0, p);
    EXPECT_EQ(port, net.RouteForTest(leaf0, p));  // same 5-tuple, same path
    Packet q = p;
    q.seq = 99;  // per-packet fields do not move a flow
    EXPECT_EQ(port, net.RouteForTest(leaf0, q));
    ++hist[port];
  }
  ASSERT_EQ(hist.size(), 8u);
  for (auto [port, n] : hist) EXPECT_NEAR(n, 1000, 150) << net.PortName(port);
  // Same seed, new network: identical choices.
  sim::Simulator sim2(7);
  Network net2(sim2, topo, RawConfig(RoutingMode::kEcmp));
  for (uint16_t e = 0; e < 100; ++e) {
    Packet p = MakePacket(2, 50, static_cast<uint16_t>(0xC000 + e));
    EXPECT_EQ(net.RouteForTest(leaf0, p), net2.RouteForTest(leaf0, p));
  }
}

TEST(Routing, DestTablePinsEachDestinationAndSprayUsesAllPaths) {
  sim::Simulator sim(3);
  auto topo = testing::LsRing(64, 8, 8);
  Network dest(sim, topo, RawConfig(RoutingMode::kDestTable));
  uint32_t leaf0 = dest.SwitchOfNode(64);
  std::set<uint32_t> used;
  for (uint32_t src = 0; src < 8; ++src)
    for (uint16_t e = 0; e < 50; ++e) used.insert(dest.RouteForTest(leaf0, MakePacket(src, 40, e)));
  EXPECT_EQ(used.size(), 1u);  // a destination-based table ignores source and entropy
  sim::Simulator sim2(3);
  Network spray(sim2, topo, RawConfig(RoutingMode::kSpray));
  used.clear();
  for (int i = 0; i < 200; ++i) used.insert(spray.RouteForTest(leaf0, MakePacket(0, 40, 1)));
  EXPECT_EQ(used.size(), 8u);
}

TEST(Network, ZeroLatencyLinkIsAnError) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  topo.links[3].delay = Time::Zero();
  EXPECT_THROW(Network(sim, topo, RawConfig(RoutingMode::kEcmp)), InputError);
}

// Incast through a small shared buffer: the dynamic threshold drops, and the
// receiver's link stays busy at line rate.
TEST(Network, IncastOverflowsDynamicThresholdAndDrops) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
  cfg.sw.buffer_bytes = 200'000;
  cfg.sw.alpha = 1.0;
  Network net(sim, topo, cfg);
  for (uint32_t s = 1; s <= 7; ++s) net.AddFlow(FlowSpec::Of(s, 0, 400'000, Time::Zero()));
  sim.Run();
  EXPECT_GT(net.drops(), 0u);
  // The occupancy bound: q <= alpha * free  =>  q <= B/2 for alpha = 1.
  int64_t max_q = 0;
  for (uint32_t p = 0; p < net.num_ports(); ++p)
    max_q = std::max(max_q, net.port_stats(p).max_queue_bytes);
  EXPECT_LE(max_q, 100'000);
  EXPECT_GT(max_q, 90'000);
}

TEST(Network, EcnMarksOnlyAboveKmin) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
  cfg.sw.ecn[cfg.nic.data_class] = EcnConfig{true, 40'000, 80'000, 1.0};
  Network net(sim, topo, cfg);
  // Two senders into one receiver: the queue grows by one packet per two sent.
  net.AddFlow(FlowSpec::Of(1, 0, 400'000, Time::Zero()));
  net.AddFlow(FlowSpec::Of(2, 0, 400'000, Time::Zero()));
  sim.Run();
  uint64_t marks = 0;
  for (uint32_t p = 0; p < net.num_ports(); ++p) marks += net.port_stats(p).ecn_marks;
  EXPECT_GT(marks, 0u);
  EXPECT_LT(marks, 200u);  // 200 packets sent; the first ~20 see a queue below Kmin
  EXPECT_EQ(net.flows_done(), 2u);
  // Two equal flows sharing a port round robin finish together (within one packet).
  EXPECT_NEAR(net.flows()[0].finish.ps(), net.flows()[1].finish.ps(), 80'000);
}

TEST(Network, NicServesFlowsRoundRobinAtLineRate) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  // Host 0 sends 10 packets to each of two hosts: 20 packets back to back.
  net.AddFlow(FlowSpec::Of(0, 1, 40'000, Time::Zero()));
  net.AddFlow(FlowSpec::Of(0, 2, 40'000, Time::Zero()));
  sim.Run();
  const int64_t ser = 80'000;  // 4000 B at 400G
  // Flow 0 starts alone and has sent one packet when flow 1 joins; then they
  // alternate: flow 0 uses slots 0,1,3,...,17 and flow 1 slots 2,4,...,19.
  // A packet in slot k arrives at k*ser + 2 serializations + 2 us.
  EXPECT_EQ(net.flows()[0].finish.ps(), 17 * ser + 2 * ser + 2'000'000);
  EXPECT_EQ(net.flows()[1].finish.ps(), 19 * ser + 2 * ser + 2'000'000);
  EXPECT_EQ(net.packet_hops(), 40u);
}

TEST(Network, PcieCapSlowsInjection) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
  cfg.nic.pcie_rate = units::Rate::Gbps(200);
  Network net(sim, topo, cfg);
  net.AddFlow(FlowSpec::Of(0, 1, 40'000, Time::Zero()));
  sim.Run();
  // Ten packets, one every 160 ns (PCIe), the last takes 80 ns per hop over 2 hops.
  EXPECT_EQ(net.flows()[0].finish.ps(), 9 * 160'000 + 2 * 80'000 + 2'000'000);
}

TEST(Network, StoreAndForwardVersusCutThroughLatency) {
  for (bool cut : {false, true}) {
    sim::Simulator sim(1);
    auto topo = testing::LsRing(16, 8, 2);
    NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
    cfg.sw.latency = Time::Ns(300);
    cfg.sw.cut_through = cut;
    Network net(sim, topo, cfg);
    net.AddFlow(FlowSpec::Of(0, 1, 4000, Time::Zero()));
    sim.Run();
    // One 4000-B packet, host -> leaf -> host. Store-and-forward: 2 x 80 ns + 2 us + 300 ns.
    // Cut-through: the egress starts 300 ns after the header (64 B = 1.28 ns) and
    // cannot finish before the tail arrived: 80 ns + 1 us + 300 ns + 1.28 ns + ... bounded by the
    // tail.
    int64_t fin = net.flows()[0].finish.ps();
    if (!cut) {
      EXPECT_EQ(fin, 2 * 80'000 + 2'000'000 + 300'000);
    } else {
      EXPECT_EQ(fin, 1'280 + 1'000'000 + 300'000 + 80'000 + 1'000'000);
    }
  }
}

}  // namespace
}  // namespace lossless::fabric

namespace lossless::fabric {
namespace {

TEST(Network, LinkDownReroutesAroundIt) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(
      16, 8, 2);  // links 16..19: leaf0-spine0, leaf0-spine1, leaf1-spine0, leaf1-spine1
  NetworkConfig cfg = RawConfig(RoutingMode::kSpray);
  Network net(sim, topo, cfg);
  net.SetLinkUp(16, false);  // leaf0 - spine0
  EXPECT_FALSE(net.LinkUp(16));
  net.AddFlow(FlowSpec::Of(0, 9, 400'000, Time::Zero()));
  sim.Run();
  EXPECT_EQ(net.flows_done(), 1u);
  EXPECT_EQ(net.drops(), 0u);
  EXPECT_EQ(net.port_stats(2 * 16).tx_packets, 0u);    // nothing crossed the down link
  EXPECT_EQ(net.port_stats(2 * 17).tx_packets, 100u);  // all 100 packets took spine1
}

TEST(Network, HostLinkDownStallsItsFlowsUntilItComesBack) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  net.SetLinkUp(0, false);  // host0's link
  net.AddFlow(FlowSpec::Of(0, 1, 40'000, Time::Zero()));
  sim.Run();
  EXPECT_EQ(net.flows_done(), 0u);
  net.SetLinkUp(0, true);
  sim.Run();
  EXPECT_EQ(net.flows_done(), 1u);
  EXPECT_EQ(net.drops(), 0u);
}

TEST(Network, LinkDownLosesWhatIsOnTheWire) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  net.AddFlow(FlowSpec::Of(0, 1, 400'000, Time::Zero()));
  sim.Run(Time::Us(2));     // packets are in flight on host0's link and on leaf0 -> host1
  net.SetLinkUp(1, false);  // host1's link: in-flight packets and all later ones are lost
  sim.Run();
  EXPECT_GT(net.drops(), 0u);
  EXPECT_EQ(net.flows_done(), 0u);
  // Every packet is either delivered or counted as dropped.
  EXPECT_EQ(net.flows()[0].recv_bytes + static_cast<int64_t>(net.flows()[0].drops) * 4000, 400'000);
}

}  // namespace
}  // namespace lossless::fabric
