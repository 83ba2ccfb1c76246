// The packet-level ring all-reduce: data movement against the ring's formula,
// bus bandwidth against the alpha-beta bound of the same links and framing,
// a slow NIC halving the ring, determinism (docs/model/collective-engine.md).
#include "collective/ring_engine.hpp"

#include <cstdio>
#include <numeric>

#include <gtest/gtest.h>

#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::collective {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace ring_engine {

using units::Rate;
using units::Time;

struct Outcome {
  size_t max_slots_used = 0;
  bool done = false;
  Time time;
  std::vector<int64_t> sent;  // per host
  int64_t expected = 0;
  uint64_t retx = 0;
};

fabric::NetworkConfig RoceConfig() {
  fabric::NetworkConfig cfg;
  cfg.framing = fabric::Framing::RoceV2(4096);
  cfg.stop_when_flows_done = false;
  return cfg;
}

std::vector<uint32_t> Iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

Outcome RunRing(topology::Topology topo, uint32_t hosts, int channels, int64_t bytes,
                uint64_t seed = 1) {
  sim::Simulator sim(seed);
  fabric::Network net(sim, topo, RoceConfig());
  RingSpec spec;
  for (int c = 0; c < channels; ++c) {
    std::vector<uint32_t> ring = Iota(hosts);
    if (c % 2 == 1) std::reverse(ring.begin(), ring.end());  // the other direction
    spec.rings.push_back({ring, 0});
  }
  spec.bytes = bytes;
  RingEngine ar(sim, net, spec);
  ar.Start(sim.Now());
  sim.Run(Time::Sec(1));
  Outcome o;
  o.done = ar.done();
  o.time = ar.finish() - ar.start();
  for (uint32_t h = 0; h < hosts; ++h) o.sent.push_back(ar.BytesSent(h));
  o.expected = ar.ExpectedBytesPerRank();
  o.max_slots_used = ar.max_slots_used();
  for (const auto& f : net.flows()) o.retx += f.retx_packets;
  EXPECT_EQ(net.qp_failure(), nullptr);
  return o;
}

double BusBwGBs(int64_t bytes, uint32_t n, Time t) {
  return static_cast<double>(bytes) / (static_cast<double>(t.ps()) * 1e-12) * 2.0 * (n - 1) / n /
         1e9;
}

TEST(RingEngineTest, EveryRankSendsWhatTheRingFormulaSays) {
  const uint32_t n = 4;
  const int64_t bytes = int64_t{32} << 20;  // 8 MiB per rank share, 4 loops of 2 MiB chunks
  const Outcome o = RunRing(fabric::testing::LsRing(n, 4, 1), n, 2, bytes);
  ASSERT_TRUE(o.done);
  EXPECT_EQ(o.expected, 2 * (n - 1) * bytes / n);
  for (uint32_t h = 0; h < n; ++h) EXPECT_EQ(o.sent[h], o.expected) << "host " << h;
}

TEST(RingEngineTest, UnevenSizesStillMoveEveryByte) {
  const uint32_t n = 3;
  const int64_t bytes = 10'000'001;
  const Outcome o = RunRing(fabric::testing::LsRing(n, 3, 1), n, 1, bytes);
  ASSERT_TRUE(o.done);
  // Each of the N chunks of a loop travels 2(N - 1) hops in all; every rank
  // sends the chunks it does not own in the reduce-scatter and the gathered
  // ones after: sum over ranks = 2 (N - 1) x bytes exactly.
  EXPECT_EQ(std::accumulate(o.sent.begin(), o.sent.end(), int64_t{0}), 2 * (n - 1) * bytes);
}

// Uncongested single switch, large message: bus bandwidth within 2 % of what
// the host link carries in payload: 400 Gb/s x 4,096 / (4,178 + 86), the
// data frame plus the ACK each data packet draws on the same uplink.
TEST(RingEngineTest, LargeMessageBusBandwidthMatchesTheLinkBound) {
  const uint32_t n = 8;
  const int64_t bytes = int64_t{256} << 20;
  const Outcome o = RunRing(fabric::testing::LsRing(n, 8, 1), n, 1, bytes);
  ASSERT_TRUE(o.done);
  const double bound = 400e9 / 8 * 4096.0 / (4178 + 86) / 1e9;  // GB/s
  const double busbw = BusBwGBs(bytes, n, o.time);
  std::printf("ring all-reduce 8 x 256 MiB, 400G: %.3f ms, busbw %.2f GB/s, link bound %.2f GB/s\n",
              o.time.ps() / 1e9, busbw, bound);
  EXPECT_NEAR(busbw / bound, 1.0, 0.02);
  EXPECT_LE(busbw, bound);
  EXPECT_EQ(o.retx, 0u);
}

// One NIC at half rate: every ring step waits for it, so the ring runs at its pace.
TEST(RingEngineTest, HalvingOneNicHalvesRingBusBandwidth) {
  const uint32_t n = 8;
  const int64_t bytes = int64_t{128} << 20;
  topology::Topology slow = fabric::testing::LsRing(n, 8, 1);
  slow.links[3].rate = Rate::Gbps(200);  // host3's link (host links come first)
  const Outcome full = RunRing(fabric::testing::LsRing(n, 8, 1), n, 1, bytes);
  const Outcome half = RunRing(slow, n, 1, bytes);
  ASSERT_TRUE(full.done && half.done);
  const double ratio = BusBwGBs(bytes, n, half.time) / BusBwGBs(bytes, n, full.time);
  std::printf("one NIC at 200G: busbw ratio %.3f\n", ratio);
  EXPECT_NEAR(ratio, 0.5, 0.02);
  // The rank in front of the slow link receives faster than it forwards: the
  // clear-to-send messages keep what it holds within its 4 slots.
  EXPECT_EQ(half.max_slots_used, 4u);
  EXPECT_LE(full.max_slots_used, 4u);
}

