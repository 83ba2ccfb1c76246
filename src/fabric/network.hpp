#pragma once
// The packet-level network: ports and links, output-queued switches with a
// shared buffer, NICs that pace many flows, and routing tables.
//
// Model (docs/fabric-model.md has the details):
// - A link direction is owned by its sending port. Transmission of a packet
//   of W wire bytes takes SerializationTime(W, rate); its last bit reaches the
//   peer `delay` later. Packets on the wire sit in the port's FIFO and only the
//   head has a pending arrival event; a busy port keeps at most one pending
//   "kick" event, scheduled only when it has more to send.
// - Switches: the packet reaches the egress queue `latency` after its last bit
//   arrives (store-and-forward) or after its header arrives (cut-through; the
//   egress transmission then cannot end before the tail has arrived). Egress
//   queues per traffic class; strict priority for the classes in strict_mask,
//   deficit-weighted round robin for the rest. Shared buffer with byte-accurate
//   occupancy; lossy classes are admitted while q + size <= alpha·(free buffer)
//   (dynamic threshold) and tail-dropped otherwise. Classes in lossless_mask are
//   admitted while the buffer has room, and link-level flow control keeps them
//   from overrunning it: PFC (PfcConfig) or InfiniBand credits (IbLinkConfig).
// - ECN: RED on the instantaneous egress queue of the class, evaluated at
//   dequeue on the bytes left behind the packet (Kmin, Kmax, Pmax;
//   docs/model/switch-buffers.md#ecn-marking); ECT packets are marked CE.
// - NICs: one port per host; active flows are served round robin, packet by
//   packet, at line rate, limited by an optional per-flow rate (for congestion
//   control) and an optional PCIe cap on the NIC's injection. A flow is either
//   raw bytes (no transport: nothing is acknowledged or resent) or an RDMA RC
//   queue pair (FlowSpec::rc, src/rdma/rc.hpp): PSNs, ACK/NAK packets from the
//   responder, go-back-N or go-back-0, the local ACK timeout and retries.
// - Links lose frames to post-FEC bit errors and injected loss (link_loss.hpp),
//   checked when a frame's last bit arrives.
// - Routing: minimal paths (shortest in the switch graph, which on Clos
//   fabrics are the up/down paths); ECMP on a hash of the 5-tuple, IB-style
//   destination tables, adaptive (least-loaded egress among minimal next hops)
//   or per-packet spraying.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/ring.hpp"
#include "cc/dcqcn.hpp"
#include "cc/dcqcn_params.hpp"
#include "cc/ib_cc.hpp"
#include "fabric/framing.hpp"
#include "fabric/link_loss.hpp"
#include "fabric/network_config.hpp"
#include "fabric/nic.hpp"
#include "fabric/packet.hpp"
#include "fabric/port.hpp"
#include "fabric/port_stats.hpp"
#include "fabric/routing.hpp"
#include "flowctl/classes.hpp"
#include "flowctl/ib_credits.hpp"
#include "flowctl/pfc.hpp"
#include "flowctl/pfc_watchdog.hpp"
#include "flowctl/vl_arbiter.hpp"
#include "rdma/rc.hpp"
#include "sim/simulator.hpp"
#include "topology/topology.hpp"
#include "units/units.hpp"

namespace lossless::fabric {

// units::Bytes, Rate, Time and flowctl::kMaxClasses are named here through
// fabric/network_config.hpp.

// Observer of the facts PFC wait dependencies are made of, for online
// deadlock detection (docs/fabric-model.md). Vertices are ingress buffers:
// (port, priority) is the buffer in which the node owning `port` holds what
// it received through that port on that priority. The buffer (X, q) waits for
// the buffer (Y, r) when it holds packets queued on class r at the egress
// port E whose peer is Y, and Y has XOFF asserted on r. The network reports
// the two halves separately, each by the node that owns it and from its own
// state only, so no report reads another node (docs/architecture.md, "Event
// ownership"); deadlock::WaitJoin joins them into wait edges:
// - OnHold(X, q, E, r, holding, at): the switch owning X and E starts
//   (holding) or stops holding packets received through X on q and queued at
//   E on class r (the first packet queued / the last one gone). q and r
//   differ only where an explicit route changes the class.
// - OnXoff(Y, r, asserted, at): the node owning Y asserted or released XOFF
//   on class r at its ingress Y (reported only where Y's peer is a switch
//   port and r is flow-controlled).
// Never per packet otherwise; installing an observer costs a counter update
// per enqueue and dequeue of PFC packets. Under global pause
// (PfcConfig::global) XOFF is decided on, and stops, the whole port, so a
// buffer is the whole ingress port: every fact is reported with class
// kPortBufferClass.
inline constexpr int kPortBufferClass = 0;
class PfcWaitObserver {
 public:
  virtual ~PfcWaitObserver() = default;
  virtual void OnHold(uint32_t ingress, int in_class, uint32_t egress, int out_class, bool holding,
                      Time at) = 0;
  virtual void OnXoff(uint32_t port, int tclass, bool asserted, Time at) = 0;
};

// Random stream purposes of the network's per-entity streams (sim::Rng of
// (seed, entity, purpose)). An InfiniBand port's FCP losses
// (IbLinkConfig::fcp_loss) come from Rng(seed, port, kRngFcpLoss): the k-th
// FCP a port sends is lost when the k-th draw of its own stream is below
// fcp_loss, whatever the rest of the fabric does.
inline constexpr uint64_t kRngFcpLoss = 0xFC9;
// A switch's spraying draws (Rng(seed, topology node, kRngSpray)); a link
// direction's injected loss and bit errors (Rng(seed, its port's entity,
// kRngLinkDrop / kRngBitErrors)).
inline constexpr uint64_t kRngSpray = 1;
inline constexpr uint64_t kRngLinkDrop = 2;
inline constexpr uint64_t kRngBitErrors = 3;

class Network final : public sim::EventHandler {
 public:
  // Builds ports, switches, NICs and routing tables. Throws InputError (fields
  // "links", "hosts") for a topology it cannot route (RoutingTable), and
  // std::invalid_argument naming the field for a configuration the models
  // cannot run (the scenario refuses both with file and line first).
  Network(sim::Simulator& sim, const topology::Topology& topo, const NetworkConfig& cfg);
  Network(const Network&) = delete;  // routes_ points into topo_
  Network& operator=(const Network&) = delete;

