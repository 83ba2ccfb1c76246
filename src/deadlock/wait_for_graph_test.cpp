#include "deadlock/wait_for_graph.hpp"

#include <gtest/gtest.h>

#include "deadlock/buffer_graph.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::deadlock {
namespace {

using units::Time;

std::vector<uint32_t> Ports(const Cycle& c) {
  std::vector<uint32_t> ports;
  for (const WaitHop& h : c.hops) ports.push_back(h.port);
  return ports;
}

// Ring of n waits on priority 3: port base+i waits on base+(i+1)%n, edge i set at i µs.
void AddRing(WaitForGraph& g, uint32_t base, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) g.SetPaused(base + i, 3, base + (i + 1) % n, true, Time::Us(i));
}

TEST(WaitForGraph, TwoThreeAndFourHopCycles) {
  for (uint32_t n : {2u, 3u, 4u}) {
    WaitForGraph g;
    for (uint32_t i = 0; i + 1 < n; ++i) {
      g.SetPaused(10 + i, 3, 10 + i + 1, true, Time::Us(i));
      EXPECT_FALSE(g.FindCycle()) << n;  // an open chain so far
    }
    g.SetPaused(10 + n - 1, 3, 10, true, Time::Us(n - 1));  // closes the ring
    auto c = g.FindCycle();
    ASSERT_TRUE(c) << n;
    std::vector<uint32_t> want;
    for (uint32_t i = 0; i < n; ++i) want.push_back(10 + i);
    EXPECT_EQ(Ports(*c), want);
    EXPECT_EQ(c->formed, Time::Us(n - 1));
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(c->hops[i].priority, 3);
      EXPECT_EQ(c->hops[i].since, Time::Us(i));
    }
  }
}

TEST(WaitForGraph, ChainIsNotACycle) {
  WaitForGraph g;
  for (uint32_t i = 0; i < 6; ++i) g.SetPaused(i, 3, i + 1, true, Time::Us(i));
  g.SetPaused(0, 3, 4, true);  // a shortcut, still no way back
  EXPECT_EQ(g.num_edges(), 7u);
  EXPECT_FALSE(g.FindCycle());
  // The same ports on different priorities do not wait on each other.
  g.SetPaused(6, 4, 0, true);
  EXPECT_FALSE(g.FindCycle());
}

TEST(WaitForGraph, CycleBreaksWhenOneEdgeClears) {
  WaitForGraph g;
  AddRing(g, 0, 4);
  ASSERT_TRUE(g.FindCycle());
  ASSERT_TRUE(g.FindCycle());  // still standing
  g.SetPaused(2, 3, 3, false, Time::Us(9));
  EXPECT_FALSE(g.IsPaused(2, 3, 3));
  EXPECT_FALSE(g.FindCycle());
  // It re-forms later: the formation time is the new edge's.
  g.SetPaused(2, 3, 3, true, Time::Us(20));
  auto c = g.FindCycle();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->formed, Time::Us(20));
}

TEST(WaitForGraph, SecondCycleFoundAfterFirstBreaks) {
  WaitForGraph g;
  AddRing(g, 0, 3);
  AddRing(g, 100, 2);
  auto first = g.FindCycle();
  ASSERT_TRUE(first);
  const uint32_t base = first->hops[0].port;
  g.SetPaused(base, 3, base + 1, false);  // break the ring that was reported
  auto second = g.FindCycle();
  ASSERT_TRUE(second);
  EXPECT_NE(second->hops[0].port, base);
  EXPECT_EQ(second->hops.size(), base == 0 ? 2u : 3u);
}

TEST(WaitForGraph, RepeatedSetKeepsTimeAndClearIsIdempotent) {
  WaitForGraph g;
  g.SetPaused(1, 0, 2, true, Time::Us(1));
  g.SetPaused(1, 0, 2, true, Time::Us(5));
  g.SetPaused(2, 0, 1, true, Time::Us(2));
  EXPECT_EQ(g.num_edges(), 2u);
  auto c = g.FindCycle();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->hops[0].since, Time::Us(1));
  EXPECT_EQ(c->formed, Time::Us(2));
  g.SetPaused(7, 0, 8, false);  // absent: nothing happens
  EXPECT_EQ(g.num_edges(), 2u);
}

// Every buffer dependency of a fat tree paused at once: still no cycle (the
// dependency graph of up/down routing is acyclic), whereas the four-switch
// ring's dependencies close one.
TEST(WaitForGraph, SilentOnFatTreeShapedGraph) {
  topology::ClosParams p;
  p.gpus = 128;
  p.radix = 8;
  sim::Simulator sim(1);
  fabric::Network net(sim, topology::BuildFatTree(p, {}), fabric::NetworkConfig{});
  BufferGraph bg = BuildBufferGraph(net.routing(), 3);
  WaitForGraph g;
  for (uint32_t a = 0; a < bg.num_ports; ++a) {
    for (uint64_t i = bg.offsets[a]; i < bg.offsets[a + 1]; ++i) {
      g.SetPaused(a, 3, bg.targets[i], true, Time::Us(a));
      if (a % 64 == 0) {
        EXPECT_FALSE(g.FindCycle());
      }
    }
  }
  EXPECT_EQ(g.num_edges(), bg.num_edges());
  EXPECT_FALSE(g.FindCycle());
}

TEST(WaitForGraph, FindsRingDependencyCycle) {
  const char* text =
      "defaults rate=100Gbps delay=500ns\n"
      "switch sw0\nswitch sw1\nswitch sw2\nswitch sw3\n"
      "host h0\nhost h1\nhost h2\nhost h3\n"
      "link h0 sw0\nlink h1 sw1\nlink h2 sw2\nlink h3 sw3\n"
      "link sw0 sw1\nlink sw1 sw2\nlink sw2 sw3\nlink sw3 sw0\n";
  sim::Simulator sim(1);
  fabric::Network net(sim, topology::ParseTopologyText(text, "ring.topo"), fabric::NetworkConfig{});
  BufferGraph bg = BuildBufferGraph(net.routing(), 3);
  WaitForGraph g;
  for (uint32_t a = 0; a < bg.num_ports; ++a)
    for (uint64_t i = bg.offsets[a]; i < bg.offsets[a + 1]; ++i)
      g.SetPaused(a, 3, bg.targets[i], true);
  auto c = g.FindCycle();
  ASSERT_TRUE(c);
  for (size_t i = 0; i < c->hops.size(); ++i)
    EXPECT_TRUE(bg.HasEdge(c->hops[i].port, c->hops[(i + 1) % c->hops.size()].port));
}

}  // namespace
}  // namespace lossless::deadlock
