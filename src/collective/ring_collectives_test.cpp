// The ring engine's other step plans: reduce_scatter, all_gather (N - 1
// steps of N parts) and the broadcast / reduce chains from the root. Every
// rank sends and receives what the algorithm's formula says, per rank and
// per NIC, computed here from the ring orders; large messages run at the
// alpha-beta model's busbw for the same links (docs/model/collective-engine.md).
#include <algorithm>
#include <cstdio>
#include <map>

#include <gtest/gtest.h>

#include "collective/engine_test_util.hpp"
#include "collective/model/orders.hpp"
#include "collective/ring_engine.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace ring_collectives {

using testing::Iota;
using testing::RoceConfig;
using testing::TwoNodeSpec;
using units::Time;

struct Outcome {
  bool done = false;
  Time time;
  std::vector<int64_t> sent, received, net, nic;  // per rank (nic: per host)
  size_t max_slots_used = 0;
  uint64_t retx = 0;
};

Outcome RunPlan(const topology::Topology& topo, RingSpec spec, int64_t bytes, uint32_t root,
            uint32_t ranks) {
  sim::Simulator sim(1);
  fabric::Network net(sim, topo, RoceConfig());
  SetNcclSimpleSteps(spec);
  RingEngine e(sim, net, spec);
  e.Begin(bytes, sim.Now(), root);
  sim.Run(Time::Sec(1));
  Outcome r;
  r.done = e.done();
  r.time = e.finish() - e.start();
  for (uint32_t k = 0; k < ranks; ++k) {
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

// What the algorithm moves, from the ring orders alone: per channel a share
// of the buffer; along each ring edge a -> b, reduce_scatter and all_gather
// carry (N - 1)/N of the share, a chain the whole share on every edge but the
// one into its start (broadcast: into the root; reduce: out of the root).
struct Expected {
  std::vector<int64_t> sent, received, nic;
};
Expected FromRings(const RingSpec& spec, int64_t bytes, uint32_t root, uint32_t ranks,
                   uint32_t hosts) {
  Expected x{std::vector<int64_t>(ranks), std::vector<int64_t>(ranks), std::vector<int64_t>(hosts)};
  const int64_t channels = static_cast<int64_t>(spec.rings.size());
  const uint32_t g = static_cast<uint32_t>(spec.gpus_per_node);
  const uint32_t nics = static_cast<uint32_t>(spec.nics_per_node);
  for (size_t ch = 0; ch < spec.rings.size(); ++ch) {
    const int64_t share = bytes / channels;
    const std::vector<uint32_t>& ring = spec.rings[ch].ranks;
    const size_t n = ring.size();
    for (size_t p = 0; p < n; ++p) {
      const uint32_t a = ring[p], b = ring[(p + 1) % n];
      int64_t edge = 0;
      switch (spec.plan) {
        case RingPlan::kReduceScatter:
        case RingPlan::kAllGather:
          edge = share / static_cast<int64_t>(n) * static_cast<int64_t>(n - 1);
          break;
        case RingPlan::kBroadcast:
          edge = b == root ? 0 : share;
          break;
        case RingPlan::kReduce:
          edge = a == root ? 0 : share;
          break;
        case RingPlan::kAllReduce:
          break;
      }
      x.sent[a] += edge;
      x.received[b] += edge;
      if (a / g != b / g) x.nic[a / g * nics + spec.rings[ch].nic] += edge;
    }
  }
  return x;
}

TEST(RingCollectivesTest, PlansFollowNcclsRingSteps) {
  EXPECT_EQ(RingSteps(RingPlan::kAllReduce, 8), 14);
  EXPECT_EQ(RingSteps(RingPlan::kReduceScatter, 8), 7);
  EXPECT_EQ(RingSteps(RingPlan::kAllGather, 8), 7);
  EXPECT_EQ(RingSteps(RingPlan::kBroadcast, 8), 7);
  EXPECT_EQ(RingParts(RingPlan::kAllGather, 8), 8);
  EXPECT_EQ(RingParts(RingPlan::kReduce, 8), 1);
  // all_gather: a rank sends its own part first, then forwards what arrived,
  // and never sends the part it receives last (its previous rank's).
  for (int64_t p = 0; p < 4; ++p) {
    std::vector<int> seen(4, 0);
    for (int64_t k = 0; k < 3; ++k) ++seen[static_cast<size_t>(PartAt(RingPlan::kAllGather, 4, p, k))];
    EXPECT_EQ(PartAt(RingPlan::kAllGather, 4, p, 0), p);
    EXPECT_EQ(seen[static_cast<size_t>((p + 1) % 4)], 0) << "position " << p;
    // What position p - 1 sent at step k is what p sends at step k + 1.
    for (int64_t k = 0; k + 1 < 3; ++k)
      EXPECT_EQ(PartAt(RingPlan::kAllGather, 4, (p + 3) % 4, k),
                PartAt(RingPlan::kAllGather, 4, p, k + 1));
  }
  // Chains: the j-th rank after the start sends at step j, the last never.
  EXPECT_EQ(PartAt(RingPlan::kBroadcast, 4, 2, 2), 0);
  EXPECT_EQ(PartAt(RingPlan::kBroadcast, 4, 2, 1), -1);
  EXPECT_EQ(PartAt(RingPlan::kReduce, 4, 3, 3), -1);
}

// 2 nodes x 8 GPUs, 8 channels on 8 rails: every rank and every NIC moves
// exactly what the algorithm's formula gives for these rings, and every
// rank ends with every contribution (receives what the formula says).
TEST(RingCollectivesTest, EveryRankAndNicMovesWhatTheFormulaSays) {
  const int64_t bytes = int64_t{64} << 20;
  for (RingPlan plan :
       {RingPlan::kReduceScatter, RingPlan::kAllGather, RingPlan::kBroadcast, RingPlan::kReduce}) {
    for (uint32_t root : {0u, 11u}) {
      const RingSpec spec = TwoNodeSpec(plan);
      const Outcome r = RunPlan(testing::TwoNodesOfEight(), spec, bytes, root, 16);
      ASSERT_TRUE(r.done);
      const Expected x = FromRings(spec, bytes, root, 16, 16);
      EXPECT_EQ(r.sent, x.sent) << "plan " << static_cast<int>(plan) << " root " << root;
      EXPECT_EQ(r.received, x.received) << "plan " << static_cast<int>(plan) << " root " << root;
      EXPECT_EQ(r.nic, x.nic) << "plan " << static_cast<int>(plan) << " root " << root;
      int64_t total = 0, received = 0;
      for (uint32_t k = 0; k < 16; ++k) {
        total += r.sent[k];
        received += r.received[k];
      }
      EXPECT_EQ(total, received);
      if (plan == RingPlan::kReduceScatter || plan == RingPlan::kAllGather) {
        // (N - 1)/N of the N-rank buffer per rank; on each of the 8 rails
        // each node's NIC carries (N - 1)/N of its channel's share.
        for (uint32_t k = 0; k < 16; ++k) EXPECT_EQ(r.sent[k], 15 * bytes / 16) << k;
        for (uint32_t h = 0; h < 16; ++h) EXPECT_EQ(r.nic[h], 15 * bytes / 16 / 8) << h;
      } else {
        // A chain of 15 hops: every rank but the chain's end in each
        // channel forwards that channel's share; in all, 15 x bytes.
        EXPECT_EQ(total, 15 * bytes);
        // Broadcast: every rank but the root receives the buffer; reduce:
        // the root receives all of it (every channel's chain ends there).
        if (plan == RingPlan::kReduce) {
          EXPECT_EQ(r.received[root], bytes);
        }
        for (uint32_t k = 0; k < 16 && plan == RingPlan::kBroadcast; ++k)
          EXPECT_EQ(r.received[k], k == root ? 0 : bytes) << k;
      }
      if (plan == RingPlan::kBroadcast && root == 0) {
        // The root's rail-0 ring enters node 0 at rank 0 from node 1: no
        // channel carries data into the root, so node 1's NIC 0 sends nothing.
        EXPECT_EQ(r.nic[8], 0);
        EXPECT_EQ(r.nic[0], bytes / 8);
      }
    }
  }
}

// The same with uneven sizes on 3 hosts: every byte still arrives.
TEST(RingCollectivesTest, UnevenSizesStillMoveEveryByte) {
  for (RingPlan plan : {RingPlan::kAllGather, RingPlan::kBroadcast, RingPlan::kReduce}) {
    RingSpec spec;
    spec.plan = plan;
    spec.rings.push_back({Iota(3), 0});
    const int64_t bytes = 10'000'002;  // divides by the 3 ranks
    const Outcome r = RunPlan(fabric::testing::LsRing(3, 3, 1), spec, bytes, 1, 3);
    ASSERT_TRUE(r.done);
    const Expected x = FromRings(spec, bytes, 1, 3, 3);
    EXPECT_EQ(r.sent, x.sent);
    EXPECT_EQ(r.received, x.received);
  }
}

// Uncongested single switch, 8 hosts, large message: simulated busbw within
// 2 % of the alpha-beta model of the same links with no host latencies (the
// engine runs without them here). Pipeline fill is the rest: a chain of 7
// hops of 512-KiB chunks, 7 x 11 us against 5.6 ms.
TEST(RingCollectivesTest, LargeMessagesRunAtTheAlphaBetaModel) {
  const int64_t bytes = int64_t{256} << 20;
  const std::map<RingPlan, Collective> plans = {{RingPlan::kReduceScatter, Collective::kReduceScatter},
                                                {RingPlan::kAllGather, Collective::kAllGather},
                                                {RingPlan::kBroadcast, Collective::kBroadcast},
                                                {RingPlan::kReduce, Collective::kReduce}};
  for (const auto& [plan, c] : plans) {
    RingSpec spec;
    spec.plan = plan;
    spec.rings.push_back({Iota(8), 0});
    const Outcome r = RunPlan(fabric::testing::LsRing(8, 8, 1), spec, bytes, 3, 8);
    ASSERT_TRUE(r.done);
    const double sim_us = static_cast<double>(r.time.ps()) / 1e6;
    const double busbw = BusBwGbs(c, 8, bytes, sim_us);
    const double model = testing::ModelBusBwGbs(c, 8, 1, bytes);
    std::printf("%s 8 x 256 MiB, 400G: busbw %.2f GB/s, alpha-beta %.2f GB/s\n",
                std::string(CollectiveName(c)).c_str(), busbw, model);
    EXPECT_NEAR(busbw / model, 1.0, 0.02) << CollectiveName(c);
    EXPECT_LE(busbw, model * 1.0001) << CollectiveName(c);
    EXPECT_EQ(r.retx, 0u);
    // Chains keep 8 receive slots of one step each (BROADCAST_SLICESTEPS 1).
    EXPECT_LE(r.max_slots_used, c == Collective::kBroadcast || c == Collective::kReduce ? 8u : 4u);
  }
}

// The root matters to a chain only through where it starts: a root that is
// not in the rings is refused.
TEST(RingCollectivesTest, RefusesARootOutsideTheRings) {
  sim::Simulator sim(1);
  fabric::Network net(sim, fabric::testing::LsRing(4, 4, 1), RoceConfig());
  RingSpec spec;
  spec.plan = RingPlan::kBroadcast;
  spec.rings.push_back({Iota(4), 0});
  RingEngine e(sim, net, spec);
  EXPECT_THROW(e.Begin(1 << 20, sim.Now(), 4), std::invalid_argument);
}

// Short last loops: with a 4,096-B chunk over 3 ranks a full loop is 12,288
// B; a last loop of 4 B has parts of 2, 2 and 0 B (an empty part), one of
// 5,000 B parts of 1,667, 1,667 and 1,666 B. The engine computes each
// record's messages as it goes; here they are listed from PartAt, loop by
// loop, step by step, the way the plans define them, and each rank must
// send exactly those bytes in exactly that many messages.
TEST(RingCollectivesTest, ShortLastLoopsSendThePlansPartsAndSlices) {
  const int64_t n = 3, chunk = 4096, slice = 2048;
  for (RingPlan plan : {RingPlan::kAllReduce, RingPlan::kReduceScatter, RingPlan::kAllGather,
                        RingPlan::kBroadcast, RingPlan::kReduce}) {
    for (int64_t bytes : {int64_t{2 * 12288 + 4}, int64_t{2 * 12288 + 5000}, int64_t{7},
                          int64_t{12288}, int64_t{3 * 4096 + 1}}) {
      RingSpec spec;
      spec.plan = plan;
      spec.rings.push_back({Iota(3), 0});
      SetNcclSimpleSteps(spec);
      spec.chunk_bytes = chunk;
      spec.slice_bytes = slice;
      sim::Simulator sim(1);
      fabric::Network net(sim, fabric::testing::LsRing(3, 3, 1), RoceConfig());
      RingEngine e(sim, net, spec);
      const uint32_t root = 1;
      e.Begin(bytes, sim.Now(), root);
      sim.Run(Time::Sec(1));
      ASSERT_TRUE(e.done()) << static_cast<int>(plan) << " " << bytes;
      // The plan's list: a chain starts at the root (broadcast) or after it (reduce).
      const bool chain = plan == RingPlan::kBroadcast || plan == RingPlan::kReduce;
      const int64_t start = !chain ? 0 : plan == RingPlan::kReduce ? root + 1 : root;
      const int64_t parts = RingParts(plan, n), span = parts * chunk;
      uint64_t messages = 0;
      for (int64_t rank = 0; rank < n; ++rank) {
        const int64_t p = (rank - start + n) % n;
        int64_t sent = 0;
        for (int64_t off = 0; off < bytes; off += span) {
          const int64_t loop = std::min(span, bytes - off);
          const int64_t part = (loop + parts - 1) / parts;
          for (int64_t k = 0; k < RingSteps(plan, n); ++k) {
            const int64_t idx = PartAt(plan, n, p, k);
            const int64_t c = idx < 0 ? 0 : std::clamp(loop - idx * part, int64_t{0}, part);
            sent += c;
            messages += static_cast<uint64_t>((c + slice - 1) / slice);
          }
        }
        EXPECT_EQ(e.BytesSent(static_cast<uint32_t>(rank)), sent)
            << "plan " << static_cast<int>(plan) << ", " << bytes << " B, rank " << rank;
        // What a rank receives is what its previous rank sent.
        EXPECT_EQ(e.BytesReceived(static_cast<uint32_t>((rank + 1) % n)), sent);
      }
      EXPECT_EQ(e.messages(), messages) << "plan " << static_cast<int>(plan) << ", " << bytes;
    }
  }
}

}  // namespace ring_collectives
}  // namespace
}  // namespace lossless::collective