  // Adds a flow; flows starting at Now() begin at once, later ones by event.
  // An RC flow (spec.rc) carries its bytes as one message. With
  // cfg.virt enabled the flow starts the virtualization delay after
  // max(spec.start, Now()); its FCT still counts from spec.start.
  uint32_t AddFlow(const FlowSpec& spec) { return nics_.AddFlow(spec); }

  // RDMA RC (src/rdma/rc.hpp). AddQp opens a queue pair from spec.src to
  // spec.dst (spec.bytes and spec.start are ignored) that lives for the run:
  // it never counts as done. PostSend queues a message of `bytes` on it now;
  // the observer hears of its completion at both ends.
  uint32_t AddQp(const FlowSpec& spec) { return nics_.AddQp(spec); }
  void PostSend(uint32_t qp, int64_t bytes, uint64_t tag) { nics_.PostSend(qp, bytes, tag); }
  void set_transport_observer(TransportObserver* obs) { nics_.set_transport_observer(obs); }
  // Set when a QP exhausted its retries (the run stopped there).
  const QpFailure* qp_failure() const { return nics_.qp_failure(); }
  // Distributed (docs/parallel.md, "A QP failure"): a flow's last loss on
  // this rank, and the failure gathered from the failing rank with the port
  // of the flow's latest loss over the ranks.
  LastLoss LastLossOf(uint32_t flow) const { return nics_.LastLossOf(flow); }
  void ImportQpFailure(QpFailure fail, uint32_t loss_port) {
    nics_.ImportQpFailure(std::move(fail), loss_port);
  }
  const rdma::RcRequester& Requester(uint32_t qp) const { return nics_.Requester(qp); }
  const rdma::RcResponder& Responder(uint32_t qp) const { return nics_.Responder(qp); }

  // Loss on the link direction port `port` sends on (before traffic starts).
  void SetLinkLoss(uint32_t port, const LinkLossConfig& loss);
  // The payload rate host `host`'s NIC can inject (its GPU-to-NIC PCIe path,
  // src/node/node.hpp), replacing NicConfig::pcie_rate for that NIC; zero =
  // no cap. Before traffic starts.
  void SetNicPcieRate(uint32_t host, Rate rate) { nics_.SetPcieRate(host, rate); }
  // Frames lost on links (bit errors and injected loss), all ports.
  uint64_t link_losses() const { return link_losses_; }

  void OnEvent(uint32_t kind, uint64_t arg) override;

  // Results.
  const std::vector<FlowStats>& flows() const { return nics_.flows(); }
  size_t flows_done() const { return nics_.flows_done(); }
  uint64_t packet_hops() const { return packet_hops_; }
  uint64_t packets_created() const { return nics_.packets_created(); }
  uint64_t drops() const { return drops_; }
  uint64_t cnps_sent() const { return nics_.cnps_sent(); }  // DCQCN CNPs and IB CC BECNs
  // IB CC reaction point of a flow (ib_cc on only).
  const cc::IbCcReactionPoint& IbCcPoint(uint32_t flow) const { return nics_.IbCcPoint(flow); }
  // DCQCN reaction point of a flow (DCQCN on only).
  const cc::DcqcnReactionPoint& ReactionPoint(uint32_t flow) const {
    return nics_.ReactionPoint(flow);
  }
  // The host side (fabric/nic.hpp): the NICs, their flows and queue pairs.
  const Nics& nics() const { return nics_; }
  uint64_t peak_packets_alive() const { return merged_ ? merged_peak_ : pool_.peak(); }
  size_t num_ports() const { return ports_.size(); }
  // Counters of port `p` up to now (open credit-starved intervals included).
  PortStats port_stats(uint32_t p) const;
  // Paused time of port p up to now, totalled as PortStats::paused_ps (which
  // also counts a pause in force up to its expiry).
  int64_t PausedPsUntilNow(uint32_t p) const;
  // Busy time of port p up to now: PortStats::busy_ps counts a frame whole
  // when it starts, this leaves out the part of the frame in progress that
  // lies after now (a run's end falls inside it).
  int64_t BusyPsUntilNow(uint32_t p) const;
  // The same for class c alone (0 for a class that is not flow-controlled).
  int64_t PausedPsUntilNow(uint32_t p, int c) const;
  // "leaf3 -> spine1 #0" style name of the link direction a port sends on.
  std::string PortName(uint32_t p) const;
  // Name of a simulator entity the network registered (a port: its PortName;
  // a switch: its topology node's name, for its watchdog polls); "" for an
  // entity of another component.
  std::string EntityName(uint32_t entity) const;

