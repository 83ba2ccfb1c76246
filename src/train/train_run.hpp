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
#include "train/model.hpp"
#include "train/schedule.hpp"

namespace lossless::train {

struct StepResult {
  StepTimes times;
  FabricCounters counters;  // this step's
  double mfu = 0;
};

// A NIC that stops receiving during one step (FabricComm::SetStall); step -1:
// none.
struct StallSpec {
  int step = -1;
  units::Time duration;
};

struct TrainResult {
  TrainConfig config;  // validated (recompute resolved)
  std::string fabric;
  Memory memory;
  double model_flops_per_gpu = 0;  // per step, without recomputation
  units::Time ideal_step;          // with an infinitely fast network
  int64_t tp_bytes_per_gpu = 0;    // per step, NVLink (analytic)
  std::vector<StepResult> steps;
  int simulated = 0, reused = 0;  // collectives, over all steps
  uint64_t events = 0;
  bool exact = false;
  StallSpec stall;
  bool interrupted = false;  // Ctrl-C: `steps` holds the steps completed before it
};

// c must have passed Validate. `progress`, when set, hears after every
// collective: step index, collectives done in the step, in the step. Polls
// InterruptRequested() (base/progress.hpp) after every collective; when set,
// the step under way is dropped and the result is marked interrupted.
TrainResult RunTraining(const TrainConfig& c, const scenario::Scenario& s,
                        const std::string& fabric_name, bool exact,
                        const std::function<void(int, int, int)>& progress = {},
                        const StallSpec& stall = {});

// Text report (what was modelled and approximated first) and the
// "lossless.train/1" document (docs/train.md).
std::string FormatTrain(const TrainResult& r);
nlohmann::json TrainJson(const TrainResult& r);

}  // namespace lossless::train
