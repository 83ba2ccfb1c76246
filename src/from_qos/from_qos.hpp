#pragma once
// `lossless scenario from-qos` (docs/from-qos.md):
// a switch QoS configuration, as the QoS audit's reader understands it
// (audit/qos), becomes a scenario whose `fabric:` section carries the
// configuration's lossless settings, each commented with the config
// file:line it came from; what the configuration does not set comes from a
// fabric profile and is marked `# default (profile NAME)`.
//
// What is mapped (one value for the whole fabric: the simulator applies one
// setting to every switch port, so the first port that states a setting
// gives it and ports that state another value are listed as ignored):
//   PFC priorities      -> fabric.pfc.enabled, fabric.pfc.priority (the
//                          lowest lossless priority; the others ignored:
//                          the simulator models one lossless priority);
//                          802.3x link pause without PFC -> fabric.pfc.mode global
//   PFC trigger         -> fabric.pfc.xoff: a static size as is; a dynamic
//                          threshold (alpha on a shared pool) as its value for
//                          one congested queue on an empty pool,
//                          alpha x pool / (1 + alpha) (an approximation, said
//                          in the comment: the simulator's XOFF is static)
//   xon, headroom       -> fabric.pfc.xon (when below the trigger), fabric.pfc.headroom
//   PFC watchdog        -> fabric.pfc.watchdog.enabled
//   ECN on the lossless priority's queue -> fabric.ecn.enabled, kmin, kmax, pmax
//   lossless buffer pool -> fabric.buffer (the simulator has one shared
//                          buffer per switch: the pool lossless traffic uses)
//   port speed, cable   -> fabric.link_rate, fabric.cable_length
// Thresholds in cells need `cell_bytes`. Everything else the reader parsed
// (ECN on other queues, thresholds as a share of a buffer, egress queue
// limits, scheduling, DSCP maps, counters) is listed as ignored with its
// line where the reader recorded one; lines the reader did not use are
// listed as such. The QoS reader reads switch configurations only: DCQCN
// (a NIC setting) always comes from the profile, and the output says so.
//
// The scenario is loaded (scenario::LoadFabricText) before it is returned: a
// value the simulator refuses (say, XOFF plus headroom above the buffer) is
// put back to the profile's and listed as not mapped, with the line and the
// reason.
#include <cstdint>
#include <string>
#include <vector>

#include "audit/qos/qos_model.hpp"

namespace lossless::from_qos {

struct Options {
  std::string profile = "roce-tuned";  // profile::ProfileText name or file
  std::string profile_flag = "--profile";  // the option that named it, for errors
  int64_t cell_bytes = 0;              // bytes per buffer cell; 0 = unknown (cells not mapped)
};

struct Result {
  std::string yaml;                  // the scenario, with its comments
  std::vector<std::string> mapped;   // "fabric.pfc.xoff = 200KB  <- FILE:LINE (what)"
  std::vector<std::string> ignored;  // "FILE:LINE: what (why)"
  std::vector<std::string> unmapped; // "FILE:LINE: fabric.x = v not used: why"
  std::vector<std::string> warnings; // the loaded scenario's warnings (ECN above PFC, ...)
  int defaults = 0;                  // values from the profile
};

// `cfg` as ParseQosText returned it for `file`. Throws InputError for an
// unknown profile (at "--profile") and when the scenario still does not load
// after every configuration value was tried (naming the field).
Result FromQos(const audit::qos::QosConfig& cfg, const std::string& file, const Options& o);

}  // namespace lossless::from_qos
