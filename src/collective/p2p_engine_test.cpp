// The point-to-point engine: alltoall and sendrecv move what their formulas
// say per rank and per NIC (PXN on the destination's rail), keep within
// their receive slots, run at the alpha-beta model's busbw for large
// messages, and are deterministic (docs/model/collective-engine.md).
#include "collective/p2p_engine.hpp"

#include <cstdio>

#include <gtest/gtest.h>

#include "collective/engine_test_util.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {
namespace {

using testing::RoceConfig;
using units::Time;

struct Outcome {
  bool done = false;
  Time time;
  std::vector<int64_t> sent, received, net, nic;
  int max_slots_used = 0;
  uint64_t retx = 0;
};

Outcome RunP2p(const topology::Topology& topo, P2pSpec spec, int64_t bytes, uint64_t seed = 1) {
  sim::Simulator sim(seed);
  fabric::Network net(sim, topo, RoceConfig());
  P2pEngine e(sim, net, spec);
  e.Begin(bytes, sim.Now());
  sim.Run(Time::Sec(1));
  Outcome r;
  r.done = e.done();
  r.time = e.finish() - e.start();
  for (uint32_t k = 0; k < spec.ranks; ++k) {
    r.sent.push_back(e.BytesSent(k));
    r.received.push_back(e.BytesReceived(k));
    r.net.push_back(e.NetworkBytesSent(k));
  }
  for (uint32_t h = 0; h < net.num_hosts(); ++h) r.nic.push_back(e.NicBytesSent(h));
  r.max_slots_used = e.max_slots_used();
  for (const auto& f : net.flows()) r.retx += f.retx_packets;
  EXPECT_EQ(net.qp_failure(), nullptr);
  return r;
}

P2pSpec TwoNodes(P2pPattern pattern) {
  P2pSpec spec;
  spec.pattern = pattern;
  spec.ranks = 16;
  spec.gpus_per_node = spec.nics_per_node = 8;
  return spec;
}

// alltoall on 2 x 8 GPUs: each rank sends S/16 to each of the 15 others and
// receives as much; 8 of those shares cross to the other node, each through
// the NIC of the destination GPU's rail, so every NIC sends 8 x S/16.
TEST(P2pEngineTest, AllToAllMovesEveryShareOnItsRail) {
  const int64_t bytes = int64_t{16} << 20;
  const Outcome r = RunP2p(testing::TwoNodesOfEight(), TwoNodes(P2pPattern::kAllToAll), bytes);
  ASSERT_TRUE(r.done);
  for (uint32_t k = 0; k < 16; ++k) {
    EXPECT_EQ(r.sent[k], 15 * bytes / 16) << k;
    EXPECT_EQ(r.received[k], 15 * bytes / 16) << k;
    EXPECT_EQ(r.net[k], 8 * bytes / 16) << k;
  }
  for (uint32_t h = 0; h < 16; ++h) EXPECT_EQ(r.nic[h], 8 * bytes / 16) << "NIC " << h;
  EXPECT_LE(r.max_slots_used, 8);
}

// sendrecv: rank r sends S to r + 1: only ranks 7 and 15 cross nodes, both
// to GPU 0 of the other node, so only the two NICs of rail 0 send.
// The same over NCCL's 2 channels per peer (an odd size splits unevenly).
TEST(P2pEngineTest, SendRecvSendsToTheNextRank) {
  for (int channels : {1, 2}) {
    const int64_t bytes = (int64_t{8} << 20) + 3;
    P2pSpec spec = TwoNodes(P2pPattern::kSendRecv);
    spec.channels_per_peer = channels;
    const Outcome r = RunP2p(testing::TwoNodesOfEight(), spec, bytes);
    ASSERT_TRUE(r.done);
    for (uint32_t k = 0; k < 16; ++k) {
      EXPECT_EQ(r.sent[k], bytes) << k;
      EXPECT_EQ(r.received[k], bytes) << k;
      EXPECT_EQ(r.net[k], k % 8 == 7 ? bytes : 0) << k;
    }
    for (uint32_t h = 0; h < 16; ++h) EXPECT_EQ(r.nic[h], h % 8 == 0 ? bytes : 0) << "NIC " << h;
  }
}

// A single send (a pipeline stage's activation): GPU 3 of node 0 to GPU 3
// of node 1 over rail 3; nobody else sends or receives, and a send between
// two GPUs of one node stays on NVLink.
TEST(P2pEngineTest, SendMovesOnePairsBytesOnItsRail) {
  const int64_t bytes = (int64_t{4} << 20) + 5;
  P2pSpec spec = TwoNodes(P2pPattern::kSend);
  spec.send_from = 3;
  spec.send_to = 11;
  spec.channels_per_peer = 2;
  const Outcome r = RunP2p(testing::TwoNodesOfEight(), spec, bytes);
  ASSERT_TRUE(r.done);
  for (uint32_t k = 0; k < 16; ++k) {
    EXPECT_EQ(r.sent[k], k == 3 ? bytes : 0) << k;
    EXPECT_EQ(r.received[k], k == 11 ? bytes : 0) << k;
  }
  for (uint32_t h = 0; h < 16; ++h) EXPECT_EQ(r.nic[h], h == 3 ? bytes : 0) << "NIC " << h;
  spec.send_to = 5;
  const Outcome nv = RunP2p(testing::TwoNodesOfEight(), spec, bytes);
  ASSERT_TRUE(nv.done);
  EXPECT_EQ(nv.received[5], bytes);
  EXPECT_EQ(nv.net[3], 0);
}

TEST(P2pEngineTest, ChannelsPerPeerFollowNccl) {
  EXPECT_EQ(P2pChannelsPerPeer(16, 16), 2);   // 2 x 16 <= 4 x 16
  EXPECT_EQ(P2pChannelsPerPeer(12, 32), 2);   // p2p channels round up to 16: 64 <= 64
  EXPECT_EQ(P2pChannelsPerPeer(16, 128), 1);  // 256 > 64, halved once
  EXPECT_EQ(P2pChannelsPerPeer(1, 1024), 1);  // never below 1
}

// One switch, 8 hosts, large messages: busbw within 2 % of the alpha-beta
// model of the same links with no host latencies.
TEST(P2pEngineTest, LargeMessagesRunAtTheAlphaBetaModel) {
  for (P2pPattern pattern : {P2pPattern::kAllToAll, P2pPattern::kSendRecv}) {
    const Collective c = pattern == P2pPattern::kAllToAll ? Collective::kAllToAll
                                                          : Collective::kSendRecv;
    P2pSpec spec;
    spec.pattern = pattern;
    spec.ranks = 8;
    const int64_t bytes = int64_t{128} << 20;
    const Outcome r = RunP2p(fabric::testing::LsRing(8, 8, 1), spec, bytes);
    ASSERT_TRUE(r.done);
    const double busbw = BusBwGbs(c, 8, bytes, static_cast<double>(r.time.ps()) / 1e6);
    const double model = testing::ModelBusBwGbs(c, 8, 1, bytes);
    std::printf("%s 8 x 128 MiB, 400G: busbw %.2f GB/s, alpha-beta %.2f GB/s\n",
                std::string(CollectiveName(c)).c_str(), busbw, model);
    EXPECT_NEAR(busbw / model, 1.0, 0.02) << CollectiveName(c);
    EXPECT_LE(busbw, model * 1.0001) << CollectiveName(c);
    EXPECT_EQ(r.retx, 0u);
  }
}

TEST(P2pEngineTest, SameSeedSameTime) {
  const Outcome a = RunP2p(testing::TwoNodesOfEight(), TwoNodes(P2pPattern::kAllToAll), 4 << 20, 5);
  const Outcome b = RunP2p(testing::TwoNodesOfEight(), TwoNodes(P2pPattern::kAllToAll), 4 << 20, 5);
  ASSERT_TRUE(a.done);
  EXPECT_EQ(a.time, b.time);
}

TEST(P2pEngineTest, RefusesBadSpecs) {
  sim::Simulator sim(1);
  fabric::Network net(sim, fabric::testing::LsRing(4, 4, 1), RoceConfig());
  P2pSpec spec;
  spec.ranks = 5;  // more ranks than hosts
  EXPECT_THROW(P2pEngine(sim, net, spec), std::invalid_argument);
  spec.ranks = 1;
  EXPECT_THROW(P2pEngine(sim, net, spec), std::invalid_argument);
  spec.ranks = 4;
  spec.pattern = P2pPattern::kSend;
  spec.send_from = spec.send_to = 2;  // to itself
  EXPECT_THROW(P2pEngine(sim, net, spec), std::invalid_argument);
  spec.send_to = 4;  // outside the group
  EXPECT_THROW(P2pEngine(sim, net, spec), std::invalid_argument);
  spec.pattern = P2pPattern::kAllToAll;
  P2pEngine e(sim, net, spec);
  EXPECT_THROW(e.Begin(0, sim.Now()), std::invalid_argument);
}

}  // namespace
}  // namespace lossless::collective
