#include "scenario/runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "deadlock/deadlock_detector.hpp"

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
// Samples the network every `interval` (docs/series.md). It is an engine
// entity registered after the network's, so at equal times it runs after
// every network event: sample k sees the state at the end of t_k.
class Sampler final : public sim::EventHandler {
 public:
  enum class Kind : uint8_t { kQueue, kUtil, kPause, kCnp, kGoodput, kRate, kTarget, kAlpha };
  struct Source {
    Kind kind;
    uint32_t index;    // port or flow
    int64_t prev = 0;  // counter value at the previous sample
    std::vector<double> values;
  };

  Sampler(sim::Simulator& sim, const fabric::Network& net, const SeriesSpec& spec, units::Time stop,
          int data_class)
      : sim_(sim),
        net_(net),
        spec_(spec),
        entity_(sim.AddEntity()),
        interval_ps_(spec.interval.ps()),
        stop_ps_(stop.ps()),
        data_class_(data_class) {}

  void AddPort(uint32_t p) {
    for (Kind k : {Kind::kQueue, Kind::kUtil, Kind::kPause, Kind::kCnp})
      sources_.push_back({k, p, 0, {}});
  }
  void AddFlow(uint32_t f, bool rate) {
    sources_.push_back({Kind::kGoodput, f, 0, {}});
    if (rate)
      for (Kind k : {Kind::kRate, Kind::kTarget, Kind::kAlpha}) sources_.push_back({k, f, 0, {}});
  }
  size_t num_sources() const { return sources_.size(); }
  void Start() {
    if (interval_ps_ <= stop_ps_) sim_.Schedule(units::Time::Ps(interval_ps_), entity_, this, 0, 0);
  }
  std::vector<Source>& sources() { return sources_; }
  int64_t samples() const { return k_; }

  void OnEvent(uint32_t, uint64_t) override {
    const int64_t held = static_cast<int64_t>(sources_.size()) * (k_ + 1);
    if (held > spec_.max_values) {
      // Bounded memory: end the run with an error rather than grow without limit.
      throw InputError(
          spec_.where,
          fmt::format("expected at most {} series values in memory (series x samples), got {} "
                      "series x {} samples by {}: raise the interval, lower stop_time, or select "
                      "fewer with outputs.series.ports / outputs.series.flows",
                      spec_.max_values, sources_.size(), k_ + 1,
                      units::FormatTime(units::Time::Ps((k_ + 1) * interval_ps_))));
    }
    ++k_;
    const double iv = static_cast<double>(interval_ps_);
    for (auto& src : sources_) {
      int64_t now_value = 0;
      double v = 0;
      switch (src.kind) {
        case Kind::kQueue:
          v = static_cast<double>(net_.QueueBytes(src.index, data_class_));
          break;
        case Kind::kUtil:
          now_value = net_.port_stats(src.index).busy_ps;
          v = static_cast<double>(now_value - src.prev) / iv;
          break;
        case Kind::kPause:
          now_value = static_cast<int64_t>(net_.port_stats(src.index).pause_tx);
          v = static_cast<double>(now_value - src.prev);
          break;
        case Kind::kCnp:
          now_value = static_cast<int64_t>(net_.port_stats(src.index).cnp_tx);
          v = static_cast<double>(now_value - src.prev);
          break;
        case Kind::kGoodput:
          // bytes x 8 / ps x 1000 = Gb/s
          now_value = net_.flows()[src.index].recv_bytes;
          v = static_cast<double>(now_value - src.prev) * 8000.0 / iv;
          break;
        case Kind::kRate:
          v = net_.ReactionPoint(src.index).rate_bps() / 1e9;
          break;
        case Kind::kTarget:
          v = net_.ReactionPoint(src.index).target_rate_bps() / 1e9;
          break;
        case Kind::kAlpha:
          v = net_.ReactionPoint(src.index).alpha();
          break;
      }
      src.prev = now_value;
      src.values.push_back(v);
    }
    // Never keep an otherwise finished run alive: stop when nothing else is pending.
    const int64_t next = (k_ + 1) * interval_ps_;
    if (next <= stop_ps_ && sim_.pending() > 0)
      sim_.Schedule(units::Time::Ps(next), entity_, this, 0, 0);
  }

 private:
  sim::Simulator& sim_;
  const fabric::Network& net_;
  const SeriesSpec& spec_;
  uint32_t entity_;
  int64_t interval_ps_, stop_ps_;
  int data_class_;
  int64_t k_ = 0;
  std::vector<Source> sources_;
};

