#pragma once
// NCCL's tree all-reduce as real packets over the modelled fabric
// (docs/model/collective-engine.md#tree-all-reduce): per channel, NCCL's
// double binary tree across nodes with a chain inside each node
// (collective::TreeChannels, orders.hpp); channels [0, C) use tree 0, [C, 2C)
// tree 1, so each tree carries half of the buffer.
//
// Per channel the share of the buffer moves in chunks of one Simple step
// (512 KiB). NCCL's split tree kernel (NVIDIA/nccl src/device/all_reduce.h,
// runTreeSplit) runs both halves at once: a rank sends chunk c up to its
// parent once chunk c has arrived from every child (reduce); the root, once
// it has chunk c from every child, sends the result down; every other rank
// forwards chunk c down to its children once it has arrived from its parent
// (broadcast). Each direction of each tree edge is a connection with
// NCCL_STEPS = 8 slots and the ring engine's clear-to-send flow control
// (a slot is freed when the chunk in it has been reduced into the up send,
// or forwarded to every child); NVLink inside a node, RC queue pairs between
// nodes through the channel's NIC (rail) at both ends (PXN: the GPU that
// attaches to the other node hands its data to the rail GPU for free).
// Reduction costs no time; every dependency between ranks travels as
// packets or NVLink messages.
#include <cstdint>
#include <span>
#include <vector>

#include "collective/model/orders.hpp"
#include "collective/ownership.hpp"
#include "collective/protocol.hpp"
#include "collective/qp_set.hpp"
#include "collective/rail_path.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {

struct TreeSpec {
  // One tree per channel over the same ranks (>= 2), and the NIC index (rail)
  // its inter-node edges use at both ends.
  std::vector<TreeChannel> trees;
  std::vector<uint32_t> nics;  // per channel
  // As RingSpec: node-major ranks; NIC k of node n is network host n x
  // nics_per_node + k; NVLink rate and latency per GPU and direction.
  int gpus_per_node = 1;
  int nics_per_node = 1;
  units::Rate nvlink_rate = units::Rate::Gbps(3600);
  units::Time nvlink_latency = units::Time::Ns(600);
  // NCCL Simple, tree: chunk = one step of NCCL_BUFFSIZE / NCCL_STEPS, 8 in
  // flight per connection (TREE chunkSteps = sliceSteps = 1); Begin may
  // take a smaller one (NcclTreeChunkBytes).
  int64_t chunk_bytes = int64_t{512} << 10;
  int slots = 8;
  int64_t cts_bytes = 64;
  units::Time launch_latency;
  units::Time net_hop_latency;
  units::Time nvlink_hop_latency;
  // Per rail (NIC index; empty: none), the GPU-to-NIC path of its node
  // (collective/rail_path.hpp), as RingSpec::rail_paths.
  std::vector<RailPath> rail_paths;
  // The protocol (collective/protocol.hpp): a chunk of P payload bytes goes
  // out as wire.WireBytes(P), each GPU writes at most wire.gpu_rate of
  // payload. Simple by default. For LL and LL128 the chunk is one step of
  // that protocol (ChunkBytes in collective/model/tuning.hpp).
  WireProtocol wire;
  // Queue pairs per network connection and how messages use them, as
  // RingSpec (collective/qp_set.hpp): data connections open
  // qps_per_connection, clear-to-send keeps one.
  int qps_per_connection = 1;
  bool split_data_on_qps = false;
};

// NCCL's tree chunk for an all-reduce of `bytes` on `channels` channels
// (NVIDIA/nccl src/enqueue.cc, Tree/Simple, pattern TreeUpDown): from one
// step (`step`, 512 KiB), halved while bytes / (channels x chunk) is below
// 8 x depth (down to 128 KiB), 4 x depth (64 KiB), depth (32 KiB); depth is
// NCCL's approximation in src/graph/connect.cc, GPUs per node - 1 +
// floor(log2(nodes)) (TreeDepth).
int64_t NcclTreeChunkBytes(int64_t bytes, int channels, int depth,
                           int64_t step = int64_t{512} << 10);
int TreeDepth(int nodes, int gpus_per_node);
// NCCL's tree chunk under LL128 for an all-reduce of `bytes` on `channels`
// channels of `ranks` ranks over `nodes` nodes (NVIDIA/nccl src/enqueue.cc,
// Tree/LL128): from one LL128 step of lines (614,400 B), halved while
// bytes / (channels x chunk) is below nsteps x 64 / ppn (down to 128 KiB),
// then below nsteps x 16 / ppn (down to 32 KiB), with ppn = ranks / nodes
// and nsteps = 1 + floor(log2(nodes)) + 0.1 x ppn; returned as payload
// bytes (120 of every 128 line bytes: 576,000 B unhalved, 18,000 B at the
// smallest).
int64_t NcclTreeLl128ChunkBytes(int64_t bytes, int channels, int nodes, int ranks);

class TreeEngine final : public fabric::TransportObserver, public sim::EventHandler {
 public:
  // Opens the queue pairs. Throws std::invalid_argument for a bad spec (no
  // channels, a channel that is not one tree over all ranks, a NIC out of
  // range, too few hosts).
  TreeEngine(sim::Simulator& sim, fabric::Network& net, const TreeSpec& spec);
  // Starts an all-reduce of `bytes` per rank at `now`, split over the
  // channels, in chunks of `chunk_bytes` (0: spec.chunk_bytes): installs
  // itself as transport observer, stops the simulator when done. The
  // previous one must be done.
  void Begin(int64_t bytes, units::Time now, int64_t chunk_bytes = 0);

