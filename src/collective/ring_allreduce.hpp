#pragma once
// NCCL-style ring all-reduce as real packets over the modelled fabric
// (docs/model/collective-engine.md). Ranks are GPUs, node-major (rank =
// node x G + gpu); consecutive ranks of a ring in one node talk over NVLink
// (modelled per message: each GPU's NVLink egress serialises what it sends
// at the NVLink rate, plus a latency), ranks in different nodes over the
// network through the channel's NIC (rail) at both ends, as RC messages:
// each channel has its own ring order and its own queue pairs, so ECMP
// spreads them. With one GPU and one NIC per node a rank is a host.
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
// packets or NVLink messages. Reduction costs no time (a GPU reduces far
// faster than a NIC sends); a PXN hop (the node's last GPU handing data to
// the rail GPU's NIC) costs nothing extra.
#include <cstdint>
#include <vector>

#include "fabric/network.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {

struct Ring {
  std::vector<uint32_t> ranks;  // ring order
  uint32_t nic = 0;             // the NIC (rail) every node uses on this channel
};

struct RingAllReduceSpec {
  // Per channel, the ranks in ring order (each a permutation of the same set
  // of at least 2 ranks).
  std::vector<Ring> rings;
  // Ranks are node-major: rank = node x gpus_per_node + gpu. NIC k of node n
  // is network host n x nics_per_node + k (the rail-optimized numbering).
  int gpus_per_node = 1;
  int nics_per_node = 1;
  // NVLink per GPU and direction: H100 SXM5 NVLink 4 is 900 GB/s both
  // directions together (NVIDIA H100 datasheet), 450 GB/s each way; the
  // latency is NCCL's lowest NVLink hop latency (hwLat NVLINK Ring LL, 0.6 us,
  // NVIDIA/nccl src/graph/tuning.cc).
  units::Rate nvlink_rate = units::Rate::Gbps(3600);
  units::Time nvlink_latency = units::Time::Ns(600);
  int64_t bytes = 0;  // per rank buffer for Start (every rank reduces it), split over the channels
  // NCCL Simple protocol defaults: NCCL_BUFFSIZE 4 MiB over NCCL_STEPS 8
  // steps of 512 KiB; a chunk is 4 steps, a slice 2 steps, so 4 slices are
  // in flight per connection (NVIDIA/nccl src/include/collectives.h).
  int64_t chunk_bytes = int64_t{2} << 20;
  int64_t slice_bytes = int64_t{1} << 20;
  int slots = 4;
  int64_t cts_bytes = 64;  // the clear-to-send message
  // Host costs (not fabric), NCCL's per-step software latencies: the launch
  // delays the first posts; every message waits its hop's latency before it
  // is posted (network) or delivered (NVLink). Zero here; `perf` sets NCCL's
  // baseLat and hwLat of Ring/Simple (collective/model/tuning.hpp), so the
  // engine and the alpha-beta model share one set of numbers.
  units::Time launch_latency;
  units::Time net_hop_latency;
  units::Time nvlink_hop_latency;
};

class RingAllReduce final : public fabric::TransportObserver, public sim::EventHandler {
 public:
  // Opens the queue pairs and installs itself as the network's transport
  // observer. Throws std::invalid_argument for a bad spec.
  RingAllReduce(sim::Simulator& sim, fabric::Network& net, const RingAllReduceSpec& spec);
  // Starts an all-reduce of spec.bytes (Start) or `bytes` per rank (Begin)
  // at `now` (the simulator's current time): posts what can leave; when it is
  // done it stops the simulator (sim::Simulator::Stop). The same
  // queue pairs serve one all-reduce after another; the previous one must be
  // done.
  void Start(units::Time now);
  void Begin(int64_t bytes, units::Time now);

  bool done() const { return ranks_done_ == ranks_.size(); }
  units::Time start() const { return start_; }
  // When the last rank was done: its data acknowledged and its lent receive
  // slots back (nothing of the collective left in flight).
  units::Time finish() const { return finish_; }
  // Data bytes rank `rank` sent (payload, first transmissions) over all
  // channels, over the network and over NVLink.
  int64_t BytesSent(uint32_t rank) const;
  int64_t NetworkBytesSent(uint32_t rank) const;
  // What every rank must send by the ring's formula: 2 (N - 1) / N x bytes
  // (exact when each channel's share divides into N equal parts per loop).
  int64_t ExpectedBytesPerRank() const;
  uint64_t messages() const { return messages_; }
  // The most receive slots any rank held at once (received, not yet
  // forwarded): never above spec.slots while the clear-to-send flow works.
  size_t max_slots_used() const { return max_slots_used_; }

  void OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) override;
  void OnRecvComplete(uint32_t qp, units::Time at) override;
  void OnEvent(uint32_t kind, uint64_t arg) override;  // NVLink deliveries

 private:
  // A one-way connection between two ranks: an RC QP, or NVLink.
  struct Conn {
    bool nvlink = false;
    uint32_t id = 0;       // QP, or NVLink connection index
    uint32_t rank = 0;     // the record (channel x N + position) that sends on it
    bool cts = false;      // carries clear-to-send messages
  };
  struct NvConn {
    uint32_t src_gpu = 0;  // rank of the sender (its NVLink egress)
    uint32_t conn = 0;     // index into conns_
  };
  enum EventKind : uint32_t { kNvDelivered = 0, kNetPost = 1, kLaunch = 2 };
  void Post(uint32_t conn, int64_t bytes);
  void PostNow(uint32_t conn, int64_t bytes);
  struct Msg {
    int64_t bytes = 0;
    int32_t dep = -1;  // index of the received message it forwards (-1: step 0)
  };
  // Per (channel, rank).
  struct Rank {
    uint32_t rank = 0;
    uint32_t data = 0;     // connection to the next rank
    uint32_t cts = 0;      // connection to the previous rank
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
    int64_t net_bytes = 0;
    bool done = false;
  };
  void Progress(size_t i);
  void FreeSlots(size_t i);  // sends CTS for received messages no longer needed
  void MaybeDone(size_t i, units::Time at);

  void Delivered(uint32_t conn, units::Time at);

  sim::Simulator& sim_;
  fabric::Network& net_;
  RingAllReduceSpec spec_;
  std::vector<Rank> ranks_;           // channel-major
  std::vector<Conn> conns_;
  std::vector<uint32_t> qp_conn_;     // QP -> connection, UINT32_MAX if not ours
  std::vector<NvConn> nv_;            // NVLink connections
  std::vector<int64_t> nv_busy_;      // per GPU (rank): its NVLink egress is busy until
  std::vector<uint32_t> gpu_entity_;  // per GPU: engine entity of its NVLink events
  std::vector<std::vector<int64_t>> delayed_;  // per connection: bytes waiting out the hop latency
  std::vector<size_t> delayed_head_;
  bool launched_ = false;
  size_t ranks_done_ = 0;
  int64_t bytes_ = 0;  // of the current all-reduce
  bool started_ = false;
  units::Time start_, finish_;
  uint64_t messages_ = 0;
  size_t max_slots_used_ = 0;
};

}  // namespace lossless::collective
