#pragma once
// Priority flow control (IEEE 802.1Qbb; global pause: IEEE 802.3 Annex 31B),
// engine-free: the configuration, the byte accounting of one ingress buffer,
// and the decisions on it (drop beyond headroom, XOFF above the threshold,
// XON at or below its threshold), plus the pause-time arithmetic of the
// sender. The network (fabric/pfc_link.cpp, switch_queue.cpp) owns the frames, the timers and
// the queues: it tells the model what arrived and left, and sends what the
// model decides. docs/fabric-model.md "PFC" has the model in full.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "flowctl/classes.hpp"
#include "flowctl/pfc_watchdog.hpp"
#include "units/units.hpp"

namespace lossless::flowctl {

// Switches count the bytes each (ingress port, priority) holds in the shared
// buffer; above `xoff` the ingress port sends a PAUSE upstream
// (refreshed at half the pause time while the condition lasts), at or below
// the XON threshold it sends pause time 0. A frame that would take the count
// past xoff + headroom is dropped and counted as a lossless drop (a
// misconfiguration). Any port (switch or NIC) that receives a PAUSE stops
// starting frames of the enabled priorities `response` after the end of the
// PAUSE's reception, until end-of-reception + quanta x 512 bit times.
struct PfcConfig {
  bool enabled = false;
  uint8_t priorities = 1u << 3;     // lossless priorities
  units::Bytes xoff{200'000};       // per (ingress port, priority)
  std::optional<units::Bytes> xon;  // none = xoff - one max frame
  units::Bytes headroom{160'000};   // above xoff
  uint16_t quanta = 0xFFFF;         // pause time sent with XOFF
  units::Time response;             // sender response time (D-Resp: 1.1584 us at 400G)
  // Global IEEE 802.3x PAUSE instead of PFC: every class is flow-controlled
  // at the ingress (admitted like a lossless one), the XOFF/XON decision is
  // made on the bytes the whole ingress port holds (sum over classes, same
  // xoff / xon / headroom), and each PAUSE frame stops every class of the
  // upstream port, CNPs included. Paused time is counted on every class and
  // the watchdog polls every class; the wait observer sees one buffer per
  // ingress port.
  bool global = false;
  PfcWatchdogConfig watchdog;
};

// Bytes one ingress buffer holds: per priority, and their sum over the
// flow-controlled classes (what global pause decides on).
struct PfcIngress {
  int64_t total = 0;
  std::array<int64_t, kMaxClasses> bytes{};
};

// The thresholds of a configuration, resolved once, and the decisions.
class PfcThresholds {
 public:
  PfcThresholds() = default;
  // `max_frame_bytes`: the largest frame (MTU payload with headers), which
  // the default XON threshold keeps below XOFF.
  PfcThresholds(const PfcConfig& cfg, int64_t max_frame_bytes)
      : xoff_(cfg.xoff.count()),
        xon_(cfg.xon ? cfg.xon->count() : cfg.xoff.count() - max_frame_bytes),
        limit_(cfg.xoff.count() + cfg.headroom.count()),
        classes_(cfg.global ? uint8_t{0xFF} : cfg.priorities),
        global_(cfg.global) {}

  // Classes accounted at the ingress: the lossless priorities, or every
  // class under global pause.
  uint8_t classes() const { return classes_; }
  bool Controls(int c) const { return classes_ >> c & 1; }
  // The classes one XOFF or XON on class c names: c alone, or every class
  // under global pause.
  uint8_t FrameClasses(int c) const {
    return global_ ? uint8_t{0xFF} : static_cast<uint8_t>(1u << c);
  }
  int64_t xon_bytes() const { return xon_; }

  // Bytes the XOFF/XON decision of class c looks at.
  int64_t Held(const PfcIngress& in, int c) const { return global_ ? in.total : in.bytes[c]; }
  // A frame of `size` bytes on class c would overrun the headroom: drop it.
  bool Overruns(const PfcIngress& in, int c, int64_t size) const {
    return Held(in, c) + size > limit_;
  }
  static void Add(PfcIngress& in, int c, int64_t size) {
    in.bytes[c] += size;
    in.total += size;
  }
  static void Remove(PfcIngress& in, int c, int64_t size) {
    in.bytes[c] -= size;
    in.total -= size;
  }
  // The buffer is above XOFF on class c (send XOFF unless already sent).
  bool AboveXoff(const PfcIngress& in, int c) const { return Held(in, c) > xoff_; }
  // The buffer has drained to XON on class c (send XON if XOFF was sent).
  bool AtOrBelowXon(const PfcIngress& in, int c) const { return Held(in, c) <= xon_; }

 private:
  int64_t xoff_ = 0;
  int64_t xon_ = 0;
  int64_t limit_ = 0;  // xoff + headroom
  uint8_t classes_ = 0;
  bool global_ = false;
};

// Pause time of `quanta` at `rate_bps`: one quantum is 512 bit times, i.e.
// 64 bytes of link time (IEEE 802.3 Annex 31B).
inline int64_t PauseDurationPs(uint16_t quanta, int64_t rate_bps) {
  return units::SerializationTime(units::Bytes(int64_t{quanta} * 64), units::Rate::Bps(rate_bps))
      .ps();
}
// The receiver refreshes XOFF at half the pause time it sends.
inline int64_t RefreshIntervalPs(uint16_t quanta, int64_t rate_bps) {
  return std::max<int64_t>(1, PauseDurationPs(quanta, rate_bps) / 2);
}
// A PAUSE that moves a class's pause end from `old_until` to `until` at
// `now` changes its paused time (counted up to the pause end) by this much:
// the extension, or (XON, a refresh to a shorter time) minus the part cut off.
inline int64_t PausedTimeChange(int64_t old_until, int64_t until, int64_t now) {
  return std::max(until, now) - std::max(old_until, now);
}

}  // namespace lossless::flowctl
