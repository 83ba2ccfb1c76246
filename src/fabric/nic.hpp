#pragma once
// The host side of the network, one component: the NICs of the topology's
// host endpoints. A NIC serves its queue pairs and raw flows round robin at
// line rate (per-flow pacing, a PCIe cap on injection, InfiniBand credits at
// injection), receives packets, answers ECN marks and FECNs with CNPs and
// BECNs, runs the DCQCN and IB CC reaction points and the RDMA RC transport
// (src/rdma, engine-free), delays posts through a virtualization layer, and
// holds what it receives while its pipeline is stalled (a fault).
//
// Its seam with the link layer (fabric::Network) is two calls
// (docs/architecture.md, "Hosts, NICs and GPU machines"): NextPacket, "give
// me the next packet for this port", when the host's port can start a frame,
// and Receive, "this packet arrived", when a frame has reached the host. A
// host is one NIC endpoint with one port: that is the topology's host kind;
// a GPU machine with 8 NICs is 8 endpoints. The events of a NIC (flow starts,
// congestion-control and transport timers, its stall) are its port entity's
// events, run by this component's OnEvent.
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "cc/dcqcn.hpp"
#include "cc/ib_cc.hpp"
#include "fabric/network_config.hpp"
#include "fabric/packet.hpp"
#include "fabric/port.hpp"
#include "rdma/rc.hpp"
#include "sim/simulator.hpp"
#include "units/units.hpp"

namespace lossless::fabric {

class Network;

// One switch of an explicit route: the switch (topology node) and, when
// tclass >= 0, the traffic class the packet takes from this switch on (a
// Tagger-style lossless-priority change at this hop: the packet is queued at
// this switch's egress, and sent, on the new class).
struct RouteHop {
  uint32_t node = 0;
  int tclass = -1;
};

struct FlowSpec {
  uint32_t src = 0;  // host rank
  uint32_t dst = 0;
  int64_t bytes = 0;
  Time start;
  int tclass = -1;          // -1 = NicConfig::data_class
  Rate rate;                // pacing rate; 0 = line rate
  int32_t max_payload = 0;  // bytes per packet; 0 = the framing's MTU
  // Explicit route (source routing): the switches the flow's data packets
  // traverse, in order, from the source's edge switch to the destination's;
  // consecutive switches must be linked (the first link between them is
  // used). Empty = the network's routing. Checked by AddFlow.
  std::vector<RouteHop> route;
  // An RDMA RC queue pair (acknowledged, recovers losses) instead of raw bytes.
  bool rc = false;