  const topology::Topology& topology() const { return topo_; }
  const NetworkConfig& config() const { return cfg_; }

  // Routing, exposed for tests: the egress port switch node `sw` picks for
  // packet `p` (mutates nothing except the spray RNG).
  uint32_t RouteForTest(uint32_t sw, const Packet& p) { return Route(sw, p); }
  // The routing tables and port structure (fabric/routing.hpp).
  const RoutingTable& routing() const { return routes_; }
  // Candidate egress ports at switch `sw` toward host rank `dst`.
  std::vector<uint32_t> Candidates(uint32_t sw, uint32_t dst) const {
    return routes_.Candidates(sw, dst);
  }
  // Index of the switch record for topology node `node`, or UINT32_MAX.
  uint32_t SwitchOfNode(uint32_t node) const { return routes_.SwitchOfNode(node); }
  // Topology node of switch record `sw`.
  uint32_t NodeOfSwitch(uint32_t sw) const { return switches_[sw].node; }
  uint32_t num_switches() const { return static_cast<uint32_t>(switches_.size()); }
  uint32_t num_hosts() const { return nics_.num_hosts(); }
  // Port structure: the topology node that owns port `p`, the port at the
  // other end of its link (ports 2l and 2l+1 are the two ends of link l), and
  // the ports of a node.
  uint32_t PortNode(uint32_t p) const { return ports_[p].node; }
  uint32_t PortPeer(uint32_t p) const { return ports_[p].peer; }
  const std::vector<uint32_t>& NodePorts(uint32_t node) const { return routes_.NodePorts(node); }
  uint32_t HostPort(uint32_t rank) const { return nics_.HostPort(rank); }

  // InfiniBand credits (cfg.ib.enabled). `port` receives on its link: its
  // VL buffer grants `blocks` (tests). A setup call, like the configuration:
  // the sender learns the grant at once, as at link initialisation, so it
  // throws std::logic_error once the engine has run an event (later, a
  // grant would have to travel as an FCP).
  void SetVlCredits(uint32_t port, int vl, int32_t blocks);
  // Sender side: credit available to `port` on `vl`, (FCCL - FCTBS) mod 4096.
  int32_t IbAvailableCredits(uint32_t port, int vl) const;
  // Receiver side: most blocks `port`'s VL buffer ever held.
  int32_t IbMaxBufferedBlocks(uint32_t port, int vl) const;
  // 64-byte blocks a packet of `wire` bytes of link time occupies.
  int32_t IbBlocks(int64_t wire) const {
    return flowctl::IbBlocks(wire - cfg_.framing.gap_overhead);
  }
  // Installs the wait observer (before traffic starts; nullptr removes it).
  void set_wait_observer(PfcWaitObserver* obs);

  // Fault: from `from` until `until` (Time::Max() = for good) host `host`'s
  // NIC stops consuming received packets. They wait in its receive buffer,
  // accounted like a switch ingress queue: above XOFF the NIC sends PAUSE
  // upstream and refreshes it (a pause storm, docs/model/pfc.md#pause-storms-and-stalled-nics)
  // until its PFC stall prevention gives up (NicConfig::pause_storm_timeout); beyond xoff +
  // headroom arrivals are dropped (PortStats::rx_stall_drops). When the stall ends the held packets
  // are consumed at once.
  void StallNicReceive(uint32_t host, Time from, Time until = Time::Max()) {
    nics_.StallReceive(host, from, until);
  }
  // Packets a host's receive buffer holds (stalled NIC).
  int64_t NicHeldBytes(uint32_t host) const { return nics_.HeldBytes(host); }

