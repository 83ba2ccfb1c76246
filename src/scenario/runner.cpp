#include "scenario/runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "flowctl/deadlock_detector.hpp"

namespace lossless::scenario {

double PeakRssMb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

namespace {
double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Percentiles Summarize(std::vector<units::Time> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    // Nearest rank: the smallest value with at least q of the samples at or below it.
    size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  p.min = v.front();
  p.max = v.back();
  p.median = at(0.5);
  p.p99 = at(0.99);
  double sum = 0;  // mean in double: exact to well under a picosecond for run-length times
  for (auto t : v) sum += static_cast<double>(t.ps());
  p.mean = units::Time::Ps(std::llround(sum / static_cast<double>(v.size())));
  return p;
}
}  // namespace

RunResult RunScenario(const Scenario& s) {
  auto t0 = std::chrono::steady_clock::now();
  topology::Topology topo = BuildTopology(s);
  sim::Simulator sim(s.seed);
  fabric::Network net(sim, topo, s.net);
  std::unique_ptr<flowctl::DeadlockDetector> detector;
  if (s.deadlock.detect && s.net.pfc.enabled) {
    detector =
        std::make_unique<flowctl::DeadlockDetector>(sim, net, s.deadlock.persist, s.deadlock.stop);
  }
  auto flows = ExpandTraffic(s, static_cast<uint32_t>(topo.hosts.size()), &topo);
  for (const auto& f : flows) net.AddFlow(f);
  if (s.nic_stall.host >= 0) {
    if (s.nic_stall.host >= static_cast<int64_t>(topo.hosts.size())) {
      throw InputError(s.nic_stall.where, fmt::format("expected a host rank below {}, got {}",
                                                      topo.hosts.size(), s.nic_stall.host));
    }
    net.StallNicReceive(static_cast<uint32_t>(s.nic_stall.host), s.nic_stall.at, s.nic_stall.until);
  }
  RunResult r;
  r.timing.build_s = Since(t0);
  auto t1 = std::chrono::steady_clock::now();
  sim::StopReason why = sim.Run(s.stop_time);
  r.timing.run_s = Since(t1);

  r.name = s.name;
  r.warnings = s.warnings;
  r.preset = s.preset;
  r.seed = s.seed;
  r.topology = topo.description;
  r.hosts = static_cast<uint32_t>(topo.hosts.size());
  r.switches = static_cast<uint32_t>(topo.nodes.size() - topo.hosts.size());
  r.links = static_cast<uint32_t>(topo.links.size());
  r.routing = fabric::RoutingModeName(s.net.routing);
  r.flows = net.flows().size();
  r.flows_done = net.flows_done();
  const bool deadlocked = detector && detector->first() && s.deadlock.stop &&
                          why == sim::StopReason::kStopped && r.flows_done < r.flows;
  r.stop_reason = r.flows_done == r.flows              ? "completed"
                  : deadlocked                         ? "deadlock"
                  : why == sim::StopReason::kTimeLimit ? "time limit"
                                                       : "flows incomplete";
  if (detector) {
    r.deadlock.enabled = true;
    r.deadlock.count = detector->count();
    if (const auto& v = detector->first()) {
      r.deadlock.formed = v->formed;
      r.deadlock.detected = v->detected;
      r.deadlock.cycle = v->labels;
    }
  }
  r.sim_time = sim.Now();
  std::vector<units::Time> fcts;
  for (const auto& f : net.flows()) {
    if (f.done()) fcts.push_back(f.fct());
    r.max_packet_latency = std::max(r.max_packet_latency, f.max_latency);
  }
  r.fct = Summarize(std::move(fcts));
  double sum = 0;
  int used = 0;
  std::vector<LinkUse> uses;
  const double horizon = static_cast<double>(std::max<int64_t>(1, r.sim_time.ps()));
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const auto& st = net.port_stats(p);
    r.drops += st.drops;
    r.lossless_drops += st.lossless_drops;
    r.ecn_marks += st.ecn_marks;
    r.pause_frames += st.pause_tx;
    r.watchdog_actions += st.wd_actions;
    r.watchdog_drops += st.wd_drops;
    if (st.wd_first_action_ps >= 0)
      r.watchdog_first = std::min(r.watchdog_first, units::Time::Ps(st.wd_first_action_ps));
    r.pause_storm_errors += st.pause_storm_errors;
    r.rx_stall_drops += st.rx_stall_drops;
    if (st.pause_tx + st.pause_rx + st.ecn_marks + st.drops + st.cnp_tx + st.wd_actions +
                st.pause_storm_warnings >
            0 ||
        net.PausedPsUntilNow(p) > 0) {
      PortCounters pc{net.PortName(p),   st.pause_tx,
                      st.pause_rx,       static_cast<double>(net.PausedPsUntilNow(p)) / horizon,
                      st.ecn_marks,      st.drops,
                      st.lossless_drops, st.cnp_tx};
      pc.watchdog_actions = st.wd_actions;
      pc.watchdog_drops = st.wd_drops;
      if (st.wd_first_action_ps >= 0) pc.watchdog_first = units::Time::Ps(st.wd_first_action_ps);
      pc.rx_stall_drops = st.rx_stall_drops;
      pc.pause_storm_warnings = st.pause_storm_warnings;
      pc.pause_storm_errors = st.pause_storm_errors;
      r.ports.push_back(std::move(pc));
    }
    double paused = static_cast<double>(net.PausedPsUntilNow(p)) / horizon;
    if (paused > r.max_paused_fraction) {
      r.max_paused_fraction = paused;
      r.most_paused = net.PortName(p);
    }
    if (st.tx_packets == 0) continue;
    double u = static_cast<double>(st.busy_ps) / horizon;
    sum += u;
    ++used;
    uses.push_back({net.PortName(p), u});
  }
  r.drops = net.drops();
  r.mean_link_utilization = used ? sum / used : 0;
  std::stable_sort(uses.begin(), uses.end(), [](const LinkUse& a, const LinkUse& b) {
    return a.utilization > b.utilization;
  });
  if (!uses.empty()) r.max_link_utilization = uses.front().utilization;
  uses.resize(std::min<size_t>(uses.size(), 5));
  r.busiest = std::move(uses);
  r.packets = net.packets_created();
  r.packet_hops = net.packet_hops();
  r.events = sim.events_executed();
  r.peak_packets_alive = net.peak_packets_alive();
  r.bytes_per_packet = fabric::PacketPool::kBytesPerPacket;
  r.timing.packet_hops_per_s =
      r.timing.run_s > 0 ? static_cast<double>(r.packet_hops) / r.timing.run_s : 0;
  r.timing.peak_rss_mb = PeakRssMb();
  return r;
}

}  // namespace lossless::scenario
