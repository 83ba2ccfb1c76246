#include "distrun/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.hpp"
#include "deadlock/deadlock_detector.hpp"
#include "distrun/fabric_ranks.hpp"
#include "parallel/engine.hpp"
#include "parallel/partition.hpp"
#include "report/series.hpp"
#include "run/captures.hpp"
#include "scenario/scenario.hpp"
#include "workload/tenants.hpp"

namespace lossless::distrun {

namespace {

// The network's PFC facts on this rank (fabric::PfcWaitObserver), each with
// the (time, key) of the event that reported it and its order within the
// rank, for the deadlock detector on rank 0 (docs/parallel.md).
struct Fact {
  int64_t time;
  uint64_t key;
  uint64_t order;
  uint32_t port;    // OnHold: ingress; OnXoff: the port
  uint32_t egress;  // OnHold only
  int32_t in_class;
  int32_t out_class;
  uint32_t xoff;  // 0: OnHold, 1: OnXoff
  uint32_t on;    // holding / asserted
};
static_assert(sizeof(Fact) == 48);

class FactLog final : public fabric::PfcWaitObserver {
 public:
  explicit FactLog(const sim::Simulator& sim) : sim_(sim) {}
  void OnHold(uint32_t ingress, int in_class, uint32_t egress, int out_class, bool holding,
              units::Time at) override {
    facts.push_back({at.ps(), sim_.RunningKey(), order_++, ingress, egress, in_class, out_class, 0,
                     holding ? 1u : 0u});
  }
  void OnXoff(uint32_t port, int tclass, bool asserted, units::Time at) override {
    facts.push_back(
        {at.ps(), sim_.RunningKey(), order_++, port, 0, tclass, 0, 1, asserted ? 1u : 0u});
  }
  std::vector<Fact> facts;