  // Called with every packet a port starts to transmit (tests, traces).
  // Off the hot path unless set.
  using TxTrace = void (*)(void* ctx, uint32_t port, const Packet& p, Time start);
  void set_tx_trace(TxTrace fn, void* ctx) {
    tx_trace_ = fn;
    tx_trace_ctx_ = ctx;
  }
  // Called each time a received PAUSE takes effect at `port` (outputs.trace):
  // flow-controlled classes `mask` (less those the watchdog ignores) are
  // paused from `now` until `until` (until <= now: resumed). Off unless set.
  using PauseTrace = void (*)(void* ctx, uint32_t port, uint8_t mask, Time now, Time until);
  void set_pause_trace(PauseTrace fn, void* ctx) {
    pause_trace_ = fn;
    pause_trace_ctx_ = ctx;
  }
  // Called at each PFC watchdog action on (`port`, class `c`) (restore =
  // false; `flushed` packets dropped from the queue) and at the end of each
  // restore period (restore = true, flushed = 0) (outputs.trace). Off unless set.
  using WatchdogTrace = void (*)(void* ctx, uint32_t port, int c, Time at, bool restore,
                                 uint64_t flushed);
  void set_watchdog_trace(WatchdogTrace fn, void* ctx) {
    wd_trace_ = fn;
    wd_trace_ctx_ = ctx;
  }
  // ECN marks port `p` has made on class c so far (cheap; for traces).
  uint64_t EcnMarks(uint32_t p, int c) const { return ports_[p].stats.classes[c].ecn_marks; }
  // Delivers a PFC frame to `port` as if its reception ended now (for tests
  // of the sender side, docs/model/pfc.md#pause-timing, experiment E1).
  void ReceivePause(uint32_t port, uint8_t class_enable, uint16_t quanta);
  // Fault injection (scenario faults.pause_inject, experiments E1): at `at`
  // (Now() if earlier) port `port` sends one PFC frame to its link peer with
  // this class-enable vector and pause time (quanta 0 = XON), through the
  // normal MAC-control path: after the frame in progress, 64 B plus the
  // framing's gap on the wire, counted in pause_tx / pause_rx. It merges with
  // a PAUSE the port has pending at that moment, like any SendPause. An empty
  // class_enable sends nothing. Throws std::invalid_argument for a bad port.
  void InjectPause(uint32_t port, uint8_t class_enable, uint16_t quanta, Time at);
  // Fault injection (scenario faults.cnp_inject, experiments E5): at `at`
  // (Now() if earlier) flow `flow`'s DCQCN reaction point receives a CNP, as
  // if one had arrived from the flow's destination (ignored once the flow is
  // done). Throws std::invalid_argument without cfg.dcqcn or for a bad flow.
  void InjectCnp(uint32_t flow, Time at) { nics_.InjectCnp(flow, at); }
  // Bytes (ingress port, priority) currently holds in its switch's buffer.
  int64_t IngressBytes(uint32_t port, int prio) const { return ports_[port].ingress.bytes[prio]; }
  // Bytes (frames without preamble/IFG) waiting in the egress queue of `port`
  // for traffic class `tclass` (0 at a host port for data: NICs do not queue it).
  int64_t QueueBytes(uint32_t port, int tclass) const { return ports_[port].q[tclass].bytes; }

  // Takes topology link `link` (both directions) down or up at `at` (Now()
  // if earlier): each end's port takes its own half down or up, as an event
  // of that port (the fault seam, fault::LinkState; setup and tests use it
  // too, so no call writes both ends at once). A down link carries nothing:
  // routing skips it among the minimal next hops (a switch whose every
  // minimal next hop is down drops the packet, counted as a drop), packets
  // already on the wire are lost, and a host whose link is down stops
  // sending until it comes back. On InfiniBand a link coming up
  // re-initialises flow control: each end sends an FCP on every data VL and
  // a sender has no credit until they arrive.
  // Throws std::invalid_argument for a link the topology lacks.
  void ScheduleLinkState(uint32_t link, bool up, Time at);
  bool LinkUp(uint32_t link) const { return !ports_[2 * static_cast<size_t>(link)].down; }
  // The control plane's reroute (docs/what-if.md#link-down): from `at`
  // (Now() if earlier) every switch routes with next-hop sets computed as if
  // the links in `links_out` were absent (RoutingTable's second constructor),
  // each switch switching as an event of its own. Until then a switch keeps
  // its tables: its own dead next hop is skipped among the live minimal ones
  // (the local hardware failover above), but a switch whose minimal next hops
  // toward a destination are all dead drops what it gets for it, and the
  // switches upstream keep sending it there: the dead path black-holes its
  // share. A later call replaces an earlier one's tables from its own time.
  // Throws std::invalid_argument for a link the topology lacks.
  void ScheduleReroute(const std::vector<uint32_t>& links_out, Time at);
  // Reroutes scheduled so far (each one table set); for reports and tests.
  size_t reroutes() const { return reroute_tables_.size(); }

  // --- Distributed runs (docs/parallel.md, src/run/distributed.hpp) ---------
  // Every rank builds the whole network and runs the events of the entities
  // it owns. A data frame, PAUSE frame or FCP that a port sends on a cut link
  // (whose ends are on different ranks) is handed to RemoteLinks::Send at the
  // point where the serial run schedules its arrival (so the sender's key is
  // drawn there), and the receiver's rank queues it with DeliverRemote under
  // that key. Off (nullptr) in a serial run: one untaken branch per frame.
  class RemoteLinks {
   public:
    // `pk`: the frame (data arrivals), else nullptr; `kind`, `arg` are opaque.
    virtual void Send(uint32_t port, Time at, uint32_t kind, uint64_t arg, const Packet* pk) = 0;
    // The key the last Send drew (the sender's ordering key of the event).
    uint64_t sent_key = 0;

