#include "scenario/params.hpp"

#include <deque>
#include <set>

#include <fmt/format.h>

#include "cc/dcqcn_params.hpp"
#include "node/node.hpp"
#include "rdma/rc_params.hpp"

namespace lossless::scenario {

namespace {

ParamType DcqcnType(cc::DcqcnParamType t) {
  switch (t) {
    case cc::DcqcnParamType::kTime:
      return ParamType::kTime;
    case cc::DcqcnParamType::kRate:
      return ParamType::kRate;
    case cc::DcqcnParamType::kBytes:
      return ParamType::kBytes;
    case cc::DcqcnParamType::kInt:
      return ParamType::kInt;
    case cc::DcqcnParamType::kFraction:
      return ParamType::kDouble;
    case cc::DcqcnParamType::kBool:
      return ParamType::kBool;
    case cc::DcqcnParamType::kEnum:
      return ParamType::kEnum;
  }
  return ParamType::kString;
}

// fabric.dcqcn.<name> for every DcqcnParams field (src/cc/dcqcn_params.hpp):
// no registry default, since the value comes from the fabric.cc preset; the
// help text lists both presets' values.
void AddDcqcnParams(std::vector<ParamInfo>& out) {
  static std::deque<std::string> storage;  // stable c_str() for the table's lifetime
  const cc::DcqcnParams paper = cc::DcqcnParams::Paper();
  const cc::DcqcnParams firmware = cc::DcqcnParams::ConnectXFirmware();
  for (const auto& info : cc::DcqcnParamInfos()) {
    const char* name = storage.emplace_back(fmt::format("fabric.dcqcn.{}", info.name)).c_str();
    const char* help =
        storage
            .emplace_back(fmt::format("{} Default from fabric.cc: dcqcn-paper `{}`, "
                                      "dcqcn-firmware `{}`.",
                                      info.help, cc::DcqcnParamValue(paper, info.name),
                                      cc::DcqcnParamValue(firmware, info.name)))
            .c_str();
    ParamInfo p{name, DcqcnType(info.type), "", help, info.choices};
    if (info.type == cc::DcqcnParamType::kFraction) p.min = 0, p.max = 1;
    if (info.type == cc::DcqcnParamType::kInt) p.min = 1, p.max = 1000;
    out.push_back(p);
  }
}

ParamType NodeType(node::NodeParamType t) {
  switch (t) {
    case node::NodeParamType::kEnum:
      return ParamType::kEnum;
    case node::NodeParamType::kInt:
      return ParamType::kInt;
    case node::NodeParamType::kRate:
      return ParamType::kRate;
    case node::NodeParamType::kTime:
      return ParamType::kTime;
    case node::NodeParamType::kBool:
      return ParamType::kBool;
    case node::NodeParamType::kString:
      return ParamType::kString;
  }
  return ParamType::kString;
}

// node.<name>: the GPU node's slice (src/node/node.hpp NodeParamInfos).
void AddNodeParams(std::vector<ParamInfo>& out) {
  static std::deque<std::string> storage;  // stable c_str() for the table's lifetime
  for (const auto& info : node::NodeParamInfos()) {
    const char* name = storage.emplace_back(fmt::format("node.{}", info.name)).c_str();
    out.push_back({name, NodeType(info.type), info.def, info.help, info.choices, info.min,
                   info.max});
  }
}

// transport.<name> for every RC parameter (src/rdma/rc_params.hpp), after
// transport.kind.
void AddRcParams(std::vector<ParamInfo>& out) {
  static std::deque<std::string> storage;  // stable c_str() for the table's lifetime
  for (const auto& info : rdma::RcParamInfos()) {
    const char* name = storage.emplace_back(fmt::format("transport.{}", info.name)).c_str();
    const ParamType type = info.type == rdma::RcParamType::kInt    ? ParamType::kInt
                           : info.type == rdma::RcParamType::kEnum ? ParamType::kEnum
                                                                   : ParamType::kTime;
    out.push_back({name, type, info.def, info.help, info.choices, info.min, info.max});
  }
}

}  // namespace

const std::vector<ParamInfo>& Params() {
  static const std::vector<ParamInfo> kParams = [] {
    std::vector<ParamInfo> v = BaseParams();
    // Insert the DCQCN overrides right after fabric.cc.
    std::vector<ParamInfo> out;
    for (const auto& p : v) {
      out.push_back(p);
      if (std::string(p.name) == "transport.kind") AddRcParams(out);
      if (std::string(p.name) == "fabric.cc") {
        AddDcqcnParams(out);
        out.push_back({"fabric.dcqcn.cnp_class", ParamType::kInt, "6",
                       "Traffic class of CNPs, served strict priority at every port (Spectrum "
                       "default TC6, docs/model/dcqcn.md#notification-point); must differ from "
                       "fabric.data_class.",
                       "", 0, 7});
      }
    }
    // node.* right after the topology.* fields.
    size_t at = out.size();
    for (size_t i = 0; i < out.size(); ++i)
      if (std::string(out[i].name).rfind("topology.", 0) == 0) at = i + 1;
    std::vector<ParamInfo> node;
    AddNodeParams(node);
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), node.begin(), node.end());
    return out;
  }();
  return kParams;
}