 private:
  const sim::Simulator& sim_;
  uint64_t order_ = 0;
};

// The stop rule's lower bound (parallel::StopRule::earliest_clear): this
// rank's last flow cannot complete before its destination has received
// every payload byte still missing (LastArrivalBound, at or after
// `ran_before`: every event before it has run on this rank, which owns the
// host's port). RC queue pairs place bytes when a gap fills, not on
// arrival: no bound there.
int64_t EarliestClear(const fabric::Network& net, const topology::Topology& topo,
                      const std::vector<std::vector<uint32_t>>& dst_flows, int64_t ran_before) {
  int64_t latest = ran_before;
  for (const std::vector<uint32_t>& at_host : dst_flows) {
    Int128 missing = 0;
    int64_t largest = net.config().framing.mtu_payload;
    for (uint32_t i : at_host) {
      const fabric::FlowStats& f = net.flows()[i];
      if (f.done()) continue;
      if (f.spec.rc) return ran_before;
      missing += f.spec.bytes - f.recv_bytes;
      largest = std::max<int64_t>(largest, f.spec.max_payload);
    }
    const uint32_t port = net.HostPort(net.flows()[at_host.front()].spec.dst);
    latest = std::max(
        latest, LastArrivalBound(ran_before, missing, largest, topo.links[port / 2].rate.bps()));
  }
  return latest;
}

}  // namespace

void CheckRanks(const scenario::Scenario& s, int ranks) {
  const topology::Topology t = scenario::BuildTopology(s);
  const bool clos = s.topology_kind == "leaf-spine" || s.topology_kind == "fat-tree" ||
                    s.topology_kind == "rail-optimized";
  (void)parallel::PartitionFabric(t, clos ? s.clos.gpus_per_node : 1, ranks,
                                  {"<cli>", 0, "mpirun -np"});
}

namespace {

// One pass of the run (Run below); with `fail_at`, the re-run to a QP failure
// the first pass found.
report::RunResult RunPass(const scenario::Scenario& s, parallel::Comm& comm, const Options& opt,
                          Stats& st, std::vector<run::EntityDigestLine>* digests,
                          const parallel::FailureFound* fail_at) {
  st.ranks = comm.Size();
  run::RunHooks hooks;
  hooks.digests = digests;
  hooks.capture_rank = comm.Rank();
  hooks.engine = [&](sim::Simulator& sim, fabric::Network& net,
                     const std::vector<fabric::FlowSpec>& flows, const run::EngineParts& parts) {
    FabricRanks ranks(comm, sim, net, s, opt.rank_of_node, st);
    const topology::Topology& topo = net.topology();
    const std::vector<int32_t>& port_rank = ranks.port_rank();
    const int me = comm.Rank();
    size_t local_flows = 0;
    std::vector<std::vector<uint32_t>> dst_flows;  // this rank's destinations' flows
    {
      std::vector<int64_t> slot(topo.hosts.size(), -1);
      for (uint32_t i = 0; i < flows.size(); ++i) {
        const uint32_t dst = flows[i].dst;
        if (port_rank[net.HostPort(dst)] != me) continue;
        ++local_flows;
        if (slot[dst] < 0) {
          slot[dst] = static_cast<int64_t>(dst_flows.size());
          dst_flows.emplace_back();
        }
        dst_flows[static_cast<size_t>(slot[dst])].push_back(i);
      }
    }
    // The sampler and the detector run at boundaries (docs/parallel.md); their
    // events count once, on rank 0.
    report::SeriesSampler* const sampler = parts.sampler;
    deadlock::DeadlockDetector* const detector = parts.detector;
    if (sampler != nullptr) sampler->StartExternal(me == 0);
    if (detector != nullptr) detector->StartExternal(me == 0);
    // Other tenants: every rank runs every host's arrivals, the owner posts
    // (workload::TenantTraffic::SetOwnedHosts).
    workload::TenantTraffic* const tenants = parts.tenants;
    if (tenants != nullptr && tenants->num_hosts() > 0) {
      std::vector<uint8_t> owned(tenants->num_hosts(), 0);
      for (uint32_t h = 0; h < owned.size(); ++h) {
        const int32_t owner = port_rank[net.HostPort(h)];
        owned[h] = owner == me ? 1 : 0;
        ranks.Replicate(tenants->HostEntity(h), owner);
      }
      tenants->SetOwnedHosts(std::move(owned));
    }
    if (parts.captures != nullptr) parts.captures->StartDistributed(sim, port_rank);
    FactLog facts(sim);
    if (detector != nullptr) net.set_wait_observer(&facts);
    // A confirmation is at least `persist` after the check that scheduled it:
    // with windows no longer than that, it is never inside the window whose
    // facts scheduled it, so the window can end at it.
    int64_t window = st.lookahead.ps();
    if (detector != nullptr) window = std::min(window, s.deadlock.persist.ps());
    parallel::WindowEngine& engine =
        ranks.Start(local_flows, units::Time::Ps(window), digests != nullptr, opt.peak_log_prune);
    // A QP failure stops the serial run at its event: found in a first pass,
    // then re-run to exactly that event (docs/parallel.md, "A QP failure").
    engine.set_failure([&net] { return net.qp_failure() != nullptr; });
    if (fail_at != nullptr) engine.set_failure_stop(fail_at->time_ps, fail_at->key);
    // Detector: every rank's facts of a window go to rank 0, which replays
    // them in (time, key) order; its next event time and whether a
    // confirmation stopped the run are then agreed (integers).
    bool facts_anywhere = false;  // some rank logged PFC facts in the window (its reduction)
    int64_t det_next = INT64_MAX;
    int64_t det_stop = -1;
    auto feed_facts = [&](int64_t through) {
      const std::string mine(reinterpret_cast<const char*>(facts.facts.data()),
                             facts.facts.size() * sizeof(Fact));
      facts.facts.clear();
      const std::vector<std::string> all = comm.Gather(mine);
      if (me == 0) {
        std::vector<Fact> merged;
        for (const std::string& b : all) {
          const size_t n = b.size() / sizeof(Fact);
          const size_t at = merged.size();
          merged.resize(at + n);
          if (n > 0) std::memcpy(&merged[at], b.data(), n * sizeof(Fact));
        }
        std::sort(merged.begin(), merged.end(), [](const Fact& a, const Fact& b) {
          if (a.time != b.time) return a.time < b.time;
          if (a.key != b.key) return a.key < b.key;
          return a.order < b.order;
        });
        for (const Fact& f : merged) {
          detector->RunExternalThrough(f.time - 1);
          if (detector->external_stop() >= 0) break;
          if (f.xoff != 0)
            detector->OnXoff(f.port, f.in_class, f.on != 0, units::Time::Ps(f.time));
          else
            detector->OnHold(f.port, f.in_class, f.egress, f.out_class, f.on != 0,
                             units::Time::Ps(f.time));
        }
        detector->RunExternalThrough(through);
      }
    };
    auto agree_detector = [&] {
      det_next = comm.AllreduceMin(me == 0 ? detector->NextExternalTime() : INT64_MAX);
      det_stop = -comm.AllreduceMin(me == 0 ? -detector->external_stop() : INT64_MAX);
    };
    if (detector != nullptr || sampler != nullptr) {
      parallel::Boundaries b;
      b.next_boundary = [&]() -> int64_t {
        if (det_stop >= 0) return det_stop;
        int64_t t = detector != nullptr ? det_next : INT64_MAX;
        if (sampler != nullptr) t = std::min(t, sampler->NextSampleTime());
        return t;
      };
      b.reached = [&](int64_t at, int64_t next) {
        if (detector != nullptr && det_stop < 0) {
          if (me == 0) detector->RunExternalThrough(at);
          agree_detector();
        }
        if (det_stop >= 0) return true;
        if (sampler != nullptr && sampler->NextSampleTime() == at)
          sampler->TakeSample(next != INT64_MAX || det_next != INT64_MAX);
        return false;
      };
      if (detector != nullptr)
        b.after_window = [&](int64_t bound) {
          // Nothing to replay (the usual window): one reduction, no gather.
          // The detector's own events are boundaries: none is at or before
          // `bound` unless the window ended at it.
          if (!facts_anywhere && det_next > bound) return;
          feed_facts(bound);
          agree_detector();
          if (det_stop >= 0 && det_stop != bound)
            throw std::logic_error(
                "distributed run: a deadlock confirmation inside a window (windows are no "
                "longer than deadlock.persist)");
        };
      engine.set_boundaries(std::move(b));
    }
    // The window's one reduction also carries the packets-alive figures and,
    // with the detector, whether any rank logged PFC facts.
    if (detector != nullptr) {
      const size_t probe_lanes = ranks.probe_lanes();
      parallel::ModelLanes lanes;
      lanes.count = probe_lanes + 1;
      lanes.fill = [&, probe_lanes](int64_t* l) {
        ranks.FillProbeLanes(l);
        l[probe_lanes] = facts.facts.empty() ? 1 : 0;
      };
      lanes.take = [&, probe_lanes](const int64_t* l) {
        ranks.TakeProbeLanes(l);
        facts_anywhere = l[probe_lanes] != 1;
      };
      engine.set_model_lanes(std::move(lanes));
    }
    run::EngineOutcome out;
    bool stopped = false;
    const bool rule = s.net.stop_when_flows_done && !flows.empty();
    if (rule) {
      parallel::StopRule stop_rule;
      stop_rule.pending = [&] { return static_cast<int64_t>(net.local_flows_pending()); };
      // A stalled NIC (faults.nic_stall) holds frames that have arrived and
      // counts them all at its resume: no bound there.
      // A bound computed once stays a bound (the clearing is one point of the
      // run), so it is reused while it is far ahead: recomputing it walks
      // every destination host of the rank, which cost 4 % of a 1,024-host
      // run's instructions when done every window (docs/benchmarks.md). A
      // reused bound is at most as late as a fresh one, so at worst a window
      // waits for a verdict it would not have needed; never another result.
      int64_t clear_bound = INT64_MIN;
      const int64_t reuse_margin = window > INT64_MAX / 64 ? INT64_MAX : 64 * window;
      if (s.nic_stall.host < 0)
        stop_rule.earliest_clear = [&, reuse_margin](int64_t ran_before) {
          if (opt.reuse_stop_bound && clear_bound > ran_before &&
              clear_bound - ran_before > reuse_margin)
            return clear_bound;
          ++st.stop_bounds;
          clear_bound = EarliestClear(net, topo, dst_flows, ran_before);
          return clear_bound;
        };
      stopped = engine.Run(s.stop_time, stop_rule);
    } else {
      engine.Run(s.stop_time);
    }
    const auto t_finish = std::chrono::steady_clock::now();
    const bool failed = engine.failure_stop();
    if (failed) stopped = true;  // an exact stop point, as the flows-done stop's
    if (stopped && detector != nullptr) {
      // The flows-done stop at (t*, k*): the detector's events at t* come
      // after k* (a network event's key), so it runs those before t*.
      feed_facts(sim.Now().ps() - 1);
      agree_detector();
    }
    if (detector != nullptr) net.set_wait_observer(nullptr);
    // Why the serial run would have ended, and its clock then.
    if (stopped || engine.boundary_stop()) {
      out.why = sim::StopReason::kStopped;
    } else if (comm.AllreduceMin(sim.NextTime().ps()) != units::Time::Max().ps() ||
               (detector != nullptr && det_next != INT64_MAX)) {
      out.why = sim::StopReason::kTimeLimit;
      sim.AdvanceTo(s.stop_time);
    } else {
      out.why = sim::StopReason::kQueueEmpty;
      sim.AdvanceTo(units::Time::Ps(-comm.AllreduceMin(-sim.Now().ps())));
    }
    if (failed) st.failure_rank = ranks.GatherQpFailure();
    const FabricRanks::Gathered g =
        ranks.Finish(st, t_finish, tenants != nullptr ? tenants->replicated_events() : 0);
    if (tenants != nullptr && tenants->num_hosts() > 0) {
      const std::vector<std::string> counters = comm.Gather(tenants->ExportCounters());
      if (me == 0) tenants->ImportCounters(counters);
    }
    // Captures: rank 0 replays every rank's log in the serial order (after
    // the merge, so the timeline's flows are the merged ones).
    if (parts.captures != nullptr) {
      const std::vector<std::string> logs = comm.Gather(parts.captures->ExportLog());
      if (me == 0) parts.captures->ImportLogs(logs);
    }
    out.events = g.events;
    out.digests = g.digests;
    if (sampler != nullptr) {
      // Each series from the rank that owns what it reads.
      const std::vector<std::string> values = comm.Gather(sampler->ExportValues());
      if (me == 0) {
        std::vector<int32_t> owner(sampler->num_sources());
        for (size_t i = 0; i < owner.size(); ++i) {
          const report::SeriesSampler::SourceRef ref = sampler->source(i);
          if (ref.port) {
            owner[i] = port_rank[ref.index];
          } else {
            const fabric::FlowSpec& f = net.flows()[ref.index].spec;
            owner[i] = port_rank[net.HostPort(ref.at_sender ? f.src : f.dst)];
          }
        }
        sampler->ImportValues(values, owner);
      }
    }
    return out;
  };
  return run::RunScenario(s, hooks);
}

}  // namespace

report::RunResult Run(const scenario::Scenario& s, parallel::Comm& comm, const Options& opt,
                      Stats* stats, std::vector<run::EntityDigestLine>* digests) {
  Stats st;
  report::RunResult r;
  try {
    r = RunPass(s, comm, opt, st, digests, nullptr);
  } catch (const parallel::FailureFound& f) {
    // Every rank left the first pass together at the earliest failure over
    // the ranks, the serial run's: the whole scenario again from scratch (the
    // same seed and set-up, so the same events and keys), each rank stopping
    // exactly there. The first pass's results are discarded.
    st = Stats{};
    st.failure_rerun_ps = f.time_ps;
    r = RunPass(s, comm, opt, st, digests, &f);
  }
  if (stats != nullptr) *stats = st;
  return r;
}

namespace {
constexpr size_t kMinZeroRun = 16;  // shorter runs of zeros stay as they are

void PutU64(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
uint64_t TakeU64(const std::string& in, size_t& at) {
  uint64_t v = 0;
  if (in.size() - at < sizeof v)
    throw std::runtime_error("distributed run: a packed gather ends early");
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}
}  // namespace

std::string PackZeroRuns(const std::string& in) {
  std::string out;
  out.reserve(in.size() / 16 + 64);
  PutU64(out, in.size());
  const size_t n = in.size();
  size_t i = 0;
  while (i < n) {
    // Bytes as they are up to the next run of at least kMinZeroRun zeros.
    size_t j = i, zeros = 0;
    while (j < n) {
      if (in[j] != 0) {
        ++j;
        continue;
      }
      size_t k = j;
      while (k < n && in[k] == 0) ++k;
      if (k - j >= kMinZeroRun || k == n) {
        zeros = k - j;
        break;
      }
      j = k;
    }
    PutU64(out, j - i);
    out.append(in, i, j - i);
    PutU64(out, zeros);
    i = j + zeros;
  }
  return out;
}

std::string UnpackZeroRuns(const std::string& in) {
  size_t at = 0;
  const uint64_t size = TakeU64(in, at);
  std::string out;
  // Bounded by what the packed form can describe: 2^20 zero bytes per byte
  // of it at most, so a corrupt size is refused below, not allocated.
  if (size / (1u << 20) <= in.size()) out.reserve(size);
  while (at < in.size()) {
    const uint64_t n = TakeU64(in, at);
    if (n > in.size() - at || n > size - out.size())
      throw std::runtime_error("distributed run: a packed gather's bytes overrun it");
    out.append(in, at, n);
    at += n;
    const uint64_t zeros = TakeU64(in, at);
    if (zeros > size - out.size())
      throw std::runtime_error("distributed run: a packed gather's zeros overrun it");
    out.append(zeros, '\0');
  }
  if (out.size() != size)
    throw std::runtime_error("distributed run: a packed gather unpacks to another size");
  return out;
}

std::string StatsLine(const Stats& st) {
  const double wait = st.run_s > 0 ? 100.0 * st.wait_s / st.run_s : 0;
  const double per_window = st.windows > 0 ? static_cast<double>(st.reductions + st.exchanges) /
                                                 static_cast<double>(st.windows)
                                           : 0;
  std::string line = fmt::format(
      "distributed: {} ranks, {} of {} switch links cut, lookahead {}, {} windows ({} waiting for "
      "a stop verdict, {:.2f} synchronisations each), {} cross-rank events ({} batch bytes), {}, "
      "waiting {:.1f}% of {:.3f} s (the rank that waited most, of the longest "
      "run); work {:.3f} s CPU over the ranks, {:.3f} s on the critical path (the busiest rank "
      "of each window); outside the engine {:.3f} s before, {:.3f} s after (rank 0: results "
      "gathered and merged); packets-alive log: {} windows of {} dropped, {} changes held by rank "
      "0 at the end, {} merged",
      st.ranks, st.cut_links, st.switch_links, units::FormatTime(st.lookahead), st.windows,
      st.careful, per_window, st.sent, st.sent_bytes,
      st.ties_counted ? fmt::format("{} same-time ties", st.ties)
                      : std::string("same-time ties not counted (run --digest counts them)"),
      wait, st.run_s, st.cpu_s, st.critical_cpu_s, st.setup_s, st.finish_s, st.peak_windows_dropped,
      st.windows, st.held_changes, st.kept_changes);
  // A run re-run to a QP failure (docs/parallel.md, "A QP failure").
  if (st.failure_rerun_ps >= 0)
    line += fmt::format(
        "; re-run from the start to the QP failure at {} (the first pass found it; these figures "
        "are the re-run's)",
        units::FormatTime(units::Time::Ps(st.failure_rerun_ps)));
  return line;
}

}  // namespace lossless::distrun
