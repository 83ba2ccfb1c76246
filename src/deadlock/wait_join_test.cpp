// WaitJoin: the network's node-local facts (a switch holds packets for an
// egress; a node asserts XOFF at an ingress) joined into wait edges, in the
// order the detector's cycle search relies on.
#include "deadlock/wait_join.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/test_topologies.hpp"

namespace lossless::deadlock {
namespace {

using units::Time;

struct Edges final : WaitSink {
  // (from, from_prio, to, to_prio, waiting, at in ns)
  std::vector<std::tuple<uint32_t, int, uint32_t, int, bool, int64_t>> seen;
  void OnWait(uint32_t from, int from_prio, uint32_t to, int to_prio, bool waiting,
              Time at) override {
    seen.emplace_back(from, from_prio, to, to_prio, waiting, at.ps() / 1000);
  }
};

TEST(WaitJoin, AnEdgeStandsWhileTheHoldAndThePeersXoffBothDo) {
  sim::Simulator sim(1);
  const auto topo = fabric::testing::LsRing(4, 2, 2);
  fabric::NetworkConfig cfg;
  cfg.pfc.enabled = true;
  fabric::Network net(sim, topo, cfg);
  const uint32_t leaf0 = net.PortNode(net.PortPeer(net.HostPort(0)));
  const auto& ports = net.NodePorts(leaf0);
  // Two ingresses of leaf0 (the ports facing host0 and host1) and an uplink E.
  const uint32_t x0 = net.PortPeer(net.HostPort(0));
  const uint32_t x1 = net.PortPeer(net.HostPort(1));
  uint32_t e = 0;
  for (uint32_t p : ports)
    if (p != x0 && p != x1) e = p;
  const uint32_t y = net.PortPeer(e);  // the spine's ingress facing leaf0
  ASSERT_LT(std::find(ports.begin(), ports.end(), x0), std::find(ports.begin(), ports.end(), x1));

  Edges edges;
  WaitJoin join(net, edges);
  join.OnHold(x1, 3, e, 3, true, Time::Ns(1));  // no XOFF at y yet: no edge
  EXPECT_TRUE(edges.seen.empty());
  join.OnXoff(y, 3, true, Time::Ns(2));
  ASSERT_EQ(edges.seen.size(), 1u);
  EXPECT_EQ(edges.seen[0], std::make_tuple(x1, 3, y, 3, true, int64_t{2}));
  join.OnHold(x0, 3, e, 3, true, Time::Ns(3));  // XOFF stands: the edge at once
  ASSERT_EQ(edges.seen.size(), 2u);
  EXPECT_EQ(edges.seen[1], std::make_tuple(x0, 3, y, 3, true, int64_t{3}));
  join.OnXoff(y, 2, true, Time::Ns(4));  // another class: nothing holds for it
  EXPECT_EQ(edges.seen.size(), 2u);
  // XON: both edges end, in the order of leaf0's ports (x0 before x1), not
  // in the order the holds began.
  join.OnXoff(y, 3, false, Time::Ns(5));
  ASSERT_EQ(edges.seen.size(), 4u);
  EXPECT_EQ(edges.seen[2], std::make_tuple(x0, 3, y, 3, false, int64_t{5}));
  EXPECT_EQ(edges.seen[3], std::make_tuple(x1, 3, y, 3, false, int64_t{5}));
  join.OnHold(x0, 3, e, 3, false, Time::Ns(6));  // no XOFF: no edge to end
  EXPECT_EQ(edges.seen.size(), 4u);
  // A hold that ends while XOFF stands ends its edge; the other stays.
  join.OnXoff(y, 3, true, Time::Ns(7));
  ASSERT_EQ(edges.seen.size(), 5u);
  EXPECT_EQ(edges.seen[4], std::make_tuple(x1, 3, y, 3, true, int64_t{7}));
  join.OnHold(x1, 3, e, 3, false, Time::Ns(8));
  ASSERT_EQ(edges.seen.size(), 6u);
  EXPECT_EQ(edges.seen[5], std::make_tuple(x1, 3, y, 3, false, int64_t{8}));
}

}  // namespace
}  // namespace lossless::deadlock
