// Several queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION): on a
// two-tier ECMP fabric where each connection's one QP hashes onto a leaf's
// uplinks and some uplinks carry two connections while others idle, four QPs
// per connection (each its own UDP source port) spread the bytes over the
// spine links and the ring runs faster. Counted per leaf-to-spine link from
// the ports' counters; round robin and split (NCCL_IB_SPLIT_DATA_ON_QPS) both;
// data movement unchanged (docs/model/collective-engine.md).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collective/ring_engine.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {
namespace {

using units::Time;

constexpr int kHosts = 8, kPerLeaf = 4, kSpines = 4;

struct Spread {
  bool done = false;
  Time time;
  std::vector<int64_t> uplink_bytes;  // per leaf-to-spine link direction
  std::vector<int64_t> sent;          // per rank
  int64_t expected = 0;
};

Spread RunAlternatingRing(int qps, bool split, int64_t bytes) {
  sim::Simulator sim(1);
  const topology::Topology topo = fabric::testing::LsRing(kHosts, kPerLeaf, kSpines);
  fabric::NetworkConfig cfg;
  cfg.framing = fabric::Framing::RoceV2(4096);
  cfg.stop_when_flows_done = false;
  cfg.routing = fabric::RoutingMode::kEcmp;
  cfg.pfc.enabled = true;  // lossless: colliding flows queue, nothing waits out a timeout
  fabric::Network net(sim, topo, cfg);
  RingSpec spec;
  // Hosts 0-3 on leaf 0, 4-7 on leaf 1; the ring alternates leaves, so every
  // connection crosses the spines: four connections up from each leaf.
  spec.rings.push_back({{0, 4, 1, 5, 2, 6, 3, 7}, 0});
  spec.bytes = bytes;
  spec.qps_per_connection = qps;
  spec.split_data_on_qps = split;
  RingEngine ring(sim, net, spec);
  ring.Start(sim.Now());
  sim.Run(Time::Sec(1));
  Spread s;
  s.done = ring.done();
  s.time = ring.finish() - ring.start();
  s.expected = ring.ExpectedBytesPerRank();
  for (uint32_t r = 0; r < kHosts; ++r) s.sent.push_back(ring.BytesSent(r));
  const fabric::RoutingTable routes(topo);
  for (uint32_t p = 0; p < routes.num_ports(); ++p) {
    const std::string name = routes.PortName(p);
    if (name.rfind("leaf", 0) == 0 && name.find("->spine") != std::string::npos)
      s.uplink_bytes.push_back(static_cast<int64_t>(net.port_stats(p).tx_wire_bytes));
  }
  return s;
}

double Imbalance(const std::vector<int64_t>& v) {  // max over mean
  int64_t sum = 0;
  for (int64_t b : v) sum += b;
  return static_cast<double>(*std::max_element(v.begin(), v.end())) * static_cast<double>(v.size()) /
         static_cast<double>(sum);
}

void Print(const char* what, const Spread& s) {
  std::printf("%s: %.1f us, leaf->spine MB:", what, static_cast<double>(s.time.ps()) / 1e6);
  for (int64_t b : s.uplink_bytes) std::printf(" %.1f", static_cast<double>(b) / 1e6);
  std::printf(" (max/mean %.2f)\n", Imbalance(s.uplink_bytes));
}

TEST(MultiQpTest, FourQpsPerConnectionSpreadCollidingConnectionsOverTheSpines) {
  const int64_t bytes = int64_t{64} << 20;
  const Spread one = RunAlternatingRing(1, false, bytes);
  const Spread four = RunAlternatingRing(4, false, bytes);
  const Spread split = RunAlternatingRing(4, true, bytes);
  Print("1 QP per connection", one);
  Print("4 QPs, round robin", four);
  Print("4 QPs, split", split);
  ASSERT_TRUE(one.done && four.done && split.done);
  ASSERT_EQ(one.uplink_bytes.size(), size_t{2 * kSpines});
  // The premise: with one QP per connection the hash puts two or more
  // connections on some uplink (8 connections, 8 uplinks): the busiest
  // carries at least twice the mean's share... of one connection each.
  ASSERT_GE(Imbalance(one.uplink_bytes), 1.5) << "no collision with one QP: nothing to spread";
  // Four QPs per connection: 16 flows per leaf over its 4 uplinks.
  EXPECT_LT(Imbalance(four.uplink_bytes), Imbalance(one.uplink_bytes));
  EXPECT_LT(Imbalance(split.uplink_bytes), Imbalance(one.uplink_bytes));
  // The busiest uplink sets the ring's pace: busbw rises.
  EXPECT_LT(four.time, one.time);
  EXPECT_LT(split.time, one.time);
  // The same data moves either way.
  for (int r = 0; r < kHosts; ++r) {
    EXPECT_EQ(one.sent[r], one.expected);
    EXPECT_EQ(four.sent[r], one.expected);
    EXPECT_EQ(split.sent[r], one.expected);
  }
}

TEST(MultiQpTest, OneQpPerConnectionIsTheDefault) {
  EXPECT_EQ(RingSpec().qps_per_connection, 1);
  EXPECT_FALSE(RingSpec().split_data_on_qps);
}

TEST(MultiQpTest, QueuePairCountOutOfRangeIsRefused) {
  sim::Simulator sim(1);
  fabric::NetworkConfig cfg;
  cfg.stop_when_flows_done = false;
  fabric::Network net(sim, fabric::testing::LsRing(4, 4, 1), cfg);
  RingSpec spec;
  spec.rings.push_back({{0, 1, 2, 3}, 0});
  spec.bytes = 1 << 20;
  spec.qps_per_connection = 0;
  EXPECT_THROW(RingEngine(sim, net, spec), std::invalid_argument);
  spec.qps_per_connection = 129;
  EXPECT_THROW(RingEngine(sim, net, spec), std::invalid_argument);
}

}  // namespace
}  // namespace lossless::collective
