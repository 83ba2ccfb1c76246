// Priority flow control: reference experiments E1 (pause timing) and E2
// (headroom) (scenarios/experiments/README.md, docs/fabric-model.md).
#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"
#include "fabric/tx_record_test_util.hpp"

namespace lossless::fabric {
namespace {

using testing::RecordTx;
using testing::TxRecord;
using namespace testing::e1;  // kT0, kTa, kTmax, kLowFrame

// E1 setup: host A sends priority 3 backlogged (4096-B RoCE payload, 83,560 ps
// at 400G) and priority 0 at 80 Gb/s in 9,216-B frames (9,236 B of wire time);
// a PFC frame whose reception at A ends at t_a pauses A's port.
struct E1 {
  units::Rate rate = units::Rate::Gbps(400);
  Time response = Time::Zero();
  uint8_t mask = 1u << 3;
  std::vector<std::pair<int64_t, uint16_t>> pauses;  // (reception end, quanta)
  int64_t horizon = 200'000'000;                     // 200 us
  std::vector<TxRecord> tx;
  uint32_t port_a = 0;

  void Run() {
    sim::Simulator sim(1);
    auto topo = testing::LsRing(8, 8, 1, rate, Time::Ns(50));
    NetworkConfig cfg;
    cfg.framing = Framing::RoceV2(4096);
    cfg.sw.latency = Time::Ns(300);
    cfg.pfc.enabled = true;
    cfg.pfc.response = response;
    cfg.stop_when_flows_done = false;
    Network net(sim, topo, cfg);
    port_a = net.HostPort(0);
    net.set_tx_trace(&RecordTx, &tx);
    FlowSpec bulk = FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 3);
    FlowSpec low = FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 0);
    low.rate = units::Rate::Gbps(80);
    low.max_payload = 9216 - 62;
    net.AddFlow(bulk);
    net.AddFlow(low);
    for (auto [at, quanta] : pauses) {
      sim.Run(Time::Ps(at));
      net.ReceivePause(port_a, mask, quanta);
    }
    sim.Run(Time::Ps(horizon));
  }
  std::vector<int64_t> Starts(int tclass) const {
    return testing::StartsOf(tx, port_a, tclass, PacketKind::kData);
  }
  int64_t FirstStartAfter(int tclass, int64_t t) const {
    return testing::FirstAfter(Starts(tclass), t);
  }
  bool AnyStartIn(int tclass, int64_t lo, int64_t hi) const {  // open interval
    return testing::AnyIn(Starts(tclass), lo, hi);
  }
};

TEST(RefE1_PfcPauseTiming, A_NoPriority3StartDuringPauseAndRestartOnTime) {
  E1 e;
  e.pauses = {{kTa, 0xFFFF}};
  e.Run();
  EXPECT_FALSE(e.AnyStartIn(3, kTa, kTa + kTmax));
  int64_t first = e.FirstStartAfter(3, kTa);
  EXPECT_GE(first, kTa + kTmax);
  EXPECT_LE(first, kTa + kTmax + kLowFrame);
}

TEST(RefE1_PfcPauseTiming, B_ResponseTimeLetsFramesStartUntilItEnds) {
  E1 e;
  e.response = Time::Ps(1'158'400);  // 905 quanta at 400G
  e.pauses = {{kTa, 0xFFFF}};
  e.Run();
  EXPECT_FALSE(e.AnyStartIn(3, kTa + 1'158'400, kTa + kTmax));
  EXPECT_TRUE(e.AnyStartIn(3, kTa, kTa + 1'158'400 + 1));  // backlogged: frames keep starting
  int64_t first = e.FirstStartAfter(3, kTa + 1'158'400);
  EXPECT_GE(first, kTa + kTmax);
  EXPECT_LE(first, kTa + kTmax + kLowFrame);
}