const std::vector<ParamInfo>& BaseParams() {
  using T = ParamType;
  static const std::vector<ParamInfo> kParams = {
      {"name", T::kString, "scenario", "Scenario name, echoed in the output.", ""},
      {"description", T::kString, "",
       "One line saying what the scenario or profile models (`lossless profiles` lists it).", ""},
      {"seed", T::kInt, "1", "Seed of every random stream (ECMP salt, spraying, RED marking).", "",
       0, 9.2e18},
      {"fabric.preset", T::kEnum, "roce",
       "Fabric preset: infiniband (NDR-like: per-VL credits, adaptive routing, 130 ns switches), "
       "roce (400GbE, "
       "ECMP, 300 ns switches) or raw (generic framing, for anchors).",
       "infiniband|roce|raw"},
      {"fabric.link_rate", T::kRate, "400Gbps", "Rate of every link, each direction.", ""},
      {"fabric.link_delay", T::kTime, "",
       "One-way propagation delay of every link. Default: from fabric.cable_length at 5 ns/m.", ""},
      {"fabric.cable_length", T::kDouble, "10",
       "Cable length in metres, used when link_delay is not given.", "", 0.001, 1e6},
      {"fabric.mtu", T::kInt, "4096",
       "Largest payload per packet in bytes (RDMA path MTU 256..4096; raw: any).", "", 64, 65536},
      {"fabric.frame_overhead", T::kInt, "",
       "Bytes of headers and trailers per packet. Default from the preset: IB 26, RoCE v2 62 (+20 "
       "preamble/IFG "
       "on the wire), raw 30.",
       "", 0, 4096},
      {"fabric.vlan_tag", T::kBool, "false", "RoCE: add a 4-byte 802.1Q tag to every frame.", ""},
      {"fabric.switch_latency", T::kTime, "300ns", "Switch port-to-port pipeline latency.", ""},
      {"fabric.cut_through", T::kBool, "false",
       "Cut-through switching (default store-and-forward).", ""},
      {"fabric.buffer", T::kBytes, "32MiB", "Shared packet buffer per switch.", ""},
      {"fabric.alpha", T::kDouble, "0.125",
       "Dynamic-threshold alpha for lossy classes (q <= alpha * free).", "", 1.0 / 64, 64},
      {"fabric.routing", T::kEnum, "ecmp",
       "ecmp (hash of the 5-tuple), dest-table (IB-style per-destination tables), adaptive "
       "(least-loaded "
       "minimal next hop, per packet) or spray (random minimal next hop, per packet).",
       "ecmp|dest-table|adaptive|spray"},
      {"fabric.data_class", T::kInt, "3", "Traffic class of data packets: RoCE priority or IB SL.",
       "", 0, 7},
      {"fabric.pcie_rate", T::kRate, "", "PCIe cap on each NIC's injection rate. Default: none.",
       ""},
      {"fabric.ib.enabled", T::kBool, "false",
       "InfiniBand credit-based link-level flow control: every receiving port grants "
       "fabric.ib.credits 64-byte blocks per data VL and a sender starts a packet only when the "
       "whole packet fits (docs/model/infiniband.md#credits). Not with the roce preset; excludes "
       "PFC and DCQCN.",
       ""},
      {"fabric.ib.credits", T::kInt, "2048",
       "Credits (64-byte blocks) per data VL per receiving port; at most 2048 (12-bit counters) "
       "and at least one MTU packet.",
       "", 1, 2048},
      {"fabric.ib.vls", T::kInt, "4", "Data VLs (ConnectX-5 default 4); SL n uses VL n.", "", 1, 7},
      {"fabric.ib.fcp_on_release", T::kBool, "true",
       "Send a flow-control packet as soon as blocks are freed (else only on the fcp_period grid).",
       ""},
      {"fabric.ib.fcp_period", T::kTime, "4.096us",
       "Flow-control packets also go out on this grid while the sender's credit view is stale "
       "(heals lost FCPs).",
       ""},
      {"fabric.ib.rx_delay", T::kTime, "100ns",
       "HCA: from a packet's last byte in to its blocks being free (t_rx; "
       "docs/model/infiniband.md#credit-loop example).",
       ""},
      {"fabric.ib.credit_delay", T::kTime, "100ns",
       "From an FCP's last byte in to its credits being usable (t_tx; "
       "docs/model/infiniband.md#credit-loop example).",
       ""},
      {"fabric.ib.vlarb_high", T::kString, "",
       "VL arbitration High table: 'VL:weight' entries (weight 0..255 in 64-byte units), comma "
       "separated. Default: empty.",
       ""},
      {"fabric.ib.vlarb_low", T::kString, "",
       "VL arbitration Low table, same form. Default (with an empty High table): every data VL at "
       "weight 64.",
       ""},
      {"fabric.ib.high_limit", T::kInt, "16",
       "LimitOfHighPriority in 4096-byte units (255 = no limit; ib_model example 16).", "", 0, 255},
      {"fabric.ecn.enabled", T::kBool, "false",
       "RED/ECN marking on the data class's egress queues.", ""},
      {"fabric.ecn.kmin", T::kBytes, "150KB", "RED Kmin (instantaneous queue).", ""},
      {"fabric.ecn.kmax", T::kBytes, "1500KB", "RED Kmax.", ""},
      {"fabric.ecn.pmax", T::kDouble, "0.01", "RED marking probability at Kmax.", "", 0, 1},
      {"fabric.pfc.enabled", T::kBool, "false",
       "Priority flow control (802.1Qbb) on fabric.pfc.priority: switches pause the upstream port "
       "when an "
       "(ingress port, priority) holds more than xoff.",
       ""},
      {"fabric.pfc.priority", T::kInt, "3",
       "The lossless priority (RoCE: 3). With fabric.pfc.mode global every class is lossless and "
       "this plays no part.",
       "", 0, 7},
      {"fabric.pfc.mode", T::kEnum, "pfc",
       "pfc: per-priority pause (802.1Qbb). global: IEEE 802.3x PAUSE, the worse option: the "
       "XOFF decision is on all the bytes an ingress port holds and each PAUSE stops every class "
       "of the upstream port (CNPs included), so all traffic is lossless and one congested class "
       "stops the others.",
       "pfc|global"},
      {"fabric.pfc.xoff", T::kBytes, "200KB",
       "Bytes an (ingress port, priority) may hold before it sends XOFF.", ""},
      {"fabric.pfc.xon", T::kBytes, "",
       "Resume at or below this. Default: xoff minus one maximum frame.", ""},
      {"fabric.pfc.headroom", T::kBytes, "",
       "Buffer above xoff for what arrives after XOFF; a frame beyond it is dropped and reported "
       "as a "
       "misconfiguration. Default: 3 max frames + 84 + rate x (2 x cable delay + response + switch "
       "latency): "
       "docs/model/pfc.md#headroom without its PHY term, plus the frame that crosses XOFF and the "
       "switch "
       "pipeline.",
       ""},
      {"fabric.pfc.response", T::kTime, "1158.4ns",
       "Sender response time to a PAUSE (802.3 D-Resp bound at 400GbE: 905 quanta).", ""},
      {"fabric.pfc.quanta", T::kInt, "65535",
       "Pause time carried by XOFF frames, in 512-bit quanta.", "", 1, 65535},
      {"fabric.pfc.watchdog.enabled", T::kBool, "false",
       "Switch PFC watchdog (docs/model/pfc.md#watchdog) on every switch egress queue of the "
       "lossless priority.",
       ""},
      {"fabric.pfc.watchdog.poll", T::kTime, "100ms",
       "Watchdog poll period (Juniper default). A queue is stalled at a poll if over the whole "
       "preceding interval it held packets, sent none and was paused for at least threshold of it.",
       ""},
      {"fabric.pfc.watchdog.detect_polls", T::kInt, "2",
       "Consecutive stalled polls before the watchdog acts (Juniper: 2, i.e. 200 ms).", "", 1,
       1000},
      {"fabric.pfc.watchdog.restore", T::kTime, "200ms",
       "After acting, the watchdog drops the queue's packets and arrivals and ignores PAUSE for "
       "this long, then honours PFC again (Juniper default).",
       ""},
      {"fabric.pfc.watchdog.threshold", T::kDouble, "0.99",
       "Fraction of the poll interval a queue must be paused to count as stalled (SONiC/NVIDIA "
       "rule; older rule 0.8).",
       "", 0.01, 1},
      {"fabric.pfc.watchdog.stagger", T::kBool, "true",
       "Each switch's watchdog timer starts at its own phase (from the seed) in the first poll "
       "period, as unsynchronised switches do; false: all poll at multiples of poll.",
       ""},
      {"fabric.pfc.watchdog.pause_memory", T::kBool, "false",
       "false: PAUSE frames a queue receives in its restore period leave no state, so it honours "
       "PFC again only from the next frame after the period (the peer's next XOFF refresh). "
       "true: they still set its pause timer, and a pause still in force when the period ends "
       "is honoured at once. Which one a given switch does is not documented publicly "
       "(docs/deadlock.md#the-watchdog-restore-hazard).",
       ""},
      {"fabric.nic.pause_storm_timeout", T::kString, "8s",
       "NIC PFC stall prevention (ConnectX): once the NIC's receive pipeline has been stuck this "
       "long it stops sending PAUSE. A time (device range 80ms..8s), auto (= 100ms) or off.",
       ""},
      {"fabric.ber", T::kDouble, "0",
       "Post-FEC bit error rate of every link direction: a frame with a wrong bit is lost "
       "(docs/model/transport.md#bit-errors); faults.link_loss sets single links.",
       "", 0, 0.01},
      {"transport.kind", T::kEnum, "raw",
       "raw: flows are bytes with no transport (nothing is acknowledged or resent; a lost packet "
       "is lost). rc: every flow is an RDMA Reliable Connected queue pair: PSNs, ACK/NAK, "
       "go-back-N, local ACK timeout and retries (docs/model/transport.md).",
       "raw|rc"},
      {"faults.nic_stall.host", T::kInt, "",
       "Stalled-NIC fault (docs/model/pfc.md#pause-storms-and-stalled-nics): host rank whose "
       "receive pipeline stops consuming "
       "packets. Default: no fault.",
       "", 0, 1e7},
      {"faults.nic_stall.at", T::kTime, "0s", "When the NIC's receive pipeline stalls.", ""},
      {"faults.nic_stall.until", T::kTime, "",
       "When it recovers (held packets are then consumed at once). Default: never.", ""},
      {"faults.reroute.ib", T::kTime, "2ms",
       "InfiniBand: time from a link going down (faults.link_down) or up until every switch "
       "routes around it (or over it again). Default: SHIELD fast link fault notification, on by "
       "default in OpenSM, which Mellanox put at 5,000x faster than a subnet-manager "
       "recalculation of 10-20 s on a large fabric (docs/what-if.md#reroute-times). Without "
       "SHIELD: the SM's sweep and LFT update, seconds.",
       ""},
      {"faults.reroute.ethernet", T::kTime, "300ms",
       "Ethernet (RoCE v2): time from a link going down or up until every switch routes around "
       "it (or over it again): BGP reconvergence of a routed Clos (RFC 7938 section 7: "
       "sub-second with fast fallover); the default is BFD's 100 ms x 3 detection "
       "(docs/what-if.md#reroute-times). Estimate.",
       ""},
      {"deadlock.detect", T::kBool, "false",
       "Online PFC deadlock detection: a wait-for graph of lossless ingress buffers fed on pause "
       "changes (docs/fabric-model.md).",
       ""},
      {"deadlock.persist", T::kTime, "1ms",
       "A wait cycle must stand unbroken this long (simulated) to be reported as a deadlock.", ""},
      {"deadlock.stop", T::kEnum, "auto",
       "End the run at the first deadlock: yes, no, or auto (yes unless the PFC watchdog is on, "
       "so the watchdog can act).",
       "auto|yes|no"},
      {"fabric.cc", T::kEnum, "none",
       "End-to-end congestion control: none (PFC alone, Meta style), dcqcn-paper or dcqcn-firmware "
       "(the two "
       "presets of docs/model/dcqcn.md#presets; needs fabric.ecn.enabled; fabric.dcqcn.* overrides "
       "single "
       "parameters of the preset), or ib-cc (InfiniBand congestion control, "
       "docs/model/infiniband.md#ib-congestion-control; needs "
       "fabric.ib.enabled; fields fabric.ibcc.*).",
       "none|dcqcn-paper|dcqcn-firmware|ib-cc"},
      {"fabric.ibcc.threshold", T::kBytes, "64KiB",
       "IB CC: a switch egress VL marks FECN on packets leaving a queue above this (the IBA "
       "4-bit Threshold's byte scale is unverified).",
       ""},
      {"fabric.ibcc.marking_rate", T::kInt, "0",
       "IB CC Marking_Rate: eligible packets left unmarked between two FECN marks.", "", 0, 65535},
      {"fabric.ibcc.ccti_increase", T::kInt, "1",
       "IB CC CCTI_Increase per BECN (docs/model/presets.md: 1).", "", 1, 1024},
      {"fabric.ibcc.ccti_timer", T::kTime, "16.384us",
       "IB CC CCTI_Timer period: each expiry lowers CCTI by one (placeholder: 16 x 1.024 us).", ""},
      {"fabric.ibcc.cct_entries", T::kInt, "128", "Entries of the congestion control table (CCT).",
       "", 1, 16384},
      {"fabric.ibcc.cct_step", T::kTime, "10ns",
       "CCT as injection gaps: entry i waits i x step between packets (the IBA shift/multiplier "
       "scaling is unverified).",
       ""},
      {"topology.kind", T::kEnum, "leaf-spine",
       "leaf-spine (2 tiers), fat-tree (3 tiers), rail-optimized, ls-ring (anchor shape) or file.",
       "leaf-spine|fat-tree|rail-optimized|ls-ring|file"},
      {"topology.gpus", T::kInt, "64", "GPUs = NICs = hosts.", "", 2, 1e7},
      {"topology.nodes", T::kInt, "",
       "Nodes of topology.gpus_per_node GPUs (one NIC each): sets topology.gpus = nodes x "
       "gpus_per_node. Give nodes or gpus, not both. Default: topology.gpus decides.",
       "", 1, 1e6},
      {"topology.radix", T::kInt, "64", "Switch ports at the host link speed.", "", 2, 4096},
      {"topology.oversubscription", T::kDouble, "1",
       "Leaf down:up ratio o in o:1 (1 = non-blocking). A leaf is built with the most down "
       "ports whose ratio to its up ports stays within o; the topology's description gives the "
       "ratio built, and a warning says when it is more than 5% from o (radix 8 at 64:1 is "
       "7:1).",
       "", 1, 64},
      {"topology.tiers", T::kInt, "0", "Tiers for leaf-spine/fat-tree; 0 = smallest that fits.", "",
       0, 3},
      {"topology.gpus_per_node", T::kInt, "8", "GPUs per node (rail-optimized).", "", 1, 64},
      {"topology.hosts_per_leaf", T::kInt, "8", "ls-ring: hosts per leaf.", "", 1, 4096},
      {"topology.spines", T::kInt, "8", "ls-ring: spines (each leaf has one link to each).", "", 1,
       4096},
      {"topology.file", T::kString, "",
       "file: path of an explicit topology file (docs/topology-file.md); relative to the "
       "scenario file's folder ('--set': to the working directory).",
       ""},
      {"outputs.json", T::kString, "",
       "Write the results as JSON to this path (relative as topology.file; '-' = standard "
       "output).",
       ""},
      {"outputs.series.interval", T::kTime, "",
       "Sample time series every this interval (docs/series.md); empty = no series. At most "
       "1000000 samples per series over stop_time.",
       ""},
      {"outputs.series.ports", T::kString, "busy",
       "Link directions to sample (egress queue of the data class, utilization, PAUSE frames, "
       "CNPs): busy (every port that transmitted anything), all, none, or a comma-separated list "
       "of names such as S->R.",
       ""},
      {"outputs.series.flows", T::kEnum, "all",
       "Per-flow series (goodput; DCQCN rate when fabric.cc is on): all or none.", "all|none"},
      {"outputs.series_csv", T::kString, "",
       "Also write the series as CSV to this path (one row per sample; docs/series.md; relative "
       "as topology.file; '-' = standard output).",
       ""},
      {"outputs.pcap", T::kString, "",
       "Write the frames the outputs.pcap_ports send as a pcapng capture to this path, for "
       "Wireshark or tshark (docs/capture.md; relative as topology.file). Empty = no capture.",
       ""},
      {"outputs.pcap_ports", T::kString, "all",
       "Link directions captured, one pcapng interface each: all, none, or a comma-separated "
       "list of names such as S->R (busy means all here).",
       ""},
      {"outputs.pcap_from", T::kTime, "0s",
       "Capture frames that start at or after this time.", ""},
      {"outputs.pcap_until", T::kTime, "",
       "Capture frames that start before this time; empty = until the end of the run.", ""},
      {"outputs.pcap_limit", T::kBytes, "256MiB",
       "Largest capture file; frames beyond it are left out and the run says how many.", ""},
      {"outputs.pcap_snaplen", T::kInt, "0",
       "Bytes of each frame kept in the capture (its length on the wire is recorded); 0 = whole "
       "frames.",
       "", 0, 65535},
      {"outputs.pcap_resolution", T::kEnum, "ns",
       "Timestamp resolution of the capture: ns (nanoseconds, rounded down) or ps "
       "(the simulator's picoseconds).",
       "ns|ps"},
      {"outputs.trace", T::kString, "",
       "Write a timeline as Chrome trace-event JSON to this path, for ui.perfetto.dev "
       "(docs/capture.md; relative as topology.file; '-' = standard output). Empty = none.",
       ""},
      {"outputs.trace_ports", T::kString, "all",
       "Link directions with tracks in the timeline (paused intervals, queue occupancy, ECN "
       "marks, CNPs, watchdog): all, none, or a comma-separated list of names such as S->R.",
       ""},
      {"outputs.trace_limit", T::kBytes, "256MiB",
       "Largest timeline file; events beyond it are left out and the run says how many.", ""},
      {"outputs.per_flow_limit", T::kInt, "100000",
       "The run JSON lists every flow (hosts, size, start, completion time or bytes left) when "
       "the run has at most this many flows; above it the list is left out (per_flow: null) to "
       "bound the JSON's size. 0 = never.",
       "", 0, 1e9},
      {"tenants.load", T::kDouble, "0",
       "Shared fabric: share of each host link's capacity taken by other tenants' bursty, "
       "seeded traffic on the shared queues: each host's NIC also sends Poisson bursts to "
       "random other hosts on the data class (docs/model/shared-cloud.md). 0 = none.",
       "", 0, 1},
      {"tenants.burst", T::kBytes, "1MiB",
       "Shared fabric: mean of the exponentially distributed size of another tenant's bursts.", ""},
      {"virtualization.latency", T::kTime, "0ns",
       "Fixed latency the virtualization layer (hypervisor, SR-IOV virtual function) adds to "
       "every message a host posts (each RDMA message of a collective, each flow of run).",
       ""},
      {"virtualization.jitter", T::kTime, "0ns",
       "Mean of an exponentially distributed extra delay per message (seeded), on top of "
       "virtualization.latency; a queue pair's messages keep their order.",
       ""},
      {"cost.model", T::kEnum, "on-prem",
       "How `lossless tco` prices the fabric: on-prem (switches, NICs, optics, cables, power "
       "and operations, sized from the topology; docs/tco.md) or cloud (a price per GPU-hour "
       "that includes the GPUs; no fabric capex).",
       "on-prem|cloud"},
      {"stop_time", T::kTime, "10s", "Safety limit on simulated time.", ""},
      {"limits.max_flows", T::kInt, "4000000",
       "Most flows the traffic list may expand to (repeats included; repeats that start at or "
       "after stop_time are not built and not counted). Counted before any flow is built: the "
       "entry that crosses it is refused at its line. A run holds about 400 bytes per flow (the "
       "default: about 1.5 GB).",
       "", 1, 1e9},
  };
  return kParams;
}

