#include "cc/dcqcn.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace lossless::cc {

using units::Time;

IncreasePhase PaperIncreasePhase(int64_t timer_count, int64_t byte_count, int64_t f) {
  if (std::max(timer_count, byte_count) < f) return IncreasePhase::kFastRecovery;
  if (std::min(timer_count, byte_count) > f) return IncreasePhase::kHyper;
  return IncreasePhase::kAdditive;
}

IncreasePhase FirmwareIncreasePhase(int64_t stage, int64_t f) {
  if (stage < f) return IncreasePhase::kFastRecovery;
  if (stage == f) return IncreasePhase::kAdditive;
  return IncreasePhase::kHyper;
}

DcqcnReactionPoint::DcqcnReactionPoint(const DcqcnParams& params, units::Rate line_rate)
    : p_(params) {
  p_.Validate(line_rate, Location{"<cc>", 0, "dcqcn"});
  cap_ = static_cast<double>(line_rate.bps());
  if (p_.max_rate > units::Rate()) cap_ = std::min(cap_, static_cast<double>(p_.max_rate.bps()));
  min_ = static_cast<double>(p_.min_rate.bps());
  rc_ = rt_ = cap_;
  alpha_ = p_.initial_alpha;
}

units::Rate DcqcnReactionPoint::rate() const {
  return units::Rate::Bps(static_cast<int64_t>(std::llround(rc_)));
}

Time DcqcnReactionPoint::NextDeadline() const {
  return std::min({alpha_deadline_, cut_deadline_, inc_deadline_});
}

void DcqcnReactionPoint::Advance(Time now) {
  assert(now >= last_now_);
  last_now_ = now;
  while (true) {
    Time next = NextDeadline();
    if (next > now) return;
    if (alpha_deadline_ == next) {
      FireAlpha(next);
    } else if (cut_deadline_ == next) {
      FireCutTick(next);
    } else {
      FireIncrease(next);
    }
  }
}

void DcqcnReactionPoint::OnCnp(Time now) {
  Advance(now);
  if (p_.variant == DcqcnVariant::kPaper) {
    active_ = true;
    Cut(now);
    alpha_ = (1 - p_.g) * alpha_ + p_.g;
    alpha_deadline_ = now + p_.alpha_period;
    return;
  }
  cnp_for_alpha_ = cnp_for_cut_ = true;
  if (!active_) {
    active_ = true;
    alpha_ = p_.initial_alpha;
    cnp_for_alpha_ = false;
    if (p_.rate_on_first_cnp > units::Rate())
      rc_ = rt_ = std::min(cap_, static_cast<double>(p_.rate_on_first_cnp.bps()));
    alpha_deadline_ = now + p_.alpha_period;
    cut_origin_ = now;
  }
  // Next monitor tick strictly after now (a tick at exactly now already ran).
  const int64_t period = p_.rate_reduce_period.ps();
  const int64_t k = (now - cut_origin_).ps() / period + 1;
  cut_deadline_ = cut_origin_ + Time::Ps(k * period);
}

void DcqcnReactionPoint::OnBytesSent(units::Bytes bytes, Time now) {
  assert(bytes >= units::Bytes(0));
  Advance(now);
  const int64_t bc = p_.byte_counter.count();
  if (p_.variant != DcqcnVariant::kPaper || bc == 0 || !active_) return;
  sent_ += bytes.count();
  while (sent_ >= bc) {
    sent_ -= bc;
    Increase(PaperIncreasePhase(t_cnt_, b_cnt_, p_.fast_recovery_steps),
             std::min(t_cnt_, b_cnt_) - p_.fast_recovery_steps);
    b_cnt_ += 1;
    MaybeIdle();
  }
}

void DcqcnReactionPoint::Cut(Time at) {
  const bool increased = p_.variant == DcqcnVariant::kPaper ? (t_cnt_ + b_cnt_ > 0) : stage_ > 0;
  if (p_.clamp_target_rate || (p_.clamp_target_rate_after_increase && increased)) rt_ = rc_;
  const double factor = std::max(1 - alpha_ / 2, p_.min_dec_factor);
  rc_ = std::max(min_, rc_ * factor);
  t_cnt_ = b_cnt_ = sent_ = stage_ = 0;
  inc_deadline_ = at + p_.rate_increase_period;
  last_cut_ = at;
  cuts_ += 1;
}

