#pragma once
// DCQCN state machines, engine-independent (docs/model/dcqcn.md).
//
// The caller (the NIC model) drives each object with explicit times and owns
// the scheduling: after any call it asks NextDeadline() and arranges to call
// Advance(t) at that time (or later: Advance fires every expiry up to t, in
// time order, each at its own exact deadline). All times are units::Time (ps),
// all timer arithmetic is exact integer ps; rates are kept as double bit/s so
// repeated halving and averaging stay exact to 1e-9, and rate() rounds to whole
// bit/s for the pacer.
//
// Ordering rule: every On*(now) first calls Advance(now), so a timer that
// expires exactly at `now` acts before the event. Times passed in must never
// decrease (programmer error otherwise).
#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cc/dcqcn_params.hpp"
#include "units/units.hpp"

namespace lossless::cc {

enum class IncreasePhase { kFastRecovery, kAdditive, kHyper };

// Paper phase selector (docs/model/dcqcn.md#reaction-point-paper), counts taken before the event:
// max(t, b) < F → fast recovery; min(t, b) > F → hyper; otherwise additive.
IncreasePhase PaperIncreasePhase(int64_t timer_count, int64_t byte_count, int64_t f);
// Firmware phase selector (docs/model/dcqcn.md#reaction-point-firmware): stage < F → fast recovery;
// stage == F → additive; stage > F → hyper.
IncreasePhase FirmwareIncreasePhase(int64_t stage, int64_t f);

// One sending QP (reaction point). Starts at rc = rt = line rate (or
// max_rate), alpha = initial_alpha, no timer running; the first CNP arms the
// timers.
//
// Paper variant: every CNP cuts at once (rt = rc if clamping applies,
// rc = max(min_rate, rc·max(1 − alpha/2, min_dec_factor)), alpha = (1−g)·alpha + g)
// and restarts the alpha timer (K) and the increase timer (T_INC); the alpha
// timer decays alpha by (1 − g); the increase timer and each byte_counter
// bytes sent are increase events.
// Firmware variant: a CNP only sets the alpha and cut bits (the first one also
// arms a periodic alpha tick and the rate-reduce monitor grid, first tick one
// period after that CNP); a monitor tick with the cut bit set cuts and
// restarts the increase timer; increase events advance one stage counter.
//
// Simultaneous expiries fire in the order alpha, cut, increase (HPCC ns-3
// delays its cut by 1 ns so alpha goes first). Once rc and rt are both back at
// the cap after an increase, the increase timer stops (further events would
// not change any rate) until the next cut; the firmware monitor tick is only
// scheduled while a CNP is waiting to be acted on. Neither changes results.
class DcqcnReactionPoint {
 public:
  // Throws InputError (file "<cc>") if params.Validate(line_rate) fails.
  DcqcnReactionPoint(const DcqcnParams& params, units::Rate line_rate);

  void OnCnp(units::Time now);
  // Bytes handed to the wire; only the paper variant with byte_counter > 0
  // counts them, and only after the first CNP. bytes ≥ 0.
  void OnBytesSent(units::Bytes bytes, units::Time now);
  // Earliest pending timer expiry; Time::Max() when none is armed.
  units::Time NextDeadline() const;
  // Fires every expiry with deadline ≤ now, in time order (ties: alpha, cut,
  // increase).
  void Advance(units::Time now);

  // Current sending rate Rc rounded to whole bit/s (≥ min_rate once cut).
  units::Rate rate() const;
  double rate_bps() const { return rc_; }
  double target_rate_bps() const { return rt_; }
  double alpha() const { return alpha_; }
  // Paper: timer / byte-counter expirations since the last cut (t_cnt, b_cnt).
  int64_t timer_count() const { return t_cnt_; }
  int64_t byte_count() const { return b_cnt_; }
  // Firmware: increase events since the last cut.
  int64_t stage() const { return stage_; }
  int64_t cuts() const { return cuts_; }
  int64_t increase_events() const { return increases_; }
  // Time of the most recent cut; Time::Max() if none yet.
  units::Time last_cut() const { return last_cut_; }
  const DcqcnParams& params() const { return p_; }

 private:
  void Cut(units::Time at);
  void Increase(IncreasePhase phase, int64_t hyper_round);
  void FireIncrease(units::Time at);
  void FireAlpha(units::Time at);
  void FireCutTick(units::Time at);
  void MaybeIdle();

  DcqcnParams p_;
  double cap_;  // min(line, max_rate) in bit/s
  double min_;  // min_rate in bit/s
  double rc_;
  double rt_;
  double alpha_;
  bool active_ = false;  // a CNP has been seen
  int64_t t_cnt_ = 0;
  int64_t b_cnt_ = 0;
  int64_t sent_ = 0;  // bytes since the last byte-counter expiry
  int64_t stage_ = 0;
  bool cnp_for_alpha_ = false;
  bool cnp_for_cut_ = false;
  units::Time cut_origin_ = units::Time::Zero();  // firmware monitor grid origin
  units::Time alpha_deadline_ = units::Time::Max();
  units::Time cut_deadline_ = units::Time::Max();
  units::Time inc_deadline_ = units::Time::Max();
  units::Time last_now_ = units::Time::Zero();
  units::Time last_cut_ = units::Time::Max();
  int64_t cuts_ = 0;
  int64_t increases_ = 0;
};

// Receiver side (notification point): per QP, the first marked packet after a
// quiet period (≥ cnp_interval since the last CNP) sends a CNP at once; later
// marks inside the interval are remembered (kWindowed: one deferred CNP at
// last_cnp + interval) or ignored (kSuppress). Interval 0 = a CNP per mark.
class DcqcnNotificationPoint {
 public:
  struct DeferredCnp {
    uint32_t qp;
    units::Time at;
  };

  DcqcnNotificationPoint(units::Time cnp_interval, CnpMode mode);
  explicit DcqcnNotificationPoint(const DcqcnParams& params)
      : DcqcnNotificationPoint(params.cnp_interval, params.cnp_mode) {}

  // A data packet with ECN = CE for `qp` arrived at `now`. Returns true when a
  // CNP must be sent now. Runs Advance(now) first; due deferred CNPs of other
  // QPs are kept for the next Advance call (so none is lost).
  bool OnEcnMarkedPacket(uint32_t qp, units::Time now);
  // Earliest deferred CNP; Time::Max() when none.
  units::Time NextDeadline() const;
  // Appends every deferred CNP due at or before `now` to `out`, in (time, qp)
  // order; each counts as sent at its own time.
  void Advance(units::Time now, std::vector<DeferredCnp>& out);

  int64_t cnps_sent() const { return sent_; }

 private:
  struct QpState {
    units::Time last_cnp;
    bool any = false;
    bool pending = false;
  };
  void Fire(units::Time at, uint32_t qp, std::vector<DeferredCnp>& out);

  units::Time interval_;
  CnpMode mode_;
  std::unordered_map<uint32_t, QpState> qps_;
  std::set<std::pair<units::Time, uint32_t>> due_;
  std::vector<DeferredCnp> held_;  // fired inside OnEcnMarkedPacket, handed out by Advance
  int64_t sent_ = 0;
};

}  // namespace lossless::cc
