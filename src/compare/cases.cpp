#include "compare/cases.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>

#include <fmt/format.h>

#include "fabric/network.hpp"
#include "perf/options.hpp"
#include "run/perf_run.hpp"
#include "run/runner.hpp"
#include "sim/simulator.hpp"
#include "workload/tenants.hpp"

namespace lossless::compare {
namespace {

using units::Time;

double Us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

// The switch a host's NIC is cabled to.
uint32_t EdgeOf(const fabric::Network& net, uint32_t host) {
  return net.PortNode(net.PortPeer(net.HostPort(host)));
}

std::string HostName(const topology::Topology& t, uint32_t host) {
  return t.nodes[t.hosts[host]].name;
}

fabric::FlowSpec Qp(uint32_t src, uint32_t dst) {
  fabric::FlowSpec f = fabric::FlowSpec::Of(src, dst, 0);
  f.rc = true;
  return f;
}

// Ping-pong driver: a write on `ab` arriving posts the reply on `ba`; the
// reply arriving closes a round trip and posts the next write.
class PingPong final : public fabric::TransportObserver {
 public:
  PingPong(sim::Simulator& sim, fabric::Network& net, uint32_t a, uint32_t b, int64_t bytes,
           int64_t samples)
      : sim_(sim), net_(net), bytes_(bytes), samples_(samples) {
    ab_ = net.AddQp(Qp(a, b));
    ba_ = net.AddQp(Qp(b, a));
    net.set_transport_observer(this);
  }
  void Start() { Post(); }
  void OnSendComplete(uint32_t, uint64_t, Time) override {}
  void OnRecvComplete(uint32_t qp, Time at) override {
    if (qp == ab_) {
      net_.PostSend(ba_, bytes_, 0);
      return;
    }
    if (qp != ba_) return;
    rtt_half_us_.push_back(Us(at - posted_) / 2);
    if (static_cast<int64_t>(rtt_half_us_.size()) >= samples_) {
      sim_.Stop();
      return;
    }
    Post();
  }
  std::vector<double> samples() const { return rtt_half_us_; }

 private:
  void Post() {
    posted_ = sim_.Now();
    net_.PostSend(ab_, bytes_, 0);
  }
  sim::Simulator& sim_;
  fabric::Network& net_;
  int64_t bytes_, samples_;
  uint32_t ab_ = 0, ba_ = 0;
  Time posted_;
  std::vector<double> rtt_half_us_;
};

// Incast driver: posts victim probes, samples the timeline, and stops the
// run once the incast and the victim are done and no probe is in flight.
class IncastDriver final : public fabric::TransportObserver, public sim::EventHandler {
 public:
  IncastDriver(sim::Simulator& sim, fabric::Network& net, std::vector<uint32_t> watched,
               uint32_t probe_qp, Time every, uint32_t timeline_port, bool ib)
      : sim_(sim),
        net_(net),
        watched_(std::move(watched)),
        probe_qp_(probe_qp),
        every_(every),
        timeline_port_(timeline_port),
        ib_(ib),
        entity_(sim.AddEntity()),
        held_prev_(net.num_ports(), 0),
        held_(net.num_ports()) {
    net.set_transport_observer(this);
  }
  void Start() { sim_.Schedule(sim_.Now(), entity_, this, 0, 0); }

  void OnSendComplete(uint32_t, uint64_t, Time) override {}
  void OnRecvComplete(uint32_t qp, Time at) override {
    if (qp != probe_qp_ || posted_.empty()) return;
    latency_us_.push_back(Us(at - posted_.front()));
    posted_.pop_front();
    if (finished_ && posted_.empty()) sim_.Stop();
  }
  void OnEvent(uint32_t, uint64_t) override {
    const bool all_done = std::all_of(watched_.begin(), watched_.end(), [&](uint32_t f) {
      return net_.flows()[f].done();
    });
    if (!all_done && tick_++ % stride_ == 0) Sample();
    if (all_done) {
      finished_ = true;
      if (posted_.empty()) sim_.Stop();
      return;
    }
    posted_.push_back(sim_.Now());
    net_.PostSend(probe_qp_, 64, 0);
    sim_.Schedule(sim_.Now() + every_, entity_, this, 0, 0);
  }

