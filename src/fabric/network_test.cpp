#include "fabric/network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/test_topologies.hpp"

namespace lossless::fabric {
namespace {

NetworkConfig RawConfig(RoutingMode routing) {
  NetworkConfig cfg;
  cfg.framing = Framing::Raw(4000, 0);
  cfg.sw.latency = Time::Zero();
  cfg.routing = routing;
  return cfg;
}

Packet MakePacket(uint32_t src, uint32_t dst, uint16_t entropy, uint32_t seq = 0) {
  Packet p{};
  p.src = src;
  p.dst = dst;
  p.entropy = entropy;
  p.seq = seq;
  return p;
}

TEST(Routing, MinimalCandidatesOnLeafSpine) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(32, 8, 4);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  uint32_t leaf0 = net.SwitchOfNode(32), spine0 = net.SwitchOfNode(36);
  EXPECT_EQ(net.Candidates(leaf0, 20).size(), 4u);   // any spine is minimal
  EXPECT_EQ(net.Candidates(leaf0, 3).size(), 1u);    // local host: its port
  EXPECT_EQ(net.Candidates(spine0, 20).size(), 1u);  // down to leaf2
}

TEST(Routing, EcmpIsDeterministicPerFlowAndSpreadsFlows) {
  sim::Simulator sim(7);
  auto topo = testing::LsRing(64, 8, 8);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  uint32_t leaf0 = net.SwitchOfNode(64);
  std::map<uint32_t, int> hist;
  for (uint32_t e = 0; e < 8000; ++e) {
    Packet p = MakePacket(1, 60, static_cast<uint16_t>(0xC000 + e));
    uint32_t port = net.RouteForTest(leaf0, p);
    EXPECT_EQ(port, net.RouteForTest(leaf0, p));  // same 5-tuple, same path
    Packet q = p;
    q.seq = 99;  // per-packet fields do not move a flow
    EXPECT_EQ(port, net.RouteForTest(leaf0, q));
    ++hist[port];
  }
  ASSERT_EQ(hist.size(), 8u);
  for (auto [port, n] : hist) EXPECT_NEAR(n, 1000, 150) << net.PortName(port);
  // Same seed, new network: identical choices.
  sim::Simulator sim2(7);
  Network net2(sim2, topo, RawConfig(RoutingMode::kEcmp));
  for (uint16_t e = 0; e < 100; ++e) {
    Packet p = MakePacket(2, 50, static_cast<uint16_t>(0xC000 + e));
    EXPECT_EQ(net.RouteForTest(leaf0, p), net2.RouteForTest(leaf0, p));
  }
}

// ECMP must hash independently at each switch: with one hash function (the
// same salt) everywhere, a leaf and a spine that see the same 5-tuple pick
// the same uplink index, so on a fat tree only the cores on the "diagonal"
// (spine uplink index = leaf uplink index) ever carry traffic. A 3-tier fat
// tree of radix 4 (16 hosts, 4 pods, 4 cores, 16 spine-core links), an
// all-to-all of one 4,000-B packet per ordered pair (240 flows, 192 of them
// between pods), seeds 1-3 (the seed sets the salts and the flows' UDP source
// ports): every spine-core link direction carries traffic.
TEST(Routing, EcmpHashesIndependentlyAtEachSwitchOfAFatTree) {
  topology::ClosParams cp;
  cp.gpus = 16;
  cp.radix = 4;
  cp.tiers = 3;
  cp.link_rate = units::Rate::Gbps(400);
  cp.link_delay = Time::Us(1);
  const auto topo = topology::BuildFatTree(cp, {"<test>", 0, "topology"});
  for (uint64_t seed : {1, 2, 3}) {
    sim::Simulator sim(seed);
    Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
    for (uint32_t s = 0; s < 16; ++s)
      for (uint32_t d = 0; d < 16; ++d)
        if (s != d) net.AddFlow(FlowSpec::Of(s, d, 4000));
    sim.Run();
    EXPECT_EQ(net.flows_done(), 240u);
    int core_dirs = 0;
    uint64_t lo = UINT64_MAX, hi = 0, total = 0;
    for (uint32_t p = 0; p < net.num_ports(); ++p) {
      const auto& a = topo.nodes[net.PortNode(p)];
      const auto& b = topo.nodes[net.PortNode(net.PortPeer(p))];
      const bool core = (a.name.rfind("core", 0) == 0) != (b.name.rfind("core", 0) == 0);
      if (!core) continue;
      ++core_dirs;
      const uint64_t n = net.port_stats(p).tx_packets;
      EXPECT_GT(n, 0u) << net.PortName(p) << " seed " << seed;
      lo = std::min(lo, n);
      hi = std::max(hi, n);
      total += n;
    }
    EXPECT_EQ(core_dirs, 32);
    // Each inter-pod packet crosses two core link directions (up, down).
    EXPECT_EQ(total, 2u * 192u);
    std::printf(
        "fat tree k=4 all-to-all seed %llu: core link directions carry %llu..%llu packets\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(lo),
        static_cast<unsigned long long>(hi));
  }
}

TEST(Routing, DestTablePinsEachDestinationAndSprayUsesAllPaths) {
  sim::Simulator sim(3);
  auto topo = testing::LsRing(64, 8, 8);
  Network dest(sim, topo, RawConfig(RoutingMode::kDestTable));
  uint32_t leaf0 = dest.SwitchOfNode(64);
  std::set<uint32_t> used;
  for (uint32_t src = 0; src < 8; ++src)
    for (uint16_t e = 0; e < 50; ++e) used.insert(dest.RouteForTest(leaf0, MakePacket(src, 40, e)));
  EXPECT_EQ(used.size(), 1u);  // a destination-based table ignores source and entropy
  sim::Simulator sim2(3);
  Network spray(sim2, topo, RawConfig(RoutingMode::kSpray));
  used.clear();
  for (int i = 0; i < 200; ++i) used.insert(spray.RouteForTest(leaf0, MakePacket(0, 40, 1)));
  EXPECT_EQ(used.size(), 8u);
}

TEST(Network, ZeroLatencyLinkIsAnError) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  topo.links[3].delay = Time::Zero();
  EXPECT_THROW(Network(sim, topo, RawConfig(RoutingMode::kEcmp)), InputError);
}

