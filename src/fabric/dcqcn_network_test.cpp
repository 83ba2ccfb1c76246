// DCQCN wired into the network: ECN marks at the congestion point, CNPs from
// the receiving NIC, rate cuts at the sending flows.
#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"

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
  cfg.sw.ecn[3] = EcnConfig{true, 20'000, 200'000, 0.2};
  cfg.pfc.enabled = true;
  cfg.pfc.xoff_bytes = 300'000;
  cfg.pfc.headroom_bytes = 200'000;
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
  // Ordering (experiments.md E13 spirit): congestion control leaves PFC less to do.
  EXPECT_LT(paper.pause_frames, pfc_only.pause_frames);
  EXPECT_EQ(pfc_only.lossless_drops + paper.lossless_drops + firmware.lossless_drops, 0u);
}

}  // namespace
}  // namespace lossless::fabric
