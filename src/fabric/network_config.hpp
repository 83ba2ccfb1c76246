#pragma once
// What a network is built with: switch, NIC, flow-control, congestion-control
// and transport parameters (docs/fabric-model.md, docs/scenarios.md). The
// scenario reader fills it; fabric::Network and fabric::Nics read it.
#include <array>
#include <cstdint>

#include "cc/dcqcn_params.hpp"
#include "cc/ib_cc.hpp"
#include "fabric/framing.hpp"
#include "fabric/routing.hpp"
#include "flowctl/classes.hpp"
#include "flowctl/ib_credits.hpp"
#include "flowctl/pfc.hpp"
#include "flowctl/pfc_watchdog.hpp"
#include "flowctl/vl_arbiter.hpp"
#include "rdma/rc.hpp"
#include "units/units.hpp"

namespace lossless::fabric {

using units::Bytes;
using units::Rate;
using units::Time;

using flowctl::kMaxClasses;

struct EcnConfig {
  bool enabled = false;
  Bytes kmin{150'000};  // Spectrum default (docs/model/presets.md)
  Bytes kmax{1'500'000};
  double pmax = 0.01;
};

struct SwitchConfig {
  Time latency = Time::Ns(300);  // port-to-port pipeline latency
  bool cut_through = false;
  Bytes buffer = Bytes::MiB(32);  // shared buffer per switch
  double alpha = 1.0 / 8;         // dynamic threshold for lossy classes
  int num_classes = 8;
  uint8_t strict_mask = 1u << 6;  // CNP class 6 strict (docs/model/dcqcn.md#notification-point)
  uint8_t lossless_mask = 0;      // admitted without the DT limit (PFC/credits hook)
  std::array<int32_t, kMaxClasses> wrr_weight{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<EcnConfig, kMaxClasses> ecn{};
};

// Priority flow control and its watchdog: flowctl/pfc.hpp,
// flowctl/pfc_watchdog.hpp (the network sends the frames and runs the timers).
using flowctl::PfcConfig;
using flowctl::PfcWatchdogConfig;

// InfiniBand credits and VL arbitration: flowctl/ib_credits.hpp,
// flowctl/vl_arbiter.hpp (the network's part is in fabric/ib_link.cpp).
using flowctl::IbLinkConfig;
using flowctl::kVl15Queue;
using flowctl::VlArbEntry;

struct NicConfig {
  Rate pcie_rate;          // 0 = no PCIe cap
  uint8_t data_class = 3;  // RoCE priority / IB SL of data packets
  bool ect = true;         // data packets are ECN-capable
  // PFC stall prevention (ConnectX, docs/model/pfc.md#watchdog, #pause-storms-and-stalled-nics):
  // once the NIC's receive pipeline has been stuck (holding packets it cannot consume) for this
  // long it stops sending PAUSE until the pipeline recovers; a warning event is counted at 85 % of
  // it. Zero = prevention off. Default 8 s.
  Time pause_storm_timeout = Time::Sec(8);
};

// The virtualization layer between a host and its NIC (a hypervisor path or
// an SR-IOV virtual function; scenario virtualization.*,
// docs/model/shared-cloud.md). Every message a host posts -- a message on a
// queue pair (Network::PostSend) or a flow (Network::AddFlow) -- reaches the
// NIC `latency` + X after it is posted, X exponential with mean `jitter`,
// drawn from the source host's own random stream (seed, host, "virt"). A
// queue pair's messages reach the NIC in posting order (a message never
// overtakes an earlier one). Both zero: no delay, no draw, no event.
struct VirtualizationConfig {
  Time latency;
  Time jitter;
  bool enabled() const { return latency.ps() > 0 || jitter.ps() > 0; }
};

struct NetworkConfig {
  Framing framing;
  SwitchConfig sw;
  NicConfig nic;
  RoutingMode routing = RoutingMode::kEcmp;
  PfcConfig pfc;
  IbLinkConfig ib;
  // End-to-end congestion control. With DCQCN on, a receiving NIC answers
  // ECN-marked data with CNPs (at most one per cnp_interval per flow, on
  // cnp_class, strict priority) and each sending flow paces at the rate of
  // its own reaction point (src/cc/dcqcn.hpp).
  bool dcqcn = false;
  cc::DcqcnParams dcqcn_params = cc::DcqcnParams::Paper();
  uint8_t cnp_class = 6;
  // InfiniBand congestion control (IBA Annex A10, docs/model/infiniband.md#ib-congestion-control;
  // needs ib.enabled). A switch egress VL sets FECN on data leaving a queue above the threshold
  // (one in marking_rate + 1 eligible packets); the destination HCA answers each FECN with a BECN
  // (a small packet back to the source on the flow's VL); the source keeps a CCTI per flow and
  // waits CCT[CCTI] after each packet it injects.
  bool ib_cc = false;
  cc::IbCcParams ib_cc_params;
  cc::IbFecnParams fecn;
  bool stop_when_flows_done = true;
  // RDMA RC transport of the flows that ask for it (FlowSpec::rc).
  rdma::RcConfig rc;
  VirtualizationConfig virt;
};

}  // namespace lossless::fabric