  static FlowSpec Of(uint32_t src, uint32_t dst, int64_t bytes, Time start = Time::Zero(),
                     int tclass = -1) {
    FlowSpec f;
    f.src = src;
    f.dst = dst;
    f.bytes = bytes;
    f.start = start;
    f.tclass = tclass;
    return f;
  }
};

struct FlowStats {
  FlowSpec spec;
  int64_t sent_bytes = 0;
  int64_t recv_bytes = 0;
  int64_t packets = 0;
  int64_t drops = 0;
  Time finish = Time::Max();  // last byte delivered; Max() if never
  Time max_latency;           // largest one-way packet latency
  // RC queue pairs: data packets sent again, NAKs received, ACK timeouts.
  uint64_t retx_packets = 0;
  uint64_t naks = 0;
  uint64_t timeouts = 0;
  bool done() const { return finish != Time::Max(); }
  Time fct() const { return finish - spec.start; }
};

// What the RC transport tells the layer above it (collectives), each at the
// event of the NIC concerned: the requester's when a message is acknowledged,
// the responder's when the next message of a QP (in posting order) has
// arrived whole.
class TransportObserver {
 public:
  virtual ~TransportObserver() = default;
  virtual void OnSendComplete(uint32_t qp, uint64_t tag, Time at) = 0;
  virtual void OnRecvComplete(uint32_t qp, Time at) = 0;
};

// A queue pair that ran out of retries: the run stops (Network::qp_failure).
struct QpFailure {
  uint32_t qp = 0;
  Time at;
  std::string what;  // names the QP, its hosts, the link of its last loss and the time
  // what[0, head_len) is all but the part naming the link of the last loss
  // (a distributed run sets that part from the rank that saw the loss).
  size_t head_len = 0;
};

// Where and when a flow last lost a frame (Nics::NoteLoss): the (time, key)
// of the event, the port; time_ps -1 for none.
struct LastLoss {
  int64_t time_ps = -1;
  uint64_t key = 0;
  uint32_t port = UINT32_MAX;
};

class Nics final : public sim::EventHandler {
 public:
  // Flows and queue pairs: Network's AddFlow, AddQp, PostSend (network.hpp
  // says what they do).
  uint32_t AddFlow(const FlowSpec& spec);
  uint32_t AddQp(const FlowSpec& spec);
  void PostSend(uint32_t qp, int64_t bytes, uint64_t tag);
  void set_transport_observer(TransportObserver* obs) { transport_obs_ = obs; }
  const QpFailure* qp_failure() const { return qp_failure_.empty() ? nullptr : &qp_failure_[0]; }
  const rdma::RcRequester& Requester(uint32_t qp) const { return rcq_[flow_state_[qp].rc]; }
  const rdma::RcResponder& Responder(uint32_t qp) const { return rcr_[flow_state_[qp].rc]; }
  void SetPcieRate(uint32_t host, Rate rate);
  void StallReceive(uint32_t host, Time from, Time until);
  int64_t HeldBytes(uint32_t host) const;
  void InjectCnp(uint32_t flow, Time at);

  const std::vector<FlowStats>& flows() const { return flows_; }
  size_t flows_done() const { return flows_done_; }
  uint64_t packets_created() const { return packets_created_; }
  uint64_t cnps_sent() const { return cnps_; }
  const cc::IbCcReactionPoint& IbCcPoint(uint32_t flow) const { return ibcc_rp_[flow]; }
  const cc::DcqcnReactionPoint& ReactionPoint(uint32_t flow) const { return rp_[flow]; }
  uint32_t num_hosts() const { return static_cast<uint32_t>(nics_.size()); }
  uint32_t HostPort(uint32_t host) const { return nics_[host].port; }
  size_t persistent() const { return persistent_; }

  // --- The seam with the link layer (Network's packet path) ----------------
  // The next packet host port `p` sends now, or kNoPacket; then `wake_at` is
  // lowered to when a paced or paused flow (or the PCIe cap) lets it send.
  PacketRef NextPacket(Port& p, int64_t& wake_at);
  // Whether host `host` has flows with something to send.
  bool HasActive(uint32_t host) const { return !nics_[host].active.empty(); }
  // Packet r has reached host `host` (its last bit, past the link).
  void Receive(uint32_t host, PacketRef r);
  // The same while the host's receive pipeline is stalled: held.
  [[gnu::cold, gnu::noinline]] void Hold(uint32_t host, PacketRef r);
  // A frame of `flow` was lost on the link port `port` sends on (bit errors,
  // injected loss) or dropped at switch port `port`: a QP failure report
  // names the link of the last loss.
  // The event's (time, key) are kept too: distributed, the losses of a flow
  // are seen on several ranks, and the latest names the link (LastLossOf).
  [[gnu::cold]] void NoteLoss(uint32_t flow, uint32_t port);
  LastLoss LastLossOf(uint32_t flow) const;
  // Distributed: the failure the failing rank recorded, with the port of the
  // flow's last loss over all ranks (kNone: none), becomes this network's.
  void ImportQpFailure(QpFailure fail, uint32_t loss_port);
  // A packet of `flow` was dropped (anywhere; FlowStats::drops).
  void CountDrop(uint32_t flow) { ++flows_[flow].drops; }
  // The offset of the flow's explicit route in Network's resolved hops
  // (kNone without one): switches read it on the source-routed path.
  uint32_t RouteOffset(uint32_t flow) const { return flow_state_[flow].route_off; }

