// Several queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION): on a
// two-tier ECMP fabric where each connection's one QP hashes onto a leaf's
// uplinks and some uplinks carry two connections while others idle, four QPs
// per connection (each its own UDP source port) spread the bytes over the
// spine links and the ring runs faster. Counted per leaf-to-spine link from
// the ports' counters; round robin and split (NCCL_IB_SPLIT_DATA_ON_QPS) both;
// data movement unchanged (docs/model/collective-engine.md). The tree and
// point-to-point engines open their queue pairs the same way (QpSet).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collective/p2p_engine.hpp"
#include "collective/qp_set.hpp"
#include "collective/ring_engine.hpp"
#include "collective/tree_engine.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace multi_qp {

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

// --- tree and point-to-point -------------------------------------------------

fabric::NetworkConfig EcmpLossless() {
  fabric::NetworkConfig cfg;
  cfg.framing = fabric::Framing::RoceV2(4096);
  cfg.stop_when_flows_done = false;
  cfg.routing = fabric::RoutingMode::kEcmp;
  cfg.pfc.enabled = true;
  return cfg;
}

std::vector<int64_t> UplinkBytes(const topology::Topology& topo, const fabric::Network& net) {
  std::vector<int64_t> v;
  const fabric::RoutingTable routes(topo);
  for (uint32_t p = 0; p < routes.num_ports(); ++p) {
    const std::string name = routes.PortName(p);
    if (name.rfind("leaf", 0) == 0 && name.find("->spine") != std::string::npos)
      v.push_back(static_cast<int64_t>(net.port_stats(p).tx_wire_bytes));
  }
  return v;
}

// One tree over 8 one-GPU nodes (hosts 0-3 on leaf 0, 4-7 on leaf 1) whose
// every edge crosses the spines: 0 -> {4, 5}, 4 -> {1, 2}, 5 -> {3},
// 1 -> {6}, 2 -> {7}; seven connections up from each leaf (reduce and
// broadcast directions together).
TreeSpec CrossingTree(int qps, bool split) {
  TreeChannel t;
  t.ranks.resize(kHosts);
  const int parent[kHosts] = {-1, 4, 4, 5, 0, 0, 1, 2};
  for (int r = 0; r < kHosts; ++r) t.ranks[static_cast<size_t>(r)].up = parent[r];
  int children[kHosts] = {};
  for (int r = 0; r < kHosts; ++r)
    if (parent[r] >= 0) t.ranks[static_cast<size_t>(parent[r])].down[children[parent[r]]++] = r;
  TreeSpec spec;
  spec.trees.push_back(t);
  spec.nics.push_back(0);
  spec.qps_per_connection = qps;
  spec.split_data_on_qps = split;
  return spec;
}

Spread RunCrossingTree(int qps, bool split, int64_t bytes, int spines) {
  sim::Simulator sim(1);
  const topology::Topology topo = fabric::testing::LsRing(kHosts, kPerLeaf, spines);
  fabric::Network net(sim, topo, EcmpLossless());
  TreeEngine tree(sim, net, CrossingTree(qps, split));
  tree.Begin(bytes, sim.Now());
  sim.Run(Time::Sec(1));
  Spread s;
  s.done = tree.done();
  s.time = tree.finish() - tree.start();
  for (uint32_t r = 0; r < kHosts; ++r) s.sent.push_back(tree.BytesSent(r));
  s.uplink_bytes = UplinkBytes(topo, net);
  EXPECT_EQ(net.qp_failure(), nullptr);
  return s;
}

TEST(MultiQpTest, TreeWithFourQpsPerConnectionSpreadsItsEdgesOverTheSpines) {
  const int64_t bytes = int64_t{8} << 20;
  // Two spines: seven connections up from each leaf share two uplinks, so
  // the busiest uplink, not a host link (three connections at most), sets
  // the tree's pace.
  constexpr int kTreeSpines = 2;
  const Spread one = RunCrossingTree(1, false, bytes, kTreeSpines);
  const Spread four = RunCrossingTree(4, false, bytes, kTreeSpines);
  const Spread split = RunCrossingTree(4, true, bytes, kTreeSpines);
  Print("tree, 1 QP per connection", one);
  Print("tree, 4 QPs, round robin", four);
  Print("tree, 4 QPs, split", split);
  ASSERT_TRUE(one.done && four.done && split.done);
  ASSERT_EQ(one.uplink_bytes.size(), size_t{2 * kTreeSpines});
  EXPECT_LT(Imbalance(four.uplink_bytes), Imbalance(one.uplink_bytes));
  EXPECT_LT(Imbalance(split.uplink_bytes), Imbalance(one.uplink_bytes));
  EXPECT_LT(four.time, one.time);
  EXPECT_LT(split.time, one.time);
  // The tree's data movement does not depend on the queue pairs: a rank
  // sends its share up once and down once per child.
  for (int r = 0; r < kHosts; ++r) {
    EXPECT_EQ(four.sent[r], one.sent[r]);
    EXPECT_EQ(split.sent[r], one.sent[r]);
  }
  EXPECT_EQ(one.sent[0], 2 * bytes);  // the root: down to its two children
  EXPECT_EQ(one.sent[6], bytes);      // a leaf: up only
}

struct P2pSpread {
  bool done = false;
  Time time;
  std::vector<int64_t> uplink_bytes, sent, received;
};

