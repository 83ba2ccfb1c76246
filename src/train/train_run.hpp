#pragma once
// `lossless train`: training steps of a model over the modelled fabric
// (docs/train.md). Runs c.steps steps back to back on one network, each step
// scheduled by train::Schedule with its data-parallel collectives at packet
// level (FabricComm), and the same step once more with an infinitely fast
// network (InstantComm) for the fabric's share of the step time.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "train/fabric_comm.hpp"
#include "train/faults.hpp"
#include "train/model.hpp"
#include "train/schedule.hpp"

namespace lossless::train {

struct StepResult {
  StepTimes times;
  FabricCounters counters;  // this step's
  double mfu = 0;
  bool faulted = false;                             // a fault was active in it (train/faults.hpp)
  double compute_factor = 1;                        // its compute slowdown (a slow GPU)
  bool Exact() const { return times.reused == 0; }  // every collective simulated
};

// What the faults cost: step time before the first fault and from it on, and
// the time lost against an unfaulted step.
struct FaultSummary {
  int first_step = -1;  // -1: no faults
  int before_steps = 0, after_steps = 0;
  double before_p50_ms = 0, before_p99_ms = 0, before_max_ms = 0;
  double after_p50_ms = 0, after_p99_ms = 0, after_max_ms = 0;
  bool has_baseline = false;  // an unfaulted step exists
  double baseline_ms = 0;     // median of the unfaulted steps
  int faulted_steps = 0;
  double lost_ms = 0;              // sum over faulted steps of (step - baseline)
  double lost_steps = 0;           // lost_ms / baseline_ms
  bool degraded_link_used = true;  // the degraded links carried simulated packets
};

struct TrainResult {
  TrainConfig config;  // validated (recompute resolved)
  std::string fabric;
  Memory memory;
  double model_flops_per_gpu = 0;  // per step, without recomputation
  units::Time ideal_step;          // with an infinitely fast network
  StepTimes ideal;                 // that step's breakdown (its pipeline bubble)
  int64_t tp_bytes_per_gpu = 0;    // per step, NVLink (analytic)
  std::vector<StepResult> steps;
  int simulated = 0, reused = 0;  // collectives, over all steps
  uint64_t events = 0;
  bool exact = false;
  Faults faults;
  FaultSummary fault_summary;
  units::Time max_idle = units::Time::Max();
  units::Time idle_skipped;  // network time skipped between collectives
  bool interrupted = false;  // Ctrl-C: `steps` holds the steps completed before it
};

// c must have passed Validate. `progress`, when set, hears after every
// collective: step index, collectives done in the step, in the step. `faults`
// (parsed against c: train/faults.hpp) apply at their steps. `max_idle`
// limits the idle network time simulated before a collective
// (FabricComm::set_max_idle; the output says so when it skipped any). Polls
// InterruptRequested() (base/progress.hpp) after every collective; when set,
// the step under way is dropped and the result is marked interrupted.
TrainResult RunTraining(const TrainConfig& c, const scenario::Scenario& s,
                        const std::string& fabric_name, bool exact,
                        const std::function<void(int, int, int)>& progress = {},
                        const Faults& faults = {}, units::Time max_idle = units::Time::Max());

// Text report (what was modelled and approximated first) and the
// "lossless.train/1" document (docs/train.md).
std::string FormatTrain(const TrainResult& r);
nlohmann::json TrainJson(const TrainResult& r);

}  // namespace lossless::train
