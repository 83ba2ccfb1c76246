#pragma once
// Reference experiment E13 (docs/congestion-control.md, "E13"): a
// synchronised 16:1 incast under PFC only and under PFC + DCQCN (paper
// preset). Shared by the slow test (seeds 1-5) and the fast one (seed 1).
//
// HPCC is not implemented in lossless, so run (3) of E13 and the HPCC side of
// its checks 2 and 3 are not here.
//
// Setup (E13 table): one switch S; senders H1..H16 (ranks 0..15), probe
// sender P (rank 16) and receiver R (rank 17); 100G links with 1 us of
// propagation; 300 ns switch; 32 MiB shared buffer, lossy-class dynamic
// threshold alpha 1/8 (the model has no per-queue 4 KiB reserve); 1024-B
// payloads; PFC on priority 3 with the default 200 KB XOFF (E13 does not give
// one) and headroom per docs/model/pfc.md#headroom at 100G (response time 2.01728 us, the
// 802.3 D-Resp bound at 100GbE). At t = 0 each Hi starts one 2 MB message to
// R; P sends a 4 KiB message to R every 20 us from 0 to 2.98 ms (150 probes).
// DCQCN run: ECN 400 KB / 1600 KB / 0.2 at S's egress queues (HPCC preset for
// 100G, docs/model/switch-buffers.md#ecn-marking), DCQCN paper preset.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"