std::string Trim(std::string x) {
  const auto b = x.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return x.substr(b, x.find_last_not_of(" \t") - b + 1);
}

void SummarizeSeries(Series& x) {
  if (x.values.empty()) return;
  x.min = *std::min_element(x.values.begin(), x.values.end());
  x.max = *std::max_element(x.values.begin(), x.values.end());
  double sum = 0;
  for (double v : x.values) sum += v;
  x.mean = sum / static_cast<double>(x.values.size());
}

SeriesResult CollectSeries(const Scenario& s, const fabric::Network& net,
                           const topology::Topology& topo, Sampler& sampler) {
  SeriesResult out;
  out.interval = s.series.interval;
  out.samples = sampler.samples();
  const bool busy_only = s.series.ports == "busy";
  std::vector<bool> quiet(net.num_ports(), false);
  if (busy_only) {
    for (uint32_t p = 0; p < net.num_ports(); ++p) {
      const auto& st = net.port_stats(p);
      quiet[p] = st.tx_packets == 0 && st.pause_tx == 0;
      out.quiet_ports += quiet[p] ? 1 : 0;
    }
  }
  auto host_name = [&](uint32_t rank) { return topo.nodes[topo.hosts[rank]].name; };
  for (auto& src : sampler.sources()) {
    Series x;
    using K = Sampler::Kind;
    const bool port = src.kind == K::kQueue || src.kind == K::kUtil || src.kind == K::kPause ||
                      src.kind == K::kCnp;
    if (port && quiet[src.index]) continue;
    if (port) {
      x.subject = net.PortName(src.index);
    } else {
      const auto& f = net.flows()[src.index].spec;
      x.subject = fmt::format("flow {} {}->{}", src.index, host_name(f.src), host_name(f.dst));
    }
    switch (src.kind) {
      case K::kQueue:
        x.kind = "queue_bytes", x.unit = "B", x.integral = true;
        break;
      case K::kUtil:
        x.kind = "utilization", x.unit = "fraction";
        break;
      case K::kPause:
        x.kind = "pause_frames", x.unit = "frames", x.integral = true;
        break;
      case K::kCnp:
        x.kind = "cnps", x.unit = "CNPs", x.integral = true;
        break;
      case K::kGoodput:
        x.kind = "goodput_gbps", x.unit = "Gb/s";
        break;
      case K::kRate:
        x.kind = "dcqcn_rate_gbps", x.unit = "Gb/s";
        break;
      case K::kTarget:
        x.kind = "dcqcn_target_gbps", x.unit = "Gb/s";
        break;
      case K::kAlpha:
        x.kind = "dcqcn_alpha", x.unit = "fraction";
        break;
    }
    x.values = std::move(src.values);
    SummarizeSeries(x);
    out.list.push_back(std::move(x));
  }
  return out;
}

}  // namespace

