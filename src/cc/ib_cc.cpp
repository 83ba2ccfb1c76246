#include "cc/ib_cc.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cassert>
#include <utility>

namespace lossless::cc {

using units::Time;

std::vector<Time> IbCcParams::LinearCct(int64_t entries, Time step) {
  assert(entries >= 1 && step >= Time::Zero());
  std::vector<Time> t;
  t.reserve(static_cast<size_t>(entries));
  for (int64_t i = 0; i < entries; ++i) t.push_back(step * i);
  return t;
}

int64_t IbCcParams::EffectiveLimit() const {
  return ccti_limit < 0 ? static_cast<int64_t>(cct.size()) - 1 : ccti_limit;
}

void IbCcParams::Validate(const Location& where) const {
  auto fail = [&](const char* field, const std::string& what, const std::string& got) {
    throw InputError(where, fmt::format("{}: {}", field, Expected(what, got)));
  };
  if (ccti_increase < 1) fail("ccti_increase", "an integer >= 1", std::to_string(ccti_increase));
  if (ccti_timer <= Time::Zero()) fail("ccti_timer", "a period > 0", units::FormatTime(ccti_timer));
  if (cct.empty()) fail("cct", "at least one entry", "an empty table");
  for (const Time& gap : cct)
    if (gap < Time::Zero()) fail("cct", "gaps >= 0", units::FormatTime(gap));
  const int64_t last = static_cast<int64_t>(cct.size()) - 1;
  if (ccti_limit < -1 || ccti_limit > last)
    fail("ccti_limit", fmt::format("-1 or an index in 0..{}", last), std::to_string(ccti_limit));
  if (ccti_min < 0 || ccti_min > EffectiveLimit())
    fail("ccti_min", fmt::format("an index in 0..{} (ccti_limit)", EffectiveLimit()),
         std::to_string(ccti_min));
}

IbCcReactionPoint::IbCcReactionPoint(IbCcParams params) : p_(std::move(params)) {
  p_.Validate(Location{"<cc>", 0, "ib_cc"});
  limit_ = p_.EffectiveLimit();
  ccti_ = p_.ccti_min;
}

void IbCcReactionPoint::OnBecn(Time now) {
  Advance(now);
  ccti_ = std::min(ccti_ + p_.ccti_increase, limit_);
  deadline_ = ccti_ > p_.ccti_min ? now + p_.ccti_timer : Time::Max();
  becns_ += 1;
}

void IbCcReactionPoint::Advance(Time now) {
  assert(now >= last_now_);
  last_now_ = now;
  while (deadline_ <= now) {
    ccti_ = std::max(ccti_ - 1, p_.ccti_min);
    deadline_ = ccti_ > p_.ccti_min ? deadline_ + p_.ccti_timer : Time::Max();
  }
}

bool IbFecnEligible(const IbFecnParams& params, units::Bytes queue, units::Bytes packet_size) {
  return params.enabled && queue > params.queue_threshold && packet_size >= params.min_packet_size;
}

bool IbFecnMarker::ShouldMark(units::Bytes queue, units::Bytes packet_size) {
  if (!IbFecnEligible(p_, queue, packet_size)) return false;
  if (skipped_ >= 0 && skipped_ < p_.marking_rate) {
    skipped_ += 1;
    return false;
  }
  skipped_ = 0;
  marks_ += 1;
  return true;
}

}  // namespace lossless::cc