namespace lossless::fabric::e13 {

constexpr int kSenders = 16;
constexpr uint32_t kProbe = 16, kReceiver = 17;
constexpr int kProbes = 150;

// One radix-64 switch with 18 hosts (the leaf-spine builder's single-switch case).
inline topology::Topology Star() {
  topology::ClosParams p;
  p.gpus = 18;
  p.link_rate = Rate::Gbps(100);
  p.link_delay = Time::Us(1);
  return topology::BuildLeafSpine(p, {"<test>", 0, "topology"});
}

struct E13Result {
  uint64_t drops = 0, lossless_drops = 0;
  uint64_t xoff_5ms = 0, xon_5ms = 0;  // PFC frames S sent in [0, 5 ms]
  Time probe_p50, probe_p99;
  int64_t peak_queue = 0;  // S -> R
  Time incast_done;        // last incast byte delivered
  size_t flows_done = 0, flows = 0;
  uint64_t cnps = 0;
  uint64_t xoff_first_500us = 0;  // of xoff_5ms, those sent in [0, 500 us)
  int64_t last_xoff_ps = -1;      // last XOFF/refresh frame from S, or -1
};

struct PauseCount {
  const Network* net = nullptr;
  uint64_t xoff = 0, xon = 0;
  std::vector<int64_t> xoff_at;  // start times of the XOFF/refresh frames
};

inline void CountPause(void* ctx, uint32_t port, const Packet& p, Time t) {
  auto* c = static_cast<PauseCount*>(ctx);
  // PFC frames sent by the switch (its ports face the hosts).
  if (p.kind != PacketKind::kPause || c->net->SwitchOfNode(c->net->PortNode(port)) == UINT32_MAX)
    return;
  (p.payload > 0 ? c->xoff : c->xon) += 1;
  if (p.payload > 0) c->xoff_at.push_back(t.ps());
}

inline E13Result RunE13(bool dcqcn, uint64_t seed) {
  sim::Simulator sim(seed);
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(1024);
  cfg.sw.latency = Time::Ns(300);
  cfg.pfc.enabled = true;
  cfg.pfc.xoff = units::Bytes(200'000);
  cfg.pfc.response = Time::Ps(2'017'280);  // 201,728 bit times at 100G
  // docs/model/pfc.md#headroom without the PHY term, plus the frame crossing XOFF and the
  // switch pipeline (the scenario loader's default rule).
  const int64_t wire = cfg.framing.WireBytes(1024);
  const Time in_flight = Time::Us(2) + cfg.pfc.response + cfg.sw.latency;
  cfg.pfc.headroom =
      units::Bytes(3 * wire + 84 + units::BytesInTime(in_flight, Rate::Gbps(100)).count());
  if (dcqcn) {
    cfg.sw.ecn[3] = EcnConfig{true, units::Bytes(400'000), units::Bytes(1'600'000), 0.2};
    cfg.dcqcn = true;
    cfg.dcqcn_params = cc::DcqcnParams::Paper();
  }
  Network net(sim, Star(), cfg);
  PauseCount pauses;
  pauses.net = &net;
  net.set_tx_trace(&CountPause, &pauses);
  for (uint32_t h = 0; h < kSenders; ++h) net.AddFlow(FlowSpec::Of(h, kReceiver, 2'000'000));
  for (int k = 0; k < kProbes; ++k)
    net.AddFlow(FlowSpec::Of(kProbe, kReceiver, 4096, Time::Us(20 * k)));
  sim.Run(Time::Ms(5));
  E13Result r;
  r.xoff_5ms = pauses.xoff;
  r.xon_5ms = pauses.xon;
  for (int64_t t : pauses.xoff_at) r.xoff_first_500us += t < 500'000'000;
  if (!pauses.xoff_at.empty()) r.last_xoff_ps = pauses.xoff_at.back();
  sim.Run();
  r.drops = net.drops();
  for (uint32_t p = 0; p < net.num_ports(); ++p)
    r.lossless_drops += net.port_stats(p).lossless_drops;
  r.peak_queue = net.port_stats(net.PortPeer(net.HostPort(kReceiver))).max_queue_bytes;
  r.flows = net.flows().size();
  r.flows_done = net.flows_done();
  r.cnps = net.cnps_sent();
  std::vector<Time> probe;
  for (size_t f = 0; f < net.flows().size(); ++f) {
    const FlowStats& st = net.flows()[f];
    if (!st.done()) continue;
    if (f < kSenders) {
      r.incast_done = std::max(r.incast_done, st.finish);
    } else {
      probe.push_back(st.fct());
    }
  }
  std::sort(probe.begin(), probe.end());
  if (!probe.empty()) {
    auto rank = [&](double q) {
      size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(probe.size())));
      return probe[std::min(probe.size() - 1, i == 0 ? 0 : i - 1)];
    };
    r.probe_p50 = rank(0.5);
    r.probe_p99 = rank(0.99);
  }
  std::printf(
      "E13 %s seed %llu: drops %llu (lossless %llu); PFC frames from S in [0,5] ms: %llu "
      "XOFF/refresh, "
      "%llu XON; probe FCT p50 %.3f us p99 %.3f us; peak queue S->R %lld B; incast done at %.3f "
      "us; CNPs %llu; flows done %zu/%zu; XOFF/refresh frames in [0, 500 us) %llu, last at %.3f "
      "us\n",
      dcqcn ? "PFC+DCQCN" : "PFC only", static_cast<unsigned long long>(seed),
      static_cast<unsigned long long>(r.drops), static_cast<unsigned long long>(r.lossless_drops),
      static_cast<unsigned long long>(r.xoff_5ms), static_cast<unsigned long long>(r.xon_5ms),
      static_cast<double>(r.probe_p50.ps()) / 1e6, static_cast<double>(r.probe_p99.ps()) / 1e6,
      static_cast<long long>(r.peak_queue), static_cast<double>(r.incast_done.ps()) / 1e6,
      static_cast<unsigned long long>(r.cnps), r.flows_done, r.flows,
      static_cast<unsigned long long>(r.xoff_first_500us),
      static_cast<double>(r.last_xoff_ps) / 1e6);
  return r;
}

// The checks both tiers assert (E13 checks 1-4, with the margins the model
// delivers; docs/congestion-control.md says why the pause reduction is about
// 5x, not E13's 10x). Measured, seeds 1-5 (RefE13_IncastOrdering slow test
// output): PFC only 496 XOFF/refresh frames from S in [0, 5 ms], DCQCN 97-101
// (4.9-5.1x fewer); probe FCT p99 331.19 us against 274.62-275.16 us
// (1.20x); peak queue S -> R 4,076,844 B against 3,526,242-3,543,618 B
// (1.15x). The asserted margins are a little below the worst seed's ratio:
// 4.5x, 1.15x and 1.10x.
inline void ExpectDcqcnBeatsPfcOnly(const E13Result& pfc, const E13Result& dcqcn) {
  // 1. Zero drops, and every flow completes.
  EXPECT_EQ(pfc.drops + pfc.lossless_drops, 0u);
  EXPECT_EQ(dcqcn.drops + dcqcn.lossless_drops, 0u);
  EXPECT_EQ(pfc.flows_done, pfc.flows);
  EXPECT_EQ(dcqcn.flows_done, dcqcn.flows);
  // The incast does congest: PFC acts in the PFC-only run, DCQCN reacts in
  // the other, and the DCQCN run is not the PFC-only run again (a reaction
  // point whose rate never reaches the NIC's pacing would leave it so).
  EXPECT_GT(pfc.xoff_5ms, 0u);
  EXPECT_EQ(pfc.cnps, 0u);
  EXPECT_GT(dcqcn.cnps, 0u);
  EXPECT_NE(dcqcn.xoff_5ms, pfc.xoff_5ms);
  EXPECT_NE(dcqcn.incast_done, pfc.incast_done);
  EXPECT_NE(dcqcn.probe_p50, pfc.probe_p50);
  // 2. p99 probe FCT: DCQCN strictly better, by at least 1.15x.
  EXPECT_LT(dcqcn.probe_p99, pfc.probe_p99);
  EXPECT_LE(static_cast<double>(dcqcn.probe_p99.ps()) * 1.15,
            static_cast<double>(pfc.probe_p99.ps()));
  // 3. Peak queue at S -> R: DCQCN strictly lower, by at least 1.10x.
  EXPECT_LT(dcqcn.peak_queue, pfc.peak_queue);
  EXPECT_LE(static_cast<double>(dcqcn.peak_queue) * 1.10, static_cast<double>(pfc.peak_queue));
  // 4. XOFF frames in [0, 5 ms]: DCQCN at least 4.5x fewer. E13's 10x is a
  //    soft target the model misses (about 5x): printed, not failed.
  EXPECT_LT(dcqcn.xoff_5ms, pfc.xoff_5ms);
  EXPECT_LE(static_cast<double>(dcqcn.xoff_5ms) * 4.5, static_cast<double>(pfc.xoff_5ms));
  if (dcqcn.xoff_5ms * 10 > pfc.xoff_5ms) {
    std::printf(
        "E13 soft check 4 missed: DCQCN sent %llu XOFF frames, PFC only %llu (%.2fx fewer, "
        "E13 hopes for 10x; see docs/congestion-control.md)\n",
        static_cast<unsigned long long>(dcqcn.xoff_5ms),
        static_cast<unsigned long long>(pfc.xoff_5ms),
        static_cast<double>(pfc.xoff_5ms) /
            static_cast<double>(std::max<uint64_t>(1, dcqcn.xoff_5ms)));
  }
  // 5. Completion time: printed by RunE13, not asserted.
}

}  // namespace lossless::fabric::e13
