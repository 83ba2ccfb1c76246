#include "cc/dcqcn_params.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace lossless::cc {
namespace {

using units::Bytes;
using units::Rate;
using units::Time;

const Location kWhere{"scenario.yaml", 7, "cc.dcqcn.x"};

TEST(DcqcnParams, PaperPresetMatchesFabricMd35) {
  DcqcnParams p = DcqcnParams::Paper();
  EXPECT_EQ(p.variant, DcqcnVariant::kPaper);
  EXPECT_EQ(p.cnp_interval, Time::Us(50));
  EXPECT_EQ(p.cnp_mode, CnpMode::kWindowed);
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 256);
  EXPECT_EQ(p.alpha_period, Time::Us(55));
  EXPECT_DOUBLE_EQ(p.initial_alpha, 1.0);
  EXPECT_EQ(p.rate_reduce_period, Time::Zero());
  EXPECT_TRUE(p.clamp_target_rate);
  EXPECT_EQ(p.rate_on_first_cnp, Rate());
  EXPECT_EQ(p.rate_increase_period, Time::Us(55));
  EXPECT_EQ(p.byte_counter, Bytes(10'000'000));
  EXPECT_EQ(p.fast_recovery_steps, 5);
  EXPECT_EQ(p.rate_ai, Rate::Bps(40'000'000));
  EXPECT_EQ(p.rate_hai, Rate::Bps(400'000'000));
  EXPECT_EQ(p.min_rate, Rate::Bps(100'000'000));
  EXPECT_EQ(p.max_rate, Rate());
  EXPECT_NO_THROW(p.Validate(Rate::Gbps(400), kWhere));
  EXPECT_NO_THROW(p.Validate(Rate::Gbps(40), kWhere));
}

TEST(DcqcnParams, FirmwarePresetMatchesFabricMd35) {
  DcqcnParams p = DcqcnParams::ConnectXFirmware();
  EXPECT_EQ(p.variant, DcqcnVariant::kFirmware);
  EXPECT_EQ(p.cnp_interval, Time::Us(2));
  EXPECT_DOUBLE_EQ(p.g, 5.0 / 1024);
  EXPECT_EQ(p.alpha_period, Time::Us(55));
  EXPECT_DOUBLE_EQ(p.initial_alpha, 1.0);
  EXPECT_EQ(p.rate_reduce_period, Time::Us(4));
  EXPECT_DOUBLE_EQ(p.min_dec_factor, 0.5);
  EXPECT_FALSE(p.clamp_target_rate);
  EXPECT_TRUE(p.clamp_target_rate_after_increase);
  EXPECT_EQ(p.rate_on_first_cnp, Rate());
  EXPECT_EQ(p.rate_increase_period, Time::Us(300));
  EXPECT_EQ(p.byte_counter, Bytes(0));
  EXPECT_EQ(p.fast_recovery_steps, 1);
  EXPECT_EQ(p.rate_ai, Rate::Bps(5'000'000));
  EXPECT_EQ(p.rate_hai, Rate::Bps(50'000'000));
  EXPECT_EQ(p.min_rate, Rate::Bps(1'000'000));
  EXPECT_EQ(p.max_rate, Rate());
  EXPECT_NO_THROW(p.Validate(Rate::Gbps(400), kWhere));
}

TEST(DcqcnParams, PresetByName) {
  EXPECT_EQ(DcqcnParams::Preset("paper", kWhere).variant, DcqcnVariant::kPaper);
  EXPECT_EQ(DcqcnParams::Preset("connectx-firmware", kWhere).variant, DcqcnVariant::kFirmware);
  EXPECT_THROW(DcqcnParams::Preset("mellanox", kWhere), InputError);
}

