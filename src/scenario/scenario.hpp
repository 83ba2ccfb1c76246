#pragma once
// Scenario files: YAML (JSON accepted) naming a fabric preset plus overrides,
// a topology, traffic, a seed and outputs: the configuration only (running it
// is run::RunScenario; its traffic as flows is workload::ExpandTraffic). Loading validates every
// field against the registry (params.hpp) and throws InputError with file, line and field on the
// first problem; `--set a.b=v` overrides apply before validation.
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "fabric/network.hpp"
#include "node/node.hpp"
#include "topology/topology.hpp"
#include "units/units.hpp"

namespace lossless::scenario {

enum class Pattern { kRing, kPermutation, kIncast, kAllToAll, kFlow };

struct TrafficSpec {
  std::string name;  // optional label ("" = none), used by lossless deadlock's witness
  Pattern pattern = Pattern::kRing;
  int64_t bytes = 0;
  units::Time start;
  int64_t stride = 1;
  int64_t target = 0;
  int64_t senders = -1;  // -1 = all other hosts
  int64_t hosts = -1;    // -1 = all hosts
  int64_t src = -1, dst = -1;
  int tclass = -1;
  int64_t repeat = 1;  // the entry's flows again at start + k x every, k < repeat
  units::Time every;
  units::Rate rate;  // pacing rate of each flow; 0 = line rate
  Location rate_where;
  // Explicit route of a `flow`: switch names from the source's switch to the
  // destination's, each with the class taken from that switch on (-1 = keep).
  std::vector<std::pair<std::string, int>> path;
  Location path_where;
  Location where;  // the list entry, for errors found when expanding
};

// Sampled time series (docs/series.md). Off when interval is zero.
struct SeriesSpec {
  units::Time interval;             // 0 = no sampling
  std::string ports = "busy";       // busy | all | none | comma-separated port names
  bool flows = true;                // per-flow goodput (and DCQCN rate)
  std::string csv_out;              // "" = no CSV
  int64_t max_values = 10'000'000;  // cap on values held (series x samples so far); not a field
  Location where;                   // of outputs.series.interval, for errors found at run time
  Location ports_where;             // of outputs.series.ports
};

// Packet capture and timeline (outputs.pcap*, outputs.trace*; docs/capture.md).
struct CaptureSpec {
  std::string pcap;                // "" = no capture
  std::string pcap_ports = "all";  // as SeriesSpec::ports
  Location pcap_ports_where;
  units::Time pcap_from;
  units::Time pcap_until = units::Time::Max();
  int64_t pcap_limit = int64_t{256} << 20;
  int64_t pcap_snaplen = 0;
  bool pcap_ps = false;  // picosecond timestamps
  std::string trace;     // "" = no timeline
  std::string trace_ports = "all";
  Location trace_ports_where;
  int64_t trace_limit = int64_t{256} << 20;
};

// Largest number of samples one series may hold (stop_time / interval).
inline constexpr int64_t kMaxSeriesSamples = 1'000'000;

struct NicStallFault {
  int64_t host = -1;  // -1 = no fault
  units::Time at;
  units::Time until = units::Time::Max();
  Location where;
};

// faults.pause_inject: one PFC frame sent by a host's NIC (host >= 0) or by
// the sending port of a named link direction ("leaf0->host0"), to its link
// peer, at `at`.
struct PauseInjection {
  int64_t host = -1;  // -1 = `port` names the sender
  std::string port;   // link direction, as in outputs.series.ports
  units::Time at;
  uint8_t class_enable = 0;  // bit c = priority c
  uint16_t quanta = 0;       // 0 = XON
  Location where;            // of host or port, for errors found against the topology
};

// faults.cnp_inject: CNPs delivered to the DCQCN reaction point of flow
// `flow` (index into the expanded traffic) at each time of `at`, ascending.
struct CnpInjection {
  int64_t flow = 0;
  std::vector<units::Time> at;
  Location where;  // of flow
};

// faults.link_loss: frames lost on link directions to post-FEC bit errors or
// injected drops (docs/model/transport.md#bit-errors).
struct LinkLossFault {
  std::string link;  // "a->b" (one direction) or "a<->b" (both)
  fabric::LinkLossConfig loss;
  bool ber_given = false;  // else fabric.ber applies to it
  Location where;          // of link
};

// faults.link_down: a link (both directions) goes down at `at` and, unless
// up_at is Time::Max(), comes back at `up_at` (a flap); the control plane
// reroutes around each change after the fabric's reroute time
// (docs/what-if.md#link-down).
struct LinkDownFault {
  std::string link;  // a link name as `lossless links` prints it (FindLink)
  units::Time at;
  units::Time up_at = units::Time::Max();
  Location where;  // of link
};

struct DeadlockOptions {
  bool detect = false;
  units::Time persist = units::Time::Ms(1);
  bool stop = true;  // end the run at the first deadlock
};

// Fields of fabric profiles (docs/profiles.md) for the shared-cloud
// mechanisms (docs/model/shared-cloud.md): other tenants' traffic
// (workload::TenantTraffic, run by `run` and `perf`) and the virtualization
// delay (also in net.virt, applied by the network).
struct SharedFabricSpec {
  double tenant_load = 0;    // tenants.load: share of each host link's capacity, 0..1
  int64_t tenant_burst = 0;  // tenants.burst: mean burst of a tenant, bytes
  units::Time virt_latency;  // virtualization.latency: fixed extra per message
  units::Time virt_jitter;   // virtualization.jitter: mean of an exponential extra per message
};

struct Scenario {
  std::string name;
  std::string description;  // one line (profiles: listed by `lossless profiles`)
  std::string file;
  uint64_t seed = 1;
  std::string preset;
  fabric::NetworkConfig net;
  std::string topology_kind;
  topology::ClosParams clos;
  int hosts_per_leaf = 8;
  int spines = 8;
  std::string topology_file;
  Location topology_file_where;  // of topology.file
  Location topology_where;       // where topology.gpus (or kind) was given
  std::vector<TrafficSpec> traffic;
  int64_t max_flows = 4'000'000;  // limits.max_flows
  Location max_flows_where;
  NicStallFault nic_stall;
  std::vector<PauseInjection> pause_inject;
  std::vector<CnpInjection> cnp_inject;
  std::vector<LinkLossFault> link_loss;
  std::vector<LinkDownFault> link_down;
  // faults.reroute.ib / faults.reroute.ethernet: from a link's change of state
  // until every switch routes around it (or over it again), on InfiniBand
  // (net.ib.enabled) and on Ethernet. RerouteTime() picks the fabric's.
  units::Time reroute_ib = units::Time::Ms(2);
  units::Time reroute_ethernet = units::Time::Ms(300);
  units::Time RerouteTime() const { return net.ib.enabled ? reroute_ib : reroute_ethernet; }
  // transport.kind rc: every flow is an RDMA RC queue pair (net.rc has its
  // settings); raw: bytes with no transport.
  bool rc = false;
  double ber = 0;  // fabric.ber: post-FEC bit error rate of every link direction
  DeadlockOptions deadlock;
  // node.*: the GPU node collectives run on (src/node/node.hpp; `perf`).
  node::NodeConfig node;
  std::string json_out;
  int64_t per_flow_limit = 100'000;  // outputs.per_flow_limit
  SeriesSpec series;
  CaptureSpec capture;
  units::Time stop_time;
  SharedFabricSpec shared;
  std::string cost_model = "on-prem";  // cost.model: on-prem | cloud (lossless tco)
  // Configurations a user may want to study but should know are risky
  // (ECN above the PFC trigger, headroom too small for the cable).
  std::vector<std::string> warnings;
  // Where fabric.pfc.headroom came from: "fabric.pfc.headroom" when given, else
  // "default for ..." naming the link rate and delay its formula used.
  std::string pfc_headroom_basis;
  // Every field's final value as text with its unit, in registry order
  // ("fabric.link_rate" -> "400Gbps", "fabric.pfc.xon" -> "195842B", an unset
  // optional field -> "(none)"), then "traffic.N" -> the entry's fields.
  std::vector<std::pair<std::string, std::string>> resolved;
};

// The PFC headroom a port needs on a link of `rate` and one-way `delay`
// (docs/model/pfc.md#headroom without its PHY term, plus the frame that crosses
// XOFF and the switch pipeline); net gives the MTU, framing, PFC response time
// and switch latency. The default of fabric.pfc.headroom: for a topology file,
// the largest over its links.
units::Bytes PfcHeadroomFor(const fabric::NetworkConfig& net, units::Rate rate, units::Time delay);

// The default of fabric.pfc.headroom for `sc`'s topology: PfcHeadroomFor
// fabric.link_delay at fabric.link_rate, or for a topology file the largest
// over its links; `basis` says which link decided.
units::Bytes TopologyPfcHeadroom(const Scenario& sc, std::string* basis);

// `sets` are "a.b=value" strings. Throws InputError on any problem.
Scenario LoadScenarioText(const std::string& text, const std::string& file_name,
                          const std::vector<std::string>& sets = {});
Scenario LoadScenarioFile(const std::string& path, const std::vector<std::string>& sets = {});
// A fabric profile or any scenario whose traffic is optional (perf, compare and
// tco bring their own): the same fields and checks, `traffic:` may be absent.
// Those commands always run RC queue pairs, so transport.* never draws the
// "no effect with transport.kind raw" warning here.
Scenario LoadFabricText(const std::string& text, const std::string& file_name,
                        const std::vector<std::string>& sets = {});
Scenario LoadFabricFile(const std::string& path, const std::vector<std::string>& sets = {});

// Builds the topology the scenario describes (throws InputError naming the
// field, e.g. a GPU count the radix cannot host, or an unreachable host pair).
topology::Topology BuildTopology(const Scenario& s);

// The port (fabric::Network numbering: 2l and 2l+1 are the two directions of
// topology link l) that sends injected frame `p`. Throws InputError naming
// the entry's host or port field when it names no host / link direction of `t`.
uint32_t PauseInjectionPort(const PauseInjection& p, const topology::Topology& t);

// Topology links by the one name every fault, `lossless links` and
// `lossless what-if` use (docs/what-if.md#link-names): link l is "a-b", its
// endpoints' node names in the topology's order; when two nodes have more
// than one link between them, each of the bundle is "a-b#k" with k = 0, 1, ...
// in link order. Index l of the result is link l. O(links).
std::vector<std::string> LinkNames(const topology::Topology& t);

// The link `name` names: a LinkNames name, the same with its endpoints
// swapped ("spine0-leaf0" for "leaf0-spine0"), or the older "a<->b". Throws
// InputError at `where` for a name of no link (naming the nearest link name)
// and for a bundle of parallel links named without its "#k" (listing them).
uint32_t FindLink(const std::string& name, const topology::Topology& t, const Location& where);

// The port (fabric::Network numbering) of link direction `name`, "a->b" or
// "a->b#k" for one of parallel links. Throws InputError at `where` as
// FindLink does.
uint32_t FindLinkDirection(const std::string& name, const topology::Topology& t,
                           const Location& where);

// The ports (same numbering) a faults.link_loss entry names. Throws
// InputError naming its link field when it names no link of `t`.
std::vector<uint32_t> LinkLossPorts(const LinkLossFault& f, const topology::Topology& t);

// Checks the faults against the built topology and the expanded flows (host
// ranks, link names, flow indices); throws InputError naming the field.
void CheckFaults(const Scenario& s, const topology::Topology& t, size_t flows);

// The ports (same numbering) that outputs.series.ports selects; every port
// for busy and all. Throws InputError naming outputs.series.ports for a name
// that matches no link direction of `t`.
std::vector<uint32_t> SeriesPorts(const Scenario& s, const topology::Topology& t);

// The ports that a selector (busy | all | none | comma-separated link
// directions) names; InputError at `where` for a name that matches no link
// direction of `t`. SeriesPorts is this on outputs.series.ports.
std::vector<uint32_t> SelectPorts(const std::string& selector, const Location& where,
                                  const topology::Topology& t);

}  // namespace lossless::scenario