  // Every record done (distributed: every record of this process's GPUs).
  bool done() const { return started_ && records_done_ == owned_records_; }
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
  units::Time start() const { return start_; }
  units::Time finish() const { return finish_; }
  // Of the current (or last) all-reduce: data bytes rank `rank` sent and
  // received (network and NVLink), sent over the network (payload); what
  // network host `host` sent in protocol bytes (the protocol's lines).
  int64_t BytesSent(uint32_t rank) const;
  int64_t BytesReceived(uint32_t rank) const;
  int64_t NetworkBytesSent(uint32_t rank) const;
  int64_t NicBytesSent(uint32_t host) const;
  int max_slots_used() const { return max_slots_used_; }

  void OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) override;
  void OnRecvComplete(uint32_t qp, units::Time at) override;
  void OnEvent(uint32_t kind, uint64_t arg) override;

 private:
  // One direction of a tree edge in one channel, in two parts. What every
  // step and completion reads (counts of chunks, free slots and credits,
  // both records, the sending NIC) is 32 bytes, two connections to a cache
  // line; what only the network post and the end read is kept apart
  // (ConnRest, rest_), and the data queue pairs apart again (qps_). As one
  // record (224 B with the queue pairs, then 80 B) each connection spanned
  // two cache lines, and the step's reads of them missed the 1 MiB L2 at
  // 128 GPUs (docs/benchmarks.md, "The tree engine's connections in two
  // parts"). Completions are not counted apart: a connection has had
  // sent - (slots - send_slots) sends complete and sent - (slots - credits)
  // credits back. Counts are 32-bit (Begin refuses more than 2^31 - 1 chunks
  // per channel), slots 16-bit (the constructor refuses more than 32,767).
  struct alignas(32) Conn {
    int32_t sent = 0, received = 0, consumed = 0;
    int16_t credits = 0, send_slots = 0;
    uint32_t from = 0;  // sending record (channel x N + rank)
    uint32_t to = 0;    // receiving record
    uint32_t host = 0;  // sending NIC (network only)
    bool up = false;    // child -> parent (reduce) or parent -> child (broadcast)
    bool nvlink = false;
  };
  static_assert(sizeof(Conn) == 32, "two connections to a cache line");
  struct ConnRest {
    uint32_t cts_qp = 0;
    uint32_t peer = 0;    // receiving NIC (network only)
    int32_t arrived = 0;  // chunks the NIC received (staged ones may not be delivered yet)
  };
  // A child's two connections: from it (reduce) and to it (broadcast).
  struct Kid {
    uint32_t up_in = 0;
    uint32_t down_out = 0;
  };
  struct Record {  // one rank in one channel
    uint32_t rank = 0;
    int32_t chunks = 0;
    int64_t share = 0;
    int32_t up_out = -1;   // connection to the parent
    int32_t down_in = -1;  // from the parent
    // Its children's connections: kids_[kids, kids + num_kids), one array for
    // all records (a vector each put two more scattered allocations on every
    // step; docs/benchmarks.md, "Per packet-hop: what the 2x compares").
    uint32_t kids = 0, num_kids = 0;
    bool done = false;
  };
  enum EventKind : uint32_t { kNvData = 0, kNvCts = 1, kNetPost = 2, kLaunch = 3, kUnstaged = 4 };
  int64_t ChunkBytes(const Record& r, int64_t c) const;
  void Progress(uint32_t rec);
  void Consume(uint32_t rec);
  bool Consumable(const Conn& in, int64_t chunk) const;
  // `gpu`: the rank whose proxy posts (the sender's for data, the
  // receiver's for clear-to-send).
  void Post(uint32_t lane, uint32_t gpu, int64_t bytes, int64_t delay_ps = 0);
  void PostNow(uint32_t lane, int64_t bytes);
  void DataArrived(uint32_t conn, units::Time at);
  void CtsArrived(uint32_t conn, units::Time at);
  void SendDone(uint32_t conn, units::Time at);
  void MaybeDone(uint32_t rec, units::Time at);

  sim::Simulator& sim_;
  fabric::Network& net_;
  TreeSpec spec_;
  uint32_t n_ = 0;
  std::vector<Record> records_;  // channel-major
  std::vector<Kid> kids_;        // by record, in record order (Record::kids)
  std::span<const Kid> KidsOf(const Record& r) const { return {kids_.data() + r.kids, r.num_kids}; }
  std::vector<Conn> conns_;
  std::vector<ConnRest> rest_;     // by connection
  std::vector<QpSet> qps_;         // by connection: network only, the data queue pairs
  std::vector<uint32_t> qp_lane_;  // QP -> connection x 2 + (1 if CTS)
  std::vector<int64_t> nv_busy_;   // per GPU (ps)
  std::vector<int64_t> write_busy_;  // per GPU: writing protocol lines until (ps)
  std::vector<uint32_t> gpu_entity_;
  GpuOwnership own_;
  size_t owned_records_ = 0;  // records of the GPUs this process runs
  RailStaging staging_;
  std::vector<int64_t> sent_, recv_, net_sent_, nic_sent_;
  int64_t chunk_ = 0;  // of the current all-reduce
  size_t records_done_ = 0;
  bool started_ = false, launched_ = false;
  units::Time start_, finish_;
  int max_slots_used_ = 0;
};

}  // namespace lossless::collective
