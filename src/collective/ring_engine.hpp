#pragma once
// NCCL-style ring collectives as real packets over the modelled fabric
// (docs/model/collective-engine.md): one engine, parameterised by the
// collective's step plan (RingPlan). Ranks are GPUs, node-major (rank =
// node x G + gpu); consecutive ranks of a ring in one node talk over NVLink
// (modelled per message: each GPU's NVLink egress serialises what it sends
// at the NVLink rate, plus a latency), ranks in different nodes over the
// network through the channel's NIC (rail) at both ends, as RC messages:
// each channel has its own ring order and its own queue pairs, so ECMP
// spreads them. With one GPU and one NIC per node a rank is a host.
//
// Step plans (NVIDIA/nccl src/device/{all_reduce,reduce_scatter,all_gather,
// broadcast,reduce}.h, runRing). Per channel the buffer is cut into loops;
// in each loop the rank at position p sends at step k the part
// PartAt(plan, n, p, k) of the loop (none: -1), cut into slices:
// - all_reduce: loops of N x chunk, N parts, 2(N - 1) steps: part (p - k)
//   mod N for k < N - 1 (reduce-scatter), then (p + 1 - (k - N + 1)) mod N
//   (all-gather);
// - reduce_scatter, all_gather: loops of N x chunk (the whole N-rank buffer),
//   N parts, N - 1 steps, part (p - k) mod N. The two move the same bytes in
//   the same order; they differ in what the GPU does with them (reduce or
//   copy), which costs no time here;
// - broadcast, reduce: a pipelined chain of N - 1 hops around the ring:
//   loops of one chunk, one part; the rank j hops after the chain's start
//   (broadcast: the root; reduce: the rank after the root, so the chain ends
//   at the root) sends at step j, the chain's last rank sends nothing.
// A slice of step k >= 1 may leave only when the slice it depends on (step
// k - 1, same slice) has arrived from the previous rank, a local send slot
// is free (freed when the RC send completes) and the next rank has a free
// receive slot. Receive slots come back as a small clear-to-send message on
// a QP of their own, as NCCL's receiver posts its buffer to the sender
// (src/transport/net_ib.cc): every dependency between ranks travels as
// packets or NVLink messages. Reduction costs no time (a GPU reduces far
// faster than a NIC sends); a PXN hop (the node's last GPU handing data to
// the rail GPU's NIC) costs nothing extra.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "collective/ownership.hpp"
#include "collective/protocol.hpp"
#include "collective/qp_set.hpp"
#include "collective/rail_path.hpp"
#include "collective/step_observer.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {

struct Ring {
  std::vector<uint32_t> ranks;  // ring order
  uint32_t nic = 0;             // the NIC (rail) every node uses on this channel
};

enum class RingPlan { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce };

// Steps per loop, parts per loop, and the part the rank at position p (for
// broadcast and reduce: p hops after the chain's start) sends at step k, or
// -1. n >= 2.
int RingSteps(RingPlan plan, int64_t n);
int64_t RingParts(RingPlan plan, int64_t n);
int64_t PartAt(RingPlan plan, int64_t n, int64_t p, int64_t k);

