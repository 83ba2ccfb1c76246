// The tree all-reduce engine: bytes per rank and per NIC against the tree's
// formula (every tree edge carries the channel's share up and down), busbw
// against the alpha-beta model of the same links, slots, determinism
// (docs/model/collective-engine.md#tree-all-reduce).
#include "collective/tree_engine.hpp"

#include <cstdio>

#include <gtest/gtest.h>

#include "collective/engine_test_util.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace tree_engine {

using testing::LosslessRoceConfig;
using units::Time;

struct Outcome {
  bool done = false;
  Time time;
  std::vector<int64_t> sent, received, nic;
  int max_slots_used = 0;
  uint64_t retx = 0;
  uint64_t pauses = 0;  // PFC frames sent, all ports
  int64_t undelivered = 0;  // bytes posted on a queue pair and not received, at the stop
};

TreeSpec Spec(int nodes, int g, int channels) {
  TreeSpec spec;
  spec.gpus_per_node = spec.nics_per_node = g;
  // NCCL's connect.cc doubles the search channels: half on each tree.
  spec.trees = TreeChannels(nodes, g, g, channels, std::max(1, channels / 2));
  for (int c = 0; c < channels; ++c)
    spec.nics.push_back(static_cast<uint32_t>(c % std::max(1, channels / 2) % g));
  return spec;
}

Outcome RunTree(const topology::Topology& topo, const TreeSpec& spec, int64_t bytes,
                uint64_t seed = 1) {
  sim::Simulator sim(seed);
  fabric::Network net(sim, topo, LosslessRoceConfig());
  TreeEngine e(sim, net, spec);
  e.Begin(bytes, sim.Now());
  sim.Run(Time::Sec(1));
  Outcome o;
  o.done = e.done();
  o.time = e.finish() - e.start();
  const uint32_t n = static_cast<uint32_t>(spec.trees[0].ranks.size());
  for (uint32_t k = 0; k < n; ++k) {
    o.sent.push_back(e.BytesSent(k));
    o.received.push_back(e.BytesReceived(k));
  }
  for (uint32_t h = 0; h < net.num_hosts(); ++h) o.nic.push_back(e.NicBytesSent(h));
  o.max_slots_used = e.max_slots_used();
  for (const auto& f : net.flows()) {
    o.retx += f.retx_packets;
    o.undelivered += f.spec.bytes - f.recv_bytes;
  }
  for (uint32_t p = 0; p < net.num_ports(); ++p) o.pauses += net.port_stats(p).pause_tx;
  EXPECT_EQ(net.qp_failure(), nullptr);
  return o;
}

// 2 nodes x 8 GPUs, 4 channels (2 per tree), 64 MiB and an odd size: a rank
// sends its channel share to its parent (reduce) and to each child
// (broadcast), and receives as much; every inter-node edge loads the
// sender's NIC of that channel's rail. Every rank ends with the result: it
// receives the whole share of every channel from its parent, or (the root)
// from each child.
TEST(TreeEngineTest, EveryRankAndNicMovesWhatTheTreeSays) {
  for (int64_t bytes : {int64_t{64} << 20, int64_t{10'000'003}}) {
    const TreeSpec spec = Spec(2, 8, 4);
    const Outcome o = RunTree(testing::TwoNodesOfEight(), spec, bytes);
    ASSERT_TRUE(o.done);
    std::vector<int64_t> sent(16), nic(16);
    for (size_t ch = 0; ch < spec.trees.size(); ++ch) {
      const int64_t share = bytes / 4 + (static_cast<int64_t>(ch) < bytes % 4 ? 1 : 0);
      for (int r = 0; r < 16; ++r) {
        const TreeLinks& l = spec.trees[ch].ranks[static_cast<size_t>(r)];
        sent[static_cast<size_t>(r)] += share * ((l.up >= 0) + l.Children());
        auto edge = [&](int peer) {
          if (peer >= 0 && peer / 8 != r / 8) nic[static_cast<size_t>(r / 8 * 8) + spec.nics[ch]] += share;
        };
        edge(l.up);
        for (int d : l.down) edge(d);
      }
    }
    EXPECT_EQ(o.sent, sent) << bytes;
    EXPECT_EQ(o.received, sent) << bytes;  // each edge both ways
    EXPECT_EQ(o.nic, nic) << bytes;
    EXPECT_LE(o.max_slots_used, 8);
    // Done means nothing in flight: every chunk and every clear-to-send
    // message posted on a queue pair has arrived when the last rank is done
    // (NVLink messages have no queue pair: this sees the network's only).
    EXPECT_EQ(o.undelivered, 0) << bytes;
  }
}

