// DCQCN wired into the network: ECN marks at the congestion point, CNPs from
// the receiving NIC, rate cuts at the sending flows.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"
#include "fabric/tx_record_test_util.hpp"

namespace lossless::fabric {
namespace {

struct IncastResult {
  uint64_t cnps = 0;
  uint64_t pause_frames = 0;
  int64_t max_queue = 0;
  size_t done = 0;
  double min_rate_gbps = 400;
  uint64_t lossless_drops = 0;
};

IncastResult RunIncast(bool dcqcn, cc::DcqcnParams params = cc::DcqcnParams::Paper()) {
  sim::Simulator sim(5);
  auto topo = testing::LsRing(16, 8, 2, units::Rate::Gbps(400), Time::Ns(50));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.sw.latency = Time::Ns(300);
  cfg.sw.ecn[3] = EcnConfig{true, units::Bytes(20'000), units::Bytes(200'000), 0.2};
  cfg.pfc.enabled = true;
  cfg.pfc.xoff = units::Bytes(300'000);
  cfg.pfc.headroom = units::Bytes(200'000);
  cfg.dcqcn = dcqcn;
  cfg.dcqcn_params = params;
  Network net(sim, topo, cfg);
  for (uint32_t s = 1; s <= 7; ++s) net.AddFlow(FlowSpec::Of(s, 0, 8 << 20));
  sim.Run();
  IncastResult r;
  r.cnps = net.cnps_sent();
  r.done = net.flows_done();
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    r.pause_frames += net.port_stats(p).pause_tx;
    r.max_queue = std::max(r.max_queue, net.port_stats(p).max_queue_bytes);
    r.lossless_drops += net.port_stats(p).lossless_drops;
  }
  if (dcqcn) {
    for (uint32_t f = 0; f < 7; ++f) {
      r.min_rate_gbps = std::min(r.min_rate_gbps, net.ReactionPoint(f).target_rate_bps() / 1e9);
    }
  }
  return r;
}

TEST(DcqcnNetwork, IncastSendsCnpsCutsRatesAndPausesLessThanPfcAlone) {
  IncastResult pfc_only = RunIncast(false);
  IncastResult paper = RunIncast(true);
  IncastResult firmware = RunIncast(true, cc::DcqcnParams::ConnectXFirmware());
  EXPECT_EQ(pfc_only.done, 7u);
  EXPECT_EQ(paper.done, 7u);
  EXPECT_EQ(firmware.done, 7u);
  EXPECT_EQ(pfc_only.cnps, 0u);
  EXPECT_GT(paper.cnps, 0u);
  EXPECT_GT(firmware.cnps, 0u);
  // 7 flows share 400 Gb/s: DCQCN must have cut targets well below line rate.
  EXPECT_LT(paper.min_rate_gbps, 200.0);
  // Ordering (docs/model/experiments.md#e13-incast-ordering spirit): congestion control leaves PFC
  // less to do.
  EXPECT_LT(paper.pause_frames, pfc_only.pause_frames);
  EXPECT_EQ(pfc_only.lossless_drops + paper.lossless_drops + firmware.lossless_drops, 0u);
}

// The reaction point's rate really paces the flow. One flow, host 1 -> host
// 0, at 400G (4,096-B payloads, 4,178 B of wire time), DCQCN paper preset,
// no ECN (so no CNP but the injected ones). A CNP at 20 us cuts the rate to
// R (1 - alpha / 2) = 200 Gb/s (alpha starts at 1), a second at 30 us to
// 100 Gb/s (alpha stays 1: (1 - g) + g); the first rate increase is due a
// timer period (55 us) after the last cut. Between the cuts the NIC must
// start a packet exactly every 4,178 B at 200 Gb/s = 167.12 ns, after the
// second every 334.24 ns.
TEST(DcqcnNetwork, InjectedCnpsCutTheFlowsSendingRate) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(16, 8, 2, units::Rate::Gbps(400), Time::Us(1));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.pfc.enabled = true;
  cfg.dcqcn = true;
  cfg.dcqcn_params = cc::DcqcnParams::Paper();
  cfg.stop_when_flows_done = false;
  Network net(sim, topo, cfg);
  std::vector<testing::TxRecord> tx;
  net.set_tx_trace(&testing::RecordTx, &tx);
  const uint32_t f = net.AddFlow(FlowSpec::Of(1, 0, int64_t{1} << 40));
  net.InjectCnp(f, Time::Us(20));
  net.InjectCnp(f, Time::Us(30));
  sim.Run(Time::Us(20) - Time::Ps(1));
  EXPECT_EQ(net.ReactionPoint(f).rate(), units::Rate::Gbps(400));
  sim.Run(Time::Us(25));
  EXPECT_EQ(net.ReactionPoint(f).rate(), units::Rate::Gbps(200));
  sim.Run(Time::Us(80));
  EXPECT_EQ(net.ReactionPoint(f).rate(), units::Rate::Gbps(100));
  const std::vector<int64_t> starts = testing::StartsOf(tx, net.HostPort(1), -1, PacketKind::kData);
  auto expect_gaps = [&](int64_t lo, int64_t hi, int64_t gap) {
    int n = 0;
    for (size_t i = 1; i < starts.size(); ++i) {
      if (starts[i - 1] < lo || starts[i] > hi) continue;
      EXPECT_EQ(starts[i] - starts[i - 1], gap) << "at " << starts[i];
      ++n;
    }
    return n;
  };
  // Before the first CNP: line rate (4,178 B at 400 Gb/s).
  EXPECT_GT(expect_gaps(1'000'000, 19'000'000, 83'560), 200);
  // One packet after each cut (the one already paced at the old rate).
  EXPECT_GT(expect_gaps(20'500'000, 30'000'000, 167'120), 50);
  EXPECT_GT(expect_gaps(30'500'000, 80'000'000, 334'240), 140);
}

}  // namespace
}  // namespace lossless::fabric