struct RingSpec {
  RingPlan plan = RingPlan::kAllReduce;
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
  // The buffer for Start, split over the channels: the all_reduce, broadcast
  // or reduce buffer; for reduce_scatter and all_gather the whole N-rank
  // buffer (nccl-tests' size column).
  int64_t bytes = 0;
  // NCCL Simple protocol defaults: NCCL_BUFFSIZE 4 MiB over NCCL_STEPS 8
  // steps of 512 KiB; a chunk is 4 steps, a slice 2 steps, so 4 slices are
  // in flight per connection (NVIDIA/nccl src/include/collectives.h,
  // ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS and _SLICESTEPS). Broadcast
  // and reduce use chunk = slice = one step and 8 slots (BROADCAST_*STEPS,
  // REDUCE_*STEPS = 1): SetNcclSimpleSteps sets them.
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
  // Per rail (index = Ring::nic; empty: none), the GPU-to-NIC path of its
  // node (collective/rail_path.hpp): data messages staged in host memory
  // without GPUDirect RDMA, at the sender before they are posted and at the
  // receiver before the rank sees them; clear-to-send messages are not.
  std::vector<RailPath> rail_paths;
  // Queue pairs per network connection (NCCL_IB_QPS_PER_CONNECTION, NCCL's
  // default 1), each with its own entropy (UDP source port / flow), so ECMP
  // hashes them apart. With split_data_on_qps off (NCCL_IB_SPLIT_DATA_ON_QPS
  // 0, NCCL's default since 2.20) each data message goes whole on the next
  // QP in turn; on, each message is cut into one part per QP of
  // ceil(ceil(size / N) / 128) x 128 bytes (NVIDIA/nccl
  // src/transport/net_ib, ncclIbMultiSend). Either way the message is done,
  // at both ends, when all its parts are, in posting order (NCCL's proxy
  // tests its requests in order). Clear-to-send messages keep one QP, as
  // NCCL posts its receive FIFO on one QP per NIC (ncclIbPostFifo).
  int qps_per_connection = 1;
  bool split_data_on_qps = false;
  // The protocol (collective/protocol.hpp): every data message of P payload
  // bytes goes out as wire.WireBytes(P) bytes, each GPU writes at most
  // wire.gpu_rate of payload. Simple by default.
  WireProtocol wire;
};

// Sets spec's chunk, slice and slots to NCCL's Simple defaults for its plan.
void SetNcclSimpleSteps(RingSpec& spec);
// Sets spec's protocol, chunk, slice and slots for protocol `p`: Simple as
// SetNcclSimpleSteps with a step of simple_buffsize / NCCL_STEPS; LL and
// LL128 one step per slice and chunk, 8 slots, a step of 32 KiB (LL: 64 KiB
// of lines) or 576,000 B (LL128: 614,400 B of lines) of payload
// (NVIDIA/nccl src/include/collectives.h, src/enqueue.cc).
void SetNcclSteps(RingSpec& spec, Protocol p, units::Rate gpu_rate = units::Rate(),
                  int64_t simple_buffsize = int64_t{1} << 22);

class RingEngine final : public fabric::TransportObserver, public sim::EventHandler {
 public:
  // Opens the queue pairs and installs itself as the network's transport
  // observer. Throws std::invalid_argument for a bad spec.
  RingEngine(sim::Simulator& sim, fabric::Network& net, const RingSpec& spec);
  // Starts a collective of spec.bytes (Start) or `bytes` (Begin) at `now`
  // (the simulator's current time), rooted at rank `root` for broadcast and
  // reduce (ignored otherwise): (re)installs itself as the network's
  // transport observer, posts what can leave; when it is done it stops the
  // simulator (sim::Simulator::Stop). The same queue pairs serve one
  // collective after another; the previous one must be done. Throws
  // std::invalid_argument for no bytes or a root that is not in the rings.
  void Start(units::Time now, uint32_t root = 0);
  void Begin(int64_t bytes, units::Time now, uint32_t root = 0);

  // Every record done (distributed: every record of this process's GPUs).
  bool done() const { return ranks_done_ == owned_records_; }
  units::Time start() const { return start_; }
  // When the last rank was done: its data acknowledged and its lent receive
  // slots back (nothing of the collective left in flight).
  units::Time finish() const { return finish_; }
  // Data bytes rank `rank` sent (payload, first transmissions) over all
  // channels, over the network and over NVLink; what it received; what
  // network host (NIC) `host` sent for this collective. All of the current
  // (or last) collective.
  int64_t BytesSent(uint32_t rank) const;
  int64_t NetworkBytesSent(uint32_t rank) const;
  int64_t BytesReceived(uint32_t rank) const;
  int64_t NicBytesSent(uint32_t host) const;
  // all_reduce, reduce_scatter, all_gather: what every rank must send by the
  // ring's formula, 2 (N - 1) / N x bytes or (N - 1) / N x bytes (exact when
  // each channel's share divides into N equal parts per loop); 0 for the
  // chains, where it depends on the rank's place in each channel's chain.
  int64_t ExpectedBytesPerRank() const;
  const RingSpec& spec() const { return spec_; }
  uint64_t messages() const { return messages_; }
  // The most receive slots any rank held at once (received, not yet
  // forwarded): never above spec.slots while the clear-to-send flow works.
  size_t max_slots_used() const { return max_slots_used_; }
  // Tells `obs` (null: nobody) about every message posted and completed
  // (channel = index into spec.rings, step as in PartAt).
  void set_step_observer(StepObserver* obs) { step_obs_ = obs; }
  // A distributed run: this process runs the records of the GPUs `own`
  // gives (collective/ownership.hpp). Before the first Begin.
  void set_ownership(GpuOwnership own);
  // A lower bound on the bytes still to reach each network host (NIC) for
  // the records of this process's GPUs in the current collective, added to
  // by_host (indexed by host): the data messages they have not received yet
  // over the network, less the first spec.slots of each connection, which
  // may be posted and partly on their way (a sender has at most slots
  // unconsumed messages out). A distributed run's stop bound (no record can
  // be done before these bytes have arrived, one frame after another).
  void AddBytesStillToArrive(std::vector<int64_t>& by_host) const;

