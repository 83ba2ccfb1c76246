#pragma once
// NCCL-style ring all-reduce as real packets over the modelled fabric
// (docs/model/collective-engine.md). One rank per host; each channel
// has its own ring order and its own RC queue pairs, so ECMP spreads them.
//
// Per channel the buffer is cut into loops of N x chunk bytes; in each loop
// rank r runs NCCL's 2(N - 1) ring steps (reduce-scatter then all-gather):
// at step k it sends chunk (r - k) mod N (reduce-scatter) or
// (r + 1 - (k - N + 1)) mod N (all-gather) to the next rank, cut into slices.
// A slice of step k >= 1 may leave only when the slice it depends on (step
// k - 1, same slice) has arrived from the previous rank, a local send slot
// is free (freed when the RC send completes) and the next rank has a free
// receive slot. Receive slots come back as a small clear-to-send message on
// a QP of their own, as NCCL's receiver posts its buffer to the sender
// (src/transport/net_ib.cc): every dependency between ranks travels as
// packets. Reduction costs no time (a GPU reduces far faster than a NIC
// sends); NVLink is not modelled here (one rank per host).
#include <cstdint>
#include <vector>

#include "fabric/network.hpp"

namespace lossless::collective {

struct RingAllReduceSpec {
  // Per channel, the host ranks in ring order (each a permutation of the same
  // set of at least 2 hosts).
  std::vector<std::vector<uint32_t>> rings;
  int64_t bytes = 0;  // per rank buffer (every rank reduces `bytes`), split over the channels
  // NCCL Simple protocol defaults: NCCL_BUFFSIZE 4 MiB over NCCL_STEPS 8
  // steps of 512 KiB; a chunk is 4 steps, a slice 2 steps, so 4 slices are
  // in flight per connection (NVIDIA/nccl src/include/collectives.h).
  int64_t chunk_bytes = int64_t{2} << 20;
  int64_t slice_bytes = int64_t{1} << 20;
  int slots = 4;
  int64_t cts_bytes = 64;  // the clear-to-send message
};

class RingAllReduce final : public fabric::TransportObserver {
 public:
  // Opens the queue pairs and installs itself as the network's transport
  // observer. Throws std::invalid_argument for a bad spec.
  RingAllReduce(fabric::Network& net, const RingAllReduceSpec& spec);
  // Posts what can leave now (the simulator's current time).
  void Start(units::Time now);

  bool done() const { return ranks_done_ == ranks_.size(); }
  units::Time start() const { return start_; }
  units::Time finish() const { return finish_; }  // the last rank's end
  // Data bytes rank `host` sent (payload, first transmissions) over all channels.
  int64_t BytesSent(uint32_t host) const;
  // What every rank must send by the ring's formula: 2 (N - 1) / N x bytes
  // (exact when each channel's share divides into N equal parts per loop).
  int64_t ExpectedBytesPerRank() const;
  uint64_t messages() const { return messages_; }

  void OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) override;
  void OnRecvComplete(uint32_t qp, units::Time at) override;

 private:
  struct Msg {
    int64_t bytes = 0;
    int32_t dep = -1;  // index of the received message it forwards (-1: step 0)
  };
  // Per (channel, rank).
  struct Rank {
    uint32_t host = 0;
    uint32_t data_qp = 0;  // to the next rank
    uint32_t cts_qp = 0;   // to the previous rank
    size_t prev = 0;       // index of the previous rank's record
    size_t next = 0;
    std::vector<Msg> sends;  // in order
    // For each message the previous rank sends (= what this rank receives):
    // the index of this rank's send that forwards it, -1 if none (the last step).
    std::vector<int32_t> needed_by;
    size_t next_send = 0;
    size_t sends_done = 0;
    size_t received = 0;   // data messages from the previous rank
    size_t consumed = 0;   // of those, forwarded (or final) and their slot freed
    int credits = 0;       // free receive slots at the next rank
    int send_slots = 0;    // free local send slots
    int64_t sent_bytes = 0;
    bool done = false;
  };
  void Progress(size_t i);
  void FreeSlots(size_t i);  // sends CTS for received messages no longer needed
  void MaybeDone(size_t i, units::Time at);

  fabric::Network& net_;
  RingAllReduceSpec spec_;
  std::vector<Rank> ranks_;              // channel-major
  std::vector<uint32_t> qp_rank_;        // data QP -> rank record index (sender)
  std::vector<uint8_t> qp_is_cts_;       // by QP id
  std::vector<uint32_t> cts_rank_;       // CTS QP -> rank record index (its sender)
  size_t ranks_done_ = 0;
  units::Time start_, finish_;
  uint64_t messages_ = 0;
};

}  // namespace lossless::collective