   protected:
    ~RemoteLinks() = default;
  };
  // cut[p] != 0: port p sends on a cut link. local_flows: flows whose
  // destination this rank owns; with stop_when_flows_done the network calls
  // Simulator::Stop() when those are done (the engine's StopRule agrees on
  // the serial stop point).
  void SetDistributed(RemoteLinks* remote, std::vector<uint8_t> cut, size_t local_flows);
  void DeliverRemote(Time at, uint64_t key, uint32_t kind, uint64_t arg, const Packet* pk);
  // Flows this rank's NICs completed (stop rule), and their target.
  size_t local_flows_pending() const {
    return local_flows_ > nics_.flows_done() ? local_flows_ - nics_.flows_done() : 0;
  }
  uint32_t PortEntity(uint32_t p) const { return ports_[p].entity; }
  uint32_t SwitchEntity(uint32_t sw) const { return switches_[sw].entity; }
  // Packets alive as the serial run counts them: frames handed to another
  // rank count here until the receiver frees them there (the sum over ranks
  // at any point of the serial order is the serial count).
  int64_t SerialLive() const {
    return static_cast<int64_t>(pool_.live()) + remote_out_ - remote_in_;
  }
  // Told of every change of SerialLive (+1 a packet made, -1 one freed), in
  // the event that makes it: the distributed run's log of packets alive.
  // The copies that carry a frame across ranks are not changes.
  void set_packet_observer(PacketPool::Observer* o) { pool_.set_observer(o); }
  // Frees the frames handed to other ranks since the last call (kept until
  // then: the caller may still read a frame's record in the event that sent
  // it); SerialLive does not change. Between events (a window's end).
  void SettleEvent();
  // Results: ExportResults() on every rank; ImportResults(all of them, in
  // rank order) on rank 0 folds them into this network's results (flows,
  // counters, per-port statistics up to now), which its accessors then
  // return. Integers only: sums, minima and maxima, in entity order.
  // port_rank: the rank owning each port.
  std::string ExportResults(const std::vector<int32_t>& port_rank, int rank) const;
  void ImportResults(const std::vector<std::string>& per_rank,
                     const std::vector<int32_t>& port_rank, uint64_t peak_alive);
  // The port whose owner runs a queued event of this kind and arg: the
  // receiving end for link events (arrival, PAUSE, FCP), else UINT32_MAX
  // (the event is its source entity's). After setup, each rank keeps the
  // events it runs (Simulator::Retain).
  uint32_t DistributedEventPort(uint32_t kind, uint64_t arg) const;
  // Links going down and up (faults.link_down) in a distributed run
  // (docs/parallel.md, "A cut link going down"). A port's link-state event
  // runs on the port's rank; on a cut link the rank that owns the peer port
  // holds the copy of the port's wire (DeliverRemote), so it keeps and runs a
  // copy of the event too (Simulator::Retain), at the same (time, key): the
  // copy only drops that rank's copy of the wire (quietly: the owner counts
  // the frames lost, from its own record of the frames it sent that have not
  // arrived). LinkStateEventPort: the port a queued event of this kind and
  // arg takes down or up, UINT32_MAX for any other event.
  uint32_t LinkStateEventPort(uint32_t kind, uint64_t arg) const;
  // foreign[p] != 0: port p is another rank's. After SetDistributed.
  void SetForeignPorts(std::vector<uint8_t> foreign);
  // The copies of other ranks' link-state events this rank ran, which the
  // serial run counts once, on the owner's rank: the distributed run takes
  // them out of its event count and digests.
  struct CopiedEvent {
    int64_t time;
    uint64_t key;
    uint32_t kind;
  };
  const std::vector<CopiedEvent>& copied_events() const { return copied_events_; }
  // Frames this rank's cut ports lost in flight when their links went down,
  // and of them the ones sent in the window of the down, which reached the
  // receiver's rank after it had run its copy (reports and tests).
  uint64_t cut_frames_lost() const { return cut_lost_; }
  uint64_t late_frames_lost() const { return cut_lost_late_; }
  // Packets alive when SetDistributed was called (setup, alike on every rank).
  int64_t setup_live() const { return base_live_; }
  uint64_t setup_peak() const { return base_peak_; }

 private:
  // The host side calls the link layer: kicks its port, IB credits at
  // injection and reception, PAUSE from a stalled NIC, drops, routes.
  friend class Nics;
  static constexpr uint32_t kNone = UINT32_MAX;  // no host, switch, port or route
  enum EventKind : uint32_t {
    // The numbers missing here are the host side's (Nics::EventKind).
    kKick = 0,
    kArrival = 1,
    kPauseApply = 3,
    kPfcRefresh = 4,
    kPauseArrive = 5,
    kFcpTimer = 8,
    kWdPoll = 9,
    kWdRestore = 10,
    kPauseInject = 15,
    kFcpArrive = 20,
    kLinkState = 21,
    kReroute = 22
  };

