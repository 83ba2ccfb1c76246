// The routing tables without an engine (fabric/routing.hpp): port structure,
// minimal next-hop sets, and topology errors.
#include "fabric/routing.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"

namespace lossless::fabric {
namespace {

TEST(RoutingTable, PortStructureOfLeafSpine) {
  // LS-RING: 32 hosts (nodes 0-31), 4 leaves (32-35), 4 spines (36-39);
  // host links first (links 0-31), then leaf-spine links.
  const auto topo = testing::LsRing(32, 8, 4);
  const RoutingTable rt(topo);
  EXPECT_EQ(rt.num_ports(), 2 * topo.links.size());
  EXPECT_EQ(rt.num_switches(), 8u);
  EXPECT_EQ(rt.num_hosts(), 32u);
  for (uint32_t p = 0; p < rt.num_ports(); ++p) {
    EXPECT_EQ(RoutingTable::PortPeer(RoutingTable::PortPeer(p)), p);
    const topology::Link& l = topo.links[p / 2];
    EXPECT_EQ(rt.PortNode(p), p % 2 == 0 ? l.a : l.b);
  }
  for (uint32_t r = 0; r < rt.num_hosts(); ++r) {
    EXPECT_EQ(rt.PortNode(rt.HostPort(r)), topo.hosts[r]);
    EXPECT_EQ(rt.HostEdgePort(r), RoutingTable::PortPeer(rt.HostPort(r)));
    EXPECT_EQ(rt.SwitchOfNode(topo.hosts[r]), kNoPort);
  }
  EXPECT_EQ(rt.NodeOfSwitch(rt.SwitchOfNode(36)), 36u);
  EXPECT_EQ(rt.NodePorts(36).size(), 4u);  // a spine: one link to each leaf
  EXPECT_EQ(rt.PortName(rt.HostPort(0)), topo.nodes[0].name + "->" + topo.nodes[32].name);
}

TEST(RoutingTable, NextHopsAreTheMinimalOnes) {
  const auto topo = testing::LsRing(32, 8, 4);
  const RoutingTable rt(topo);
  const uint32_t leaf0 = rt.SwitchOfNode(32), leaf2 = rt.SwitchOfNode(34);
  const uint32_t spine1 = rt.SwitchOfNode(37);
  // Remote host: every spine uplink of leaf0.
  const auto up = rt.Candidates(leaf0, 20);
  ASSERT_EQ(up.size(), 4u);
  for (uint32_t p : up) EXPECT_NE(rt.SwitchOfNode(rt.PortNode(RoutingTable::PortPeer(p))), kNoPort);
  // Local host at its edge switch: the one port facing it.
  const RoutingTable::NextHops local = rt.Next(leaf2, 20);
  ASSERT_EQ(local.n, 1u);
  EXPECT_EQ(local.ports[0], rt.HostEdgePort(20));
  // A spine goes down to the destination's leaf.
  const auto down = rt.Candidates(spine1, 20);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(rt.PortNode(RoutingTable::PortPeer(down[0])), 34u);
}

TEST(RoutingTable, TheNetworkRoutesOnTheSameTables) {
  const auto topo = testing::LsRing(32, 8, 4);
  const RoutingTable rt(topo);
  sim::Simulator sim(3);
  Network net(sim, topo, NetworkConfig{});
  for (uint32_t sw = 0; sw < rt.num_switches(); ++sw)
    for (uint32_t dst = 0; dst < rt.num_hosts(); ++dst)
      EXPECT_EQ(net.Candidates(sw, dst), rt.Candidates(sw, dst)) << sw << " " << dst;
}

TEST(RoutingTable, AHostWithTwoLinksIsRefused) {
  auto topo = testing::LsRing(16, 8, 2);
  topo.links.push_back(topo.links.front());  // host 0 gets a second link
  try {
    const RoutingTable rt(topo);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().field, "hosts");
    EXPECT_NE(std::string(e.what()).find("exactly one link"), std::string::npos) << e.what();
  }
}

TEST(RoutingTable, ALinkWithoutDelayIsRefused) {
  auto topo = testing::LsRing(16, 8, 2);
  topo.links.back().delay = units::Time::Zero();
  EXPECT_THROW(RoutingTable{topo}, InputError);
}

}  // namespace
}  // namespace lossless::fabric