// Incast through a small shared buffer: the dynamic threshold drops, and the
// receiver's link stays busy at line rate.
TEST(Network, IncastOverflowsDynamicThresholdAndDrops) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
  cfg.sw.buffer = units::Bytes(200'000);
  cfg.sw.alpha = 1.0;
  Network net(sim, topo, cfg);
  for (uint32_t s = 1; s <= 7; ++s) net.AddFlow(FlowSpec::Of(s, 0, 400'000, Time::Zero()));
  sim.Run();
  EXPECT_GT(net.drops(), 0u);
  // The occupancy bound: q <= alpha * free  =>  q <= B/2 for alpha = 1.
  int64_t max_q = 0;
  for (uint32_t p = 0; p < net.num_ports(); ++p)
    max_q = std::max(max_q, net.port_stats(p).max_queue_bytes);
  EXPECT_LE(max_q, 100'000);
  EXPECT_GT(max_q, 90'000);
}

// RED at a held queue (docs/model/switch-buffers.md#ecn-marking as docs/fabric-model.md states it:
// q is the class's queue left behind the departing packet; no mark at q <= Kmin, probability Pmax
// (q - Kmin) / (Kmax - Kmin) between, every packet at q >= Kmax). Setup: hosts 1 and 2 send to host
// 0 through leaf0 at 400G (4,000-B raw frames, 80 ns each). Host 2 sends a burst of `burst` bytes
// while host 1 sends at line rate for `packets` packets: the queue at
// leaf0 -> host0 grows by one frame per 80 ns while both send, and is then
// held (one arrival and one departure per 80 ns) until host 1 stops. Every
// departure is recorded with the queue it leaves behind and its CE mark.
struct RedRun {
  EcnConfig ecn;
  int64_t burst = 0;
  int64_t packets = 6000;
  struct Departure {
    int64_t q;
    bool ce;
  };
  std::vector<Departure> out;
  Network* net = nullptr;
  uint32_t port = 0;

  static void Trace(void* ctx, uint32_t p, const Packet& pk, Time) {
    auto& r = *static_cast<RedRun*>(ctx);
    if (p != r.port || pk.kind != PacketKind::kData) return;
    r.out.push_back({r.net->QueueBytes(p, pk.tclass), pk.ecn == kEcnCe});
  }
  void Run() {
    sim::Simulator sim(11);
    auto topo = testing::LsRing(16, 8, 2);
    NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
    cfg.sw.ecn[cfg.nic.data_class] = ecn;
    Network n(sim, topo, cfg);
    net = &n;
    port = n.PortPeer(n.HostPort(0));
    n.set_tx_trace(&RedRun::Trace, this);
    n.AddFlow(FlowSpec::Of(1, 0, packets * 4000));
    n.AddFlow(FlowSpec::Of(2, 0, burst));
    sim.Run();
    net = nullptr;
    EXPECT_EQ(n.flows_done(), 2u);
  }
  // Departures of the held phase: after the burst is in, before host 1's tail.
  std::vector<Departure> Held() const {
    const size_t from = static_cast<size_t>(burst / 4000) + 10;
    const size_t to = static_cast<size_t>(packets) - 10;
    return {out.begin() + static_cast<std::ptrdiff_t>(from),
            out.begin() + static_cast<std::ptrdiff_t>(to)};
  }
};

TEST(Network, RedMarkFractionAtAHeldQueueIsPmaxTimesTheRamp) {
  RedRun r;
  r.ecn = EcnConfig{true, units::Bytes(40'000), units::Bytes(240'000), 0.2};
  r.burst = 140'000;  // 35 frames
  r.Run();
  const auto held = r.Held();
  ASSERT_GT(held.size(), 5000u);
  // The queue is really held: 35 frames, so every departure leaves 34
  // (136,000 B) behind it.
  int64_t qmin = INT64_MAX, qmax = 0;
  for (const auto& d : held) {
    qmin = std::min(qmin, d.q);
    qmax = std::max(qmax, d.q);
  }
  EXPECT_EQ(qmin, 136'000);
  EXPECT_EQ(qmax, 136'000);
  // p = 0.2 x (136,000 - 40,000) / 200,000 = 0.096 per packet; the count of
  // marks is binomial(n, p): within 4 standard deviations (seed fixed).
  const double p = 0.2 * (136'000.0 - 40'000.0) / 200'000.0;
  const double n = static_cast<double>(held.size());
  double marks = 0;
  for (const auto& d : held) marks += d.ce;
  std::printf("RED held queue 136,000 B: %.0f marks of %.0f packets (expected %.1f +- %.1f)\n",
              marks, n, n * p, std::sqrt(n * p * (1 - p)));
  EXPECT_NEAR(marks, n * p, 4 * std::sqrt(n * p * (1 - p)));
  // The ramp up to the held level: nothing marked at or below Kmin.
  for (const auto& d : r.out) {
    if (d.q <= 40'000) {
      EXPECT_FALSE(d.ce) << d.q;
    }
  }
}

TEST(Network, RedMarksEveryPacketAtOrAboveKmax) {
  RedRun r;
  r.ecn = EcnConfig{true, units::Bytes(40'000), units::Bytes(100'000), 0.2};
  r.burst = 140'000;
  r.Run();
  int64_t at_or_above = 0;
  for (const auto& d : r.out) {
    if (d.q >= 100'000) {
      EXPECT_TRUE(d.ce) << d.q;
      ++at_or_above;
    }
    if (d.q <= 40'000) {
      EXPECT_FALSE(d.ce) << d.q;
    }
  }
  EXPECT_GT(at_or_above, 5000);
}

// Kmin = Kmax = K is DCTCP's step marking (Alizadeh et al., "Data Center TCP",
// SIGCOMM 2010, section 3.1: a packet is marked if the queue is greater than
// K). Held exactly at K = 136,000 B no packet is marked; with K = 100,000 B
// the ramp passes K once (unmarked) and every packet of the held phase is
// marked.
TEST(Network, RedWithKminEqualToKmaxMarksOnlyAboveK) {
  for (int64_t k : {136'000, 100'000}) {
    RedRun r;
    r.ecn = EcnConfig{true, units::Bytes(k), units::Bytes(k), 0.2};
    r.burst = 140'000;
    r.Run();
    int64_t at_k = 0, above = 0;
    for (const auto& d : r.out) {
      EXPECT_EQ(d.ce, d.q > k) << "K " << k << " q " << d.q;
      at_k += d.q == k;
      above += d.q > k;
    }
    EXPECT_GT(k == 136'000 ? at_k : above, 5000) << k;
    EXPECT_GE(at_k, 1) << k;
  }
}

// Two equal flows into one port share it round robin and finish together.
TEST(Network, TwoEqualFlowsIntoOnePortFinishTogether) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  net.AddFlow(FlowSpec::Of(1, 0, 400'000, Time::Zero()));
  net.AddFlow(FlowSpec::Of(2, 0, 400'000, Time::Zero()));
  sim.Run();
  EXPECT_EQ(net.flows_done(), 2u);
  EXPECT_NEAR(net.flows()[0].finish.ps(), net.flows()[1].finish.ps(), 80'000);  // one frame
}

TEST(Network, NicServesFlowsRoundRobinAtLineRate) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  // Host 0 sends 10 packets to each of two hosts: 20 packets back to back.
  net.AddFlow(FlowSpec::Of(0, 1, 40'000, Time::Zero()));
  net.AddFlow(FlowSpec::Of(0, 2, 40'000, Time::Zero()));
  sim.Run();
  const int64_t ser = 80'000;  // 4000 B at 400G
  // Flow 0 starts alone and has sent one packet when flow 1 joins; then they
  // alternate: flow 0 uses slots 0,1,3,...,17 and flow 1 slots 2,4,...,19.
  // A packet in slot k arrives at k*ser + 2 serializations + 2 us.
  EXPECT_EQ(net.flows()[0].finish.ps(), 17 * ser + 2 * ser + 2'000'000);
  EXPECT_EQ(net.flows()[1].finish.ps(), 19 * ser + 2 * ser + 2'000'000);
  EXPECT_EQ(net.packet_hops(), 40u);
}

TEST(Network, PcieCapSlowsInjection) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
  cfg.nic.pcie_rate = units::Rate::Gbps(200);
  Network net(sim, topo, cfg);
  net.AddFlow(FlowSpec::Of(0, 1, 40'000, Time::Zero()));
  sim.Run();
  // Ten packets, one every 160 ns (PCIe), the last takes 80 ns per hop over 2 hops.
  EXPECT_EQ(net.flows()[0].finish.ps(), 9 * 160'000 + 2 * 80'000 + 2'000'000);
}

TEST(Network, StoreAndForwardVersusCutThroughLatency) {
  for (bool cut : {false, true}) {
    sim::Simulator sim(1);
    auto topo = testing::LsRing(16, 8, 2);
    NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
    cfg.sw.latency = Time::Ns(300);
    cfg.sw.cut_through = cut;
    Network net(sim, topo, cfg);
    net.AddFlow(FlowSpec::Of(0, 1, 4000, Time::Zero()));
    sim.Run();
    // One 4000-B packet, host -> leaf -> host. Store-and-forward: 2 x 80 ns + 2 us + 300 ns.
    // Cut-through: the egress starts 300 ns after the header (64 B = 1.28 ns) and
    // cannot finish before the tail arrived: 80 ns + 1 us + 300 ns + 1.28 ns + ... bounded by the
    // tail.
    int64_t fin = net.flows()[0].finish.ps();
    if (!cut) {
      EXPECT_EQ(fin, 2 * 80'000 + 2'000'000 + 300'000);
    } else {
      EXPECT_EQ(fin, 1'280 + 1'000'000 + 300'000 + 80'000 + 1'000'000);
    }
  }
}

}  // namespace
}  // namespace lossless::fabric

namespace lossless::fabric {
namespace {

TEST(Network, LinkDownReroutesAroundIt) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(
      16, 8, 2);  // links 16..19: leaf0-spine0, leaf0-spine1, leaf1-spine0, leaf1-spine1
  NetworkConfig cfg = RawConfig(RoutingMode::kSpray);
  Network net(sim, topo, cfg);
  net.ScheduleLinkState(16, false, Time::Zero());  // leaf0 - spine0
  EXPECT_TRUE(net.LinkUp(16));                     // an event of each end's port
  net.AddFlow(FlowSpec::Of(0, 9, 400'000, Time::Zero()));
  sim.Run();
  EXPECT_FALSE(net.LinkUp(16));
  EXPECT_EQ(net.flows_done(), 1u);
  EXPECT_EQ(net.drops(), 0u);
  EXPECT_EQ(net.port_stats(2 * 16).tx_packets, 0u);    // nothing crossed the down link
  EXPECT_EQ(net.port_stats(2 * 17).tx_packets, 100u);  // all 100 packets took spine1
}

TEST(Network, HostLinkDownStallsItsFlowsUntilItComesBack) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  net.ScheduleLinkState(0, false, Time::Zero());  // host0's link
  net.AddFlow(FlowSpec::Of(0, 1, 40'000, Time::Ns(1)));  // after the link went down
  sim.Run();
  EXPECT_EQ(net.flows_done(), 0u);
  EXPECT_EQ(net.port_stats(0).tx_packets, 0u);
  net.ScheduleLinkState(0, true, sim.Now());
  sim.Run();
  EXPECT_EQ(net.flows_done(), 1u);
  EXPECT_EQ(net.drops(), 0u);
}

TEST(Network, ABusyLinkHoldsOneArrivalEventNotOnePerFrame) {
  // docs/parallel.md (arrival ownership, chained): ten 80-ns frames on host0's 1-us link at 800 ns,
  // their arrivals keyed when sent but only the wire's head queued.
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  net.AddFlow(FlowSpec::Of(0, 1, 40'000, Time::Zero()));
  sim.Run(Time::Ns(800));
  EXPECT_EQ(net.port_stats(0).tx_packets, 10u);
  EXPECT_EQ(sim.pending(), 1u);
  sim.Run();
  EXPECT_EQ(net.flows()[0].finish.ps(), 9 * 80'000 + 2 * 80'000 + 2'000'000);
}

TEST(Network, ArrivalsStartAgainAfterALinkFlapFlushedTheWire) {
  // host0's link goes down with frames on its wire and comes back 100 ns
  // later: the flushed frames' events run as stale, and the frames sent
  // after it arrive (their chain starts again from an empty wire).
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  net.AddFlow(FlowSpec::Of(0, 1, 400'000, Time::Zero()));
  net.ScheduleLinkState(0, false, Time::Ns(500));
  net.ScheduleLinkState(0, true, Time::Ns(600));
  sim.Run();
  const FlowStats& f = net.flows()[0];
  EXPECT_EQ(f.drops, 7);  // sent from 0 to 560 ns (the seventh was half out)
  EXPECT_EQ(f.recv_bytes + static_cast<int64_t>(f.drops) * 4000, 400'000);
  // Every frame delivered arrived on time: two serializations and two links.
  EXPECT_EQ(f.max_latency.ps(), 2 * 80'000 + 2'000'000);
}

TEST(Network, LinkDownLosesWhatIsOnTheWire) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2);
  Network net(sim, topo, RawConfig(RoutingMode::kEcmp));
  net.AddFlow(FlowSpec::Of(0, 1, 400'000, Time::Zero()));
  sim.Run(Time::Us(2));     // packets are in flight on host0's link and on leaf0 -> host1
  net.ScheduleLinkState(1, false, sim.Now());  // host1's link: in flight and later lost
  sim.Run();
  EXPECT_GT(net.drops(), 0u);
  EXPECT_EQ(net.flows_done(), 0u);
  // Every packet is either delivered or counted as dropped.
  EXPECT_EQ(net.flows()[0].recv_bytes + static_cast<int64_t>(net.flows()[0].drops) * 4000, 400'000);
}

// A distributed run's results count a flow's drops from SetDistributed on;
// a queue pair opened after it (the collectives open theirs as a sweep needs
// them) starts from none instead of reading past the setup record.
TEST(Network, FlowsAddedAfterSetDistributedExportAndMerge) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(4, 2, 2);
  NetworkConfig cfg = RawConfig(RoutingMode::kEcmp);
  Network net(sim, topo, cfg);
  net.AddFlow(FlowSpec::Of(0, 2, 40'000));
  net.SetDistributed(nullptr, std::vector<uint8_t>(net.num_ports(), 0), 2);
  net.AddFlow(FlowSpec::Of(1, 3, 40'000));
  sim.Run(Time::Ms(1));
  ASSERT_EQ(net.flows_done(), 2u);
  const std::vector<int32_t> port_rank(net.num_ports(), 0);
  const std::string mine = net.ExportResults(port_rank, 0);
  net.ImportResults({mine}, port_rank, net.peak_packets_alive());
  ASSERT_EQ(net.flows().size(), 2u);
  EXPECT_EQ(net.flows()[1].recv_bytes, 40'000);
  EXPECT_EQ(net.flows()[1].drops, 0);
  EXPECT_EQ(net.flows_done(), 2u);
}

}  // namespace
}  // namespace lossless::fabric
