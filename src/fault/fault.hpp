#pragma once
// Faults of a run as components: what goes wrong, where and when, resolved
// against a topology (port, link, host and flow numbers), and applied to a
// fabric::Network through its fault seams. A fault decides what and when;
// the state it changes belongs to a port or a NIC, so each change runs as an
// event of that owner (the seam schedules it on the owner's entity): a fault
// never writes into the network's state from outside an event, and a run's
// results depend only on (time, owner, per-owner sequence), as the engine's
// convention asks (docs/architecture.md, "Event ownership").
//
// The components and their seams:
//   NicStall        Network::StallNicReceive  the NIC's receive pipeline stops (pause storm
//                                             on RoCE, credits withheld on InfiniBand)
//   PauseInjection  Network::InjectPause      one PFC frame from a port (experiment E1)
//   CnpInjection    Network::InjectCnp        CNPs at a flow's reaction point (experiment E5)
//   LinkLoss        Network::SetLinkLoss      post-FEC bit errors and injected drops
//   LinkState       Network::ScheduleLinkState  a link goes down, and up again
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "fabric/link_loss.hpp"
#include "fabric/network.hpp"
#include "scenario/scenario.hpp"
#include "topology/topology.hpp"
#include "units/units.hpp"

namespace lossless::fault {

using units::Time;

// From `from` until `until` (Time::Max() = for good) host `host`'s NIC stops
// consuming what it receives (fabric::Network::StallNicReceive).
struct NicStall {
  uint32_t host = 0;
  Time from;
  Time until = Time::Max();
};

// At `at` port `port` sends one PFC frame to its peer: priorities
// `class_enable`, pause time `quanta` (0 = XON).
struct PauseInjection {
  uint32_t port = 0;
  uint8_t class_enable = 0;
  uint16_t quanta = 0;
  Time at;
};

// CNPs reach flow `flow`'s DCQCN reaction point at each time of `at`.
struct CnpInjection {
  uint32_t flow = 0;
  std::vector<Time> at;
};

// Port `port`'s link direction loses frames (fabric::LinkLossConfig).
struct LinkLoss {
  uint32_t port = 0;
  fabric::LinkLossConfig loss;
};

// Topology link `link` (both directions) goes down at `down_at` and, unless
// up_at is Time::Max(), comes up again at `up_at` (> down_at). While down it
// carries nothing (fabric::Network::ScheduleLinkState has the details).
struct LinkState {
  uint32_t link = 0;
  Time down_at;
  Time up_at = Time::Max();
};

struct Plan {
  std::optional<NicStall> nic_stall;
  std::vector<PauseInjection> pause;
  std::vector<LinkLoss> link_loss;  // in the order they are set: a later entry for a port wins
  std::vector<CnpInjection> cnp;
  std::vector<LinkState> link_state;
  // The control plane's reroute time (scenario faults.reroute.*): with a
  // value, `reroute` after every time at which link_state changes some
  // link, every switch takes tables computed without the links down then
  // (fabric::Network::ScheduleReroute). Without one, switches keep their
  // tables and only skip a dead next hop locally.
  std::optional<Time> reroute;
  // The reroutes Apply schedules: (time, links down from then on), in time order.
  std::vector<std::pair<Time, std::vector<uint32_t>>> Reroutes() const;
};

// The scenario's faults against the built topology and the number of flows
// its traffic expanded to: faults.nic_stall, faults.pause_inject,
// fabric.ber on every link direction then faults.link_loss,
// faults.cnp_inject, and faults.link_down with the fabric's reroute time.
// Throws InputError naming the field for a host, link direction or flow the
// topology or traffic lacks (nic_stall first, then pause_inject, link_loss,
// cnp_inject, link_down).
Plan FromScenario(const scenario::Scenario& s, const topology::Topology& t, size_t flows);

// The faults `perf` and `train` apply (they have no traffic list and run no
// injection experiments): fabric.ber, faults.link_loss, faults.nic_stall and
// faults.link_down (with the reroute time).
Plan LinkAndNicFaults(const scenario::Scenario& s, const topology::Topology& t);

// Applies `plan` to `net` before or during a run: link loss at once (it is a
// property of the link, checked as frames arrive), every timed fault as
// events of the port or NIC whose state it changes. Throws
// std::invalid_argument (from the seams) for a port, link, host or flow the
// network lacks, a CNP injection without DCQCN, or a LinkState whose up_at
// is not after down_at.
void Apply(const Plan& plan, fabric::Network& net);

}  // namespace lossless::fault
