#include "distrun/perf.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "collective/ownership.hpp"
#include "distrun/fabric_ranks.hpp"
#include "run/captures.hpp"
#include "run/perf_run.hpp"
#include "workload/tenants.hpp"

namespace lossless::distrun {

uint64_t AgreedLaunchKey(parallel::Comm& comm, sim::Simulator& sim, bool mine, uint32_t entity) {
  const int64_t key = mine ? static_cast<int64_t>(sim.DrawKey(entity)) : INT64_MAX;
  return static_cast<uint64_t>(comm.AllreduceMin(key));
}

namespace {

// One pass of the sweep (RunPerf below); with `fail_at`, the re-run to a QP
// failure the first pass found.
perf::PerfResult PerfPass(const perf::PerfOptions& o, const scenario::Scenario& s,
                          const std::string& fabric_name, std::string* failure,
                          parallel::Comm& comm, const Options& opt, Stats& st, bool count_ties,
                          const parallel::FailureFound* fail_at) {
  std::unique_ptr<FabricRanks> ranks;
  sim::Simulator* simp = nullptr;
  fabric::Network* netp = nullptr;
  // Launch events this rank ran for a GPU it does not own: the serial run
  // has one per launch, counted by the owner.
  uint64_t foreign_launches = 0;
  run::PerfHooks hooks;
  workload::TenantTraffic* tenants = nullptr;
  run::Captures* captures = nullptr;
  hooks.rank = comm.Rank();
  hooks.setup = [&](sim::Simulator& sim, fabric::Network& net, const run::PerfParts& parts) {
    simp = &sim;
    netp = &net;
    ranks = std::make_unique<FabricRanks>(comm, sim, net, s, opt.rank_of_node, st);
    // Other tenants: every rank runs every host's arrivals, the owner posts
    // (workload::TenantTraffic::SetOwnedHosts); captures logged for rank 0.
    tenants = parts.tenants;
    if (tenants != nullptr && tenants->num_hosts() > 0) {
      std::vector<uint8_t> owned(tenants->num_hosts(), 0);
      for (uint32_t h = 0; h < owned.size(); ++h) {
        const int32_t owner = ranks->port_rank()[net.HostPort(h)];
        owned[h] = owner == comm.Rank() ? 1 : 0;
        ranks->Replicate(tenants->HostEntity(h), owner);
      }
      tenants->SetOwnedHosts(std::move(owned));
    }
    captures = parts.captures;
    if (captures != nullptr) captures->StartDistributed(sim, ranks->port_rank());
    // perf's fabric has no flows of its own (its queue pairs are never
    // "done"): no flows-done stop. Windows of the lookahead.
    parallel::WindowEngine& engine = ranks->Start(0, st.lookahead, count_ties, opt.peak_log_prune);
    engine.set_flush_after_stop(true);
    // A QP failure ends the sweep in the collective that holds it: found in a
    // first pass, then the sweep re-run to exactly that event (the stop point
    // holds across the engine's Run calls; docs/parallel.md, "A QP failure").
    engine.set_failure([&net] { return net.qp_failure() != nullptr; });
    if (fail_at != nullptr) engine.set_failure_stop(fail_at->time_ps, fail_at->key);
    // GPU x is on node x / G, whose NICs are network hosts node x N .. + N - 1
    // (RunPerf's numbering); the node's rank is its NICs' (one unit).
    const uint32_t nodes = static_cast<uint32_t>(o.nodes);
    const uint32_t g = static_cast<uint32_t>(o.GpusPerNode());
    const uint32_t nics = net.num_hosts() / nodes;
    collective::GpuOwnership own;
    own.owned.assign(static_cast<size_t>(nodes) * g, 0);
    for (uint32_t n = 0; n < nodes; ++n) {
      const int32_t r = ranks->port_rank()[net.HostPort(n * nics)];
      for (uint32_t k = 1; k < nics; ++k)
        if (ranks->port_rank()[net.HostPort(n * nics + k)] != r)
          throw std::invalid_argument(fmt::format(
              "distributed perf: node {}'s NICs are on different ranks (a node is never split)",
              n));
      for (uint32_t x = 0; x < g; ++x) own.owned[n * g + x] = r == comm.Rank() ? 1 : 0;
    }
    own.launch_key = [&](bool mine, uint32_t entity) {
      if (!mine) ++foreign_launches;
      return AgreedLaunchKey(comm, *simp, mine, entity);
    };
    return own;
  };
  std::vector<int64_t> to_arrive;
  hooks.run_collective = [&](units::Time until, const std::function<bool()>& done,
                             const std::function<void(std::vector<int64_t>&)>& add_to_arrive) {
    parallel::StopRule rule;
    rule.pending = [&done] { return done() ? int64_t{0} : int64_t{1}; };
    // This rank's GPUs cannot be done before the bytes still to reach its
    // NICs have arrived (LastArrivalBound per NIC). A bound stays a bound
    // for the collective (its end is one point), so it is reused while it
    // lies more than 64 windows ahead: each computation walks the messages
    // still to come.
    const fabric::Network& net = *netp;
    const int64_t window = st.lookahead.ps();
    const int64_t reuse_margin = window > INT64_MAX / 64 ? INT64_MAX : 64 * window;
    int64_t bound = INT64_MIN;
    rule.earliest_clear = [&, reuse_margin](int64_t ran_before) {
      if (bound > ran_before && bound - ran_before > reuse_margin) return bound;
      ++st.stop_bounds;
      to_arrive.assign(net.num_hosts(), 0);
      add_to_arrive(to_arrive);
      bound = ran_before;
      for (uint32_t h = 0; h < to_arrive.size(); ++h)
        if (to_arrive[h] > 0)
          bound = std::max(
              bound, LastArrivalBound(ran_before, to_arrive[h], net.config().framing.mtu_payload,
                                      net.topology().links[net.HostPort(h) / 2].rate.bps()));
      return bound;
    };
    const bool ended = ranks->engine().Run(until, rule);
    if (!ranks->engine().failure_stop()) return ended;
    // Not done: the sweep ends here with rank 0's *failure the failing QP's
    // text, which only the failing rank holds.
    st.failure_rank = ranks->GatherQpFailure();
    return false;
  };
  hooks.finish = [&](units::Time local) {
    return units::Time::Ps(-comm.AllreduceMin(-local.ps()));
  };
  hooks.finish_run = [&](sim::Simulator&, fabric::Network&) {
    const uint64_t not_events =
        foreign_launches + (tenants != nullptr ? tenants->replicated_events() : 0);
    const uint64_t events = ranks->Finish(st, std::chrono::steady_clock::now(), not_events).events;
    if (tenants != nullptr && tenants->num_hosts() > 0) {
      const std::vector<std::string> counters = comm.Gather(tenants->ExportCounters());
      if (comm.Rank() == 0) tenants->ImportCounters(counters);
    }
    if (captures != nullptr) {
      const std::vector<std::string> logs = comm.Gather(captures->ExportLog());
      if (comm.Rank() == 0) captures->ImportLogs(logs);
    }
    return events;
  };
  return run::RunPerf(o, s, fabric_name, failure, {}, &hooks);
}

}  // namespace

perf::PerfResult RunPerf(const perf::PerfOptions& o, const scenario::Scenario& s,
                         const std::string& fabric_name, std::string* failure, parallel::Comm& comm,
                         const Options& opt, Stats* stats, bool count_ties) {
  Stats st;
  perf::PerfResult r;
  try {
    r = PerfPass(o, s, fabric_name, failure, comm, opt, st, count_ties, nullptr);
  } catch (const parallel::FailureFound& f) {
    // As distrun::Run: the whole sweep again, every rank stopping exactly at
    // the serial failing event; the first pass's results are discarded.
    st = Stats{};
    st.failure_rerun_ps = f.time_ps;
    r = PerfPass(o, s, fabric_name, failure, comm, opt, st, count_ties, &f);
  }
  if (stats != nullptr) *stats = st;
  return r;
}

}  // namespace lossless::distrun