// 2 nodes x 8 GPUs, 16 channels (8 per tree, one per NIC), 256 MiB, no host
// latencies: busbw within 2 % of the alpha-beta model of the tree on the
// same links. Each tree sends half the buffer once each way across the
// nodes, so the NICs could carry 720 GB/s of busbw; the chains inside the
// nodes (a GPU sends 2 S (G - 1)/G over NVLink) bound it at 482.
TEST(TreeEngineTest, LargeMessagesRunAtTheAlphaBetaModel) {
  const int64_t bytes = int64_t{256} << 20;
  const Outcome o = RunTree(testing::TwoNodesOfEight(), Spec(2, 8, 16), bytes);
  ASSERT_TRUE(o.done);
  const double busbw =
      BusBwGbs(Collective::kAllReduce, 16, bytes, static_cast<double>(o.time.ps()) / 1e6);
  const double model =
      testing::ModelBusBwGbs(Collective::kAllReduce, 2, 8, bytes, Algorithm::kTree);
  std::printf("tree all-reduce 2 x 8 GPUs, 256 MiB, 8 x 400G: busbw %.1f GB/s, alpha-beta %.1f\n",
              busbw, model);
  EXPECT_NEAR(busbw / model, 1.0, 0.02);
  EXPECT_EQ(o.retx, 0u);
  EXPECT_EQ(o.pauses, 0u);  // uncongested: one sender per NIC and direction
}

// 8 hosts on one switch, one GPU each, two channels: an interior node
// receives from two children and its parent at once, so PFC pauses its
// senders, which holds their traffic to other nodes too (head-of-line
// blocking): the run stays below the model (about 91 % of it) and never
// above.
TEST(TreeEngineTest, IncastOnOneGpuPerNodeStaysBelowTheModel) {
  const int64_t bytes = int64_t{64} << 20;
  const Outcome o = RunTree(fabric::testing::LsRing(8, 8, 1), Spec(8, 1, 2), bytes);
  ASSERT_TRUE(o.done);
  const double busbw =
      BusBwGbs(Collective::kAllReduce, 8, bytes, static_cast<double>(o.time.ps()) / 1e6);
  const double model =
      testing::ModelBusBwGbs(Collective::kAllReduce, 8, 1, bytes, Algorithm::kTree);
  std::printf("tree all-reduce 8 x 64 MiB, one GPU per node: busbw %.2f GB/s, alpha-beta %.2f\n",
              busbw, model);
  EXPECT_LE(busbw, model);
  EXPECT_GE(busbw, 0.8 * model);
  EXPECT_GT(o.pauses, 0u);
}

// One chunk per channel: the reduction climbs the tree and the result comes
// back down, 2 x depth dependent one-way trips host -> switch -> host in
// the deeper of the two trees, each at least 2 x 1 us of cable, 300 ns of
// switch and the 32-KiB chunk serialised once at 400 Gb/s (a rank forwards
// a chunk only when all of it has arrived); at most that with the chunk
// serialised twice, plus half.
TEST(TreeEngineTest, SmallMessagesPayTheTreeDepthTwice) {
  const Outcome o = RunTree(fabric::testing::LsRing(8, 8, 1), Spec(8, 1, 2), 64 << 10);
  ASSERT_TRUE(o.done);
  const int depth = std::max(NodeTreeDepth(8, 0), NodeTreeDepth(8, 1));
  const double serialise_us = 32768.0 * 8 / 400e3;
  const double hop_us = 2 * 1.0 + 0.3 + serialise_us;
  std::printf("tree all-reduce 8 x 64 KiB: %.2f us (2 x depth %d hops >= %.1f us)\n",
              o.time.ps() / 1e6, depth, 2 * depth * hop_us);
  EXPECT_GE(o.time.ps() / 1e6, 2 * depth * hop_us);
  EXPECT_LE(o.time.ps() / 1e6, 2 * depth * (hop_us + serialise_us) * 1.5);
}