  // Per-port InfiniBand link state (cfg.ib.enabled only). A port is both the
  // sender into its peer's VL buffers and the receiver whose VL buffers its
  // peer sends into; it returns credits on its own transmit side.
  template <class T>
  using Ring = base::Ring<T>;
  struct IbPort {
    std::array<flowctl::IbVl, kMaxClasses> vls{};
    // Receiver: the FCPs this port sent that were not lost and have not yet
    // been reconciled into peer_fccl (arrival order), and the credit limit
    // per VL its peer has seen by the last reconciliation. The port's own
    // record of what it told its peer: deciding whether a periodic FCP is due
    // reads nothing of the peer (docs/architecture.md, event ownership).
    Ring<flowctl::FcpInFlight> sent;
    std::array<uint16_t, kMaxClasses> peer_fccl{};
    Ring<flowctl::PendingFree> frees;  // receiver (HCA only): blocks to free, in time order
    // Sender: FCPs from the peer not yet taken into account, in arrival
    // order (IbSettle); a wake-up (kFcpArrive) is queued for the first one,
    // or one is owed to the next that comes (the port waits for credit).
    Ring<flowctl::FcpInbound> inbox;
    bool wake_pending = false;
    bool wake_owed = false;
    uint16_t epoch = 0;       // link (re)initialisations: FCPs of an older one are void
    int64_t fcp_ser = 0;      // link time of one FCP
    uint8_t fcp_pending = 0;  // VLs with an FCP to send
    bool fcp_timer = false;
    flowctl::VlArbState arb;
    sim::Rng fcp_loss_rng;  // FCPs this port sends that are lost (IbLinkConfig::fcp_loss)
  };
  struct Switch {
    uint32_t node = 0;
    uint32_t entity = 0;                   // owns the watchdog polls and reroutes
    const RoutingTable* routes = nullptr;  // routes_ or one of reroute_tables_
    int64_t used_bytes = 0;
    uint64_t salt = 0;
    sim::Rng rng;
  };
  struct LinkLoss {
    LinkLossConfig cfg;
    uint64_t data_seen = 0;
    sim::Rng rng;  // drop_prob
    BitErrorSampler bits;
  };
  struct ResolvedHop {
    uint32_t port;  // egress port at this switch
    int8_t tclass;  // class from here on, -1 = unchanged
  };
  // Watchdog state per (switch port, class), when the watchdog is on.
  struct WdQueue {
    PacketRef head = kNoPacket;  // head at the last poll (with its identity)
    uint32_t head_flow = 0, head_seq = 0;
    flowctl::WatchdogQueue state;
    // End of the last PAUSE received while restoring (pause_memory only).
    int64_t ignored_until = 0;
  };