P2pSpread RunP2p(P2pPattern pattern, int qps, bool split, int64_t bytes) {
  sim::Simulator sim(1);
  const topology::Topology topo = fabric::testing::LsRing(kHosts, kPerLeaf, kSpines);
  fabric::Network net(sim, topo, EcmpLossless());
  P2pSpec spec;
  spec.pattern = pattern;
  spec.ranks = kHosts;
  spec.qps_per_connection = qps;
  spec.split_data_on_qps = split;
  P2pEngine e(sim, net, spec);
  e.Begin(bytes, sim.Now());
  sim.Run(Time::Sec(1));
  P2pSpread s;
  s.done = e.done();
  s.time = e.finish() - e.start();
  for (uint32_t r = 0; r < kHosts; ++r) {
    s.sent.push_back(e.BytesSent(r));
    s.received.push_back(e.BytesReceived(r));
  }
  s.uplink_bytes = UplinkBytes(topo, net);
  EXPECT_EQ(net.qp_failure(), nullptr);
  return s;
}

int BusyUplinks(const std::vector<int64_t>& v) {  // carrying 1 MB or more
  return static_cast<int>(
      std::count_if(v.begin(), v.end(), [](int64_t b) { return b >= 1'000'000; }));
}

TEST(MultiQpTest, SendRecvAndAllToAllWithFourQpsPerConnectionUseMoreSpines) {
  // sendrecv: ranks 3 -> 4 and 7 -> 0 cross the spines, one connection up
  // from each leaf. One QP puts it on one uplink; four QPs on several.
  const int64_t bytes = int64_t{16} << 20;
  const P2pSpread one = RunP2p(P2pPattern::kSendRecv, 1, false, bytes);
  const P2pSpread four = RunP2p(P2pPattern::kSendRecv, 4, false, bytes);
  const P2pSpread split = RunP2p(P2pPattern::kSendRecv, 4, true, bytes);
  ASSERT_TRUE(one.done && four.done && split.done);
  ASSERT_EQ(one.uplink_bytes.size(), size_t{2 * kSpines});
  EXPECT_EQ(BusyUplinks(one.uplink_bytes), 2);  // one per leaf
  EXPECT_GT(BusyUplinks(four.uplink_bytes), 2);
  EXPECT_GT(BusyUplinks(split.uplink_bytes), 2);
  for (int r = 0; r < kHosts; ++r) {
    EXPECT_EQ(one.sent[r], bytes);
    EXPECT_EQ(four.sent[r], bytes);
    EXPECT_EQ(split.received[r], bytes);
  }
  // alltoall: 16 connections up from each leaf; four QPs each make 64 flows
  // and even out the uplinks.
  const P2pSpread a1 = RunP2p(P2pPattern::kAllToAll, 1, false, bytes);
  const P2pSpread a4 = RunP2p(P2pPattern::kAllToAll, 4, false, bytes);
  ASSERT_TRUE(a1.done && a4.done);
  Print("alltoall, 1 QP", {true, a1.time, a1.uplink_bytes, {}, 0});
  Print("alltoall, 4 QPs", {true, a4.time, a4.uplink_bytes, {}, 0});
  EXPECT_LT(Imbalance(a4.uplink_bytes), Imbalance(a1.uplink_bytes));
  for (int r = 0; r < kHosts; ++r) {
    EXPECT_EQ(a4.sent[r], a1.sent[r]);
    EXPECT_EQ(a4.received[r], a1.received[r]);
  }
}

TEST(MultiQpTest, TreeAndP2pRefuseAQueuePairCountOutOfRange) {
  sim::Simulator sim(1);
  fabric::Network net(sim, fabric::testing::LsRing(kHosts, kPerLeaf, kSpines), EcmpLossless());
  for (int qps : {0, 129}) {
    EXPECT_THROW(TreeEngine(sim, net, CrossingTree(qps, false)), std::invalid_argument);
    P2pSpec spec;
    spec.ranks = kHosts;
    spec.qps_per_connection = qps;
    EXPECT_THROW(P2pEngine(sim, net, spec), std::invalid_argument);
  }
}

// A connection of several QPs completes whole messages in posting order at
// both ends, however its parts finish (QpSet's bookkeeping alone).
TEST(MultiQpTest, QpSetCompletesWholeMessagesInPostingOrder) {
  sim::Simulator sim(1);
  fabric::NetworkConfig cfg = EcmpLossless();
  fabric::Network net(sim, fabric::testing::LsRing(2, 2, 1), cfg);
  QpSet set(net, 0, 1, 3, false);
  ASSERT_EQ(set.size(), 3u);
  for (int m = 0; m < 3; ++m) set.Post(net, 4096);  // messages 0, 1, 2 on QPs 0, 1, 2
  EXPECT_EQ(set.SendDone(1), 0u);  // message 1 before 0: waits
  EXPECT_EQ(set.SendDone(0), 2u);  // 0, then 1 with it
  EXPECT_EQ(set.SendDone(2), 1u);
  EXPECT_EQ(set.RecvDone(set.first() + 2), 0u);
  EXPECT_EQ(set.RecvDone(set.first()), 1u);
  EXPECT_EQ(set.RecvDone(set.first() + 1), 2u);
  QpSet halves(net, 0, 1, 2, true);
  halves.Post(net, 1000);  // two parts of 512 and 488 B, one per QP
  EXPECT_EQ(halves.SendDone(0), 0u);
  EXPECT_EQ(halves.SendDone(0), 1u);
  QpSet single(net, 0, 1, 1, false);
  single.Post(net, 100);
  EXPECT_EQ(single.SendDone(0), 1u);
  EXPECT_EQ(single.RecvDone(single.first()), 1u);
}

}  // namespace multi_qp
}  // namespace
}  // namespace lossless::collective