std::vector<uint32_t> SeriesPorts(const Scenario& s, const topology::Topology& t) {
  // Port 2l sends from links[l].a to links[l].b, port 2l + 1 back (as in
  // fabric::Network, whose PortName gives the same "a->b" text).
  const uint32_t n_ports = static_cast<uint32_t>(2 * t.links.size());
  auto name = [&](uint32_t p) {
    const topology::Link& l = t.links[p / 2];
    const uint32_t from = p % 2 ? l.b : l.a, to = p % 2 ? l.a : l.b;
    return t.nodes[from].name + "->" + t.nodes[to].name;
  };
  std::vector<uint32_t> out;
  const std::string& sel = s.series.ports;
  if (sel == "none") return out;
  if (sel == "all" || sel == "busy") {
    for (uint32_t p = 0; p < n_ports; ++p) out.push_back(p);
    return out;
  }
  std::stringstream ss(sel);
  for (std::string want; std::getline(ss, want, ',');) {
    want = Trim(want);
    const size_t before = out.size();
    for (uint32_t p = 0; p < n_ports; ++p)
      if (name(p) == want && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    if (out.size() == before) {
      std::vector<std::string> names;
      for (uint32_t p = 0; p < n_ports && names.size() < 4; ++p) names.push_back(name(p));
      throw InputError(
          s.series.ports_where,
          Expected(fmt::format("busy, all, none or comma-separated link directions of this "
                               "topology such as {}",
                               fmt::join(names, ", ")),
                   want));
    }
  }
  return out;
}

RunResult RunScenario(const Scenario& s, const RunHooks& hooks) {
  auto t0 = std::chrono::steady_clock::now();
  topology::Topology topo = BuildTopology(s);
  sim::Simulator sim(s.seed);
  fabric::Network net(sim, topo, s.net);
  std::unique_ptr<deadlock::DeadlockDetector> detector;
  if (s.deadlock.detect && s.net.pfc.enabled) {
    detector =
        std::make_unique<deadlock::DeadlockDetector>(sim, net, s.deadlock.persist, s.deadlock.stop);
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
  CheckFaults(s, topo, flows.size());
  std::vector<uint32_t> inject_ports;
  for (const auto& p : s.pause_inject) {
    inject_ports.push_back(PauseInjectionPort(p, topo));
    net.InjectPause(inject_ports.back(), p.class_enable, p.quanta, p.at);
  }
  for (const auto& c : s.cnp_inject)
    for (units::Time at : c.at) net.InjectCnp(static_cast<uint32_t>(c.flow), at);
  if (hooks.before_run) hooks.before_run(net);
  std::unique_ptr<Sampler> sampler;
  if (s.series.interval.ps() > 0) {
    sampler = std::make_unique<Sampler>(sim, net, s.series, s.stop_time, s.net.nic.data_class);
    for (uint32_t p : SeriesPorts(s, topo)) sampler->AddPort(p);
    if (s.series.flows)
      for (uint32_t f = 0; f < net.flows().size(); ++f) sampler->AddFlow(f, s.net.dcqcn);
    sampler->Start();
  }
  RunResult r;
  r.timing.build_s = Since(t0);
  auto t1 = std::chrono::steady_clock::now();
  sim::StopReason why = sim.Run(s.stop_time);
  r.timing.run_s = Since(t1);
  if (sampler) r.series = CollectSeries(s, net, topo, *sampler);

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
  r.cc = s.net.ib_cc ? "ib-cc" : s.net.dcqcn ? "dcqcn" : "none";
  r.cnps = net.cnps_sent();
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
    r.fcp_frames += st.fcp_tx;
    const double starved = static_cast<double>(st.credit_starved_ps) / horizon;
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
    if (st.pause_tx + st.pause_rx + st.ecn_marks + st.drops + st.cnp_tx + st.wd_actions +
                st.pause_storm_warnings + st.fcp_tx + st.fcp_rx >
            0 ||
        net.PausedPsUntilNow(p) > 0 || st.credit_starved_ps > 0) {
      PortCounters pc{net.PortName(p),   st.pause_tx,
                      st.pause_rx,       static_cast<double>(net.PausedPsUntilNow(p)) / horizon,
                      st.ecn_marks,      st.drops,
                      st.lossless_drops, st.cnp_tx};
      pc.fcp_tx = st.fcp_tx;
      pc.fcp_rx = st.fcp_rx;
      pc.credit_starved_fraction = starved;
      pc.watchdog_actions = st.wd_actions;
      pc.watchdog_drops = st.wd_drops;
      if (st.wd_first_action_ps >= 0) pc.watchdog_first = units::Time::Ps(st.wd_first_action_ps);
      pc.rx_stall_drops = st.rx_stall_drops;
      pc.pause_storm_warnings = st.pause_storm_warnings;
      pc.pause_storm_errors = st.pause_storm_errors;
      for (int c = 0; c < fabric::kMaxClasses; ++c) {
        const fabric::ClassStats& cs = st.classes[static_cast<size_t>(c)];
        const int64_t paused_ps = net.PausedPsUntilNow(p, c);
        if (!cs.Any() && paused_ps == 0) continue;
        pc.classes.push_back({c, cs.pause_tx, cs.pause_rx, static_cast<double>(paused_ps) / horizon,
                              static_cast<double>(cs.credit_starved_ps) / horizon, cs.ecn_marks,
                              cs.cnp_tx, cs.drops, cs.lossless_drops, cs.wd_drops, cs.fcp_tx,
                              cs.fcp_rx});
      }
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
  auto host_name = [&](uint32_t rank) { return topo.nodes[topo.hosts[rank]].name; };
  for (size_t i = 0; i < s.pause_inject.size(); ++i) {
    const PauseInjection& inj = s.pause_inject[i];
    const uint32_t port = inject_ports[i], peer = net.PortPeer(port);
    PauseInjectReport pr{
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
