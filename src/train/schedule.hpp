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
  // A pipeline send of `bytes` from a GPU of stage `from` to its peer of
  // stage `to` (one ncclSend/ncclRecv pair), started at `start`. Unlike Run,
  // sends of different stages may overlap each other and the collectives in
  // time. Default: the infinitely fast network (no time, `bytes` sent).
  virtual CommCost Send(int from, int to, int64_t bytes, units::Time start);
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
  bool p2p = false;  // a pipeline send from `stage` to `peer` (comm is set too)
  int stage = 0;     // pipeline stage whose GPU runs it
  int peer = 0;
  int stream = 0;  // 4 x stage + 0 compute, 1 DP collectives, 2/3 sends
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
// units' times. Each stream's tasks run in listed order.
//
// Pipeline parallelism (c.pp > 1, DDP): each stage's GPU runs its units'
// forward and backward passes per micro-batch in the 1F1B order of
// PipeDream-Flush (Narayanan et al. 2021, "Efficient Large-Scale Language
// Model Training on GPU Clusters Using Megatron-LM", SC'21, section 2.2.1):
// stage s first runs min(pp - s - 1, m) forwards, then alternates one
// forward and one backward, then runs the remaining backwards. A forward
// sends its output activation to the next stage, a backward its input
// gradient to the previous one (CommBackend::Send); the receiving pass waits
// for it, and the sending GPU's next pass waits for its send to complete
// (Megatron's p2p communication waits on its requests). Each stage
// all-reduces its own gradients over its data-parallel group in buckets
// during its last backward, on its own stream.
std::vector<Task> BuildStep(const TrainConfig& c, const std::vector<Unit>& units);

// The 1F1B order of stage `stage` of `pp` with `m` micro-batches: +j + 1 for
// the forward of micro-batch j, -(j + 1) for its backward.
std::vector<int64_t> OneFOneB(int pp, int stage, int64_t m);

struct StepTimes {
  units::Time step;      // first start to last finish
  units::Time compute;   // compute stream busy, TP all-reduces excluded (pipeline: busiest stage)
  units::Time tp;        // TP all-reduces (exposed: on the compute stream; that stage's)
  units::Time dp_comm;   // communication stream busy (pipeline: the busiest stage's)
  units::Time bubble;    // pipeline: idle time of that stage with an infinitely fast network
  units::Time exposed;   // step - compute - bubble
  units::Time pp_comm;   // pipeline sends, summed
  int64_t dp_bytes = 0;  // sent per GPU by DP collectives (pipeline: the stage with most)
  int64_t pp_bytes = 0;  // sent by the pipeline sends, all stages of one pipeline together
  int collectives = 0, reused = 0;  // pipeline sends included
  int busiest_stage = 0;
};

// Runs the tasks from `at`: each stream takes its next task when the stream
// is free and the task's dependencies have finished; of the streams whose
// next task can start, the one that starts first goes first (ties: the lower
// stream), so the backend sees non-decreasing start times. Leaves bubble at
// zero (the caller knows the infinitely fast step: WithBubble).
StepTimes Schedule(std::vector<Task>& tasks, CommBackend& comm, units::Time at);
// `st` with its pipeline bubble: `ideal` (the same tasks' step on an
// infinitely fast network) minus the busiest stage's compute and TP time, and
// exposed = step - compute - bubble. Without pipeline stages the bubble is 0.
StepTimes WithBubble(StepTimes st, units::Time ideal, int pp);

}  // namespace lossless::train