  static constexpr int64_t kMaxSamples = 4000;
  const std::vector<double>& latency_us() const { return latency_us_; }
  int64_t stride() const { return stride_; }  // probe intervals per sample
  const std::vector<double>& queue() const { return queue_; }
  const std::vector<std::vector<float>>& held() const { return held_; }
  int64_t samples() const { return samples_; }

 private:
  // A long incast keeps its whole timeline: at kMaxSamples, pairs of
  // samples merge (the larger queue, the summed held time) and the stride
  // doubles.
  void Sample() {
    if (samples_ == kMaxSamples) {
      const size_t half = static_cast<size_t>(kMaxSamples / 2);
      for (size_t k = 0; k < half; ++k) queue_[k] = std::max(queue_[2 * k], queue_[2 * k + 1]);
      queue_.resize(half);
      for (auto& h : held_) {
        for (size_t k = 0; k < half; ++k) h[k] = h[2 * k] + h[2 * k + 1];
        h.resize(half);
      }
      samples_ = kMaxSamples / 2;
      stride_ *= 2;
    }
    ++samples_;
    queue_.push_back(static_cast<double>(net_.QueueBytes(timeline_port_, net_.config().nic.data_class)));
    for (uint32_t p = 0; p < net_.num_ports(); ++p) {
      const int64_t now = ib_ ? net_.port_stats(p).credit_starved_ps : net_.PausedPsUntilNow(p);
      held_[p].push_back(static_cast<float>(now - held_prev_[p]));
      held_prev_[p] = now;
    }
  }

