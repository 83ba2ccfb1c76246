#pragma once
// What a collective engine tells an outside observer (a timeline, docs/capture.md)
// about its steps: each message a rank posts, with the step it belongs to, and
// each send completion. Called once per message (an NCCL slice of a step,
// hundreds of packets), never per packet; an engine without an observer
// tests one null pointer per message.
#include <cstdint>

#include "units/units.hpp"

namespace lossless::collective {

// One message of a step: rank `rank` (a GPU) on channel `channel` sends
// `bytes` to rank `peer` as part of step `step` (0-based, in the plan's
// order) of chunk loop `loop`.
struct StepMessage {
  uint32_t rank = 0;
  uint32_t channel = 0;
  uint32_t peer = 0;
  int64_t loop = 0;
  int32_t step = 0;
  int64_t bytes = 0;
  bool nvlink = false;  // over NVLink inside a node, else an RC message over the network
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  // `m` is handed to the transport at `at` (after the hop latency, when the
  // engine models one, it is still `at`: the time the rank is done with it).
  virtual void OnStepPost(const StepMessage& m, units::Time at) = 0;
  // The oldest message `rank` posted on `channel` that had not completed has
  // completed (RC: acknowledged; NVLink: delivered): completions come in post
  // order per (rank, channel).
  virtual void OnStepSendDone(uint32_t rank, uint32_t channel, units::Time at) = 0;
};

}  // namespace lossless::collective