TEST(TreeEngineTest, SameSeedSameTimeAndBackToBack) {
  const Outcome a = RunTree(testing::TwoNodesOfEight(), Spec(2, 8, 4), 8 << 20, 3);
  const Outcome b = RunTree(testing::TwoNodesOfEight(), Spec(2, 8, 4), 8 << 20, 3);
  ASSERT_TRUE(a.done);
  EXPECT_EQ(a.time, b.time);
  sim::Simulator sim(1);
  fabric::Network net(sim, testing::TwoNodesOfEight(), LosslessRoceConfig());
  TreeEngine e(sim, net, Spec(2, 8, 4));
  std::vector<Time> times;
  for (int k = 0; k < 3; ++k) {
    e.Begin(4 << 20, sim.Now());
    sim.Run(sim.Now() + Time::Sec(1));
    ASSERT_TRUE(e.done());
    times.push_back(e.finish() - e.start());
  }
  EXPECT_EQ(times[1], times[2]);
}

// NCCL's tree depth estimate and chunk rule (enqueue.cc): 2 x 8 GPUs have
// depth 7 + 1; 16 channels keep the 512-KiB step only from 1 GiB (128 chunks
// per channel >= 8 x depth), halve it at 256 MiB, and go down to 32 KiB.
TEST(TreeEngineTest, ChunksShrinkForSmallMessagesAsNcclDoes) {
  EXPECT_EQ(TreeDepth(2, 8), 8);
  EXPECT_EQ(TreeDepth(16, 8), 11);
  EXPECT_EQ(TreeDepth(1, 8), 7);
  EXPECT_EQ(TreeDepth(3, 1), 1);
  EXPECT_EQ(NcclTreeChunkBytes(int64_t{1} << 30, 16, 8), 512 << 10);
  EXPECT_EQ(NcclTreeChunkBytes(int64_t{256} << 20, 16, 8), 256 << 10);
  EXPECT_EQ(NcclTreeChunkBytes(int64_t{16} << 20, 16, 8), 64 << 10);
  EXPECT_EQ(NcclTreeChunkBytes(int64_t{1} << 20, 16, 8), 32 << 10);
  // The engine moves the same bytes in smaller chunks, and sooner.
  const int64_t bytes = int64_t{4} << 20;
  sim::Simulator sim(1);
  fabric::Network net(sim, testing::TwoNodesOfEight(), LosslessRoceConfig());
  TreeEngine e(sim, net, Spec(2, 8, 4));
  e.Begin(bytes, sim.Now());
  sim.Run(sim.Now() + Time::Sec(1));
  ASSERT_TRUE(e.done());
  const Time big = e.finish() - e.start();
  const int64_t sent = e.BytesSent(3);
  e.Begin(bytes, sim.Now(), NcclTreeChunkBytes(bytes, 4, TreeDepth(2, 8)));
  sim.Run(sim.Now() + Time::Sec(1));
  ASSERT_TRUE(e.done());
  EXPECT_EQ(e.BytesSent(3), sent);
  EXPECT_LT(e.finish() - e.start(), big);
}