  // An arrival event's argument: the sending port, and the packet at the head
  // of its wire when the event was scheduled (a prefetch hint only: Arrive
  // takes whatever heads the wire when it runs).
  static uint64_t ArrivalArg(uint32_t port, PacketRef r) { return (uint64_t{r} << 32) | port; }
  static constexpr uint32_t kPrefetchAhead = 4;  // lane entries ahead (PrefetchAhead)
  // PrefetchAhead pays where the port records outgrow the core's own caches
  // and costs where they fit (its lane lookup runs on every event): on from
  // this many bytes of Port records, about 2,600 ports (docs/benchmarks.md,
  // "A sixth pass").
  static constexpr size_t kPrefetchFromBytes = size_t{4} << 20;
  // Always inlined: as a call, GCC would see a function without side effects
  // (prefetches do not count) and drop the call.
  [[gnu::always_inline]] inline void PrefetchAhead();
  int64_t Ser(Port& p, int64_t wire);
  void Kick(uint32_t pi);  // ensure the port transmits if it can
  void ScheduleKick(uint32_t pi, int64_t at);
  void TryTransmit(uint32_t pi);
  PacketRef NextFromQueues(Port& p);
  PacketRef NextFromQueuesIb(Port& p);
  PacketRef TakeFromQueue(Port& p, int c);
  // InfiniBand link layer (ib_link.cpp).
  void IbInit();
  bool IbCanSend(uint32_t port, int vl, int32_t blocks);  // marks starvation when not
  void IbCharge(uint32_t port, int vl, int32_t blocks);
  void IbReceive(uint32_t port, int vl, int32_t blocks);
  void IbRelease(uint32_t port, int vl, int32_t blocks, bool kick = true);
  void IbApplyFrees(uint32_t port, int64_t upto);  // HCA frees due by `upto`
  void IbArmFcpTimer(uint32_t port);
  void IbOnFcpTimer(uint32_t port);
  int64_t IbTransmitFcps(uint32_t port, int64_t now);  // returns when the last one ends
  // The FCP event at the port that receives it (the data sender): the new
  // credit limit of `vl`, from link initialisation `epoch`.
  // FCPs without events (ib_link.cpp): an FCP goes into its receiver's
  // inbox; IbSettle applies those due by now (true when one ended a credit
  // starvation); IbArmWake makes sure a starved port runs again when the
  // next FCP takes effect; IbOnFcpWake is that wake-up.
  void IbPushFcp(uint32_t port, const flowctl::FcpInbound& f);
  // Whether an FCP takes effect at its receiver `port`: not lost with the
  // link (down, or sent under an older initialisation). Checked when it is
  // settled, which happens before any change of either (SetPortUp).
  bool IbFcpValid(uint32_t port, const flowctl::FcpInbound& f) const {
    return !ports_[port].down && f.epoch == ib_[port].epoch;
  }
  // Whether an FCP has taken effect by the event running now: before now, or
  // at now with a key that orders it before (or as) that event, exactly
  // where its own event would have run.
  // (Never, under the engine check IbLinkConfig::fcp_event_each: there an
  // FCP takes effect only at its own event.)
  bool IbFcpDue(const flowctl::FcpInbound& f) const {
    if (!fcp_lazy_) return false;
    const int64_t now = sim_.Now().ps();
    return f.at < now || (f.at == now && f.key <= sim_.RunningKey());
  }
  bool IbSettle(uint32_t port);
  // The inbox's first FCP takes effect (true: it ended a starvation).
  bool IbApplyFront(uint32_t port);
  void IbArmWake(uint32_t port);
  void IbOnFcpWake(uint32_t port);
  // FCPs port `port` sent that have arrived by `now`: into peer_fccl.
  void IbReconcileSent(uint32_t port, int64_t now);
  // Link (re)initialisation of `port`'s two halves (after the link came up):
  // as a sender it has no credit until the peer's first FCPs arrive; as a
  // receiver it sends an FCP on every data VL.
  void IbResetPort(uint32_t port);
  // One end of a link goes down (its wire and egress queues are lost) or up.
  void SetPortUp(uint32_t pi, bool up);
  bool HasQueued(const Port& p) const { return p.queued_bytes > 0; }
  void Arrive(uint32_t pi, PacketRef r);
  // Queues the arrival event of frame r on port's wire, at its time and under
  // the key drawn when it was sent (TryTransmit).
  void QueueArrival(uint32_t pi, PacketRef r);
  // The same for the head of a cut link's wire on the receiver's rank, under
  // the next key the sender shipped with it (remote_keys_).
  void QueueRemoteArrival(uint32_t pi);
  void Deliver(uint32_t ingress_port, PacketRef r);
  void Enqueue(uint32_t sw, uint32_t egress, PacketRef r);
  uint32_t Route(uint32_t sw, const Packet& p);         // skips down links
  uint32_t RouteMinimal(uint32_t sw, const Packet& p);  // the routing mode's choice
  void DropPacket(PacketRef r, Port* at);
  [[gnu::cold, gnu::noinline]] bool LinkLoses(uint32_t pi, PacketRef r);
  void SendPause(uint32_t port, uint8_t mask, uint16_t quanta);
  // Ingress `port` crossed XOFF on class c: pause c upstream (every class
  // with global pause), start the refresh chain, tell the wait observer.
  void AssertXoff(uint32_t port, int c);
  void ArmRefresh(uint32_t port, int c);
  void OnPauseReceived(uint32_t port, uint8_t mask, uint16_t quanta);
  void ApplyPause(uint32_t port, uint8_t mask, uint16_t quanta, int64_t reception_end);
  void ReleaseIngress(const Packet& pk, int64_t size);
  int64_t PausedWake(const Port& p) const;  // earliest pause expiry of a queued class
  // Event handlers (pfc_link.cpp).
  void OnPfcRefresh(uint32_t port, int c);
  void WatchdogRestored(uint32_t port, int c);
  // Off the common path (watchdog, NIC stall, wait observer, routes): kept
  // out of line so the packet path stays as small as without them.
  // Resolves flow `flow`'s explicit route into route_hops_ and returns its
  // offset there; throws std::invalid_argument (nothing kept) for a bad one.
  [[gnu::cold, gnu::noinline]] uint32_t ResolveRoute(uint32_t flow, const FlowSpec& spec);
  [[gnu::cold, gnu::noinline]] void WatchdogPoll(uint32_t sw);
  [[gnu::cold, gnu::noinline]] void WatchdogAct(uint32_t pi, int c);
  [[gnu::cold, gnu::noinline]] void WatchdogDrop(PacketRef r, Port& egress);
  int64_t PausedUpTo(uint32_t port, int c, int64_t now) const;
  // Port total of a per-class paused time: the sum over the lossless
  // priorities under PFC; under global pause, where every frame holds all
  // classes at once, the largest of them (the classes differ only where the
  // watchdog ignores PAUSE on one), so a held port counts its time once.
  template <class PerClass>
  int64_t PausedTotal(PerClass per_class) const {
    int64_t total = 0;
    for (unsigned m = pfc_.classes(); m != 0; m &= m - 1) {
      const int64_t v = per_class(__builtin_ctz(m));
      total = cfg_.pfc.global ? std::max(total, v) : total + v;
    }
    return total;
  }
  // Ingress `port` asserted (on) or released XOFF on class c.
  [[gnu::cold, gnu::noinline]] void XoffAsserted(uint32_t port, int c, bool on);
  [[gnu::cold, gnu::noinline]] void FwdCount(uint32_t ingress, int in_class, uint32_t egress,
                                             int out_class, int delta);
  [[gnu::cold, gnu::noinline]] void FlushQueue(uint32_t pi, int c, bool watchdog);