const ParamInfo* FindParam(const std::string& name) {
  for (const auto& p : Params())
    if (name == p.name) return &p;
  return nullptr;
}

const std::vector<PresetValue>& PresetValues() {
  static const std::vector<PresetValue> kValues = {
      {"infiniband", "fabric.switch_latency", "130ns"},
      {"infiniband", "fabric.routing", "adaptive"},
      {"infiniband", "fabric.data_class", "0"},
      {"infiniband", "fabric.ib.enabled", "true"},
      {"roce", "fabric.switch_latency", "300ns"},
      {"roce", "fabric.routing", "ecmp"},
      {"roce", "fabric.pfc.enabled", "true"},
      {"raw", "fabric.switch_latency", "0ns"},
      {"raw", "fabric.mtu", "3972"},
      {"raw", "fabric.routing", "spray"},
  };
  return kValues;
}

std::vector<std::string> PresetNames() {
  return {"infiniband", "roce", "raw"};
}

namespace {
const char* TypeName(ParamType t) {
  switch (t) {
    case ParamType::kTime:
      return "time";
    case ParamType::kRate:
      return "rate";
    case ParamType::kBytes:
      return "size";
    case ParamType::kInt:
      return "integer";
    case ParamType::kDouble:
      return "number";
    case ParamType::kBool:
      return "bool";
    case ParamType::kEnum:
      return "choice";
    case ParamType::kString:
      return "text";
  }
  return "?";
}
}  // namespace

