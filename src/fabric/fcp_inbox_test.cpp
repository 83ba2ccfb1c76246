// InfiniBand FCPs as link messages (fabric/ib_link.cpp, docs/architecture.md
// "Event ownership"): the data sender applies the FCPs due by the running
// event when it looks at its credits, and runs a wake-up only when it waits
// for credit. The reference is the engine check IbLinkConfig::fcp_event_each,
// where every FCP is an event of its own and takes effect there. Both must
// give the same run: every transmission (port, class, start, size, kind),
// every flow's bytes and finish, every port's counters; the inbox with fewer
// events. The cases hold what could tell them apart: same-picosecond ties on
// a symmetric leaf-spine with adaptive routing, lost FCPs, a starved VL whose
// wake-ups meet FCPs of another VL, and a link going down and up.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/frame_time.hpp"
#include "fabric/network.hpp"
#include "fabric/test_topologies.hpp"

namespace lossless::fabric {
namespace {
// Its own scope: a module's test files are compiled as one unit (docs/testing.md#ci-time).
namespace fcp_inbox {

using units::Time;

struct Tx {
  uint32_t port;
  int tclass;
  int64_t start;
  uint32_t wire;
  PacketKind kind;
  bool operator==(const Tx&) const = default;
};

void Record(void* ctx, uint32_t port, const Packet& p, Time start) {
  static_cast<std::vector<Tx>*>(ctx)->push_back({port, p.tclass, start.ps(), p.wire, p.kind});
}

struct Outcome {
  std::vector<Tx> tx;
  std::vector<int64_t> flows;  // per flow: bytes received, finish (ps)
  std::vector<uint64_t> ports;  // per port and class: fcp_tx, fcp_rx, credit_starved_ps; busy_ps
  uint64_t events = 0;
};

NetworkConfig IbConfig(bool event_each) {
  NetworkConfig cfg;
  cfg.framing = Framing::InfiniBand(4096);
  cfg.nic.data_class = 0;
  cfg.ib.enabled = true;
  cfg.ib.fcp_event_each = event_each;
  cfg.stop_when_flows_done = false;
  return cfg;
}

// Builds, runs until `until` and records. `setup` adds flows and faults.
Outcome Run(const topology::Topology& topo, NetworkConfig cfg, Time until,
            const std::function<void(Network&)>& setup) {
  sim::Simulator sim(7);
  Network net(sim, topo, cfg);
  Outcome o;
  net.set_tx_trace(Record, &o.tx);
  setup(net);
  sim.Run(until);
  for (const FlowStats& f : net.flows()) {
    o.flows.push_back(f.recv_bytes);
    o.flows.push_back(f.done() ? f.finish.ps() : -1);
  }
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const PortStats st = net.port_stats(p);
    for (const ClassStats& c : st.classes) {
      o.ports.push_back(c.fcp_tx);
      o.ports.push_back(c.fcp_rx);
      o.ports.push_back(static_cast<uint64_t>(c.credit_starved_ps));
    }
    o.ports.push_back(static_cast<uint64_t>(st.busy_ps));
  }
  o.events = sim.events_executed();
  return o;
}

// The inbox against an event per FCP: the same run, fewer events.
void ExpectSameRun(const topology::Topology& topo, const NetworkConfig& base, Time until,
                   const std::function<void(Network&)>& setup) {
  NetworkConfig lazy = base, each = base;
  lazy.ib.fcp_event_each = false;
  each.ib.fcp_event_each = true;
  const Outcome a = Run(topo, lazy, until, setup);
  const Outcome b = Run(topo, each, until, setup);
  ASSERT_GT(b.tx.size(), 100u);  // a run with something in it
  ASSERT_EQ(a.tx.size(), b.tx.size());
  for (size_t i = 0; i < a.tx.size(); ++i)
    ASSERT_EQ(a.tx[i], b.tx[i]) << "transmission " << i << " of " << a.tx.size() << " at port "
                                << b.tx[i].port << ", " << b.tx[i].start << " ps";
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.ports, b.ports);
  EXPECT_LT(a.events, b.events);
  std::printf("FCP inbox: %zu transmissions alike, %llu events against %llu with an event per FCP\n",
              a.tx.size(), static_cast<unsigned long long>(a.events),
              static_cast<unsigned long long>(b.events));
}

// 16 hosts, 4 per leaf, 2 spines, 400G, 100 ns links: every leaf sends to the
// next leaf's hosts (a shift permutation, all of it across the spines) and
// hosts 0-3 also into host 5 (an incast that starves credits upstream).
void ShiftAndIncast(Network& net) {
  for (uint32_t h = 0; h < 16; ++h)
    net.AddFlow(FlowSpec::Of(h, (h + 4) % 16, 256 * 1024, Time::Ns(37 * h), 0));
  for (uint32_t h = 0; h < 4; ++h) net.AddFlow(FlowSpec::Of(h, 5, 128 * 1024, Time::Zero(), 0));
}

TEST(FcpInbox, SameRunAsAnEventPerFcpWithAdaptiveRoutingTies) {
  const auto topo = testing::LsRing(16, 4, 2, units::Rate::Gbps(400), Time::Ns(100));
  NetworkConfig cfg = IbConfig(false);
  cfg.routing = RoutingMode::kAdaptive;
  ExpectSameRun(topo, cfg, Time::Us(40), ShiftAndIncast);
}

// A ring (host h to h + 1) of equal flows started together on a symmetric
// fabric: transmissions and FCPs fall on the same picoseconds everywhere.
TEST(FcpInbox, SameRunAsAnEventPerFcpOnASymmetricRing) {
  const auto topo = testing::LsRing(16, 4, 2, units::Rate::Gbps(400), Time::Ns(100));
  NetworkConfig cfg = IbConfig(false);
  cfg.routing = RoutingMode::kAdaptive;
  ExpectSameRun(topo, cfg, Time::Us(40), [](Network& net) {
    for (uint32_t h = 0; h < 16; ++h)
      net.AddFlow(FlowSpec::Of(h, (h + 1) % 16, 512 * 1024, Time::Zero(), 0));
  });
}

TEST(FcpInbox, SameRunAsAnEventPerFcpWhenFcpsAreLost) {
  const auto topo = testing::LsRing(16, 4, 2, units::Rate::Gbps(400), Time::Ns(100));
  NetworkConfig cfg = IbConfig(false);
  cfg.ib.fcp_loss = 0.2;
  ExpectSameRun(topo, cfg, Time::Us(40), ShiftAndIncast);
}

// Host 2 grants VL 1 a single packet, so the switch port facing it waits for
// credit on VL 1 nearly all the time; host 1's VL 1 flow fits in the switch,
// so nothing new arrives to run that port. Single VL 0 packets from host 0
// pass it meanwhile, and their FCPs come back before the next VL 1 credit: a
// wake-up for one of those must leave a wake-up for VL 1 behind.
TEST(FcpInbox, SameRunAsAnEventPerFcpWithAStarvedVlAndFcpsOfAnother) {
  const auto topo = testing::LsRing(3, 3, 1, units::Rate::Gbps(400), Time::Ns(100));
  ExpectSameRun(topo, IbConfig(false), Time::Us(30), [](Network& net) {
    net.SetVlCredits(net.HostPort(2), 1, 65);
    net.AddFlow(FlowSpec::Of(1, 2, 25 * 4096, Time::Zero(), 1));
    for (int k = 0; k < 12; ++k)
      net.AddFlow(FlowSpec::Of(0, 2, 4096, Time::Ns(500 + 1'300 * k), 0));
  });
}

// The link between leaf 0 and spine 0 goes down with FCPs on it and comes up
// again (flow control re-initialised at both ends).
TEST(FcpInbox, SameRunAsAnEventPerFcpAcrossALinkFlap) {
  const auto topo = testing::LsRing(16, 4, 2, units::Rate::Gbps(400), Time::Ns(100));
  ExpectSameRun(topo, IbConfig(false), Time::Us(40), [](Network& net) {
    ShiftAndIncast(net);
    const uint32_t leaf_spine = 16;  // the first leaf-spine link (host links come first)
    net.ScheduleLinkState(leaf_spine, false, Time::Ns(3'000));
    net.ScheduleLinkState(leaf_spine, true, Time::Ns(9'000));
  });
}

// The switch grants host 2 one packet on VL 1 while host 2 sends on VL 0 and
// VL 1, so its NIC waits for VL 1 credit between frames. The credit delay
// (159.4 ns, found by trying the gaps between FCP arrivals and frame ends of
// a first run) puts FCP arrivals on the picoseconds at which host 2's NIC
// ends a frame: the FCP's own event orders after the NIC's, so the NIC must
// not see that credit until it has chosen the next frame (VL 0). Applying
// every FCP due at the same picosecond whatever its key sends VL 1 there.
TEST(FcpInbox, SameRunAsAnEventPerFcpWhenFcpsLandOnTheSendersFrameEnds) {
  const auto topo = testing::LsRing(3, 3, 1, units::Rate::Gbps(400), Time::Ns(100));
  auto setup = [](Network& net) {
    net.SetVlCredits(net.PortPeer(net.HostPort(2)), 1, 65);
    net.AddFlow(FlowSpec::Of(2, 1, 200 * 4096, Time::Zero(), 1));
    net.AddFlow(FlowSpec::Of(2, 0, 200 * 4096, Time::Zero(), 0));
  };
  NetworkConfig cfg = IbConfig(false);
  cfg.ib.credit_delay = Time::Ps(159'400);
  // The ties are there: FCPs from the switch port whose credit becomes
  // usable on the picosecond a frame of host 2 starts.
  sim::Simulator sim(7);
  Network net(sim, topo, cfg);
  std::vector<Tx> tx;
  net.set_tx_trace(Record, &tx);
  setup(net);
  sim.Run(Time::Us(30));
  const uint32_t sender = net.HostPort(2);
  const uint32_t fcp_port = net.PortPeer(sender);
  const int64_t fcp_ps = FrameTimePs(flowctl::kFcpWireBytes + cfg.framing.gap_overhead,
                                     units::Rate::Gbps(400).bps());
  std::vector<int64_t> starts;
  for (const Tx& t : tx)
    if (t.port == sender) starts.push_back(t.start);
  int ties = 0;
  for (const Tx& t : tx) {
    if (t.port != fcp_port || t.kind != PacketKind::kControl) continue;
    const int64_t usable = t.start + fcp_ps + Time::Ns(100).ps() + cfg.ib.credit_delay.ps();
    ties += static_cast<int>(std::count(starts.begin(), starts.end(), usable));
  }
  EXPECT_GT(ties, 10);
  ExpectSameRun(topo, cfg, Time::Us(30), setup);
}

}  // namespace fcp_inbox
}  // namespace
}  // namespace lossless::fabric
