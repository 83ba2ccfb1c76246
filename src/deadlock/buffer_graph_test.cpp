#include "deadlock/buffer_graph.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::deadlock {
namespace {

using topology::ClosParams;
using topology::Topology;

constexpr int kPriority = 3;

// Owns the simulator the network needs (the check never runs it).
struct Fixture {
  explicit Fixture(const Topology& t) : net(sim, t, fabric::NetworkConfig{}) {}
  sim::Simulator sim{1};
  fabric::Network net;
};

ClosParams Clos(int64_t gpus, int radix) {
  ClosParams p;
  p.gpus = gpus;
  p.radix = radix;
  return p;
}

// Every consecutive pair of the witness (wrapping round) is a graph edge,
// every hop is a switch port, and no buffer repeats.
void ExpectValidCycle(const fabric::Network& net, const BufferGraph& g,
                      const std::vector<uint32_t>& cycle) {
  ASSERT_FALSE(cycle.empty());
  for (size_t i = 0; i < cycle.size(); ++i) {
    const uint32_t a = cycle[i], b = cycle[(i + 1) % cycle.size()];
    EXPECT_TRUE(g.HasEdge(a, b)) << BufferLabel(net.routing(), a, g.priority,
                                                net.config().pfc.global)
                                 << " -> "
                                 << BufferLabel(net.routing(), b, g.priority,
                                                net.config().pfc.global);
    EXPECT_NE(net.SwitchOfNode(net.PortNode(a)), UINT32_MAX);
    for (size_t j = i + 1; j < cycle.size(); ++j) EXPECT_NE(cycle[i], cycle[j]);
  }
}

// Every edge leads into a switch's ingress buffer: a host's receive side
// drains into the host and holds no lossless buffer a switch could wait on.
void ExpectEdgesOnlyBetweenSwitchBuffers(const fabric::Network& net, const BufferGraph& g) {
  for (uint32_t a = 0; a < g.num_ports; ++a)
    for (uint64_t e = g.offsets[a]; e < g.offsets[a + 1]; ++e) {
      EXPECT_NE(net.SwitchOfNode(net.PortNode(a)), UINT32_MAX) << a;
      EXPECT_NE(net.SwitchOfNode(net.PortNode(g.targets[e])), UINT32_MAX)
          << BufferLabel(net.routing(), a, g.priority, net.config().pfc.global) << " -> port "
          << g.targets[e] << " at a host";
    }
}

TEST(BufferGraph, LeafSpineHasNoCycle) {
  Fixture f(topology::BuildLeafSpine(Clos(128, 16), {}));  // 16 leaves, 8 spines
  BufferGraph g = BuildBufferGraph(f.net.routing(), kPriority);
  EXPECT_EQ(g.num_vertices, 128u + 2 * 128);  // switch ports: 128 host links, 128 leaf-spine links
  ExpectEdgesOnlyBetweenSwitchBuffers(f.net, g);
  // Host ingress -> every uplink (8 per leaf): 128·8; spine ingress from leaf
  // l -> down to the 15 other leaves: 128·15.
  EXPECT_EQ(g.num_edges(), 128u * 8 + 128u * 15);
  EXPECT_TRUE(FindBufferCycle(g).empty());
}

TEST(BufferGraph, FatTreeHasNoCycle) {
  Fixture f(topology::BuildFatTree(Clos(128, 8), {}));
  BufferGraph g = BuildBufferGraph(f.net.routing(), kPriority);
  EXPECT_GT(g.num_edges(), 0u);
  EXPECT_TRUE(FindBufferCycle(g).empty());
}

TEST(BufferGraph, LeafSpine1024HostsChecksQuickly) {
  Fixture f(topology::BuildLeafSpine(Clos(1024, 64), {}));
  auto t0 = std::chrono::steady_clock::now();
  BufferGraph g = BuildBufferGraph(f.net.routing(), kPriority);
  EXPECT_TRUE(FindBufferCycle(g).empty());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // 32 leaves · 32 uplinks · 32 hosts + 1,024 spine ingresses · 31 leaves · 2 parallel links.
  EXPECT_EQ(g.num_edges(), 32u * 32 * 32 + 1024u * 31 * 2);
  RecordProperty("seconds", std::to_string(s));  // figure only; no timed assertion
}

Topology Ring(int n) {
  std::string text = "defaults rate=100Gbps delay=500ns\n";
  for (int i = 0; i < n; ++i) text += "switch sw" + std::to_string(i) + "\n";
  for (int i = 0; i < n; ++i) {
    text += "host h" + std::to_string(i) + "\n";
    text += "link h" + std::to_string(i) + " sw" + std::to_string(i) + "\n";
    text += "link sw" + std::to_string(i) + " sw" + std::to_string((i + 1) % n) + "\n";
  }
  return topology::ParseTopologyText(text, "ring.topo");
}

TEST(BufferGraph, FourSwitchRingFileHasCycle) {
  Fixture f(topology::ParseTopologyFile(std::string(LOSSLESS_SOURCE_DIR) +
                                        "/tests/fixtures/deadlock/ring4.topo"));
  BufferGraph g = BuildBufferGraph(f.net.routing(), kPriority);
  EXPECT_EQ(g.num_vertices, 12u);  // 4 host ingresses + 8 ring ingresses
  ExpectEdgesOnlyBetweenSwitchBuffers(f.net, g);
  std::vector<uint32_t> cycle = FindBufferCycle(g);
  ASSERT_EQ(cycle.size(), 4u);
  ExpectValidCycle(f.net, g, cycle);
  // Four ring buffers, one per switch, all going the same way round.
  std::vector<std::string> labels;
  for (uint32_t p : cycle)
    labels.push_back(BufferLabel(f.net.routing(), p, kPriority, f.net.config().pfc.global));
  while (labels[0].rfind("sw0:", 0) != 0)
    std::rotate(labels.begin(), labels.begin() + 1, labels.end());
  if (labels[0] == "sw0:sw3:3") {
    EXPECT_EQ(labels,
              (std::vector<std::string>{"sw0:sw3:3", "sw1:sw0:3", "sw2:sw1:3", "sw3:sw2:3"}));
  } else {
    EXPECT_EQ(labels,
              (std::vector<std::string>{"sw0:sw1:3", "sw3:sw0:3", "sw2:sw3:3", "sw1:sw2:3"}));
  }
}

TEST(BufferGraph, FiveSwitchRingHasCycleTriangleHasNone) {
  {
    Fixture f(Ring(5));
    BufferGraph g = BuildBufferGraph(f.net.routing(), 0);
    std::vector<uint32_t> cycle = FindBufferCycle(g);
    EXPECT_EQ(cycle.size(), 5u);
    ExpectValidCycle(f.net, g, cycle);
  }
  {
    Fixture f(Ring(3));  // every host one switch hop away: nothing transits
    BufferGraph g = BuildBufferGraph(f.net.routing(), 0);
    EXPECT_EQ(g.num_edges(), 6u);  // host ingress -> the two neighbours' ring ingresses
    EXPECT_TRUE(FindBufferCycle(g).empty());
  }
}

TEST(BufferGraph, LabelsNameParallelLinks) {
  ClosParams p = Clos(64, 16);  // 8 leaves · 8 uplinks over 4 spines: 2 links per pair
  Fixture f(topology::BuildLeafSpine(p, {}));
  const auto& nodes = f.net.topology().nodes;
  uint32_t spine0 = 0;
  while (nodes[spine0].name != "spine0") ++spine0;
  std::vector<std::string> labels;
  for (uint32_t port : f.net.NodePorts(spine0)) {
    if (nodes[f.net.PortNode(f.net.PortPeer(port))].name == "leaf0")
      labels.push_back(BufferLabel(f.net.routing(), port, 5, f.net.config().pfc.global));
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"spine0:leaf0#0:5", "spine0:leaf0#1:5"}));
}

}  // namespace
}  // namespace lossless::deadlock