// NCCL's LL128 tree rule (enqueue.cc), by hand for 2 x 8 GPUs on 16
// channels: ppn 8, nsteps = 1 + 1 + 0.8 = 2.8, thresholds 22.4 and 5.6
// chunks per channel. 1 GiB: 109 chunks of 614,400 B, no halving; 64 MiB:
// 6, 13, then 27 at 153,600 B; 4 MiB: down to 76,800 B (3 chunks) in the
// first loop, one more halving to 38,400 B (6) in the second; 1 MiB: 19,200 B.
// Payload is 120/128 of the line bytes.
TEST(TreeEngineTest, Ll128ChunksHalveAsNcclDoes) {
  EXPECT_EQ(NcclTreeLl128ChunkBytes(int64_t{1} << 30, 16, 2, 16), 576000);
  EXPECT_EQ(NcclTreeLl128ChunkBytes(int64_t{64} << 20, 16, 2, 16), 144000);
  EXPECT_EQ(NcclTreeLl128ChunkBytes(int64_t{4} << 20, 16, 2, 16), 36000);
  EXPECT_EQ(NcclTreeLl128ChunkBytes(int64_t{1} << 20, 16, 2, 16), 18000);
  // 16 nodes: nsteps 1 + 4 + 0.8 = 5.8, thresholds 46.4 and 11.6; 256 MiB on
  // 16 channels is 27 chunks of 614,400 B, 54 of 307,200 B.
  EXPECT_EQ(NcclTreeLl128ChunkBytes(int64_t{256} << 20, 16, 16, 128), 288000);
  // The engine moves the same bytes under LL128 in the smaller chunks, sooner.
  const int64_t bytes = int64_t{4} << 20;
  sim::Simulator sim(1);
  fabric::Network net(sim, testing::TwoNodesOfEight(), LosslessRoceConfig());
  TreeSpec spec = Spec(2, 8, 4);
  spec.wire = WireOf(Protocol::kLL128, units::Rate());
  spec.chunk_bytes = 576000;
  TreeEngine e(sim, net, spec);
  e.Begin(bytes, sim.Now());
  sim.Run(sim.Now() + Time::Sec(1));
  ASSERT_TRUE(e.done());
  const Time step = e.finish() - e.start();
  const int64_t sent = e.BytesSent(3);
  e.Begin(bytes, sim.Now(), NcclTreeLl128ChunkBytes(bytes, 4, 2, 16));
  sim.Run(sim.Now() + Time::Sec(1));
  ASSERT_TRUE(e.done());
  EXPECT_EQ(e.BytesSent(3), sent);
  EXPECT_LT(e.finish() - e.start(), step);
}

TEST(TreeEngineTest, RefusesBadSpecs) {
  sim::Simulator sim(1);
  fabric::Network net(sim, fabric::testing::LsRing(4, 4, 1), LosslessRoceConfig());
  TreeSpec spec = Spec(4, 1, 2);
  spec.nics.pop_back();
  EXPECT_THROW(TreeEngine(sim, net, spec), std::invalid_argument);
  spec = Spec(4, 1, 2);
  spec.trees[0].ranks[2].up = -1;  // two roots
  EXPECT_THROW(TreeEngine(sim, net, spec), std::invalid_argument);
  spec = Spec(8, 1, 2);  // more ranks than hosts
  EXPECT_THROW(TreeEngine(sim, net, spec), std::invalid_argument);
  spec = Spec(4, 1, 2);
  spec.slots = 32768;  // slots are 16-bit counts
  EXPECT_THROW(TreeEngine(sim, net, spec), std::invalid_argument);
  spec.slots = 32767;
  EXPECT_NO_THROW(TreeEngine(sim, net, spec));
  // Chunk counts are 32-bit: 2^32 B per channel in 1-byte chunks is refused
  // at Begin, before anything is queued; 2^31 - 1 of them are not.
  TreeEngine e(sim, net, Spec(4, 1, 1));
  EXPECT_THROW(e.Begin(int64_t{1} << 32, sim.Now(), 1), std::invalid_argument);
  EXPECT_EQ(sim.pending(), 0u);
  EXPECT_NO_THROW(e.Begin(INT32_MAX, sim.Now(), 1));
}

}  // namespace tree_engine
}  // namespace
}  // namespace lossless::collective
