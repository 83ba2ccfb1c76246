#pragma once
// Runs a scenario: builds the topology and network, adds its flows and
// faults, installs the deadlock detector and the series sampler, runs the
// engine, and gathers the results into report::RunResult. Deterministic: the
// same scenario and seed give the same RunResult except the wall-clock
// fields in `timing`.
#include <functional>
#include <string>
#include <vector>

#include "fabric/network.hpp"
#include "report/result.hpp"
#include "scenario/scenario.hpp"

namespace lossless::report {
class SeriesSampler;
}
namespace lossless::deadlock {
class DeadlockDetector;
}
namespace lossless::workload {
class TenantTraffic;
}

namespace lossless::run {

// Test hooks: `before_run` sees the network once flows and faults are in
// place, before the engine runs (e.g. to install a transmit trace).
// between_slices: called after every slice of kEventsPerSlice events (and
// never inside one) with where the run is; returning false ends the run
// there, as an interrupt (RunResult::interrupted, stop reason
// "interrupted"). The slices change nothing else: a run that is not stopped
// gives the same result with or without the hook.
struct RunStatus {
  units::Time now;
  units::Time stop_time;
  uint64_t flows_done = 0;
  uint64_t flows = 0;
};
inline constexpr uint64_t kEventsPerSlice = uint64_t{1} << 16;
// Per-entity event digest of a run (`lossless run --digest`,
// sim::EntityDigest): the entity's id, its name (a port's link direction, a
// switch, or "entity N" for the detector, the sampler and tenant hosts).
struct EntityDigestLine {
  uint32_t entity = 0;
  std::string name;
  sim::EntityDigest digest;
};
// digests: when set, the run records per-entity event digests and fills it,
// in entity order, with every entity that ran at least one event.
// engine: replaces the serial sim.Run(stop_time) (a distributed run,
// run/distributed.hpp): runs the events, leaves the merged results in the
// network on rank 0, and says why the run ended, the events run over all
// ranks and, with digests on, the per-entity digests summed over ranks.
struct EngineOutcome {
  sim::StopReason why = sim::StopReason::kQueueEmpty;
  uint64_t events = 0;
  std::vector<sim::EntityDigest> digests;
};
// The components an engine hook drives itself: the series sampler (not
// started: the engine calls SeriesSampler::StartExternal) and the deadlock
// detector, each null when the scenario has none.
// The other tenants' traffic (tenants.load; idle without) and the captures
// (outputs.pcap, outputs.trace; null without either).
class Captures;
struct EngineParts {
  report::SeriesSampler* sampler = nullptr;
  deadlock::DeadlockDetector* detector = nullptr;
  workload::TenantTraffic* tenants = nullptr;
  Captures* captures = nullptr;
};
struct RunHooks {
  std::function<EngineOutcome(sim::Simulator&, fabric::Network&,
                              const std::vector<fabric::FlowSpec>&, const EngineParts&)>
      engine;
  std::function<void(fabric::Network&)> before_run;
  std::function<bool(const RunStatus&)> between_slices;
  std::vector<EntityDigestLine>* digests = nullptr;
  // A distributed run's rank (with `engine`): the captures log their calls
  // for rank 0, which alone writes the files (run/captures.hpp). -1: serial.
  int capture_rank = -1;
};

// The digest lines as text: a header with the entity and event counts, then
// "<id> <name> <events> <digest as 16 hex digits>" per entity.
std::string DigestText(const std::vector<EntityDigestLine>& lines);

// Throws InputError (naming outputs.series.*) when the series selection names
// an unknown port, or during the run once the series would hold more than
// SeriesSpec::max_values values; naming faults.* for a host, link or flow the
// topology or traffic does not have.
report::RunResult RunScenario(const scenario::Scenario& s, const RunHooks& hooks = {});

// Peak resident set size of this process, in MB (from getrusage).
double PeakRssMb();

}  // namespace lossless::run
