// NCCL's protocols in the engines (docs/model/collective-engine.md#protocols):
// the bytes that cross the links are the payload over the protocol's share
// (LL 8 of 16, LL128 120 of 128), the step sizes follow the protocol and
// NCCL_BUFFSIZE, and a GPU's protocol rate cap bounds its bandwidth.
#include "collective/protocol.hpp"

#include <string>

#include <gtest/gtest.h>

#include "collective/engine_test_util.hpp"
#include "collective/model/orders.hpp"
#include "collective/ring_engine.hpp"
#include "collective/tree_engine.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {
namespace {

using testing::RoceConfig;
using testing::TwoNodeSpec;
using testing::TwoNodesOfEight;
using units::Time;

RingSpec TwoNodeRing(Protocol p, units::Rate gpu_rate = units::Rate()) {
  RingSpec spec = TwoNodeSpec(RingPlan::kAllReduce);
  SetNcclSteps(spec, p, gpu_rate);
  return spec;
}

struct Wire {
  double host_tx_bytes = 0;  // bytes the NICs put on their links (framing, ACKs included)
  int64_t nic_payload = 0;   // protocol bytes the engine posted to the NICs
  int64_t rank0_sent = 0;    // payload rank 0 sent
  int64_t expected = 0;      // the ring formula's payload per rank
  Time time;
  bool done = false;
};

Wire RunRing(const RingSpec& spec, int64_t bytes) {
  sim::Simulator sim(1);
  const topology::Topology topo = TwoNodesOfEight();
  fabric::Network net(sim, topo, RoceConfig());
  RingEngine e(sim, net, spec);
  e.Begin(bytes, sim.Now());
  sim.Run(Time::Sec(1));
  Wire w;
  w.done = e.done();
  w.time = e.finish() - e.start();
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    if (net.PortName(p).rfind("host", 0) == 0)
      w.host_tx_bytes += static_cast<double>(net.port_stats(p).tx_wire_bytes);
  }
  for (uint32_t h = 0; h < net.num_hosts(); ++h) w.nic_payload += e.NicBytesSent(h);
  w.rank0_sent = e.BytesSent(0);
  w.expected = e.ExpectedBytesPerRank();
  return w;
}

TEST(ProtocolTest, LinesOnTheWire) {
  EXPECT_EQ(WireOf(Protocol::kSimple).WireBytes(1000), 1000);
  EXPECT_EQ(WireOf(Protocol::kLL).WireBytes(8), 16);
  EXPECT_EQ(WireOf(Protocol::kLL).WireBytes(9), 32);  // a partial line is a whole line
  EXPECT_EQ(WireOf(Protocol::kLL128).WireBytes(120), 128);
  EXPECT_EQ(WireOf(Protocol::kLL128).WireBytes(576000), 614400);  // one LL128 step
}

// The links carry the payload over the protocol's share: LL twice Simple's
// bytes, LL128 128/120 of them (framing and ACKs scale with the packets, so
// the ratio holds on the wire too), while every rank's payload is the ring's
// formula whatever the protocol.
TEST(ProtocolTest, BytesOnTheLinksArePayloadOverTheProtocolsShare) {
  const int64_t bytes = int64_t{36} << 20;  // a multiple of 16 ranks x 8 channels x 120 B lines
  const Wire simple = RunRing(TwoNodeRing(Protocol::kSimple), bytes);
  const Wire ll = RunRing(TwoNodeRing(Protocol::kLL), bytes);
  const Wire ll128 = RunRing(TwoNodeRing(Protocol::kLL128), bytes);
  ASSERT_TRUE(simple.done && ll.done && ll128.done);
  for (const Wire* w : {&simple, &ll, &ll128}) EXPECT_EQ(w->rank0_sent, w->expected);
  EXPECT_DOUBLE_EQ(static_cast<double>(ll.nic_payload) / static_cast<double>(simple.nic_payload),
                   2.0);
  EXPECT_NEAR(static_cast<double>(ll128.nic_payload) / static_cast<double>(simple.nic_payload),
              128.0 / 120.0, 1e-3);
  EXPECT_NEAR(ll.host_tx_bytes / simple.host_tx_bytes, 2.0, 0.02);
  EXPECT_NEAR(ll128.host_tx_bytes / simple.host_tx_bytes, 128.0 / 120.0, 0.015);
  // Large messages are bandwidth-bound: the time follows the bytes.
  EXPECT_NEAR(static_cast<double>(ll.time.ps()) / static_cast<double>(simple.time.ps()), 2.0, 0.2);
}