TEST(DcqcnParams, SetParsesEveryTypeWithUnits) {
  DcqcnParams p = DcqcnParams::Paper();
  p.Set("g", "1/16", kWhere);
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 16);
  p.Set("g", "0.5", kWhere);
  EXPECT_DOUBLE_EQ(p.g, 0.5);
  p.Set("rate_increase_period", "900us", kWhere);
  EXPECT_EQ(p.rate_increase_period, Time::Us(900));
  p.Set("rate_ai", "50Mbps", kWhere);
  EXPECT_EQ(p.rate_ai, Rate::Bps(50'000'000));
  p.Set("byte_counter", "0", kWhere);
  EXPECT_EQ(p.byte_counter, Bytes(0));
  p.Set("fast_recovery_steps", "1", kWhere);
  EXPECT_EQ(p.fast_recovery_steps, 1);
  p.Set("clamp_target_rate", "false", kWhere);
  EXPECT_FALSE(p.clamp_target_rate);
  p.Set("cnp_mode", "suppress", kWhere);
  EXPECT_EQ(p.cnp_mode, CnpMode::kSuppress);
  p.Set("hyper_increase", "scaled", kWhere);
  EXPECT_EQ(p.hyper_increase, HyperIncrease::kScaled);
  p.Set("max_rate", "0", kWhere);
  EXPECT_EQ(p.max_rate, Rate());
  p.Set("variant", "firmware", kWhere);
  p.Set("rate_reduce_period", "4us", kWhere);
  EXPECT_NO_THROW(p.Validate(Rate::Gbps(100), kWhere));
}

TEST(DcqcnParams, SetRejectsBadValuesAndKeepsLocation) {
  DcqcnParams p = DcqcnParams::Paper();
  for (const char* bad : {"0", "1.5", "-0.1", "1/0", "x"}) {
    try {
      p.Set("g", bad, kWhere);
      ADD_FAILURE() << "g = " << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().line, 7);
      EXPECT_EQ(e.where().field, "cc.dcqcn.x");
    }
  }
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 256);  // unchanged after failures
  EXPECT_THROW(p.Set("rate_ai", "0Mbps", kWhere), InputError);
  EXPECT_THROW(p.Set("rate_increase_period", "0us", kWhere), InputError);
  EXPECT_THROW(p.Set("alpha_period", "55", kWhere), InputError);  // no unit
  EXPECT_THROW(p.Set("fast_recovery_steps", "0", kWhere), InputError);
  EXPECT_THROW(p.Set("fast_recovery_steps", "2.5", kWhere), InputError);
  EXPECT_THROW(p.Set("clamp_target_rate", "maybe", kWhere), InputError);
  EXPECT_THROW(p.Set("variant", "qcn", kWhere), InputError);
  try {
    p.Set("rate_a", "5Mbps", kWhere);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("did you mean rate_ai"), std::string::npos) << e.message();
  }
}

TEST(DcqcnParams, ValidateChecksAgainstLineRateAndVariant) {
  DcqcnParams p = DcqcnParams::Paper();
  p.min_rate = Rate::Gbps(500);
  try {
    p.Validate(Rate::Gbps(400), kWhere);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("min_rate"), std::string::npos) << e.message();
  }
  p = DcqcnParams::Paper();
  p.rate_reduce_period = Time::Us(4);
  EXPECT_THROW(p.Validate(Rate::Gbps(400), kWhere), InputError);
  p = DcqcnParams::ConnectXFirmware();
  p.byte_counter = Bytes(32767);
  EXPECT_THROW(p.Validate(Rate::Gbps(400), kWhere), InputError);
  p = DcqcnParams::ConnectXFirmware();
  p.rate_reduce_period = Time::Zero();
  EXPECT_THROW(p.Validate(Rate::Gbps(400), kWhere), InputError);
  p = DcqcnParams::ConnectXFirmware();
  p.max_rate = Rate::Bps(500'000);  // below min_rate 1 Mb/s
  EXPECT_THROW(p.Validate(Rate::Gbps(400), kWhere), InputError);
}

TEST(DcqcnParams, RegistryCoversEveryNameAndRoundTrips) {
  std::set<std::string> names;
  for (const auto& info : DcqcnParamInfos()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_GT(std::string(info.help).size(), 10u) << info.name;
    for (const DcqcnParams& preset : {DcqcnParams::Paper(), DcqcnParams::ConnectXFirmware()}) {
      std::string text = DcqcnParamValue(preset, info.name);
      ASSERT_FALSE(text.empty()) << info.name;
      DcqcnParams copy = preset;
      copy.Set(info.name, text, kWhere);
      EXPECT_EQ(DcqcnParamValue(copy, info.name), text) << info.name;
    }
  }
  EXPECT_EQ(names.size(), 19u);
  EXPECT_EQ(DcqcnParamValue(DcqcnParams::Paper(), "nope"), "");
}

}  // namespace
}  // namespace lossless::cc
