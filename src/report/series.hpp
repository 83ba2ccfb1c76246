#pragma once
// Sampled time series of a run (outputs.series.*, docs/series.md): the
// result types and the sampler that fills them.
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"
#include "units/units.hpp"

namespace lossless::report {

// One sampled time series. Sample k (k = 1, 2, ...) is taken at
// t_k = k x interval, after every event at or before t_k; interval-based
// kinds cover (t_{k-1}, t_k].
struct Series {
  // queue_bytes, utilization, pause_frames, cnps, goodput_gbps, dcqcn_rate_gbps,
  // dcqcn_target_gbps, dcqcn_alpha
  std::string kind;
  std::string subject;    // link direction ("S->R") or flow ("flow 0 H1->R")
  std::string unit;       // "B", "fraction", "frames", "CNPs", "Gb/s"
  bool integral = false;  // values are whole numbers (written without a fraction)
  std::vector<double> values;
  double min = 0, mean = 0, max = 0;
};

struct SeriesResult {
  units::Time interval;  // 0 = sampling was off
  int64_t samples = 0;   // values per series
  std::vector<Series> list;
  uint64_t quiet_ports = 0;  // ports left out by outputs.series.ports: busy
};

struct SamplerConfig {
  units::Time interval;    // above zero
  units::Time stop;        // no sample after this time
  int data_class = 0;      // the class whose egress queue queue_bytes reads
  int64_t max_values = 0;  // cap on values held (series x samples so far)
  Location where;          // named by the error when the cap is reached
};

// Samples the network every `interval`. It is an engine entity registered
// after the network's, so at equal times it runs after every network event:
// sample k sees the state at the end of t_k. Throws InputError (at
// config.where) from inside the run once the series would hold more than
// config.max_values values.
class SeriesSampler final : public sim::EventHandler {
 public:
  SeriesSampler(sim::Simulator& sim, const fabric::Network& net, const SamplerConfig& config);

  // Queue, utilization, PAUSE frames and CNPs of port `p`.
  void AddPort(uint32_t p);
  // Goodput of flow `f`, and its DCQCN rate, target rate and alpha if `dcqcn`.
  void AddFlow(uint32_t f, bool dcqcn);
  // Schedules the first sample (none if interval > stop).
  void Start();
  // After the run: the series in the order they were added; with
  // `busy_only`, ports that sent neither packets nor PAUSE frames are left
  // out (and counted). `topo` names the hosts in flow subjects.
  SeriesResult Collect(const topology::Topology& topo, bool busy_only);

  void OnEvent(uint32_t, uint64_t) override;

  // A distributed run (docs/parallel.md, "The series sampler and the deadlock
  // detector"), instead of Start(): the sampler queues no event; the window
  // engine ends a window at NextSampleTime() and calls TakeSample there on
  // every rank, each rank's owned state being the serial state at that time.
  // Keys are drawn as the serial sampler draws them; with `count_events`
  // (rank 0) each sample counts as the serial run's sampler event.
  void StartExternal(bool count_events);
  // Time of the next sample in ps; INT64_MAX when sampling has ended.
  int64_t NextSampleTime() const { return next_ps_; }
  // Takes sample k at NextSampleTime(); `pending`: whether any other event is
  // queued on any rank (the serial sampler stops when nothing else is).
  void TakeSample(bool pending);
  // Which entity's state a source reads: a port, or a flow at its sender
  // (DCQCN reaction point) or at its receiver (goodput).
  struct SourceRef {
    bool port;
    bool at_sender;
    uint32_t index;
  };
  size_t num_sources() const { return sources_.size(); }
  SourceRef source(size_t i) const;
  // Every source's values, as raw bytes (this rank's view).
  std::string ExportValues() const;
  // Source i's values from per_rank[owner[i]] (ExportValues of each rank).
  void ImportValues(const std::vector<std::string>& per_rank, const std::vector<int32_t>& owner);

 private:
  enum class Kind : uint8_t { kQueue, kUtil, kPause, kCnp, kGoodput, kRate, kTarget, kAlpha };
  struct Source {
    Kind kind;
    uint32_t index;    // port or flow
    int64_t prev = 0;  // counter value at the previous sample
    std::vector<double> values;
  };

  sim::Simulator& sim_;
  const fabric::Network& net_;
  SamplerConfig config_;
  void Sample();

  uint32_t entity_;
  int64_t k_ = 0;
  bool count_events_ = false;
  int64_t next_ps_ = INT64_MAX;  // external mode: the next sample
  uint64_t next_key_ = 0;        // ... and its serial key
  std::vector<Source> sources_;
};

}  // namespace lossless::report
