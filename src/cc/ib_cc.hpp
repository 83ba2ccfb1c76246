#pragma once
// InfiniBand congestion control (IBA Annex A10, docs/model/infiniband.md#ib-congestion-control),
// engine-independent.
//
// Reaction point (source CA, per QP or per SL): a CC table index CCTI into a
// table of inter-packet injection gaps. Each BECN adds CCTI_Increase (capped
// at CCTI_Limit) and restarts the CCTI timer; each timer expiry lowers CCTI by
// one (not below CCTI_Min) and restarts the timer. The table is given directly
// as gaps in units::Time: the IBA shift/multiplier encoding and its scaling
// are [unverified], so no encoding is modelled. The timer stops once CCTI is
// at CCTI_Min (further expiries would change nothing) and the next BECN
// restarts it.
//
// Congestion point (switch egress port/VL): FECN marking as a pure decision on
// the queue and packet size plus a deterministic 1-in-(Marking_Rate + 1)
// counter. The mapping of the 4-bit Threshold to bytes is [unverified], so the
// threshold is given in bytes.
#include <cstdint>
#include <vector>

#include "base/error.hpp"
#include "units/units.hpp"

namespace lossless::cc {

struct IbCcParams {
  int64_t ccti_increase = 1;  // CCTI_Increase, ≥ 1 (LLNL tuning and docs/model/presets.md: 1)
  int64_t ccti_limit = -1;    // CCTI_Limit; -1 = last table index
  int64_t ccti_min = 0;       // CCTI_Min (docs/model/presets.md: 0)
  // CCTI_Timer period, > 0. The IBA field counts 1.024 us units [unverified];
  // give the period itself. Default 16 × 1.024 us is a placeholder.
  units::Time ccti_timer = units::Time::Ps(int64_t{16} * 1'024'000);
  // CCT: injection gap per index, non-decreasing by convention, ≥ 1 entry.
  std::vector<units::Time> cct = LinearCct(128, units::Time::Ns(10));

  // Table with gap(i) = i × step, i = 0..entries-1 (entries ≥ 1, step ≥ 0).
  static std::vector<units::Time> LinearCct(int64_t entries, units::Time step);

  // Throws InputError(where, ...) naming the field: ccti_increase ≥ 1;
  // ccti_timer > 0; cct non-empty with gaps ≥ 0; 0 ≤ ccti_min ≤ limit ≤
  // last index (limit -1 allowed, meaning the last index).
  void Validate(const Location& where) const;
  // CCTI_Limit with -1 resolved.
  int64_t EffectiveLimit() const;
};

class IbCcReactionPoint {
 public:
  // Throws InputError (file "<cc>") if params.Validate fails. Starts at
  // CCTI = CCTI_Min with no timer running.
  explicit IbCcReactionPoint(IbCcParams params);

  // A BECN arrived at `now` (runs Advance(now) first).
  void OnBecn(units::Time now);
  // Earliest timer expiry; Time::Max() when the timer is stopped.
  units::Time NextDeadline() const { return deadline_; }
  // Applies every timer expiry with deadline ≤ now, each at its own time.
  void Advance(units::Time now);

  int64_t ccti() const { return ccti_; }
  // Gap to wait between injected packets: CCT[CCTI].
  units::Time InjectionGap() const { return p_.cct[static_cast<size_t>(ccti_)]; }
  int64_t becns() const { return becns_; }

 private:
  IbCcParams p_;
  int64_t limit_;
  int64_t ccti_;
  units::Time deadline_ = units::Time::Max();
  units::Time last_now_ = units::Time::Zero();
  int64_t becns_ = 0;
};

struct IbFecnParams {
  bool enabled = true;                                  // Threshold 0 = off
  units::Bytes queue_threshold = units::Bytes(65'536);  // congested when the queue exceeds this
  units::Bytes min_packet_size = units::Bytes(64);      // Packet_Size (64-B units [unverified])
  int64_t marking_rate = 0;  // Marking_Rate: unmarked eligible packets between marks, ≥ 0
};

// True when a packet of `packet_size` leaving a queue of `queue` bytes is
// eligible for a FECN mark: enabled, queue > queue_threshold and packet_size ≥
// min_packet_size.
bool IbFecnEligible(const IbFecnParams& params, units::Bytes queue, units::Bytes packet_size);

// Per port/VL marker: marks the first eligible packet, then one in every
// (marking_rate + 1) eligible packets. Deterministic (the IBA "mean" spacing
// is modelled as exact spacing).
class IbFecnMarker {
 public:
  explicit IbFecnMarker(IbFecnParams params) : p_(params) {}
  bool ShouldMark(units::Bytes queue, units::Bytes packet_size);
  int64_t marks() const { return marks_; }

 private:
  IbFecnParams p_;
  int64_t skipped_ = -1;  // eligible packets since the last mark; -1 = none yet
  int64_t marks_ = 0;
};

}  // namespace lossless::cc
