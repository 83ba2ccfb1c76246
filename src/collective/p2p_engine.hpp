#pragma once
// NCCL-style point-to-point collectives as real packets over the modelled
// fabric (docs/model/collective-engine.md#point-to-point): alltoall (every
// rank sends bytes / N to every rank) and sendrecv (rank r sends `bytes` to
// r + 1 and receives from r - 1), as nccl-tests' alltoall_perf and
// sendrecv_perf call them (ncclSend/ncclRecv in one group), and a single
// send from one rank to another (a pipeline stage's activation or
// gradient: `lossless train --pp`).
//
// Ranks are GPUs, node-major (rank = node x G + gpu). A pair in one node
// talks over NVLink (each GPU's NVLink egress serialises what it sends at the
// NVLink rate, plus a latency); a pair in different nodes over the network as
// RC messages on a queue pair of its own, through the NIC of the destination
// GPU's rail at both ends: NCCL's PXN (NVIDIA/nccl src/graph/paths.cc,
// NCCL_PXN_DISABLE=0 by default) hands the data over NVLink to the GPU next
// to that rail's NIC, so traffic stays on its rail; that NVLink hop costs
// nothing here. A rank's copy to itself costs nothing.
//
// Each connection moves its data in chunks (NCCL_P2P_NET_CHUNKSIZE 128 KiB
// over the network, NCCL_P2P_NVL_CHUNKSIZE 512 KiB over NVLink; NVIDIA/nccl
// src/init.cc, src/include/p2p.h) through NCCL_STEPS = 8 slots: a chunk
// leaves when a local send slot is free (freed when the RC send completes)
// and the receiver has a free slot; the receiver frees it on arrival and
// says so with a small clear-to-send message on a queue pair of its own, as
// the ring engine does. No data dependency between chunks; every
// dependency between ranks travels as packets or NVLink messages.
#include <cstdint>
#include <vector>

#include "collective/ownership.hpp"
#include "collective/qp_set.hpp"
#include "fabric/network.hpp"
#include "sim/simulator.hpp"

namespace lossless::collective {

// kSend: one ncclSend/ncclRecv pair, rank send_from to rank send_to (a
// pipeline stage's activation or gradient); the other ranks take no part.
enum class P2pPattern { kAllToAll, kSendRecv, kSend };

struct P2pSpec {
  P2pPattern pattern = P2pPattern::kAllToAll;
  uint32_t ranks = 2;  // >= 2
  uint32_t send_from = 0, send_to = 1;  // kSend: two different ranks below `ranks`
  // As RingSpec: node-major ranks, NIC k of node n is network host n x
  // nics_per_node + k; NVLink rate and latency per GPU and direction.
  int gpus_per_node = 1;
  int nics_per_node = 1;
  units::Rate nvlink_rate = units::Rate::Gbps(3600);
  units::Time nvlink_latency = units::Time::Ns(600);
  // Connections per peer pair, each with its own queue pairs and slots; a
  // pair's bytes are split evenly over them (NCCL's p2pnChannelsPerPeer:
  // P2pChannelsPerPeer).
  int channels_per_peer = 1;
  int64_t net_chunk_bytes = int64_t{128} << 10;
  int64_t nvlink_chunk_bytes = int64_t{512} << 10;
  int slots = 8;
  int64_t cts_bytes = 64;
  // Host costs (as RingSpec): launch, then per message a hop latency before
  // it is posted (network) or delivered (NVLink).
  units::Time launch_latency;
  units::Time net_hop_latency;
  units::Time nvlink_hop_latency;
  // Queue pairs per network connection and how messages use them, as
  // RingSpec (collective/qp_set.hpp): data connections open
  // qps_per_connection, clear-to-send keeps one.
  int qps_per_connection = 1;
  bool split_data_on_qps = false;
};

// NCCL's channels per peer (NVIDIA/nccl src/graph/paths.cc,
// ncclTopoGetNchannels and ncclTopoComputeP2pChannels, 2.27): 2 per network
// peer, halved while 2 x ranks > 4 x the p2p channels (the communicator's
// channels rounded up to a power of 2), at least 1; NVLink peers get at
// least 2, so the network's count is the minimum every peer uses.
int P2pChannelsPerPeer(int comm_channels, int ranks);

class P2pEngine final : public fabric::TransportObserver, public sim::EventHandler {
 public:
  // Opens the queue pairs. Throws std::invalid_argument for a bad spec or a
  // network with too few hosts.
  P2pEngine(sim::Simulator& sim, fabric::Network& net, const P2pSpec& spec);
  // Starts the collective on a buffer of `bytes` (nccl-tests' size column:
  // alltoall's whole per-rank send buffer, of which each peer gets bytes / N
  // (the last peer the remainder); sendrecv's message) at `now`: installs
  // itself as the transport observer, posts what can leave; stops the
  // simulator when done. The previous collective must be done.
  void Begin(int64_t bytes, units::Time now);