  void OnEvent(uint32_t kind, uint64_t arg) override;

 private:
  friend class Network;  // builds it, and merges a distributed run's results
  static constexpr uint32_t kNone = UINT32_MAX;
  // Event kinds (their numbers are in per-entity digests: kept as they were
  // when these events were Network's).
  enum EventKind : uint32_t {
    kFlowStart = 2,
    kCcTimer = 6,
    kNpTimer = 7,
    kNicStall = 11,
    kNicResume = 12,
    kNicStorm = 13,
    kIbCcTimer = 14,
    kCnpInject = 16,
    kRcTimer = 17,
    kRcGapTimer = 18,
    kVirtPost = 19,
  };
  struct Nic {
    uint32_t port = 0;
    bool stalled = false;          // receive pipeline stalled (fault)
    bool storm_stop = false;       // stall prevention stopped sending PAUSE
    int64_t stuck_since = -1;      // first packet held while stalled
    PacketFifo held;               // received packets waiting for the pipeline
    std::vector<uint32_t> active;  // flows with bytes left to send
    size_t cursor = 0;
    int64_t next_ps = 0;   // PCIe cap: earliest next injection
    int64_t pcie_bps = 0;  // PCIe cap (NicConfig::pcie_rate or SetNicPcieRate); 0 = none
  };
  struct FlowState {
    int64_t next_ps = 0;   // per-flow pacing (congestion control)
    int64_t rate_bps = 0;  // 0 = line rate
    int32_t max_payload = 0;
    uint32_t next_seq = 0;
    uint16_t entropy = 0;
    uint8_t tclass = 0;
    uint32_t route_off = kNone;  // explicit route: Network's resolved hops from here
    int64_t gap_ps = 0;          // IB CC: injection gap after each packet
    uint32_t rc = kNone;         // RC queue pair: index into rcq_ / rcr_
    bool active = false;         // in its NIC's active list
    bool persistent = false;     // a QP of AddQp: never done
  };

  Nics(Network& net, sim::Simulator& sim, const NetworkConfig& cfg, PacketPool& pool,
       std::vector<Port>& ports)
      : net_(net), sim_(sim), cfg_(cfg), pool_(pool), ports_(ports) {}
  // One NIC per host rank, on port host_port[rank] (after the ports exist).
  void Build(const std::vector<uint32_t>& host_port);

