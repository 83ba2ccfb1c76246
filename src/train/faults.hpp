#pragma once
// Stragglers and faults during training (issue 12, docs/train.md "Faults
// during training"): a slow GPU, a degraded link and a stalled NIC, each from
// a chosen step, as `lossless train` takes them on its command line.
//
// - A slow GPU (`--slow-gpu RANK:FACTOR@STEP[-LAST]`) computes FACTOR times
//   slower during steps STEP..LAST (LAST: the last step when omitted).
//   Synchronous data parallelism waits for it at every collective, and its
//   TP peers at every TP all-reduce, so its pipeline stage (with one stage:
//   the whole step) computes at its pace: the compute times (TP all-reduces
//   excluded) of the units on the stage of its rank are multiplied by
//   FACTOR; the other stages keep theirs and wait for it only where the
//   pipeline makes them (its sends). Without pipeline stages which rank it
//   is does not change the step (every rank waits for the slowest alike).
// - A degraded link (`--degrade LINK=BER@STEP[-LAST]`): both directions of
//   LINK (a link of the fabric's topology, "a<->b" or one direction "a->b")
//   lose frames at post-FEC bit error rate BER during those steps
//   (fabric/link_loss.hpp: CRC drops, RC retransmissions).
// - A stalled NIC (`--stall-nic HOST@STEP:US`): NIC HOST stops receiving for
//   US microseconds from the first collective of step STEP
//   (fault::NicStall: a pause storm on RoCE, no credits returned on
//   InfiniBand).
// The link and NIC faults are applied as fault::Plans (src/fault), between
// the engine's runs, through the same seams as `run`'s and `perf`'s.
//
// A step during which a fault is active is simulated at packet level in full
// (no collective reuses a measured time, none is kept for reuse).
#include <cstdint>
#include <string>
#include <vector>

#include "train/model.hpp"
#include "units/units.hpp"

namespace lossless::train {

struct SlowGpu {
  int64_t rank = 0;  // global GPU rank, node x gpus_per_node + local GPU
  double factor = 1;
  int first = 0, last = 0;  // steps, inclusive
};

struct LinkDegrade {
  std::string link;  // as the topology names it: "a<->b" or "a->b"
  double ber = 0;    // post-FEC bit error rate
  int first = 0, last = 0;
};

struct NicStall {
  int64_t host = 0;  // NIC (= GPU rank: one NIC per GPU)
  int step = 0;
  units::Time duration;
};

struct Faults {
  std::vector<SlowGpu> slow_gpus;
  std::vector<LinkDegrade> degraded;
  std::vector<NicStall> stalls;

  bool Any() const { return !slow_gpus.empty() || !degraded.empty() || !stalls.empty(); }
  // A fault is active during step k (a stall: in the step it starts).
  bool ActiveAt(int k) const;
  // The compute slowdown of step k: the largest factor of the slow GPUs
  // active then, 1 when none is.
  double ComputeFactor(int k) const;
  // The same over the slow GPUs of pipeline stage `stage` (global ranks are
  // node-major and a stage holds `stage_gpus` consecutive ranks).
  double StageFactor(int k, int64_t stage_gpus, int stage) const;
  // The first step with a fault; -1 when there is none.
  int FirstStep() const;
  // One line per fault, for the output's header.
  std::vector<std::string> Describe() const;
};

// The parsers of the three flags (grammar above). `c` gives the GPU count
// and the steps; bad input throws InputError ("<cli>", the flag) saying what
// was expected.
SlowGpu ParseSlowGpu(const std::string& text, const TrainConfig& c);
LinkDegrade ParseDegrade(const std::string& text, const TrainConfig& c);
NicStall ParseStallNic(const std::string& text, const TrainConfig& c);

// Percentile p (0-100) of `v` with linear interpolation between the closest
// ranks (p99 of fewer than 100 values lies between the two largest); 0 for
// an empty vector.
double StepPercentile(std::vector<double> v, double p);

}  // namespace lossless::train
