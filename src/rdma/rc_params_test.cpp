// The transport.* registry slice against the model it configures: its
// defaults are RcConfig's (ack_every aside), its bounds are the ones RcConfig::Check enforces,
// and every name it lists can be set.
#include "rdma/rc_params.hpp"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace lossless::rdma {
namespace {

RcParamValue FromText(const RcParamInfo& info, const std::string& text) {
  RcParamValue v;
  switch (info.type) {
    case RcParamType::kInt: v.number = std::stoll(text); break;
    case RcParamType::kEnum: v.choice = text; break;
    case RcParamType::kTime: v.time = units::ParseTime(text, {"<test>", 0, info.name}); break;
  }
  return v;
}

TEST(RcParams, RegistryDefaultsAreTheModelsDefaults) {
  RcConfig rc;
  rc.timeout_exp = -1;
  rc.retry_cnt = -1;
  rc.go_back_0 = true;
  rc.ack_every = -1;
  rc.ooo = true;
  rc.reorder_window = units::Time::Ns(1);
  rc.qps_per_connection = -1;
  rc.split_data_on_qps = true;
  for (const RcParamInfo& info : RcParamInfos())
    SetRcParam(rc, info.name, FromText(info, info.def), /*per_packet_routing=*/false);
  const RcConfig model;
  EXPECT_EQ(rc.timeout_exp, model.timeout_exp);
  EXPECT_EQ(rc.retry_cnt, model.retry_cnt);
  EXPECT_EQ(rc.go_back_0, model.go_back_0);
  // The one deliberate difference (rc_params.hpp): scenarios coalesce ACKs
  // as a ConnectX NIC does, RcConfig{} acknowledges every packet.
  EXPECT_EQ(model.ack_every, 1);
  EXPECT_EQ(rc.ack_every, 256);
  EXPECT_EQ(rc.ooo, model.ooo);  // auto with ECMP: in order
  EXPECT_EQ(rc.reorder_window, model.reorder_window);
  EXPECT_EQ(rc.qps_per_connection, model.qps_per_connection);
  EXPECT_EQ(rc.split_data_on_qps, model.split_data_on_qps);
}

TEST(RcParams, IntegerBoundsAreTheOnesCheckEnforces) {
  int ints = 0;
  for (const RcParamInfo& info : RcParamInfos()) {
    if (info.type != RcParamType::kInt) continue;
    ++ints;
    for (double at : {info.min, info.max}) {
      RcConfig rc;
      RcParamValue v;
      v.number = static_cast<int64_t>(at);
      SetRcParam(rc, info.name, v, false);
      EXPECT_NO_THROW(rc.Check()) << info.name << " = " << at;
    }
    for (double at : {info.min - 1, info.max + 1}) {
      RcConfig rc;
      RcParamValue v;
      v.number = static_cast<int64_t>(at);
      SetRcParam(rc, info.name, v, false);
      EXPECT_THROW(rc.Check(), std::invalid_argument) << info.name << " = " << at;
    }
  }
  EXPECT_EQ(ints, 4);  // timeout, retry_cnt, ack_every, qps_per_connection
}

TEST(RcParams, OooAutoFollowsTheRouting) {
  const RcParamInfo* ooo = nullptr;
  for (const RcParamInfo& info : RcParamInfos())
    if (std::string(info.name) == "ooo") ooo = &info;
  ASSERT_NE(ooo, nullptr);
  RcConfig rc;
  SetRcParam(rc, "ooo", FromText(*ooo, "auto"), /*per_packet_routing=*/true);
  EXPECT_TRUE(rc.ooo);
  SetRcParam(rc, "ooo", FromText(*ooo, "off"), true);
  EXPECT_FALSE(rc.ooo);
  SetRcParam(rc, "ooo", FromText(*ooo, "on"), false);
  EXPECT_TRUE(rc.ooo);
  EXPECT_THROW(SetRcParam(rc, "ooo_capacity", {}, false), std::invalid_argument);
}

}  // namespace
}  // namespace lossless::rdma
