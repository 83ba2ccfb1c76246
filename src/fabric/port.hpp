#pragma once
// A port: one end of a link, the sender of its direction. Its egress queues
// per traffic class, its wire (the frames in flight, in order), PAUSE state,
// the PFC accounting of what it receives, and its counters. Network owns the
// ports and runs the packet path over them (fabric/network.hpp); the field
// order is the packet path's (docs/benchmarks.md).
#include <array>
#include <cstddef>
#include <cstdint>

#include "fabric/packet.hpp"
#include "fabric/port_stats.hpp"
#include "flowctl/classes.hpp"
#include "flowctl/pfc.hpp"

namespace lossless::fabric {

using flowctl::kMaxClasses;

struct alignas(32) ClassQueue {  // two per cache line
  PacketFifo fifo;
  int64_t bytes = 0;
  int32_t deficit = 0;
};
// Fields in the order the packet path touches them: the first two cache
// lines hold what every transmission and arrival reads, including the
// first four counters of `stats`; pause timers, class queues, PFC ingress
// accounting and the rest of the counters follow.
struct alignas(64) Port {
  uint32_t peer = 0;           // port at the other end of the link
  uint32_t entity = 0;         // engine entity id (ordering key)
  uint32_t host = UINT32_MAX;  // host rank if this is a host's NIC port
  uint32_t sw = UINT32_MAX;    // switch index if this is a switch port
  bool down = false;           // link administratively or physically down
  bool rx_stalled = false;     // host port: NIC receive stalled (fault)
  bool rx_cut_through = false;
  bool kick_pending = false;   // a kick event at kick_at is live
  bool pause_pending = false;  // a PFC frame waits to be sent
  bool ever_paused = false;    // a PAUSE has set paused_until (else it is all zero)
  bool lossy = false;          // the link direction loses frames (loss_[port])
  uint8_t pause_mask = 0;      // XOFF classes of the pending frame
  uint8_t xon_mask = 0;        // classes of a pending XON frame
  uint8_t xoff_sent = 0;       // priorities held paused upstream
  uint8_t wd_active = 0;       // watchdog restore period, per class
  // Per class: the restore period has ended and no PAUSE has been applied
  // since; packets sent meanwhile carry kPacketAfterRestore.
  uint8_t wd_unpaused = 0;
  uint8_t rr = 0;             // DWRR cursor
  uint8_t nonempty = 0;       // bit c set = class c has packets
  uint16_t pause_quanta = 0;  // its pause time
  int64_t busy_until = 0;
  int64_t kick_at = 0;
  int64_t queued_bytes = 0;  // all classes
  int64_t cached_wire = -1;  // serialization time cache: wire bytes ...
  int64_t cached_ser = 0;    // ... and their time at rate_bps
  int64_t delay_ps = 0;
  int64_t rx_latency_ps = 0;  // pipeline latency of the receiving switch (0 at hosts)
  PacketFifo wire;            // packets on the link, in order
  PortStats stats;
  int64_t rate_bps = 0;
  uint32_t node = 0;                                // topology node owning this port
  std::array<int64_t, kMaxClasses> paused_until{};  // egress: class c may start at >= this
  std::array<ClassQueue, kMaxClasses> q{};
  flowctl::PfcIngress ingress;                    // ingress: bytes held per priority, total
  std::array<int64_t, kMaxClasses> refresh_at{};  // ingress: live XOFF refresh time
};
static_assert(offsetof(Port, stats) == 96 && offsetof(PortStats, max_queue_bytes) == 24,
              "the packet path's fields and counters share the first two cache lines");

}  // namespace lossless::fabric