// 2 nodes x 8 GPUs, one 400G NIC per GPU on a rail-optimized fabric, 8
// channels (channel c on NIC c, entering and leaving each node at GPU c,
// NVLink inside): each channel's ring is bound by its two network hops, so
// busbw = 8 x the per-NIC bound.
TEST(RingEngineTest, TwoNodesOfEightGpusRunAtEightNicBounds) {
  topology::ClosParams p;
  p.gpus = 16;
  p.gpus_per_node = 8;
  p.radix = 64;
  const topology::Topology topo = topology::BuildRailOptimized(p, {"<test>", 0, "topology"});
  sim::Simulator sim(1);
  fabric::Network net(sim, topo, RoceConfig());
  RingSpec spec;
  spec.gpus_per_node = 8;
  spec.nics_per_node = 8;
  for (uint32_t c = 0; c < 8; ++c) {
    Ring ring;
    ring.nic = c;
    for (uint32_t node = 0; node < 2; ++node)
      for (uint32_t k = 0; k < 8; ++k) ring.ranks.push_back(node * 8 + (c + k) % 8);
    spec.rings.push_back(ring);
  }
  spec.bytes = int64_t{1} << 30;
  RingEngine ar(sim, net, spec);
  ar.Start(sim.Now());
  sim.Run(Time::Sec(1));
  ASSERT_TRUE(ar.done());
  EXPECT_EQ(net.qp_failure(), nullptr);
  const double busbw = BusBwGBs(spec.bytes, 16, ar.finish() - ar.start());
  const double nic_bound = 400e9 / 8 * 4096.0 / (4178 + 86) / 1e9;
  std::printf("ring all-reduce 2 x 8 GPUs, 1 GiB, 8 x 400G: busbw %.1f GB/s (8 NIC bounds %.1f)\n",
              busbw, 8 * nic_bound);
  EXPECT_NEAR(busbw / (8 * nic_bound), 1.0, 0.02);
  // Every rank sends 2 (N - 1)/N x bytes; over the network only the ranks
  // that leave their node on some channel, each 2 (N - 1)/N x bytes / 8 per
  // channel it leaves on (two network hops per ring of 16).
  int64_t net_total = 0;
  for (uint32_t r = 0; r < 16; ++r) {
    EXPECT_EQ(ar.BytesSent(r), ar.ExpectedBytesPerRank()) << "rank " << r;
    net_total += ar.NetworkBytesSent(r);
  }
  EXPECT_EQ(net_total, 8 * 2 * ar.ExpectedBytesPerRank() / 8);
}

// The same queue pairs serve one all-reduce after another (perf's
// iterations): nothing is left in flight, so repeats take the same time and
// move the same bytes.
TEST(RingEngineTest, BackToBackAllReducesReuseTheQueuePairs) {
  sim::Simulator sim(1);
  fabric::Network net(sim, fabric::testing::LsRing(4, 4, 1), RoceConfig());
  RingSpec spec;
  spec.rings.push_back({Iota(4), 0});
  RingEngine ar(sim, net, spec);
  std::vector<Time> times;
  for (int64_t bytes : {int64_t{8} << 20, int64_t{8} << 20, int64_t{8} << 20, int64_t{1} << 20}) {
    ar.Begin(bytes, sim.Now());
    sim.Run(Time::Sec(10));  // the all-reduce stops it when done
    ASSERT_TRUE(ar.done());
    times.push_back(ar.finish() - ar.start());
    EXPECT_EQ(ar.BytesSent(0), 2 * 3 * bytes / 4);
  }
  EXPECT_EQ(net.flows().size(), 8u);  // a data and a clear-to-send QP per rank, opened once
  EXPECT_NEAR(static_cast<double>(times[1].ps()), static_cast<double>(times[0].ps()),
              1e-3 * static_cast<double>(times[0].ps()));
  EXPECT_EQ(times[1], times[2]);
  EXPECT_LT(times[3], times[2]);
}

// A small all-reduce is a chain of 2(N - 1) dependent steps, each a one-way
// trip host -> switch -> host (2 x 1 us of cable, 300 ns of switch, the frame
// twice): it cannot end sooner than 2(N - 1) such trips.
TEST(RingEngineTest, SmallMessagesPayEveryStepOfTheChain) {
  const uint32_t n = 8;
  const Outcome o = RunRing(fabric::testing::LsRing(n, 8, 1), n, 1, 8 * 1024);
  ASSERT_TRUE(o.done);
  const double hop_us = 2 * 1.0 + 0.3;
  std::printf("ring all-reduce 8 x 8 KiB: %.2f us (chain of %u hops >= %.1f us)\n",
              o.time.ps() / 1e6, 2 * (n - 1), 2 * (n - 1) * hop_us);
  EXPECT_GE(o.time.ps() / 1e6, 2 * (n - 1) * hop_us);
  EXPECT_LE(o.time.ps() / 1e6, 2 * (n - 1) * hop_us * 1.5);
}

TEST(RingEngineTest, SameSeedSameTime) {
  const Outcome a = RunRing(fabric::testing::LsRing(8, 4, 2), 8, 2, int64_t{16} << 20, 7);
  const Outcome b = RunRing(fabric::testing::LsRing(8, 4, 2), 8, 2, int64_t{16} << 20, 7);
  ASSERT_TRUE(a.done);
  EXPECT_EQ(a.time, b.time);
}

}  // namespace ring_engine
}  // namespace
}  // namespace lossless::collective