  void StartFlow(uint32_t flow) { Activate(flow); }
  void Activate(uint32_t flow);  // puts the flow in its NIC's active list and kicks
  // Takes a flow off its NIC's round robin (an RC queue pair with nothing left to send).
  void Deactivate(uint32_t flow);
  // Virtualization layer: the delay of a message host `host` posts now
  // (draws from its stream), and the post itself once it has passed.
  int64_t VirtDelayPs(uint32_t host);
  void PostToNic(uint32_t qp, int64_t bytes, uint64_t tag);
  void OnVirtPost(uint32_t qp);
  void SendCnp(uint32_t host, uint32_t flow, int cls);
  // Queues a small packet (CNP, BECN, ACK/NAK) at host `host`'s port, to the
  // other end of `flow`, on class `tclass`.
  void SendControl(uint32_t host, uint32_t flow, PacketKind kind, int cls, int32_t payload,
                   uint32_t seq, uint8_t flags);
  // RC transport.
  void RcReceiveData(uint32_t host, PacketRef r);
  void RcReceiveAck(PacketRef r);
  void ArmRcTimer(uint32_t flow);
  void OnRcTimer(uint32_t flow);
  // Out-of-order placement: the responder's reorder-window timer (a NAK for
  // a gap no later packet revealed), the destination NIC's event.
  void ArmRcGapTimer(uint32_t flow);
  void OnRcGapTimer(uint32_t flow);
  [[gnu::cold, gnu::noinline]] void QpFail(uint32_t flow);
  std::string LossWhere(uint32_t port) const;  // the failure text's last part
  // Congestion control: DCQCN's reaction and notification points, IB CC's.
  void OnBecn(uint32_t flow);
  void ArmIbCcTimer(uint32_t flow);
  void OnIbCcTimer(uint32_t flow);
  void OnCnp(uint32_t flow);
  void ArmCcTimer(uint32_t flow);
  void OnCcTimer(uint32_t flow);
  void ArmNpTimer(uint32_t host);
  void OnNpTimer(uint32_t host);
  // The reaction point changed `flow`'s rate: the pacing gap it is waiting
  // out is rescaled (docs/model/dcqcn.md#pacing).
  void SetPacedRate(uint32_t flow, int64_t bps);
  // The stalled-NIC fault (docs/model/pfc.md#pause-storms-and-stalled-nics).
  void OnNicStall(uint32_t host);
  void OnNicStorm(uint32_t host, bool error);
  [[gnu::cold, gnu::noinline]] void NicResume(uint32_t host);
  // A flow's last byte arrived.
  void Finished(FlowStats& st, Time now);
  // The source NIC's own view of a flow's end, for its reaction point
  // (DCQCN, IB CC): a raw flow has sent every byte; an RC flow has every
  // byte acknowledged. Not FlowStats::done(), which the destination's NIC
  // writes when the last byte arrives: a source reads only what it owns
  // (docs/architecture.md, "Engine conventions"), so a run split over
  // ranks sees what the serial one sees. Queue pairs (AddQp) never end.
  bool SourceDone(uint32_t flow) const;
  // The entity of a flow's source NIC: its start, its congestion-control
  // timers and injected CNPs are that NIC's events.
  uint32_t SourceEntity(uint32_t flow) const {
    return ports_[nics_[flows_[flow].spec.src].port].entity;
  }
  uint32_t HostEntity(uint32_t host) const { return ports_[nics_[host].port].entity; }

  Network& net_;  // the link layer: kicks, credits, PAUSE, drops
  sim::Simulator& sim_;
  const NetworkConfig cfg_;  // Network's, copied: immutable, and read per packet without a pointer
  PacketPool& pool_;
  std::vector<Port>& ports_;
  std::vector<Nic> nics_;  // by host rank
  std::vector<FlowStats> flows_;
  std::vector<FlowState> flow_state_;
  std::vector<cc::DcqcnReactionPoint> rp_;      // per flow, when DCQCN is on
  std::vector<int64_t> rp_deadline_;            // scheduled timer per flow
  std::vector<cc::DcqcnNotificationPoint> np_;  // per host, when DCQCN is on
  std::vector<int64_t> np_deadline_;
  std::vector<cc::DcqcnNotificationPoint::DeferredCnp> due_cnps_;
  std::vector<cc::IbCcReactionPoint> ibcc_rp_;  // per flow, when IB CC is on
  std::vector<int64_t> ibcc_deadline_;
  std::vector<rdma::RcRequester> rcq_;  // RC queue pairs, by FlowState::rc
  std::vector<rdma::RcResponder> rcr_;
  std::vector<int64_t> rc_timer_at_;  // time of the pending timer event, by FlowState::rc
  std::vector<int64_t> rc_gap_at_;    // time of the pending gap timer event, by FlowState::rc
  std::vector<uint64_t> rc_done_;     // scratch: tags completed by one ACK
  TransportObserver* transport_obs_ = nullptr;
  std::vector<QpFailure> qp_failure_;  // at most one
  std::vector<LastLoss> last_loss_;    // by flow, grown on a loss (NoteLoss)
  // Virtualization layer, when cfg.virt is enabled: a stream per host, and
  // per RC queue pair (by FlowState::rc) the messages waiting out their delay
  // (bytes, tag) and when the last of them reaches the NIC.
  std::vector<sim::Rng> virt_rng_;
  std::vector<std::deque<std::pair<int64_t, uint64_t>>> virt_wait_;
  std::vector<int64_t> virt_last_;
  size_t persistent_ = 0;  // QPs of AddQp
  size_t flows_done_ = 0;
  uint64_t packets_created_ = 0;
  uint64_t cnps_ = 0;
};

}  // namespace lossless::fabric
