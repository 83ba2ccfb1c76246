#include "run/runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <span>

#include <fmt/format.h>

#include "base/error.hpp"
#include "deadlock/deadlock_detector.hpp"
#include "fault/fault.hpp"
#include "report/series.hpp"
#include "run/captures.hpp"
#include "workload/tenants.hpp"
#include "workload/traffic.hpp"

namespace lossless::run {

using report::RunResult;

double PeakRssMb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

namespace {
double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

report::Percentiles Summarize(std::vector<units::Time> v) {
  report::Percentiles p;
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

// Port counters, link use and their totals.
void GatherPorts(const fabric::Network& net, RunResult& r) {
  double sum = 0;
  int used = 0;
  std::vector<report::LinkUse> uses;
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const auto& st = net.port_stats(p);
    r.drops += st.drops;
    r.lossless_drops += st.lossless_drops;
    r.lossless_drops_after_restore += st.lossless_drops_after_restore;
    r.ecn_marks += st.ecn_marks;
    r.pause_frames += st.pause_tx;
    r.fcp_frames += st.fcp_tx;
    const double starved = report::FractionOfRun(st.credit_starved_ps, r);
    if (starved > r.max_credit_starved_fraction) {
      r.max_credit_starved_fraction = starved;
      r.most_credit_starved = net.PortName(p);
    }
    r.watchdog_actions += st.wd_actions;
    r.watchdog_drops += st.wd_drops;
    if (st.wd_first_action_ps >= 0)
      r.watchdog_first = std::min(r.watchdog_first, units::Time::Ps(st.wd_first_action_ps));
    r.pause_storm_errors += st.pause_storm_errors;
    r.rx_stall_drops += st.rx_stall_drops;
    const int64_t paused_ps = net.PausedPsUntilNow(p);
    if (st.pause_tx + st.pause_rx + st.ecn_marks + st.drops + st.cnp_tx + st.wd_actions +
                st.pause_storm_warnings + st.fcp_tx + st.fcp_rx >
            0 ||
        paused_ps > 0 || st.credit_starved_ps > 0) {
      report::PortCounters pc{net.PortName(p), st};
      pc.stats.paused_ps = paused_ps;
      for (int c = 0; c < fabric::kMaxClasses; ++c)
        pc.stats.classes[static_cast<size_t>(c)].paused_ps = net.PausedPsUntilNow(p, c);
      r.ports.push_back(std::move(pc));
    }
    const double paused = report::FractionOfRun(paused_ps, r);
    if (paused > r.max_paused_fraction) {
      r.max_paused_fraction = paused;
      r.most_paused = net.PortName(p);
    }
    if (st.tx_packets == 0) continue;
    const double u = report::FractionOfRun(net.BusyPsUntilNow(p), r);
    sum += u;
    ++used;
    uses.push_back({net.PortName(p), u});
  }
  r.drops = net.drops();
  r.mean_link_utilization = used ? sum / used : 0;
  std::stable_sort(uses.begin(), uses.end(),
                   [](const report::LinkUse& a, const report::LinkUse& b) {
                     return a.utilization > b.utilization;
                   });
  if (!uses.empty()) r.max_link_utilization = uses.front().utilization;
  uses.resize(std::min<size_t>(uses.size(), 5));
  r.busiest = std::move(uses);
}

// What the injected PFC frames and CNPs did.
void GatherInjections(const scenario::Scenario& s, const fabric::Network& net,
                      const topology::Topology& topo, const std::vector<uint32_t>& inject_ports,
                      RunResult& r) {
  auto host_name = [&](uint32_t rank) { return topo.nodes[topo.hosts[rank]].name; };
  for (size_t i = 0; i < s.pause_inject.size(); ++i) {
    const scenario::PauseInjection& inj = s.pause_inject[i];
    const uint32_t port = inject_ports[i], peer = net.PortPeer(port);
    report::PauseInjectReport pr{
        net.PortName(port),
        inj.at,
        inj.class_enable,
        inj.quanta,
        units::SerializationTime(units::Bytes(int64_t{inj.quanta} * 64), topo.links[port / 2].rate),
        net.PortName(peer),
        {}};
    for (unsigned m = inj.class_enable & s.net.pfc.priorities; m != 0; m &= m - 1) {
      const int c = __builtin_ctz(m);
      pr.receiver_paused_ps.emplace_back(c, net.PausedPsUntilNow(peer, c));
    }
    r.pause_injections.push_back(std::move(pr));
  }
  for (const auto& c : s.cnp_inject) {
    const uint32_t f = static_cast<uint32_t>(c.flow);
    const auto& spec = net.flows()[f].spec;
    const cc::DcqcnReactionPoint& rp = net.ReactionPoint(f);
    r.cnp_injections.push_back(
        {f, fmt::format("flow {} {}->{}", f, host_name(spec.src), host_name(spec.dst)),
         static_cast<uint64_t>(c.at.size()), c.at.front(), c.at.back(), rp.rate_bps() / 1e9,
         rp.target_rate_bps() / 1e9, rp.alpha(), rp.cuts(), rp.increase_events()});
  }
}

}  // namespace

std::string DigestText(const std::vector<EntityDigestLine>& lines) {
  uint64_t events = 0;
  for (const EntityDigestLine& l : lines) events += l.digest.events;
  std::string out = fmt::format(
      "digest: {} entities ran {} events (entity, name, events, digest)\n", lines.size(), events);
  for (const EntityDigestLine& l : lines)
    out += fmt::format("{} {} {} {:016x}\n", l.entity, l.name, l.digest.events, l.digest.sum);
  return out;
}

RunResult RunScenario(const scenario::Scenario& s, const RunHooks& hooks) {
  const AllocationContext context("simulating " + s.file);
  auto t0 = std::chrono::steady_clock::now();
  topology::Topology topo = scenario::BuildTopology(s);
  sim::Simulator sim(s.seed);
  fabric::Network net(sim, topo, s.net);
  // outputs.pcap, outputs.trace: before the flows, whose first packets may leave at once.
  Captures captures(s, topo, net, true, hooks.engine ? hooks.capture_rank : -1);
  std::unique_ptr<deadlock::DeadlockDetector> detector;
  if (s.deadlock.detect && s.net.pfc.enabled) {
    detector =
        std::make_unique<deadlock::DeadlockDetector>(sim, net, s.deadlock.persist, s.deadlock.stop);
  }
  auto flows = workload::ExpandTraffic(s, static_cast<uint32_t>(topo.hosts.size()), &topo);
  for (fabric::FlowSpec f : flows) {
    f.rc = s.rc;
    net.AddFlow(f);
  }
  const fault::Plan faults = fault::FromScenario(s, topo, flows.size());
  fault::Apply(faults, net);
  std::vector<uint32_t> inject_ports;
  for (const fault::PauseInjection& p : faults.pause) inject_ports.push_back(p.port);
  // Other tenants' bursts (tenants.load > 0) until the job's flows are done
  // or stop_time; their queue pairs come after the job's flows.
  workload::TenantTraffic tenants(sim, net,
                                  {s.shared.tenant_load, s.shared.tenant_burst, s.stop_time});
  if (hooks.before_run) hooks.before_run(net);
  if (hooks.digests != nullptr) sim.EnableDigests();
  std::unique_ptr<report::SeriesSampler> sampler;
  if (s.series.interval.ps() > 0) {
    sampler = std::make_unique<report::SeriesSampler>(
        sim, net,
        report::SamplerConfig{s.series.interval, s.stop_time, s.net.nic.data_class,
                              s.series.max_values, s.series.where});
    for (uint32_t p : scenario::SeriesPorts(s, topo)) sampler->AddPort(p);
    if (s.series.flows)
      for (uint32_t f = 0; f < net.flows().size(); ++f) sampler->AddFlow(f, s.net.dcqcn);
    if (!hooks.engine) sampler->Start();
  }
  RunResult r;
  r.timing.build_s = Since(t0);
  auto t1 = std::chrono::steady_clock::now();
  sim::StopReason why;
  bool interrupted = false;
  EngineOutcome dist;
  if (hooks.engine) {
    const bool capturing = !s.capture.pcap.empty() || !s.capture.trace.empty();
    dist = hooks.engine(
        sim, net, flows,
        EngineParts{sampler.get(), detector.get(), &tenants, capturing ? &captures : nullptr});
    why = dist.why;
  } else if (hooks.between_slices) {
    // Slices of events: Run() resumes exactly where the event limit left it.
    const uint64_t job_flows = flows.size();
    while ((why = sim.Run(s.stop_time, kEventsPerSlice)) == sim::StopReason::kEventLimit) {
      if (!hooks.between_slices({sim.Now(), s.stop_time, net.flows_done(), job_flows})) {
        interrupted = true;
        break;
      }
    }
  } else {
    why = sim.Run(s.stop_time);
  }
  r.timing.run_s = Since(t1);
  if (hooks.digests != nullptr) {
    hooks.digests->clear();
    const std::vector<sim::EntityDigest>& d = hooks.engine ? dist.digests : sim.digests();
    for (uint32_t e = 0; e < d.size(); ++e) {
      if (d[e].events == 0) continue;
      std::string name = net.EntityName(e);
      if (name.empty()) name = fmt::format("entity {}", e);
      hooks.digests->push_back({e, std::move(name), d[e]});
    }
  }
  if (sampler) r.series = sampler->Collect(topo, s.series.ports == "busy");

  r.name = s.name;
  r.warnings = s.warnings;
  r.preset = s.preset;
  r.seed = s.seed;
  r.topology = topo.description;
  r.hosts = static_cast<uint32_t>(topo.hosts.size());
  r.switches = static_cast<uint32_t>(topo.nodes.size() - topo.hosts.size());
  r.links = static_cast<uint32_t>(topo.links.size());
  r.routing = fabric::RoutingModeName(s.net.routing);
  r.ib_credits = s.net.ib.enabled;
  if (s.net.pfc.enabled && !s.net.ib.enabled) {
    r.pfc_headroom = s.net.pfc.headroom.count();
    r.pfc_headroom_basis = s.pfc_headroom_basis;
  }
  r.cc = s.net.ib_cc ? "ib-cc" : s.net.dcqcn ? "dcqcn" : "none";
  r.cnps = net.cnps_sent();
  const std::span<const fabric::FlowStats> job(net.flows().data(), flows.size());
  r.flows = job.size();
  r.flows_done = net.flows_done();
  const bool deadlocked = detector && detector->first() && s.deadlock.stop &&
                          why == sim::StopReason::kStopped && r.flows_done < r.flows;
  r.interrupted = interrupted;
  r.stop_reason = interrupted                          ? "interrupted"
                  : r.flows_done == r.flows            ? "completed"
                  : net.qp_failure() != nullptr        ? "QP failed"
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
  // Where the results go is not part of what was simulated: two runs that
  // differ only in their output paths give the same JSON.
  for (const auto& kv : s.resolved)
    if (kv.first != "outputs.json" && kv.first != "outputs.series_csv" &&
        kv.first != "outputs.pcap" && kv.first != "outputs.trace")
      r.parameters.push_back(kv);
  r.per_flow_listed = job.size() <= static_cast<uint64_t>(s.per_flow_limit);
  if (r.per_flow_listed) r.per_flow.reserve(job.size());
  for (const auto& f : job) {
    if (r.per_flow_listed) {
      r.per_flow.push_back({f.spec.src, f.spec.dst, f.spec.bytes, f.spec.start, f.done(),
                            f.done() ? f.fct() : units::Time(),
                            f.done() ? 0 : std::max<int64_t>(0, f.spec.bytes - f.recv_bytes)});
    }
    if (f.done()) {
      fcts.push_back(f.fct());
    } else {
      ++r.flows_unfinished;
      r.bytes_left += std::max<int64_t>(0, f.spec.bytes - f.recv_bytes);
    }
    r.max_packet_latency = std::max(r.max_packet_latency, f.max_latency);
  }
  r.fct = Summarize(std::move(fcts));
  r.transport = s.rc ? "rc" : "raw";
  for (const auto& f : job) {
    r.retx_packets += f.retx_packets;
    r.naks += f.naks;
    r.ack_timeouts += f.timeouts;
  }
  r.link_losses = net.link_losses();
  if (const fabric::QpFailure* q = net.qp_failure()) r.qp_failure = q->what;
  GatherPorts(net, r);
  GatherInjections(s, net, topo, inject_ports, r);
  r.packets = net.packets_created();
  r.packet_hops = net.packet_hops();
  r.events = hooks.engine ? dist.events : sim.events_executed();
  r.peak_packets_alive = net.peak_packets_alive();
  r.bytes_per_packet = fabric::PacketPool::kBytesPerPacket;
  r.timing.packet_hops_per_s =
      r.timing.run_s > 0 ? static_cast<double>(r.packet_hops) / r.timing.run_s : 0;
  captures.Finish(r, sim.Now());
  r.timing.peak_rss_mb = PeakRssMb();
  return r;
}

}  // namespace lossless::run
