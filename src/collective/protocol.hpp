#pragma once
// NCCL's protocols as the engines move them (docs/model/collective-engine.md#protocols):
// how payload is laid out in lines on the wire and how fast one GPU can
// write it.
//
// - Simple: the payload as is (line 1 of 1 byte); flow control by separate
//   head/tail counters (the engines' clear-to-send messages).
// - LL: 16-byte lines (`ncclLLFifoLine`), each 8 bytes of data and two 4-byte
//   flags, so half of what crosses NVLink or the network is payload
//   (NVIDIA/nccl src/include/device.h).
// - LL128: 128-byte lines of 15 data words and one flag word (8 bytes each),
//   120 of 128 bytes payload (NCCL_LL128_DATAELEMS = LINEELEMS - 1).
//
// The lines are real bytes: a message of P payload bytes is posted as
// WireBytes(P) bytes, so NICs, links and NVLink carry (and pay for) the flags.
// gpu_rate, when not zero, caps how fast one GPU writes payload into the
// protocol's lines, summed over its channels: LL and LL128 are written by the
// GPU's threads line by line (flag per line, no bulk copy), which NCCL's cost
// model caps per GPU generation (llMaxBws, perChMaxRingLL128Bws,
// perChMaxTreeLL128Bws in src/graph/tuning.cc). An approximation: NCCL caps
// the algorithm's bandwidth in its model; the engines pace each GPU's sends.
#include <cstdint>

#include "collective/model/tuning.hpp"
#include "units/units.hpp"

namespace lossless::collective {

struct WireProtocol {
  Protocol protocol = Protocol::kSimple;
  int64_t line_bytes = 1;    // bytes of one line on the wire
  int64_t line_payload = 1;  // payload bytes it carries
  units::Rate gpu_rate;      // payload a GPU writes per second over all its channels; 0: no cap
  // Bytes on the wire for `payload` bytes: whole lines.
  int64_t WireBytes(int64_t payload) const {
    return (payload + line_payload - 1) / line_payload * line_bytes;
  }
};

// The line layout of protocol `p` (Simple 1/1, LL 16/8, LL128 128/120) with
// the given GPU rate cap.
WireProtocol WireOf(Protocol p, units::Rate gpu_rate = units::Rate());

}  // namespace lossless::collective