std::string ParamTypeText(const ParamInfo& p) {
  std::string type = TypeName(p.type);
  if (p.type == ParamType::kEnum) type += fmt::format(" ({})", p.choices);
  if ((p.type == ParamType::kInt || p.type == ParamType::kDouble) && p.min <= p.max)
    type += fmt::format(", {:g}..{:g}", p.min, p.max);
  return type;
}

std::string ParamsMarkdown() {
  std::string out =
      "# Scenario fields\n\n"
      "Generated by `lossless params --markdown` from the parameter registry\n"
      "(src/scenario/params.cpp); a test keeps this file in step with it.\n\n"
      "Every value takes its unit (`400Gbps`, `1.5us`, `9KiB`). A bare number for a\n"
      "rate, a time or a size (`fabric.link_rate: 400`) is bad input (exit code 2); zero\n"
      "needs no unit. `fabric.mtu` is a payload size in bytes, `fabric.cable_length` a\n"
      "length in metres and counts are plain numbers. Any field can be\n"
      "overridden on the command line with `--set name=value`.\n\n"
      "| field | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& p : Params()) {
    std::string type = ParamTypeText(p);
    std::string help = p.help;
    for (auto& c : help)
      if (c == '|') c = '/';
    for (size_t i = 0; (i = type.find('|', i)) != std::string::npos;)
      type.replace(i, 1, " \\| "), i += 4;
    out += fmt::format("| `{}` | {} | {} | {} |\n", p.name, type,
                       *p.def ? fmt::format("`{}`", p.def) : "—", help);
  }
  out +=
      "\n## DCQCN overrides\n\n"
      "`fabric.dcqcn.<name>` replaces one parameter of the DCQCN preset that `fabric.cc` "
      "selects\n"
      "(src/cc/dcqcn_params.hpp, docs/model/dcqcn.md#presets); the other parameters keep the "
      "preset's "
      "values.\n"
      "Giving any `fabric.dcqcn.*` field while `fabric.cc` is `none` is an error (exit code 2),\n"
      "since the override would silently do nothing. Fractions accept `0.0039` or `1/256`.\n"
      "After the overrides, the set is checked as a whole: `min_rate` at most the link rate,\n"
      "`max_rate` 0 or at least `min_rate`; the paper variant needs `rate_reduce_period` 0 and\n"
      "`rate_on_first_cnp` 0, the firmware variant `rate_reduce_period` above 0 and\n"
      "`byte_counter` 0. `lossless validate --show` prints the resolved values.\n";
  out +=
      "\n## Preset values\n\n`fabric.preset` replaces these defaults (values given in the file "
      "still win):\n\n"
      "| preset | field | value |\n|---|---|---|\n";
  for (const auto& v : PresetValues())
    out += fmt::format("| {} | `{}` | `{}` |\n", v.preset, v.name, v.value);
  out +=
      "\n## Traffic\n\n`traffic` is a list; each entry has a `pattern` and the fields below.\n\n"
      "| field | patterns | default | meaning |\n|---|---|---|---|\n"
      "| `pattern` | all | — | `ring` (host i to i+stride), `permutation` (same, stride required), "
      "`incast` "
      "(senders to one target), `all-to-all`, `flow` (one explicit flow) |\n"
      "| `bytes` | all | — | bytes per flow (required) |\n"
      "| `start` | all | `0s` | start time |\n"
      "| `stride` | ring, permutation | `1` | destination offset |\n"
      "| `target` | incast | `0` | receiving host rank |\n"
      "| `senders` | incast | all other hosts | number of senders (ranks target+1, target+2, ...) "
      "|\n"
      "| `hosts` | ring, permutation, all-to-all | all | use only hosts 0..hosts-1 |\n"
      "| `src`, `dst` | flow | — | host ranks |\n"
      "| `class` | all | `fabric.data_class` | traffic class |\n"
      "| `repeat` | all | `1` | the entry's flows this many times (at most 1000000), "
      "the k-th copy starting at `start + k x every` |\n"
      "| `every` | all | — | time between repeats (required with `repeat`) |\n"
      "| `rate` | all | line rate | pacing rate of each flow (wire bytes, e.g. `80Gbps`); not with "
      "DCQCN, whose reaction point sets the rate |\n"
      "| `path` | flow | the routing's choice | explicit route: the switches from the source's "
      "switch to the destination's (`[leaf2, spine0, leaf1]`, or `leaf2,spine0,leaf1` in "
      "`--set`); `switch/N` sends on class N from that switch on (a priority change at that "
      "hop) |\n"
      "| `name` | all | — | a label for the entry; `lossless deadlock` names flows by it "
      "(docs/deadlock.md) |\n";
  out +=
      "\n## Injected PFC frames and CNPs\n\n"
      "`faults.pause_inject` and `faults.cnp_inject` each take one mapping or a list of them; "
      "`--set faults.pause_inject.<i>.<field>=v`\n"
      "overrides a field of entry i (i = the number of entries adds one). The fault is a "
      "one-off event at the given time.\n\n"
      "`faults.pause_inject`: each entry sends one PFC frame (64 B + preamble/IFG) through the "
      "normal MAC-control path of its sender to the\n"
      "link peer, which stops starting frames of the enabled priorities `fabric.pfc.response` "
      "after the end of its reception, until\n"
      "end of reception + quanta x 512 bit times (or an XON). The report's `inject` line gives "
      "the receiver's paused time over the run, lossless priority only. Needs "
      "`fabric.pfc.enabled: true` (a port with PFC off ignores PFC frames).\n\n"
      "| field | default | meaning |\n|---|---|---|\n"
      "| `host` | — | host rank whose NIC sends the frame to its switch (give `host` or `port`) |\n"
      "| `port` | — | link direction whose sending port sends the frame (`leaf0->host0`: the "
      "switch pauses host0; `a->b#k` for one of parallel links) |\n"
      "| `at` | — | when the frame is queued; it starts after the frame in progress (required) |\n"
      "| `class_enable` | — | priorities the frame enables: a list (`[3]`, `[3, 4]`), one "
      "priority (`3`) or a bit vector (`0x08`, `0b00001000`) (required) |\n"
      "| `quanta` | — | pause time of every enabled priority, 0..65535 (`0xffff` accepted); 0 = "
      "XON (required) |\n"
      "\n`faults.cnp_inject`: each entry delivers CNPs to one flow's DCQCN reaction point, as if "
      "they came from the flow's destination.\n"
      "Needs `fabric.cc` dcqcn-paper or dcqcn-firmware. The series `dcqcn_rate_gbps`, "
      "`dcqcn_target_gbps` and `dcqcn_alpha` (docs/series.md) show the result.\n\n"
      "| field | default | meaning |\n|---|---|---|\n"
      "| `flow` | — | index of the flow in the expanded traffic list (0 = the first flow of the "
      "first entry) (required) |\n"
      "| `at` | — | a time or a list of times (`[55us, 105us]`) (required) |\n"
      "| `count` | `1` | CNPs at `at`, `at + every`, ... (at most 1000000; only with a single "
      "`at`) |\n"
      "| `every` | — | time between them (required with `count` above 1) |\n"
      "\n## Lossy links\n\n"
      "`faults.link_loss` takes one mapping or a list of them (`--set "
      "faults.link_loss.<i>.<field>=v` as above): frames lost on a link direction, checked when "
      "their last bit arrives (docs/model/transport.md#bit-errors). With `transport.kind: rc` "
      "the transport recovers them; raw flows lose them.\n\n"
      "| field | default | meaning |\n|---|---|---|\n"
      "| `link` | — | a link as `lossless links` names it (`leaf0-spine1`, `leaf0-spine1#2` for "
      "one of parallel links; `leaf0<->spine1` also accepted): both directions; or one "
      "direction (`leaf0->spine1`, `leaf0->spine1#2`) (required) |\n"
      "| `ber` | `fabric.ber` | post-FEC bit error rate (every kind of packet) |\n"
      "| `every` | — | drop every n-th data packet the link carries, retransmissions counted |\n"
      "| `probability` | — | drop each data packet with this probability (seeded) |\n"
      "\n## Links down\n\n"
      "`faults.link_down` takes one mapping or a list of them (`--set "
      "faults.link_down.<i>.<field>=v` as above): a link goes down (both directions: what is on "
      "its wire and in its queues is lost, the transport recovers it) and may come back. Every "
      "switch reroutes after `faults.reroute.ib` or `faults.reroute.ethernet`; until then a "
      "switch left without a live next hop drops what it gets (docs/what-if.md#link-down).\n\n"
      "| field | default | meaning |\n|---|---|---|\n"
      "| `link` | — | a link as `lossless links` names it (`leaf0-spine0`, `leaf0-spine0#1` for "
      "one of parallel links) (required) |\n"
      "| `at` | — | when it goes down (required) |\n"
      "| `up_at` | never | when it comes back (after `at`): a link flap |\n";
  return out;
}

}  // namespace lossless::scenario