// NCCL's step per protocol (src/include/collectives.h, src/enqueue.cc) and
// NCCL_BUFFSIZE's share of it.
TEST(ProtocolTest, StepSizesFollowTheProtocolAndBuffsize) {
  RingSpec s = TwoNodeRing(Protocol::kSimple);
  EXPECT_EQ(s.slice_bytes, int64_t{1} << 20);
  EXPECT_EQ(s.chunk_bytes, int64_t{2} << 20);
  EXPECT_EQ(s.slots, 4);
  SetNcclSteps(s, Protocol::kSimple, {}, int64_t{8} << 20);  // NCCL_BUFFSIZE=8 MiB
  EXPECT_EQ(s.slice_bytes, int64_t{2} << 20);
  EXPECT_EQ(s.chunk_bytes, int64_t{4} << 20);
  SetNcclSteps(s, Protocol::kLL);
  EXPECT_EQ(s.chunk_bytes, 32768);  // 64 KiB of lines, half of it flags
  EXPECT_EQ(s.slice_bytes, 32768);
  EXPECT_EQ(s.slots, 8);
  SetNcclSteps(s, Protocol::kLL128);
  EXPECT_EQ(s.chunk_bytes, 576000);
}

// A GPU's protocol cap bounds what it sends: with LL capped at 20 GB/s per
// GPU, a large ring all-reduce's busbw (each rank sends 2 (N - 1) / N of the
// buffer) comes out at the cap, not at the NICs' rate.
TEST(ProtocolTest, TheGpuRateCapBoundsBusBandwidth) {
  const int64_t bytes = int64_t{32} << 20;
  const Wire w = RunRing(TwoNodeRing(Protocol::kLL, units::Rate::Gbps(160)), bytes);
  ASSERT_TRUE(w.done);
  const double busbw = static_cast<double>(w.expected) / (static_cast<double>(w.time.ps()) * 1e-3);
  EXPECT_LE(busbw, 20.0);
  EXPECT_GE(busbw, 19.0);
}

// The tree engine puts the protocol's lines on the wire too.
TEST(ProtocolTest, TreeSendsTheProtocolsLines) {
  auto run = [](Protocol p) {
    sim::Simulator sim(1);
    const topology::Topology topo = TwoNodesOfEight();
    fabric::Network net(sim, topo, testing::LosslessRoceConfig());
    TreeSpec spec;
    spec.gpus_per_node = spec.nics_per_node = 8;
    spec.trees = TreeChannels(2, 8, 8, 4, 2);
    for (int c = 0; c < 4; ++c) spec.nics.push_back(static_cast<uint32_t>(c % 2));
    spec.wire = WireOf(p);
    spec.chunk_bytes = ChunkBytes(Collective::kAllReduce, Algorithm::kTree, p);
    TreeEngine e(sim, net, spec);
    const int64_t bytes = int64_t{4} << 20;
    e.Begin(bytes, sim.Now());
    sim.Run(Time::Sec(1));
    EXPECT_TRUE(e.done());
    int64_t nic = 0, payload = 0;
    for (uint32_t h = 0; h < net.num_hosts(); ++h) nic += e.NicBytesSent(h);
    for (uint32_t r = 0; r < 16; ++r) payload += e.NetworkBytesSent(r);
    return std::pair<int64_t, int64_t>(nic, payload);
  };
  const auto simple = run(Protocol::kSimple);
  const auto ll = run(Protocol::kLL);
  EXPECT_EQ(simple.first, simple.second);
  EXPECT_EQ(ll.second, simple.second);  // the same payload crosses the nodes
  EXPECT_EQ(ll.first, 2 * ll.second);
}

}  // namespace
}  // namespace lossless::collective
