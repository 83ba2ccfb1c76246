// Experiment E10: go-back-N versus go-back-0 under loss, on the RC transport
// over the packet-level network (docs/model/transport.md). One RoCE v2 RC
// connection A -> B through one cut-through switch with no pipeline latency,
// 100 Gb/s links of 2 us each: the base RTT (propagation and processing,
// serialization excluded) is 8 us. 1,024-B payloads take 1,106 B of link time
// (slot s = 88.48 ns). 4 MiB messages are posted back to back; no congestion
// control. A drop element on A -> B discards every 256th data packet it sees,
// retransmissions counted; ACKs and NAKs are never dropped.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::fabric {
namespace {

using units::Rate;
using units::Time;

constexpr int64_t kPayload = 1024;
constexpr int64_t kMessage = int64_t{4} << 20;  // 4,096 packets
constexpr double kSlotNs = 88.48;
constexpr double kRttNs = 8000;

using testing::TwoHostsOneSwitch;

NetworkConfig E10Config(bool go_back_0) {
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(static_cast<int32_t>(kPayload));
  cfg.sw.latency = Time::Zero();
  cfg.sw.cut_through = true;
  cfg.rc.go_back_0 = go_back_0;
  cfg.rc.timeout_exp = 14;  // 67 ms: no timeout in these runs (losses are all NAKed)
  cfg.stop_when_flows_done = false;
  return cfg;
}

struct Counter : TransportObserver {
  int64_t sent = 0, received = 0;
  Time last_recv;
  void OnSendComplete(uint32_t, uint64_t, Time) override { ++sent; }
  void OnRecvComplete(uint32_t, Time at) override {
    ++received;
    last_recv = at;
  }
};

// The PSNs A sends, in order (data packets only).
struct TxLog {
  uint32_t port = 0;
  std::vector<uint32_t> psns;
  static void Record(void* ctx, uint32_t port, const Packet& p, Time) {
    auto* log = static_cast<TxLog*>(ctx);
    if (port == log->port && p.kind == PacketKind::kData) log->psns.push_back(p.seq);
  }
};

struct E10Run {
  Counter done;
  TxLog tx;
  int64_t delivered_bytes = 0;
  uint64_t naks = 0, losses = 0, retx = 0;
  int64_t busy_ps = 0;
  Time run_time;
};

// `messages` of 4 MiB posted at 0 on one QP A -> B, with loss on A -> B.
E10Run RunE10(bool go_back_0, const LinkLossConfig& loss, uint64_t seed, Time duration,
           int messages, int timeout_exp = 14, bool log_tx = false) {
  sim::Simulator sim(seed);
  NetworkConfig cfg = E10Config(go_back_0);
  cfg.rc.timeout_exp = timeout_exp;
  Network net(sim, TwoHostsOneSwitch(Rate::Gbps(100), Time::Us(2)), cfg);
  E10Run out;
  out.tx.port = net.HostPort(0);
  if (log_tx) net.set_tx_trace(&TxLog::Record, &out.tx);
  net.set_transport_observer(&out.done);
  net.SetLinkLoss(net.HostPort(0), loss);
  const uint32_t qp = net.AddQp(FlowSpec::Of(0, 1, 0));
  for (int m = 0; m < messages; ++m) net.PostSend(qp, kMessage, static_cast<uint64_t>(m));
  sim.Run(duration);
  EXPECT_EQ(net.qp_failure(), nullptr);
  out.delivered_bytes = net.flows()[qp].recv_bytes;
  out.naks = net.flows()[qp].naks;
  out.retx = net.flows()[qp].retx_packets;
  out.losses = net.link_losses();
  out.busy_ps = net.port_stats(net.HostPort(0)).busy_ps;
  out.run_time = sim.Now();
  return out;
}

TEST(RefE10_GoBackNvsGoBack0, FramingGivesTheExperimentsSlot) {
  const Framing f = Framing::RoceV2(1024);
  EXPECT_EQ(f.WireBytes(kPayload), 1106);
  EXPECT_EQ(units::SerializationTime(units::Bytes(1106), Rate::Gbps(100)), Time::Ps(88'480));
}

// Check 1: go-back-0 livelocks: no message completes while the link is busy.
TEST(RefE10_GoBackNvsGoBack0, GoBack0LivelocksUnderPeriodicLoss) {
  LinkLossConfig loss;
  loss.drop_every = 256;
  const E10Run r = RunE10(true, loss, 1, Time::Ms(100), 300);
  EXPECT_EQ(r.done.sent, 0);
  EXPECT_EQ(r.done.received, 0);
  EXPECT_GE(static_cast<double>(r.busy_ps), 0.99 * static_cast<double>(Time::Ms(100).ps()));
  EXPECT_GT(r.naks, 1000u);  // it kept trying
}

// Check 2: go-back-N loses W slots per drop, W the same in every episode and
// within 2 of 2 + RTT/s; efficiency (256 - W)/256; one episode per drop.
TEST(RefE10_GoBackNvsGoBack0, GoBackNLosesOneWindowPerDrop) {
  LinkLossConfig loss;
  loss.drop_every = 256;
  const E10Run r = RunE10(false, loss, 1, Time::Ms(100), 300, 14, /*log_tx=*/true);
  const std::vector<uint32_t>& psns = r.tx.psns;
  // Every 256th data packet A sends is dropped (the element sits on A's link).
  std::vector<int64_t> windows;
  for (size_t i = 255; i < psns.size(); i += 256) {
    for (size_t j = i + 1; j < psns.size(); ++j) {
      if (psns[j] == psns[i]) {
        windows.push_back(static_cast<int64_t>(j - i));
        break;
      }
    }
  }
  ASSERT_GT(windows.size(), 1000u);
  const auto [lo, hi] = std::minmax_element(windows.begin(), windows.end());
  EXPECT_LE(*hi - *lo, 1) << "W varies between episodes";
  const double w_expected = 2 + kRttNs / kSlotNs;  // 92.4
  EXPECT_NEAR(static_cast<double>(*lo), w_expected, 2.0);
  EXPECT_NEAR(static_cast<double>(*hi), w_expected, 2.0);
  const double w = static_cast<double>(*lo);
  const double efficiency =
      static_cast<double>(r.delivered_bytes / kPayload) / static_cast<double>(psns.size());
  EXPECT_NEAR(efficiency, (256 - w) / 256, 0.005) << "W = " << w;
  std::printf("E10 check 2: W = %lld..%lld slots (2 + RTT/s = %.1f), efficiency %.2f %% "
              "((256 - W)/256 = %.2f %%), %llu NAKs for %llu drops\n",
              static_cast<long long>(*lo), static_cast<long long>(*hi), w_expected,
              100 * efficiency, 100 * (256 - w) / 256, static_cast<unsigned long long>(r.naks),
              static_cast<unsigned long long>(r.losses));
  EXPECT_NEAR(static_cast<double>(r.naks), static_cast<double>(r.losses), 1.0);
  EXPECT_GT(r.done.received, 100);
}

// Check 3: random loss with p = 1/256, seeds 1-10: mean efficiency
// (1 - p)/(1 + p (W - 1)) within 2 pp; with p = 1e-6 at least 99.9 %.
TEST(RefE10_GoBackNvsGoBack0, GoBackNUnderRandomLossMatchesTheClosedForm) {
  // W of this path, measured as in check 2 (92 or 93 slots).
  LinkLossConfig periodic;
  periodic.drop_every = 256;
  const E10Run ref = RunE10(false, periodic, 1, Time::Ms(10), 40, 14, true);
  int64_t w = 0;
  for (size_t j = 256; j < ref.tx.psns.size(); ++j) {
    if (ref.tx.psns[j] == ref.tx.psns[255]) {
      w = static_cast<int64_t>(j - 255);
      break;
    }
  }
  ASSERT_GT(w, 80);
  const double p = 1.0 / 256;
  const double expected = (1 - p) / (1 + p * static_cast<double>(w - 1));
  double sum = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    LinkLossConfig loss;
    loss.drop_prob = p;
    const E10Run r = RunE10(false, loss, seed, Time::Ms(100), 300);
    const double slots = static_cast<double>(r.busy_ps) / (kSlotNs * 1000);
    sum += static_cast<double>(r.delivered_bytes / kPayload) / slots;
  }
  EXPECT_NEAR(sum / 10, expected, 0.02) << "W = " << w;
  std::printf("E10 check 3: mean efficiency %.2f %% over seeds 1-10, closed form %.2f %% (W = %lld)\n",
              100 * sum / 10, 100 * expected, static_cast<long long>(w));
  LinkLossConfig rare;
  rare.drop_prob = 1e-6;
  const E10Run r = RunE10(false, rare, 1, Time::Ms(100), 300);
  const double slots = static_cast<double>(r.busy_ps) / (kSlotNs * 1000);
  EXPECT_GE(static_cast<double>(r.delivered_bytes / kPayload) / slots, 0.999);
}

// Check 4: a tail loss waits out the local ACK timeout (t = 10: 4,194.304 us)
// and costs exactly one retransmission.
TEST(RefE10_GoBackNvsGoBack0, TailLossCostsOneAckTimeout) {
  const E10Run clean = RunE10(false, LinkLossConfig{}, 1, Time::Sec(1), 1, 10);
  LinkLossConfig tail;
  tail.drop_every = 4096;  // the message's last packet; its retransmission is the 4,097th
  const E10Run lossy = RunE10(false, tail, 1, Time::Sec(1), 1, 10);
  ASSERT_EQ(clean.done.received, 1);
  ASSERT_EQ(lossy.done.received, 1);
  EXPECT_EQ(lossy.losses, 1u);
  EXPECT_EQ(lossy.retx, 1u);
  EXPECT_EQ(lossy.naks, 0u);
  const double delta_us = (lossy.done.last_recv - clean.done.last_recv).ps() / 1e6;
  EXPECT_NEAR(delta_us, 4194.304, 2 * kRttNs / 1000);
  std::printf("E10 check 4: the tail loss delays completion by %.3f us (timeout 4194.304 us)\n",
              delta_us);
}

}  // namespace
}  // namespace lossless::fabric