  void OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) override;
  void OnRecvComplete(uint32_t qp, units::Time at) override;
  void OnEvent(uint32_t kind, uint64_t arg) override;  // NVLink deliveries

 private:
  // A one-way connection between two ranks: an RC QP, or NVLink. Small:
  // every delivery reads it; with the queue pairs inside (now qps_) the
  // connections of 128 GPUs took 655 KB of the core's 1 MiB second-level
  // cache (docs/benchmarks.md, "Per packet-hop: what the 2x compares").
  struct Conn {
    bool nvlink = false;
    bool cts = false;   // carries clear-to-send messages
    uint32_t id = 0;    // QP, or NVLink connection index
    uint32_t rank = 0;  // the record (channel x N + position) that sends on it
    uint32_t to = 0;    // the record its messages are for: the sender's next, or for
                        // clear-to-send its previous (a delivery need not read the sender's)
  };
  struct NvConn {
    uint32_t src_gpu = 0;  // rank of the sender (its NVLink egress)
    uint32_t conn = 0;     // index into conns_
  };
  enum EventKind : uint32_t { kNvDelivered = 0, kNetPost = 1, kLaunch = 2, kUnstaged = 3 };
  // Posts `bytes` on `conn` after `delay` (plus the network hop latency).
  void Post(uint32_t conn, int64_t bytes, int64_t delay_ps = 0);
  // A data message of `payload` bytes from record i: paced by its GPU's
  // protocol rate, posted in the protocol's lines.
  void PostData(size_t i, int64_t payload);
  void PostNow(uint32_t conn, int64_t bytes);
  // What a record sends, per channel: the loop/step/slice geometry every
  // record of the channel shares (its share of the buffer), from which a
  // record's messages are computed in order as it goes (no list per record:
  // a list was out of the caches at each step of a large collective).
  struct Geometry {
    int64_t share = 0;  // bytes of the buffer this channel carries
    int64_t span = 0;   // bytes per full loop: parts x chunk
    int64_t last = 0;   // bytes of the last loop (span if it is full)
    int32_t loops = 0;
    // The last loop's parts by index: full_parts parts of `part` bytes
    // (part_slices messages each), then one of `tail` bytes if tail > 0.
    int32_t full_parts = 0;
    int32_t part_slices = 0;
    int32_t tail_slices = 0;
    int64_t part = 0;
    int64_t tail = 0;
  };
  // A position in a record's message sequence (loop, step, slice), in the
  // order the record sends them; loop == loops at the end. `bytes` is the
  // block's (loop, step), `slices` its messages.
  struct Cursor {
    int32_t loop = 0;
    int32_t step = 0;
    int32_t slice = 0;
    int32_t slices = 0;
    int64_t bytes = 0;
    // Past (l, k, j) in (loop, step, slice) order, the order of the list
    // index it stands for: message (l, k, j) is behind it.
    bool After(int32_t l, int32_t k, int32_t j) const {
      return loop != l ? loop > l : step != k ? step > k : slice > j;
    }
  };
  // Per (channel, rank). 32-bit counts and indices, three cache lines: a
  // delivery reads the records of two ranks (Begin checks the counts fit).
  struct alignas(64) Rank {
    uint32_t rank = 0;
    uint32_t host = 0;     // network host of its NIC on this channel
    uint32_t data = 0;     // connection to the next rank
    uint32_t cts = 0;      // connection to the previous rank
    uint32_t prev = 0;     // index of the previous rank's record
    uint32_t next = 0;
    uint32_t channel = 0;
    int32_t pos = 0;       // its position in the plan (for a chain: hops after the start)
    int32_t prev_pos = 0;  // the previous rank's
    uint32_t total = 0;    // messages it sends in this collective
    uint32_t next_send = 0;
    uint32_t sends_done = 0;
    uint32_t received = 0;  // data messages from the previous rank
    uint32_t consumed = 0;  // of those, forwarded (or final) and their slot freed
    Cursor send;           // its next message to send (index next_send)
    Cursor recv;           // the previous rank's next message to arrive (index received)
    Cursor consume;        // the previous rank's message at index consumed
    Cursor staged;         // the previous rank's next message to reach the staging path
    int credits = 0;       // free receive slots at the next rank
    int send_slots = 0;    // free local send slots
    int64_t sent_bytes = 0;
    int64_t net_bytes = 0;
    bool done = false;
  };
  // Cursors over the messages of the record at plan position `pos` of
  // channel `ch`: the first one, and moving one message on.
  Cursor First(uint32_t ch, int32_t pos) const;
  void Next(uint32_t ch, int32_t pos, Cursor& c) const;
  // The first block at or after (loop, step) with a message, into c.
  void Settle(uint32_t ch, int32_t pos, Cursor& c) const;
  int64_t MsgBytes(const Cursor& c) const {
    return std::min(spec_.slice_bytes, c.bytes - int64_t{c.slice} * spec_.slice_bytes);
  }
  void Progress(size_t i);
  void FreeSlots(size_t i);  // sends CTS for received messages no longer needed
  void MaybeDone(size_t i, units::Time at);
  void StepDone(size_t i, units::Time at);  // tells step_obs_

  void Delivered(uint32_t conn, units::Time at);
  // A whole message of connection `conn` done at the sender / the receiver.
  void SendDone(uint32_t conn, units::Time at);
  void RecvDone(uint32_t conn, units::Time at);

  sim::Simulator& sim_;
  fabric::Network& net_;
  RingSpec spec_;
  std::vector<Rank> ranks_;           // channel-major
  std::vector<Geometry> geometry_;    // per channel, of the current collective
  int32_t steps_ = 0;                 // RingSteps of the plan
  int64_t parts_ = 0;                 // RingParts of the plan
  int32_t chunk_slices_ = 0;          // slices of a chunk (a full loop's part)
  std::vector<Conn> conns_;
  // By connection: the queue pairs of a network one (spec.qps_per_connection
  // for data, one for clear-to-send; Conn::id is the first), unused for NVLink.
  std::vector<QpSet> qps_;
  std::vector<uint32_t> qp_conn_;     // QP -> connection, UINT32_MAX if not ours
  std::vector<NvConn> nv_;            // NVLink connections
  std::vector<int64_t> nv_busy_;      // per GPU (rank): its NVLink egress is busy until
  std::vector<int64_t> write_busy_;   // per GPU: writing protocol lines until (gpu_rate)
  std::vector<uint32_t> gpu_entity_;  // per GPU: engine entity of its NVLink events
  bool launched_ = false;
  size_t ranks_done_ = 0;
  int64_t bytes_ = 0;  // of the current collective
  std::vector<int64_t> nic_sent_;  // per network host, of the current collective
  // The rails' GPU-to-NIC paths.
  RailStaging staging_;
  bool started_ = false;
  units::Time start_, finish_;
  uint64_t messages_ = 0;
  size_t max_slots_used_ = 0;
  StepObserver* step_obs_ = nullptr;
  GpuOwnership own_;
  size_t owned_records_ = 0;  // records of the GPUs this process runs
};

}  // namespace lossless::collective
