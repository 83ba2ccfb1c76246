#pragma once
// A training step as two in-order streams (docs/train.md): the GPU's compute
// stream and one communication stream (NCCL's), tasks with dependencies
// across them. Compute tasks take a given time; communication tasks are data-
// parallel collectives whose time a CommBackend measures when they start, so
// the packet-level fabric (fabric_comm.hpp) and the analytic checks plug in
// alike. Collectives on the one stream are serialized, as bucket all-reduces
// on PyTorch DDP's stream are; FSDP's all-gather and reduce-scatter streams
// are merged into this one (an approximation the output states).
#include <cstdint>
#include <string>
#include <vector>

#include "train/model.hpp"
#include "units/units.hpp"

namespace lossless::train {

enum class CommKind { kAllReduce, kAllGather, kReduceScatter };
const char* CommKindName(CommKind k);
// Who takes part: every data-parallel rank (DDP, FSDP); HSDP's shard group
// inside a node, or its replica group of one GPU per node across the nodes.
enum class CommGroup { kData, kNode, kAcross };
// Ranks of `g` in `c`.
int GroupRanks(const TrainConfig& c, CommGroup g);

// What a collective cost: its time, and what one GPU sent for it.
struct CommCost {
  units::Time time;
  int64_t bytes_sent = 0;  // by one rank (payload), network and NVLink
  bool reused = false;     // a timing measured before, not simulated again
};

class CommBackend {
 public:
  virtual ~CommBackend() = default;
  // The collective of `bytes` (nccl-tests' size: the all-reduce buffer, the
  // whole N-rank buffer of all-gather and reduce-scatter) over `group`,
  // started at `start`. Calls come with non-decreasing starts, each at or
  // after the previous one's end.
  virtual CommCost Run(CommKind kind, CommGroup group, int64_t bytes, units::Time start) = 0;
};

// Every collective takes no time and moves the ring formula's bytes: the
// infinitely fast network.
class InstantComm final : public CommBackend {
 public:
  explicit InstantComm(const TrainConfig& c) : c_(c) {}
  CommCost Run(CommKind kind, CommGroup group, int64_t bytes, units::Time start) override;

 private:
  TrainConfig c_;
};

struct Task {
  bool comm = false;
  CommKind kind = CommKind::kAllReduce;
  CommGroup group = CommGroup::kData;
  int64_t bytes = 0;         // comm
  units::Time duration;      // compute: its time, TP all-reduces included
  units::Time tp;            // of which TP all-reduces
  std::vector<size_t> deps;  // indices of earlier-listed tasks it waits for
  std::string label;
  // Filled by Schedule.
  units::Time start, finish;
  CommCost cost;
};

// The tasks of one step of `c` (micro-batches, buckets, gathers) over the
// units' times. Compute and communication tasks each run in listed order.
std::vector<Task> BuildStep(const TrainConfig& c, const std::vector<Unit>& units);

struct StepTimes {
  units::Time step;      // first start to last finish
  units::Time compute;   // compute stream busy, TP all-reduces excluded
  units::Time tp;        // TP all-reduces (exposed: on the compute stream)
  units::Time dp_comm;   // communication stream busy
  units::Time exposed;   // step - compute
  int64_t dp_bytes = 0;  // sent per GPU by the data-parallel collectives
  int collectives = 0, reused = 0;
};

// Runs the tasks from `at`: each stream takes its next task when the stream
// is free and the task's dependencies have finished.
StepTimes Schedule(std::vector<Task>& tasks, CommBackend& comm, units::Time at);

}  // namespace lossless::train