  sim::Simulator& sim_;
  topology::Topology topo_;
  RoutingTable routes_;                                        // over topo_
  std::vector<std::unique_ptr<RoutingTable>> reroute_tables_;  // ScheduleReroute, in call order
  NetworkConfig cfg_;
  PacketPool pool_;
  std::vector<Port> ports_;
  std::vector<Switch> switches_;
  Nics nics_;                   // the host side (after cfg_, pool_ and ports_, which it refers to)
  std::vector<LinkLoss> loss_;  // by port, when a link loses frames
  uint64_t link_losses_ = 0;
  std::vector<cc::IbFecnMarker> fecn_;  // per (port, VL), when IB CC is on
  bool ib_on_ = false;
  bool prefetch_ = false;      // PrefetchAhead on (kPrefetchFromBytes)
  bool fcp_lazy_ = true;       // FCPs through the inbox (IbLinkConfig::fcp_event_each off)
  std::vector<IbPort> ib_;     // by port, when cfg.ib.enabled
  flowctl::VlArbiter vl_arb_;  // VL arbitration tables
  std::vector<ResolvedHop> route_hops_;  // explicit routes of all flows
  std::vector<WdQueue> wd_;              // [port * kMaxClasses + class], watchdog on
  // Wait observer: packets each switch ingress holds per (egress, lossless
  // class), [fwd_base_[ingress] + dense class * radix + local index of egress].
  PfcWaitObserver* wait_obs_ = nullptr;
  std::vector<int32_t> fwd_;
  std::vector<uint32_t> fwd_base_;
  std::vector<uint16_t> local_index_;  // port -> index among its node's ports
  std::array<int8_t, kMaxClasses> dense_class_{};
  int num_lossless_ = 0;
  TxTrace tx_trace_ = nullptr;
  void* tx_trace_ctx_ = nullptr;
  PauseTrace pause_trace_ = nullptr;
  void* pause_trace_ctx_ = nullptr;
  WatchdogTrace wd_trace_ = nullptr;
  void* wd_trace_ctx_ = nullptr;
  flowctl::PfcThresholds pfc_;  // resolved thresholds and decisions
  // Distributed runs (SetDistributed, ImportResults).
  RemoteLinks* remote_ = nullptr;
  std::vector<uint8_t> cut_;
  size_t local_flows_ = 0;
  int64_t remote_out_ = 0, remote_in_ = 0;
  std::vector<PacketRef> sent_away_;  // handed to another rank in the running event
  // Per cut link into this rank (by sending port): the arrival keys of the
  // frames behind its wire's head, in wire order. As on a link inside a
  // rank, only the head has a queued event (one event per frame in the
  // queue cost 4 % of a rank's instructions in heap pops).
  struct KeyFifo {
    std::vector<uint64_t> keys;  // keys[head ..] are queued
    size_t head = 0;
  };
  std::vector<KeyFifo> remote_keys_;
  // Cut links that go down (link_state.cpp, remote.cpp). Per port: whether a
  // link-state event was scheduled for it; the times its link went down
  // (each frame that crosses carries the sender's count, so the receiver
  // tells a frame sent before a down it has run); on the sender's rank, the
  // frames sent on a cut link that may not have arrived yet (arrival time
  // and key; flow and class for the drop counters), which a down loses.
  struct InFlight {
    int64_t at;
    uint64_t key;
    uint32_t flow;
    uint8_t tclass;
  };
  std::vector<uint8_t> state_ports_;
  std::vector<uint8_t> foreign_;
  std::vector<uint32_t> wire_epoch_;
  std::vector<Ring<InFlight>> in_flight_;
  std::vector<CopiedEvent> copied_events_;
  uint64_t cut_lost_ = 0, cut_lost_late_ = 0;
  // At a cut port's own link going down: the frames it sent that arrive
  // after now are lost (counted here, where the serial run counts them).
  void LoseInFlight(uint32_t pi);
  // The copy of another rank's port going down: this rank's copy of its
  // wire is dropped, each frame's arrival event kept (stale, as serial).
  void CopiedPortDown(uint32_t pi);
  struct MergedPort {
    PortStats stats;  // port_stats(p)
    int64_t paused_ps = 0;
    std::array<int64_t, kMaxClasses> paused_class{};
    int64_t busy_ps = 0;
  };
  std::array<uint64_t, 6> Totals() const;
  std::array<uint64_t, 6> base_totals_{};
  std::vector<int64_t> base_flow_drops_;
  // A flow's drops at SetDistributed (0 for a flow or queue pair added
  // later: the collectives open theirs as the sweep needs them).
  int64_t SetupDrops(size_t flow) const {
    return flow < base_flow_drops_.size() ? base_flow_drops_[flow] : 0;
  }
  int64_t base_live_ = 0;
  uint64_t base_peak_ = 0;
  bool merged_ = false;
  std::vector<MergedPort> merged_ports_;
  uint64_t merged_peak_ = 0;
  [[gnu::cold, gnu::noinline]] void SendRemote(uint32_t pi, PacketRef r, int64_t head);
  [[gnu::cold, gnu::noinline]] void FlowFinished();
  uint64_t packet_hops_ = 0;
  uint64_t drops_ = 0;
};

// The kick of a port, inline: every enqueue (switch_queue.cpp), every host
// post (nic.cpp) and the packet path call it.
inline void Network::ScheduleKick(uint32_t pi, int64_t at) {
  Port& p = ports_[pi];
  // One live kick per port: the earliest wins. A later one left in the queue
  // finds kick_at changed and does nothing.
  if (p.kick_pending && p.kick_at <= at) return;
  p.kick_pending = true;
  p.kick_at = at;
  sim_.Schedule(Time::Ps(at), p.entity, this, kKick, pi);
}

inline void Network::Kick(uint32_t pi) {
  Port& p = ports_[pi];
  const int64_t now = sim_.Now().ps();
  if (p.busy_until > now) {
    ScheduleKick(pi, p.busy_until);
    return;
  }
  if (p.kick_pending && p.kick_at == now) return;  // about to run
  TryTransmit(pi);
}

}  // namespace lossless::fabric