void DcqcnReactionPoint::Increase(IncreasePhase phase, int64_t hyper_round) {
  switch (phase) {
    case IncreasePhase::kFastRecovery:
      break;
    case IncreasePhase::kAdditive:
      rt_ = std::min(cap_, rt_ + static_cast<double>(p_.rate_ai.bps()));
      break;
    case IncreasePhase::kHyper: {
      const int64_t mult = p_.hyper_increase == HyperIncrease::kScaled ? hyper_round : 1;
      rt_ =
          std::min(cap_, rt_ + static_cast<double>(mult) * static_cast<double>(p_.rate_hai.bps()));
      break;
    }
  }
  rc_ = std::min(cap_, (rt_ + rc_) / 2);
  increases_ += 1;
}

void DcqcnReactionPoint::FireIncrease(Time at) {
  inc_deadline_ = at + p_.rate_increase_period;
  if (p_.variant == DcqcnVariant::kPaper) {
    Increase(PaperIncreasePhase(t_cnt_, b_cnt_, p_.fast_recovery_steps),
             std::min(t_cnt_, b_cnt_) - p_.fast_recovery_steps);
    t_cnt_ += 1;
  } else {
    Increase(FirmwareIncreasePhase(stage_, p_.fast_recovery_steps),
             stage_ - p_.fast_recovery_steps);
    stage_ += 1;
  }
  MaybeIdle();
}

void DcqcnReactionPoint::FireAlpha(Time at) {
  alpha_deadline_ = at + p_.alpha_period;
  if (p_.variant == DcqcnVariant::kPaper) {
    alpha_ = (1 - p_.g) * alpha_;
  } else {
    alpha_ = (1 - p_.g) * alpha_ + (cnp_for_alpha_ ? p_.g : 0.0);
    cnp_for_alpha_ = false;
  }
}

void DcqcnReactionPoint::FireCutTick(Time at) {
  cut_deadline_ = Time::Max();  // re-armed by the next CNP
  if (!cnp_for_cut_) return;
  cnp_for_cut_ = false;
  Cut(at);
}

void DcqcnReactionPoint::MaybeIdle() {
  // Rates are at the cap and an increase already happened since the cut, so
  // every further increase event is a no-op for rc, rt and the clamp rule.
  if (rc_ == cap_ && rt_ == cap_) inc_deadline_ = Time::Max();
}

DcqcnNotificationPoint::DcqcnNotificationPoint(Time cnp_interval, CnpMode mode)
    : interval_(cnp_interval), mode_(mode) {
  assert(cnp_interval >= Time::Zero());
}

bool DcqcnNotificationPoint::OnEcnMarkedPacket(uint32_t qp, Time now) {
  Advance(now, held_);
  QpState& s = qps_[qp];
  if (!s.any || now - s.last_cnp >= interval_) {
    s.any = true;
    s.last_cnp = now;
    sent_ += 1;
    return true;
  }
  if (mode_ == CnpMode::kWindowed && !s.pending) {
    s.pending = true;
    due_.emplace(s.last_cnp + interval_, qp);
  }
  return false;
}

Time DcqcnNotificationPoint::NextDeadline() const {
  if (!held_.empty()) return held_.front().at;
  return due_.empty() ? Time::Max() : due_.begin()->first;
}

void DcqcnNotificationPoint::Fire(Time at, uint32_t qp, std::vector<DeferredCnp>& out) {
  QpState& s = qps_[qp];
  s.pending = false;
  s.last_cnp = at;
  sent_ += 1;
  out.push_back({qp, at});
}

void DcqcnNotificationPoint::Advance(Time now, std::vector<DeferredCnp>& out) {
  if (&out != &held_ && !held_.empty()) {
    out.insert(out.end(), held_.begin(), held_.end());
    held_.clear();
  }
  while (!due_.empty() && due_.begin()->first <= now) {
    auto [at, qp] = *due_.begin();
    due_.erase(due_.begin());
    Fire(at, qp, out);
  }
}

}  // namespace lossless::cc