TEST(RefE1_PfcPauseTiming, C_XonReleasesAtOnce) {
  E1 e;
  const int64_t tx = kT0 + 40'051'680;
  e.pauses = {{kTa, 0xFFFF}, {tx, 0}};
  e.Run();
  int64_t first = e.FirstStartAfter(3, kTa);
  EXPECT_GE(first, tx);
  EXPECT_LE(first, tx + kLowFrame);
}

TEST(RefE1_PfcPauseTiming, D_PauseLengthScalesWithLinkRate) {
  // (rate, pause of 65,535 quanta, one 9,236-B priority-0 frame)
  for (auto [gbps, tmax, frame0] :
       {std::tuple<int64_t, int64_t, int64_t>{100, 335'539'200, 738'880},
        {800, 41'942'400, 92'360}}) {
    E1 e;
    e.rate = units::Rate::Gbps(gbps);
    const int64_t ta = kT0 + units::SerializationTime(units::Bytes(84), e.rate).ps() + 50'000;
    e.pauses = {{ta, 0xFFFF}};
    e.horizon = ta + tmax + 5'000'000;
    e.Run();
    EXPECT_FALSE(e.AnyStartIn(3, ta, ta + tmax)) << gbps;
    int64_t first = e.FirstStartAfter(3, ta);
    EXPECT_GE(first, ta + tmax) << gbps;
    EXPECT_LE(first, ta + tmax + frame0) << gbps;
  }
}

TEST(RefE1_PfcPauseTiming, E_SecondXoffReloadsTheTimer) {
  E1 e;
  const int64_t ta2 = kT0 + 60'000'000 + 51'680;
  e.pauses = {{kTa, 0xFFFF}, {ta2, 0xFFFF}};
  e.horizon = ta2 + kTmax + 10'000'000;
  e.Run();
  EXPECT_FALSE(e.AnyStartIn(3, kTa, ta2 + kTmax));
  int64_t first = e.FirstStartAfter(3, kTa);
  EXPECT_GE(first, ta2 + kTmax);
  EXPECT_LE(first, ta2 + kTmax + kLowFrame);
}

int64_t WireBytesIn(const E1& e, int tclass, int64_t lo, int64_t hi) {
  int64_t bytes = 0;
  for (const auto& r : e.tx)
    if (r.port == e.port_a && r.tclass == tclass && r.kind == PacketKind::kData && r.start >= lo &&
        r.start < hi)
      bytes += r.wire;
  return bytes;
}

TEST(RefE1_PfcPauseTiming, F_ClassNotEnabledIsNotPaused) {
  E1 paused;
  paused.mask = 0;  // bit 3 clear, time[3] = 0xFFFF
  paused.pauses = {{kTa, 0xFFFF}};
  paused.Run();
  E1 free_run;
  free_run.Run();
  double a = static_cast<double>(WireBytesIn(paused, 3, kT0, kT0 + 100'000'000));
  double b = static_cast<double>(WireBytesIn(free_run, 3, kT0, kT0 + 100'000'000));
  EXPECT_NEAR(a / b, 1.0, 0.01);
}

TEST(RefE1_PfcPauseTiming, Check7_Priority0KeepsItsRateWhilePriority3IsPaused) {
  E1 e;
  e.pauses = {{kTa, 0xFFFF}};
  e.Run();
  // 80 Gb/s over 80 us = 800,000 bytes of wire time (one frame of granularity).
  double bytes = static_cast<double>(WireBytesIn(e, 0, kTa, kTa + 80'000'000));
  EXPECT_NEAR(bytes / 800'000.0, 1.0, 0.012);
}

}  // namespace
}  // namespace lossless::fabric

namespace lossless::fabric {
namespace {

// E2: NIC A -> switch S ingress p (priority 3) -> egress e -> R. At t0 = 20 us
// e stops serving priority 3; X = wire bytes of the frames that reach (p, 3)
// after the frame that pushed it over XOFF (200 KB static).
struct E2Result {
  int64_t x = 0;
  uint64_t lossless_drops = 0;
};

E2Result RunE2(int64_t d_ps, int64_t t_phy_ps, int64_t headroom, bool reverse_traffic) {
  sim::Simulator sim(1);
  // PHY delay modelled as 2 x t_PHY of extra latency per direction.
  auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ps(d_ps + 2 * t_phy_ps));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.sw.latency = Time::Zero();
  cfg.sw.buffer = units::Bytes(64 << 20);
  cfg.pfc.enabled = true;
  cfg.pfc.xoff = units::Bytes(200'000);
  cfg.pfc.headroom = units::Bytes(headroom);
  cfg.pfc.response = Time::Ps(1'158'400);
  cfg.stop_when_flows_done = false;
  Network net(sim, topo, cfg);
  FlowSpec f = FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 3);
  f.max_payload = 9216 - 62;  // 9,216-B frames, 9,236 B of wire time
  net.AddFlow(f);
  if (reverse_traffic) {
    FlowSpec back = FlowSpec::Of(1, 0, 1'000'000'000, Time::Zero(), 0);
    back.max_payload = 9216 - 62;
    net.AddFlow(back);
  }
  const uint32_t p = net.PortPeer(net.HostPort(0));  // S's port facing A
  const uint32_t e = net.PortPeer(net.HostPort(1));  // S's port facing R
  sim.Run(Time::Us(20));
  net.ReceivePause(e, 1u << 3, 0xFFFF);  // R holds priority 3 (one pause outlasts the run)
  sim.Run(Time::Us(40));
  E2Result r;
  const int64_t held = net.IngressBytes(p, 3) / 9216;
  const int64_t crossing = 200'000 / 9216 + 1;  // the 22nd held frame takes the count over XOFF
  r.x = (held - crossing) * 9236;
  for (uint32_t q = 0; q < net.num_ports(); ++q)
    r.lossless_drops += net.port_stats(q).lossless_drops;
  return r;
}

TEST(RefE2_PfcHeadroom, BytesAfterXoffMatchTheComponentModel) {
  struct Row {
    int64_t d, t_phy, x_min, x_max;
  };
  for (Row row : {Row{500'000, 150'000, 138'004, 147'240}, Row{500'000, 0, 108'004, 117'240},
                  Row{25'000, 150'000, 90'504, 99'740}, Row{25'000, 0, 60'504, 69'740}}) {
    E2Result r = RunE2(row.d, row.t_phy, 160'000, false);
    EXPECT_GT(r.x, row.x_min) << row.d << " " << row.t_phy;
    EXPECT_LE(r.x, row.x_max) << row.d << " " << row.t_phy;
    EXPECT_EQ(r.x % 9236, 0);
    EXPECT_EQ(r.lossless_drops, 0u);  // check 3: 160 KB of headroom is enough
  }
}

TEST(RefE2_PfcHeadroom, ReverseTrafficDelaysThePauseByUpToOneFrame) {
  // The 156,476-B corner is the worked example of docs/model/pfc.md#headroom.
  E2Result r = RunE2(500'000, 150'000, 160'000, true);
  EXPECT_GT(r.x, 138'004);
  EXPECT_LE(r.x, 156'476);
  EXPECT_EQ(r.lossless_drops, 0u);
}

TEST(RefE2_PfcHeadroom, TooLittleHeadroomDropsOnLongCables) {
  for (int64_t t_phy : {150'000, 0}) {
    E2Result r = RunE2(500'000, t_phy, 100'000, false);
    EXPECT_GT(r.lossless_drops, 0u) << t_phy;  // 100,000 B < X_min
  }
}

}  // namespace
}  // namespace lossless::fabric

namespace lossless::fabric {
namespace {

// XOFF refreshes: one live refresh chain per (ingress, priority), however many
// XOFF/XON cycles came before, so refreshes are half a pause time apart.
TEST(Pfc, RefreshesStayHalfAPauseApartAfterManyXonXoffCycles) {
  sim::Simulator sim(1);
  auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(50));
  NetworkConfig cfg;
  cfg.framing = Framing::RoceV2(4096);
  cfg.sw.latency = Time::Zero();
  cfg.pfc.enabled = true;
  cfg.pfc.xoff = units::Bytes(100'000);
  cfg.pfc.headroom = units::Bytes(200'000);
  cfg.stop_when_flows_done = false;
  Network net(sim, topo, cfg);
  std::vector<TxRecord> tx;
  net.set_tx_trace(&RecordTx, &tx);
  net.AddFlow(FlowSpec::Of(0, 1, 1'000'000'000, Time::Zero(), 3));
  const uint32_t p = net.PortPeer(net.HostPort(0));
  const uint32_t e = net.PortPeer(net.HostPort(1));
  // Five short stalls of the egress (each 6,000 quanta = 7.68 us), 20 us apart,
  // each driving (p, 3) over XOFF and back under XON; then one long stall.
  for (int k = 0; k < 5; ++k) {
    sim.Run(Time::Us(10 + 20 * k));
    net.ReceivePause(e, 1u << 3, 6000);
  }
  sim.Run(Time::Us(120));
  net.ReceivePause(e, 1u << 3, 0xFFFF);
  sim.Run(Time::Us(200));
  net.ReceivePause(e, 1u << 3, 0xFFFF);  // keep R's hold across the check window
  sim.Run(Time::Us(280));
  std::vector<int64_t> xoffs;
  for (const auto& r : tx)
    if (r.port == p && r.kind == PacketKind::kPause && r.start > 130'000'000)
      xoffs.push_back(r.start);
  ASSERT_GE(xoffs.size(), 3u);
  const int64_t half = 83'884'800 / 2;
  for (size_t i = 1; i < xoffs.size(); ++i) EXPECT_GE(xoffs[i] - xoffs[i - 1], half - 1) << i;
  EXPECT_LE(xoffs.size(), 4u);  // 150 us of hold at one refresh per 41.9 us
}

// XON hysteresis (docs/model/pfc.md#pause-timing; docs/fabric-model.md): an ingress queue
// above XOFF pauses its upstream, and the XON (pause time 0) goes out when
// the bytes it holds fall to the XON threshold, not before. Hosts 1 and 2
// send priority 3 to host 0 through leaf0 at 400G, so each ingress queue of
// leaf0 cycles through XOFF and XON many times. Every departure of a packet
// from leaf0 -> host0 is recorded with the bytes its ingress queue holds
// after it left; every XON frame must start at a departure that took its
// ingress to or below the threshold, with every departure since the
// preceding XOFF frame above it. With the default threshold (XOFF minus one
// 4,158-B frame: 4,096 B of payload + 62 B of RoCE v2 headers) and with an
// explicit one.
struct XonRun {
  int64_t xon = -1;  // PfcConfig::xon; -1 = its default
  Network* net = nullptr;
  uint32_t egress = 0;
  struct Ev {
    int64_t t;
    uint32_t port;  // ingress port
    int64_t held;   // departure: bytes the ingress holds after it; -1 XON, -2 XOFF
  };
  std::vector<Ev> ev;

  static void Trace(void* ctx, uint32_t p, const Packet& pk, Time start) {
    auto& r = *static_cast<XonRun*>(ctx);
    if (pk.kind == PacketKind::kPause) {
      r.ev.push_back({start.ps(), p, pk.payload == 0 ? -1 : -2});
    } else if (p == r.egress && pk.kind == PacketKind::kData) {
      r.ev.push_back({start.ps(), pk.ingress, r.net->IngressBytes(pk.ingress, 3)});
    }
  }
  void Run() {
    sim::Simulator sim(1);
    auto topo = testing::LsRing(8, 8, 1, units::Rate::Gbps(400), Time::Ns(50));
    NetworkConfig cfg;
    cfg.framing = Framing::RoceV2(4096);
    cfg.sw.latency = Time::Ns(300);
    cfg.pfc.enabled = true;
    cfg.pfc.xoff = units::Bytes(200'000);
    if (xon >= 0) cfg.pfc.xon = units::Bytes(xon);
    cfg.pfc.headroom = units::Bytes(200'000);
    Network n(sim, topo, cfg);
    net = &n;
    egress = n.PortPeer(n.HostPort(0));
    n.set_tx_trace(&XonRun::Trace, this);
    n.AddFlow(FlowSpec::Of(1, 0, 40'000'000, Time::Zero(), 3));
    n.AddFlow(FlowSpec::Of(2, 0, 40'000'000, Time::Zero(), 3));
    sim.Run();
    net = nullptr;
    EXPECT_EQ(n.flows_done(), 2u);
  }
};

void ExpectXonAtThreshold(XonRun& r, int64_t threshold) {
  std::map<uint32_t, int64_t> last_held;  // ingress -> bytes after its last departure
  std::map<uint32_t, bool> xoff;          // ingress -> XOFF sent, no XON since
  std::map<uint32_t, int64_t> min_since_xoff;
  std::map<uint32_t, int64_t> crossed_at;  // ingress -> time of the departure that crossed XON
  // Events at one instant: the XON is sent from inside the departure that
  // triggers it, so it is traced first; apply the departures of an instant
  // before its PAUSE frames.
  std::stable_sort(r.ev.begin(), r.ev.end(), [](const XonRun::Ev& a, const XonRun::Ev& b) {
    return a.t != b.t ? a.t < b.t : (a.held >= 0) > (b.held >= 0);
  });
  int xons = 0;
  for (const auto& e : r.ev) {
    if (e.held >= 0) {
      last_held[e.port] = e.held;
      if (xoff[e.port] && e.held <= threshold) {
        // This departure crossed the threshold: the XON must follow at once.
        EXPECT_FALSE(min_since_xoff.count(e.port)) << "second departure at or below XON at " << e.t;
        min_since_xoff[e.port] = e.held;
        crossed_at[e.port] = e.t;
      }
    } else if (e.held == -2) {
      xoff[e.port] = true;
      min_since_xoff.erase(e.port);
    } else {
      ++xons;
      ASSERT_TRUE(xoff[e.port]) << "XON without XOFF at " << e.t;
      ASSERT_TRUE(last_held.count(e.port));
      EXPECT_LE(last_held[e.port], threshold) << "XON sent early, at " << e.t;
      EXPECT_TRUE(min_since_xoff.count(e.port)) << "XON before any departure reached XON, " << e.t;
      EXPECT_GT(last_held[e.port] + 4'158, threshold) << "XON sent late, at " << e.t;
      // Nothing else is sent towards hosts 1 and 2 but PAUSE frames, so the
      // XON starts at once, or after a refresh in progress (84 B at 400G).
      EXPECT_GE(e.t, crossed_at[e.port]);
      EXPECT_LE(e.t, crossed_at[e.port] + 1'680) << "XON sent late, at " << e.t;
      xoff[e.port] = false;
      min_since_xoff.erase(e.port);
    }
  }
  EXPECT_GE(xons, 20);
  std::printf("XON threshold %lld B: %d XON frames checked\n", static_cast<long long>(threshold),
              xons);
}

TEST(Pfc, XonGoesOutWhenTheIngressFallsToXoffMinusOneFrame) {
  XonRun r;
  r.Run();
  ExpectXonAtThreshold(r, 200'000 - 4'158);
}

TEST(Pfc, XonGoesOutWhenTheIngressFallsToAnExplicitThreshold) {
  XonRun r;
  r.xon = 120'000;
  r.Run();
  ExpectXonAtThreshold(r, 120'000);
}

}  // namespace
}  // namespace lossless::fabric
