#pragma once
// Counters of a port and of its traffic classes, as the network keeps them
// (fabric/network.hpp) and the run reports them (report/result.hpp).
#include <array>
#include <cstdint>

#include "flowctl/classes.hpp"

namespace lossless::fabric {

using flowctl::kMaxClasses;

// Counters of one traffic class (PFC priority; for InfiniBand the VL) of a
// port. PAUSE frames count once per class their class-enable vector names (a
// frame enabling classes 3 and 4 counts in both); paused time for every
// flow-controlled class a received frame holds: the lossless priorities
// under PFC, every class under global pause.
struct ClassStats {
  uint64_t pause_tx = 0;
  uint64_t pause_rx = 0;
  int64_t paused_ps = 0;
  int64_t credit_starved_ps = 0;
  uint64_t ecn_marks = 0;
  uint64_t cnp_tx = 0;
  uint64_t drops = 0;           // every drop of this class at the port (the ones below too)
  uint64_t lossless_drops = 0;  // of a flow-controlled class (headroom or buffer exhausted)
  uint64_t wd_drops = 0;        // by the PFC watchdog
  // Of lossless_drops: packets the upstream queue sent after its PFC watchdog
  // restore period ended and before it honoured a PAUSE again.
  uint64_t lossless_drops_after_restore = 0;
  uint64_t fcp_tx = 0;          // IB flow-control packets for this VL sent
  uint64_t fcp_rx = 0;          // ... received (lost ones excluded)
  bool Any() const {
    return pause_tx + pause_rx + ecn_marks + cnp_tx + drops + lossless_drops + wd_drops + fcp_tx +
                   fcp_rx >
               0 ||
           paused_ps != 0 || credit_starved_ps != 0;
  }
};

// Per-port counters. ecn_marks, cnp_tx, drops, lossless_drops, wd_drops,
// fcp_tx, fcp_rx, paused_ps and credit_starved_ps are kept per class only;
// Network::port_stats fills the port totals with their sums (paused_ps under
// global pause: see its comment). pause_tx and pause_rx count frames, so they
// equal the per-class sums only when each frame enables one class.
struct PortStats {
  uint64_t tx_packets = 0;
  uint64_t tx_wire_bytes = 0;
  int64_t busy_ps = 0;
  int64_t max_queue_bytes = 0;  // (the four above are the packet path's: Port keeps them hot)
  uint64_t drops = 0;
  uint64_t lossless_drops = 0;
  uint64_t lossless_drops_after_restore = 0;  // of them (ClassStats)
  uint64_t ecn_marks = 0;
  uint64_t pause_tx = 0;          // PFC frames sent (XOFF, refresh and XON)
  uint64_t pause_rx = 0;          // PFC frames received
  uint64_t cnp_tx = 0;            // CNPs a host sent (host ports only)
  int64_t paused_ps = 0;          // time this port's egress was paused: the sum over the
                                  // lossless priorities (PFC), the time held (global pause)
  uint64_t fcp_tx = 0;            // IB flow-control packets sent
  uint64_t fcp_rx = 0;            // IB flow-control packets received (lost ones excluded)
  int64_t credit_starved_ps = 0;  // time a VL had a packet waiting but too few credits
  // PFC watchdog (switch ports): actions taken, packets it dropped, and the
  // time of its first action (-1 if none).
  uint64_t wd_actions = 0;
  uint64_t wd_drops = 0;
  int64_t wd_first_action_ps = -1;
  // NIC (host ports): packets dropped by the stalled receive pipeline, and
  // PFC stall-prevention events (ConnectX tx_pause_storm_warning_events,
  // tx_pause_storm_error_events).
  uint64_t rx_stall_drops = 0;
  uint64_t pause_storm_warnings = 0;
  uint64_t pause_storm_errors = 0;
  // Frames this link direction lost to bit errors or injected loss, and (host
  // ports) RC data packets sent again.
  uint64_t link_losses = 0;
  uint64_t retx_packets = 0;
  std::array<ClassStats, kMaxClasses> classes{};  // by class / VL
};

}  // namespace lossless::fabric
