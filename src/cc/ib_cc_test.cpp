#include "cc/ib_cc.hpp"

#include <gtest/gtest.h>

namespace lossless::cc {
namespace {

using units::Bytes;
using units::Time;

IbCcParams Small() {
  IbCcParams p;
  p.ccti_increase = 2;
  p.ccti_limit = 5;
  p.ccti_min = 1;
  p.ccti_timer = Time::Us(10);
  p.cct = IbCcParams::LinearCct(8, Time::Ns(100));
  return p;
}

TEST(IbCc, LinearCct) {
  auto t = IbCcParams::LinearCct(4, Time::Ns(25));
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], Time::Zero());
  EXPECT_EQ(t[3], Time::Ns(75));
}

TEST(IbCc, StartsAtCctiMinWithoutTimer) {
  IbCcReactionPoint rp(Small());
  EXPECT_EQ(rp.ccti(), 1);
  EXPECT_EQ(rp.InjectionGap(), Time::Ns(100));
  EXPECT_EQ(rp.NextDeadline(), Time::Max());
}

TEST(IbCc, BecnIncreasesAndCapsAtLimit) {
  IbCcReactionPoint rp(Small());
  rp.OnBecn(Time::Us(1));
  EXPECT_EQ(rp.ccti(), 3);
  EXPECT_EQ(rp.InjectionGap(), Time::Ns(300));
  EXPECT_EQ(rp.NextDeadline(), Time::Us(11));
  rp.OnBecn(Time::Us(2));
  EXPECT_EQ(rp.ccti(), 5);
  rp.OnBecn(Time::Us(3));
  EXPECT_EQ(rp.ccti(), 5);  // CCTI_Limit, not the table end (7)
  EXPECT_EQ(rp.InjectionGap(), Time::Ns(500));
  EXPECT_EQ(rp.NextDeadline(), Time::Us(13));  // restarted by each BECN
  EXPECT_EQ(rp.becns(), 3);
}

TEST(IbCc, TimerDecrementsToMinThenStops) {
  IbCcReactionPoint rp(Small());
  rp.OnBecn(Time::Zero());
  rp.OnBecn(Time::Zero());  // ccti 5
  rp.Advance(Time::Us(10) - Time::Ps(1));
  EXPECT_EQ(rp.ccti(), 5);
  rp.Advance(Time::Us(10));
  EXPECT_EQ(rp.ccti(), 4);
  EXPECT_EQ(rp.NextDeadline(), Time::Us(20));
  rp.Advance(Time::Us(35));
  EXPECT_EQ(rp.ccti(), 2);
  rp.Advance(Time::Us(40));
  EXPECT_EQ(rp.ccti(), 1);  // CCTI_Min
  EXPECT_EQ(rp.NextDeadline(), Time::Max());
  rp.Advance(Time::Ms(1));
  EXPECT_EQ(rp.ccti(), 1);
}

TEST(IbCc, BecnAtTimerInstantAppliesExpiryFirst) {
  IbCcReactionPoint rp(Small());
  rp.OnBecn(Time::Zero());  // 3
  rp.OnBecn(Time::Us(10));  // expiry at 10 us → 2, then +2 → 4
  EXPECT_EQ(rp.ccti(), 4);
  EXPECT_EQ(rp.NextDeadline(), Time::Us(20));
}

TEST(IbCc, DefaultsFollowFabricMdSection6) {
  IbCcParams p;
  EXPECT_EQ(p.ccti_increase, 1);
  EXPECT_EQ(p.ccti_min, 0);
  IbCcReactionPoint rp(p);
  EXPECT_EQ(rp.InjectionGap(), Time::Zero());
  for (int i = 0; i < 500; ++i) rp.OnBecn(Time::Zero());
  EXPECT_EQ(rp.ccti(), 127);
}

TEST(IbCc, ValidateNamesTheField) {
  auto expect_field = [](const IbCcParams& p, const char* field) {
    try {
      p.Validate(Location{"s.yaml", 3, "cc.ib"});
      ADD_FAILURE() << field;
    } catch (const InputError& e) {
      EXPECT_EQ(e.message().rfind(field, 0), 0u) << e.message();
    }
  };
  IbCcParams p = Small();
  p.ccti_increase = 0;
  expect_field(p, "ccti_increase");
  p = Small();
  p.ccti_limit = 8;
  expect_field(p, "ccti_limit");
  p = Small();
  p.ccti_min = 6;
  expect_field(p, "ccti_min");
  p = Small();
  p.ccti_timer = Time::Zero();
  expect_field(p, "ccti_timer");
  p = Small();
  p.cct.clear();
  expect_field(p, "cct");
  EXPECT_THROW(IbCcReactionPoint{p}, InputError);
}

TEST(IbFecn, Eligibility) {
  IbFecnParams p;
  p.queue_threshold = Bytes(10'000);
  p.min_packet_size = Bytes(256);
  EXPECT_FALSE(IbFecnEligible(p, Bytes(10'000), Bytes(4122)));  // not above threshold
  EXPECT_TRUE(IbFecnEligible(p, Bytes(10'001), Bytes(4122)));
  EXPECT_FALSE(IbFecnEligible(p, Bytes(50'000), Bytes(255)));  // too small
  EXPECT_TRUE(IbFecnEligible(p, Bytes(50'000), Bytes(256)));
  p.enabled = false;
  EXPECT_FALSE(IbFecnEligible(p, Bytes(50'000), Bytes(4122)));
}

TEST(IbFecn, MarkingRateSpacesMarks) {
  IbFecnParams p;
  p.queue_threshold = Bytes(0);
  p.marking_rate = 2;
  IbFecnMarker m(p);
  std::vector<bool> got;
  got.reserve(7);
  for (int i = 0; i < 7; ++i) got.push_back(m.ShouldMark(Bytes(1000), Bytes(4122)));
  EXPECT_EQ(got, (std::vector<bool>{true, false, false, true, false, false, true}));
  EXPECT_FALSE(m.ShouldMark(Bytes(0), Bytes(4122)));  // not eligible: counter unchanged
  EXPECT_FALSE(m.ShouldMark(Bytes(1000), Bytes(4122)));
  EXPECT_EQ(m.marks(), 3);
  p.marking_rate = 0;
  IbFecnMarker every(p);
  EXPECT_TRUE(every.ShouldMark(Bytes(1), Bytes(64)));
  EXPECT_TRUE(every.ShouldMark(Bytes(1), Bytes(64)));
}

}  // namespace
}  // namespace lossless::cc
