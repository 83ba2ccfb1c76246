// Experiment E12, check 4: bit errors end to end. One 400G RoCE v2 link with
// go-back-N carries 4,096-B payload frames (4,158 B with RoCE v2 framing) at
// line rate for 100 ms at post-FEC BER 1e-9 (bits on the wire x BER = 39.8
// losses expected). The loss count lies in [18, 67], each loss costs exactly
// one go-back-N episode (losses are far apart compared with one window) and
// no message is lost.
#include <cstdint>
#include <cstdio>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"

namespace lossless::fabric {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace e12 {

using units::Rate;
using units::Time;

struct Counter : TransportObserver {
  int64_t sent = 0, received = 0;
  void OnSendComplete(uint32_t, uint64_t, Time) override { ++sent; }
  void OnRecvComplete(uint32_t, Time) override { ++received; }
};

TEST(RefE12_BerLossRecoveryEndToEnd, BitErrorsCostOneGoBackNEpisodeEach) {
  const topology::Topology t = testing::TwoHostsOneSwitch(Rate::Gbps(400), Time::Ns(500));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.stop_when_flows_done = false;
  ASSERT_EQ(cfg.framing.FrameBytes(4096), 4158);
  sim::Simulator sim(1);
  Network net(sim, t, cfg);
  Counter done;
  net.set_transport_observer(&done);
  LinkLossConfig loss;
  loss.ber = 1e-9;
  net.SetLinkLoss(net.HostPort(0), loss);
  const uint32_t qp = net.AddQp(FlowSpec::Of(0, 1, 0));
  constexpr int64_t kMessage = int64_t{4} << 20;
  for (int m = 0; m < 1300; ++m) net.PostSend(qp, kMessage, static_cast<uint64_t>(m));  // > 100 ms
  sim.Run(Time::Ms(100));
  const uint64_t losses = net.link_losses();
  const FlowStats& st = net.flows()[qp];
  std::printf("E12 check 4: %llu losses in 100 ms at BER 1e-9 (expected 39.8), %llu NAKs, "
              "%lld messages delivered\n",
              static_cast<unsigned long long>(losses), static_cast<unsigned long long>(st.naks),
              static_cast<long long>(done.received));
  EXPECT_GE(losses, 18u);
  EXPECT_LE(losses, 67u);
  EXPECT_EQ(st.naks, losses);
  EXPECT_EQ(st.timeouts, 0u);
  EXPECT_EQ(net.qp_failure(), nullptr);
  // No message lost: every byte B placed belongs to the messages it completed
  // or the one in progress, and A saw every delivered message acknowledged
  // (give or take the ones whose ACK is in flight).
  EXPECT_GT(done.received, 1000);
  EXPECT_GE(st.recv_bytes, done.received * kMessage);
  EXPECT_LT(st.recv_bytes, (done.received + 1) * kMessage);
  EXPECT_LE(done.received - done.sent, 1);
  EXPECT_GE(done.received - done.sent, 0);
}

}  // namespace e12
}  // namespace
}  // namespace lossless::fabric