  // Every rank done (distributed: every rank of this process's GPUs).
  bool done() const { return started_ && ranks_done_ == owned_ranks_; }
  // A distributed run: this process runs the GPUs `own` gives and the
  // connections they send on (collective/ownership.hpp). Before the first Begin.
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
  // Of the current (or last) collective: data bytes rank `rank` sent to
  // other ranks (network and NVLink), over the network; received; what
  // network host `host` sent.
  int64_t BytesSent(uint32_t rank) const;
  int64_t NetworkBytesSent(uint32_t rank) const;
  int64_t BytesReceived(uint32_t rank) const;
  int64_t NicBytesSent(uint32_t host) const;
  // The most receive slots any connection held at once (never above slots).
  int max_slots_used() const { return max_slots_used_; }

  void OnSendComplete(uint32_t qp, uint64_t tag, units::Time at) override;
  void OnRecvComplete(uint32_t qp, units::Time at) override;
  void OnEvent(uint32_t kind, uint64_t arg) override;

 private:
  // A one-way connection src -> dst: data QP (or NVLink) plus a
  // clear-to-send QP (or NVLink) back.
  struct Conn {
    uint32_t src = 0, dst = 0;
    bool nvlink = false;
    uint32_t host = 0;           // sending NIC (network only)
    QpSet data;                  // network only: its data queue pairs
    uint32_t cts_qp = 0;
    int64_t bytes = 0;           // of the current collective
    int64_t posted = 0;          // bytes posted
    int64_t chunk = 0;
    int64_t msgs = 0, sent_done = 0, received = 0, cts_back = 0;
    int credits = 0, send_slots = 0;
  };
  enum EventKind : uint32_t { kNvData = 0, kNvCts = 1, kNetPost = 2, kLaunch = 3 };
  void Progress(uint32_t id);
  void Post(uint32_t lane, int64_t bytes);
  void PostNow(uint32_t lane, int64_t bytes);
  // NVLink egress of `gpu`: when a message of `bytes` sent now arrives.
  units::Time NvArrival(uint32_t gpu, int64_t bytes);
  void DataArrived(uint32_t id, units::Time at);
  void CtsArrived(uint32_t id, units::Time at);
  void SendDone(uint32_t id, units::Time at);
  void MaybeDone(uint32_t rank, units::Time at);

  sim::Simulator& sim_;
  fabric::Network& net_;
  P2pSpec spec_;
  std::vector<Conn> conns_;
  std::vector<std::vector<uint32_t>> out_, in_;  // per rank: its connections
  std::vector<uint32_t> qp_conn_;                // QP -> connection x 2 + (1 if CTS)
  std::vector<int64_t> nv_busy_;                 // per GPU: NVLink egress busy until (ps)
  std::vector<uint32_t> gpu_entity_;
  GpuOwnership own_;
  uint32_t owned_ranks_ = 0;  // GPUs this process runs
  // Per lane (connection x 2 + 1 for its clear-to-send direction): bytes
  // waiting out the network hop latency, in posting order.
  std::vector<int64_t> sent_, net_sent_, recv_, nic_sent_;
  std::vector<bool> rank_done_;
  uint32_t ranks_done_ = 0;
  bool started_ = false, launched_ = false;
  units::Time start_, finish_;
  int max_slots_used_ = 0;
};

}  // namespace lossless::collective
