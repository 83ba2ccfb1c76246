// The virtualization layer's delay (NetworkConfig::virt, scenario
// virtualization.*): one RoCE v2 RC queue pair A -> B through one switch,
// nothing else on the fabric, so a message's completion time is its posting
// time + its virtualization delay + a fixed transfer time.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::fabric {
namespace {

using units::Time;

using testing::TwoHostsOneSwitch;

NetworkConfig Config(Time latency, Time jitter) {
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.stop_when_flows_done = false;
  cfg.virt.latency = latency;
  cfg.virt.jitter = jitter;
  return cfg;
}

struct Completions : TransportObserver {
  std::vector<uint64_t> tags;
  std::vector<Time> at;
  void OnSendComplete(uint32_t, uint64_t tag, Time t) override {
    tags.push_back(tag);
    at.push_back(t);
  }
  void OnRecvComplete(uint32_t, Time) override {}
};

// Posts `n` messages of `bytes` on one QP, one every `every` (the first at
// `every`), and returns when each completed (acknowledged at A).
std::vector<Time> PostSpaced(const NetworkConfig& cfg, uint64_t seed, int n, int64_t bytes,
                             Time every, std::vector<uint64_t>* tags = nullptr) {
  sim::Simulator sim(seed);
  const topology::Topology topo = TwoHostsOneSwitch();
  Network net(sim, topo, cfg);
  Completions obs;
  net.set_transport_observer(&obs);
  struct Poster : sim::EventHandler {
    Network* net = nullptr;
    uint32_t qp = 0;
    int64_t bytes = 0;
    void OnEvent(uint32_t, uint64_t i) override { net->PostSend(qp, bytes, i); }
  } poster;
  poster.net = &net;
  poster.qp = net.AddQp(FlowSpec::Of(0, 1, 0));
  poster.bytes = bytes;
  const uint32_t entity = sim.AddEntity();
  for (int i = 0; i < n; ++i)
    sim.Schedule(every * (i + 1), entity, &poster, 0, static_cast<uint64_t>(i));
  sim.Run();
  if (tags != nullptr) *tags = obs.tags;
  return obs.at;
}

TEST(VirtualizationTest, AddsExactlyTheLatencyToASingleMessageWhenJitterIsZero) {
  const std::vector<Time> bare =
      PostSpaced(Config(Time::Zero(), Time::Zero()), 1, 1, 65536, Time::Us(1));
  const std::vector<Time> virt =
      PostSpaced(Config(Time::Us(2), Time::Zero()), 1, 1, 65536, Time::Us(1));
  ASSERT_EQ(bare.size(), 1u);
  ASSERT_EQ(virt.size(), 1u);
  EXPECT_EQ((virt[0] - bare[0]).ps(), Time::Us(2).ps());
}

TEST(VirtualizationTest, AddsExactlyTheLatencyToARcFlowOfRun) {
  auto fct = [](const NetworkConfig& cfg) {
    sim::Simulator sim(1);
    const topology::Topology topo = TwoHostsOneSwitch();
    NetworkConfig c = cfg;
    c.stop_when_flows_done = true;
    Network net(sim, topo, c);
    FlowSpec f = FlowSpec::Of(0, 1, 1 << 20, Time::Us(3));
    f.rc = true;
    net.AddFlow(f);
    sim.Run();
    EXPECT_TRUE(net.flows()[0].done());
    return net.flows()[0].fct();
  };
  EXPECT_EQ(
      (fct(Config(Time::Ns(1500), Time::Zero())) - fct(Config(Time::Zero(), Time::Zero()))).ps(),
      Time::Ns(1500).ps());
}

// 4,000 messages 50 us apart (far longer than a delay, so one never waits
// for the previous): delay_i = completion_i - completion_i without the layer.
// Their mean is latency + jitter within 5 standard errors of an exponential
// mean (jitter / sqrt(4000) = 15.8 ns each, so +-80 ns); none is below latency.
TEST(VirtualizationTest, MeanDelayOverManyMessagesIsLatencyPlusJitter) {
  constexpr int kN = 4000;
  const Time every = Time::Us(50);
  const std::vector<Time> bare = PostSpaced(Config(Time::Zero(), Time::Zero()), 7, kN, 4096, every);
  const std::vector<Time> virt = PostSpaced(Config(Time::Us(2), Time::Us(1)), 7, kN, 4096, every);
  ASSERT_EQ(bare.size(), static_cast<size_t>(kN));
  ASSERT_EQ(virt.size(), static_cast<size_t>(kN));
  double sum_ns = 0;
  int64_t min_ps = INT64_MAX;
  for (int i = 0; i < kN; ++i) {
    const int64_t d = (virt[static_cast<size_t>(i)] - bare[static_cast<size_t>(i)]).ps();
    min_ps = std::min(min_ps, d);
    sum_ns += static_cast<double>(d) / 1e3;
  }
  EXPECT_NEAR(sum_ns / kN, 3000.0, 80.0);
  EXPECT_GE(min_ps, Time::Us(2).ps());
}

TEST(VirtualizationTest, AQueuePairsMessagesStayInPostingOrderUnderJitter) {
  // Posted 100 ns apart with a 5 us mean jitter: later messages often draw
  // shorter delays, and still reach the NIC (and complete) in order.
  std::vector<uint64_t> tags;
  PostSpaced(Config(Time::Zero(), Time::Us(5)), 3, 200, 4096, Time::Ns(100), &tags);
  ASSERT_EQ(tags.size(), 200u);
  for (size_t i = 0; i < tags.size(); ++i) EXPECT_EQ(tags[i], i);
}

TEST(VirtualizationTest, SameSeedSameDelaysOtherSeedOtherDelays) {
  const NetworkConfig cfg = Config(Time::Us(2), Time::Us(1));
  const std::vector<Time> a = PostSpaced(cfg, 11, 50, 4096, Time::Us(20));
  const std::vector<Time> b = PostSpaced(cfg, 11, 50, 4096, Time::Us(20));
  const std::vector<Time> c = PostSpaced(cfg, 12, 50, 4096, Time::Us(20));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace lossless::fabric
