#pragma once
// Runs a scenario: builds the topology and network, adds its flows and
// faults, installs the deadlock detector and the series sampler, runs the
// engine, and gathers the results into report::RunResult. Deterministic: the
// same scenario and seed give the same RunResult except the wall-clock
// fields in `timing`.
#include <functional>

#include "fabric/network.hpp"
#include "report/result.hpp"
#include "scenario/scenario.hpp"

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
struct RunHooks {
  std::function<void(fabric::Network&)> before_run;
  std::function<bool(const RunStatus&)> between_slices;
};

// Throws InputError (naming outputs.series.*) when the series selection names
// an unknown port, or during the run once the series would hold more than
// SeriesSpec::max_values values; naming faults.* for a host, link or flow the
// topology or traffic does not have.
report::RunResult RunScenario(const scenario::Scenario& s, const RunHooks& hooks = {});

// Peak resident set size of this process, in MB (from getrusage).
double PeakRssMb();

}  // namespace lossless::run