  sim::Simulator& sim_;
  fabric::Network& net_;
  std::vector<uint32_t> watched_;
  uint32_t probe_qp_;
  Time every_;
  uint32_t timeline_port_;
  bool ib_;
  uint32_t entity_;
  bool finished_ = false;
  int64_t samples_ = 0;
  int64_t tick_ = 0, stride_ = 1;
  std::deque<Time> posted_;
  std::vector<double> latency_us_;
  std::vector<double> queue_;
  std::vector<int64_t> held_prev_;
  std::vector<std::vector<float>> held_;  // per port, held ps in each sample interval
};

}  // namespace

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const size_t i = static_cast<size_t>(std::max(1.0, rank)) - 1;
  return v[std::min(i, v.size() - 1)];
}

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double Cv(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = Mean(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  return m > 0 ? sd / m : 0;
}

LatencyResult RunLatency(const scenario::Scenario& s, int64_t samples, int64_t bytes) {
  const topology::Topology topo = scenario::BuildTopology(s);
  sim::Simulator sim(s.seed);
  fabric::NetworkConfig cfg = s.net;
  cfg.stop_when_flows_done = false;
  fabric::Network net(sim, topo, cfg);
  const uint32_t a = 0;
  const uint32_t gpn = static_cast<uint32_t>(std::max<int64_t>(1, s.clos.gpus_per_node));
  const uint32_t hosts = static_cast<uint32_t>(topo.hosts.size());
  const uint32_t b = hosts > gpn ? (hosts / gpn - 1) * gpn : hosts - 1;
  // Other tenants' traffic (a shared profile; nothing otherwise).
  workload::TenantTraffic tenants(sim, net, {s.shared.tenant_load, s.shared.tenant_burst});
  PingPong pp(sim, net, a, b, bytes, samples);
  pp.Start();
  sim.Run(Time::Sec(10));
  LatencyResult r;
  r.bytes = bytes;
  r.path = fmt::format("{} <-> {}", HostName(topo, a), HostName(topo, b));
  r.samples_us = pp.samples();
  return r;
}

IncastResult RunIncast(const scenario::Scenario& s, int senders, int64_t bytes,
                       units::Time probe_every) {
  const topology::Topology topo = scenario::BuildTopology(s);
  sim::Simulator sim(s.seed);
  fabric::NetworkConfig cfg = s.net;
  cfg.stop_when_flows_done = false;
  fabric::Network net(sim, topo, cfg);
  const uint32_t hosts = net.num_hosts();
  const uint32_t target = 0;
  // Victim: the first host on another edge switch than the target; its peer
  // the first host on neither the target's nor the victim's edge switch
  // (else any other host but the target).
  uint32_t victim = 1, peer = UINT32_MAX;
  for (uint32_t h = 1; h < hosts; ++h) {
    if (EdgeOf(net, h) != EdgeOf(net, target)) {
      victim = h;
      break;
    }
  }
  for (uint32_t h = 1; h < hosts && peer == UINT32_MAX; ++h)
    if (h != victim && EdgeOf(net, h) != EdgeOf(net, target) && EdgeOf(net, h) != EdgeOf(net, victim))
      peer = h;
  for (uint32_t h = 1; h < hosts && peer == UINT32_MAX; ++h)
    if (h != victim && EdgeOf(net, h) != EdgeOf(net, target)) peer = h;
  for (uint32_t h = 1; h < hosts && peer == UINT32_MAX; ++h)
    if (h != victim) peer = h;
  // Senders: hosts on the victim's edge switch first (they share its
  // uplinks), then the rest in rank order.
  std::vector<uint32_t> cand;
  for (uint32_t h = 1; h < hosts; ++h)
    if (h != victim && h != peer) cand.push_back(h);
  std::stable_sort(cand.begin(), cand.end(), [&](uint32_t x, uint32_t y) {
    return (EdgeOf(net, x) == EdgeOf(net, victim)) > (EdgeOf(net, y) == EdgeOf(net, victim));
  });
  if (static_cast<int>(cand.size()) > senders) cand.resize(static_cast<size_t>(senders));

  std::vector<uint32_t> watched;
  for (uint32_t h : cand) {
    fabric::FlowSpec f = fabric::FlowSpec::Of(h, target, bytes);
    f.rc = true;
    watched.push_back(net.AddFlow(f));
  }
  const size_t incast_flows = watched.size();
  fabric::FlowSpec vf = fabric::FlowSpec::Of(victim, peer, bytes * 4);
  vf.rc = true;
  const uint32_t victim_flow = net.AddFlow(vf);
  watched.push_back(victim_flow);
  const uint32_t probe_qp = net.AddQp(Qp(victim, peer));
  // The target's downlink: the edge switch's port whose peer is the target's NIC.
  const uint32_t downlink = net.PortPeer(net.HostPort(target));
  const bool ib = cfg.ib.enabled;
  workload::TenantTraffic tenants(sim, net, {s.shared.tenant_load, s.shared.tenant_burst});
  IncastDriver drv(sim, net, watched, probe_qp, probe_every, downlink, ib);
  drv.Start();
  sim.Run(Time::Sec(1));

  IncastResult r;
  r.senders = static_cast<int>(incast_flows);
  r.bytes_each = bytes;
  r.target = HostName(topo, target);
  r.victim = fmt::format("{} -> {}", HostName(topo, victim), HostName(topo, peer));
  Time end = Time::Zero();
  int64_t incast_bytes = 0;
  for (size_t i = 0; i < incast_flows; ++i) {
    const fabric::FlowStats& f = net.flows()[watched[i]];
    end = std::max(end, f.done() ? f.finish : sim.Now());
    incast_bytes += f.recv_bytes;
  }
  r.duration_us = Us(end);
  for (const fabric::FlowStats& f : net.flows()) {
    r.naks += static_cast<int64_t>(f.naks);
    r.ack_timeouts += static_cast<int64_t>(f.timeouts);
  }
  if (const fabric::QpFailure* fail = net.qp_failure()) r.failure = fail->what;
  r.incast_gbps = end.ps() > 0 ? static_cast<double>(incast_bytes) * 8 / Us(end) / 1e3 : 0;
  const fabric::FlowStats& v = net.flows()[victim_flow];
  r.victim_gbps = v.done() && v.fct().ps() > 0
                      ? static_cast<double>(v.spec.bytes) * 8 / Us(v.fct()) / 1e3
                      : 0;
  r.probes = static_cast<int64_t>(drv.latency_us().size());
  r.probe_p50_us = Percentile(drv.latency_us(), 50);
  r.probe_p99_us = Percentile(drv.latency_us(), 99);
  r.probe_max_us = Percentile(drv.latency_us(), 100);
  const double dur_ps = static_cast<double>(std::max<int64_t>(1, end.ps()));
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const fabric::PortStats st = net.port_stats(p);
    r.pause_frames += static_cast<int64_t>(st.pause_tx);
    r.ecn_marks += static_cast<int64_t>(st.ecn_marks);
    r.cnps += static_cast<int64_t>(st.cnp_tx);
    r.drops += static_cast<int64_t>(st.drops);
    r.retransmissions += static_cast<int64_t>(st.retx_packets);
    const double paused = static_cast<double>(net.PausedPsUntilNow(p)) / dur_ps;
    if (paused > r.max_paused_fraction) {
      r.max_paused_fraction = paused;
      r.most_paused = net.PortName(p);
    }
    const double starved = static_cast<double>(st.credit_starved_ps) / dur_ps;
    if (starved > r.max_credit_starved_fraction) {
      r.max_credit_starved_fraction = starved;
      r.most_credit_starved = net.PortName(p);
    }
  }
  // Timeline.
  r.timeline_port = net.PortName(downlink);
  r.sample_us = Us(probe_every) * static_cast<double>(drv.stride());
  for (int64_t k = 0; k < drv.samples(); ++k) {
    r.t_us.push_back(static_cast<double>(k) * r.sample_us);
    r.queue_bytes.push_back(drv.queue()[static_cast<size_t>(k)]);
  }
  // The held port: the one with the most held time over the sampled window.
  double best = 0;
  uint32_t held_port = UINT32_MAX;
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    double sum = 0;
    for (float x : drv.held()[p]) sum += x;
    if (sum > best) {
      best = sum;
      held_port = p;
    }
  }
  if (held_port != UINT32_MAX) {
    r.held_port = net.PortName(held_port);
    r.held_kind = ib ? "credit-starved" : "paused";
    const double half = static_cast<double>(probe_every.ps() * drv.stride()) / 2;
    const auto& h = drv.held()[held_port];
    for (size_t k = 0; k < h.size(); ++k) {
      if (h[k] < half) continue;
      const double t0 = static_cast<double>(k) * r.sample_us, t1 = t0 + r.sample_us;
      if (!r.held.empty() && r.held.back().second == t0)
        r.held.back().second = t1;
      else
        r.held.emplace_back(t0, t1);
    }
  }
  return r;
}

CollectiveRun RunRepeated(const scenario::Scenario& s, const std::string& name, int64_t nodes,
                          int64_t gpus_per_node, int64_t bytes, int64_t iterations,
                          const std::function<bool()>& keep_going) {
  perf::PerfOptions o;
  o.nodes = nodes;
  o.n_gpus = gpus_per_node;
  o.min_bytes = o.max_bytes = bytes;
  o.iters = iterations;
  o.warmup_iters = 1;
  CollectiveRun c;
  c.perf = run::RunPerf(o, s, name, &c.failure, [&](const run::PerfProgress&) {
    return !keep_going || keep_going();
  });
  c.interrupted = c.perf.interrupted;
  for (const perf::SizeResult& row : c.perf.sizes)
    for (const perf::HalfResult* h : {&row.out_of_place, &row.in_place})
      c.iterations_us.insert(c.iterations_us.end(), h->samples_us.begin(), h->samples_us.end());
  return c;
}

}  // namespace lossless::compare
