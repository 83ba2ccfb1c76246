// fabric.dcqcn.<name>: per-parameter DCQCN overrides in scenario files and
// --set, on top of the preset fabric.cc selects, and their errors.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cc/dcqcn_params.hpp"
#include "scenario/params.hpp"
#include "scenario/scenario.hpp"

namespace lossless::scenario {
namespace {

using ::testing::HasSubstr;

// Line numbers matter: the DCQCN block starts on line 9.
constexpr const char* kBase = R"(name: dcqcn
fabric:
  preset: roce
  link_rate: 40Gbps
  ecn:
    enabled: true
  cc: dcqcn-paper
)";

constexpr const char* kTail = R"(topology:
  kind: leaf-spine
  gpus: 3
traffic:
  - pattern: incast
    bytes: 1MiB
)";

std::string WithDcqcn(const std::string& lines) {
  return std::string(kBase) + (lines.empty() ? "" : "  dcqcn:\n" + lines) + kTail;
}

std::string NoCc() {
  std::string t = WithDcqcn("");
  t.replace(t.find("dcqcn-paper"), 11, "none");
  return t;
}

std::string LoadErrorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    LoadScenarioText(text, "s.yaml", sets);
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(DcqcnOverride, AppliesOnTopOfThePaperPreset) {
  Scenario s = LoadScenarioText(WithDcqcn("    rate_ai: 20Mbps\n    g: 1/16\n"), "s.yaml");
  ASSERT_TRUE(s.net.dcqcn);
  const cc::DcqcnParams paper = cc::DcqcnParams::Paper();
  EXPECT_EQ(s.net.dcqcn_params.rate_ai, units::Rate::Bps(20'000'000));
  EXPECT_DOUBLE_EQ(s.net.dcqcn_params.g, 1.0 / 16);
  // Everything else stays at the preset.
  EXPECT_EQ(s.net.dcqcn_params.rate_hai, paper.rate_hai);
  EXPECT_EQ(s.net.dcqcn_params.cnp_interval, paper.cnp_interval);
  EXPECT_EQ(s.net.dcqcn_params.byte_counter, paper.byte_counter);
  EXPECT_EQ(s.net.dcqcn_params.fast_recovery_steps, paper.fast_recovery_steps);
  EXPECT_EQ(s.net.cnp_class, 6);
}

TEST(DcqcnOverride, AppliesOnTopOfTheFirmwarePresetAndFromSet) {
  std::string text = WithDcqcn("    cnp_interval: 4us\n");
  text.replace(text.find("dcqcn-paper"), 11, "dcqcn-firmware");
  Scenario s = LoadScenarioText(text, "s.yaml",
                                {"fabric.dcqcn.rate_ai=8Mbps", "fabric.dcqcn.cnp_interval=1us"});
  const cc::DcqcnParams fw = cc::DcqcnParams::ConnectXFirmware();
  EXPECT_EQ(s.net.dcqcn_params.variant, cc::DcqcnVariant::kFirmware);
  EXPECT_EQ(s.net.dcqcn_params.cnp_interval, units::Time::Us(1));  // --set beats the file
  EXPECT_EQ(s.net.dcqcn_params.rate_ai, units::Rate::Bps(8'000'000));
  EXPECT_EQ(s.net.dcqcn_params.rate_reduce_period, fw.rate_reduce_period);
  EXPECT_EQ(s.net.dcqcn_params.rate_increase_period, fw.rate_increase_period);
  EXPECT_EQ(s.net.dcqcn_params.cnp_mode, cc::CnpMode::kSuppress);
}

TEST(DcqcnOverride, ResolvedValuesListEveryParameter) {
  Scenario s = LoadScenarioText(WithDcqcn("    rate_hai: 1Gbps\n"), "s.yaml");
  size_t n = 0;
  std::string hai;
  for (const auto& [k, v] : s.resolved) {
    if (k.rfind("fabric.dcqcn.", 0) == 0) ++n;
    if (k == "fabric.dcqcn.rate_hai") hai = v;
  }
  EXPECT_EQ(n, cc::DcqcnParamInfos().size() + 1);  // + cnp_class
  EXPECT_EQ(hai, "1Gbps");
}

TEST(DcqcnOverride, EveryParameterIsInTheRegistry) {
  for (const auto& info : cc::DcqcnParamInfos()) {
    const ParamInfo* p = FindParam(std::string("fabric.dcqcn.") + info.name);
    ASSERT_NE(p, nullptr) << info.name;
    EXPECT_THAT(p->help, HasSubstr("dcqcn-paper `")) << info.name;
  }
  ASSERT_NE(FindParam("fabric.dcqcn.cnp_class"), nullptr);
}

TEST(DcqcnOverride, UnknownNameSuggestsTheNearest) {
  EXPECT_THAT(LoadErrorOf(WithDcqcn("    rate_aii: 20Mbps\n")),
              HasSubstr("s.yaml:9: fabric.dcqcn.rate_aii: unknown field; did you mean "
                        "'rate_ai'?"));
  EXPECT_EQ(LoadErrorOf(WithDcqcn(""), {"fabric.dcqcn.cnp_intervall=4us"}),
            "<--set>: fabric.dcqcn.cnp_intervall: unknown field; did you mean "
            "'fabric.dcqcn.cnp_interval'?");
  // An abbreviation beats a shorter name fewer edits away ("g").
  EXPECT_THAT(LoadErrorOf(WithDcqcn(""), {"fabric.dcqcn.rai=2Gbps"}),
              HasSubstr("<--set>: fabric.dcqcn.rai: unknown field; did you mean "
                        "'fabric.dcqcn.rate_ai'?"));
}

TEST(DcqcnOverride, BadUnitsAndRanges) {
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    rate_ai: 40 parsecs\n")),
            "s.yaml:9: fabric.dcqcn.rate_ai: expected a rate such as 400Gbps, got \"40 "
            "parsecs\"");
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    rate_ai: 40\n")),
            "s.yaml:9: fabric.dcqcn.rate_ai: expected a rate with a unit such as 400Gbps, got "
            "\"40\"");
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    byte_counter: 10485760\n")),
            "s.yaml:9: fabric.dcqcn.byte_counter: expected a size with a unit such as 9KiB or "
            "4096B, got \"10485760\"");
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    g: 2\n")),
            "s.yaml:9: fabric.dcqcn.g: expected g in (0, 1], got \"2\"");
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    fast_recovery_steps: 0\n")),
            "s.yaml:9: fabric.dcqcn.fast_recovery_steps: expected an integer in 1..1000, got "
            "\"0\"");
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    variant: mellanox\n")),
            "s.yaml:9: fabric.dcqcn.variant: expected paper or firmware, got \"mellanox\"");
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    alpha_period: 0us\n")),
            "s.yaml:9: fabric.dcqcn.alpha_period: expected a period > 0, got \"0us\"");
}

TEST(DcqcnOverride, CrossFieldChecksPointAtTheOverride) {
  // min_rate above the 40G link rate: reported at the min_rate line.
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    rate_ai: 20Mbps\n    min_rate: 50Gbps\n")),
            "s.yaml:10: fabric.dcqcn.min_rate: expected a rate <= the line rate 40Gbps, got "
            "\"50Gbps\"");
  // The firmware variant has no byte counter.
  std::string fw = WithDcqcn("    byte_counter: 10MB\n");
  fw.replace(fw.find("dcqcn-paper"), 11, "dcqcn-firmware");
  EXPECT_THAT(LoadErrorOf(fw), HasSubstr("s.yaml:9: fabric.dcqcn.byte_counter: expected 0 for the "
                                     "firmware variant"));
  // Switching the firmware preset to the paper variant keeps its 4 us monitor
  // period, which the paper variant forbids: reported at fabric.cc (line 7),
  // naming the parameter.
  std::string mixed = WithDcqcn("    variant: paper\n");
  mixed.replace(mixed.find("dcqcn-paper"), 11, "dcqcn-firmware");
  EXPECT_EQ(LoadErrorOf(mixed),
            "s.yaml:7: fabric.dcqcn.rate_reduce_period: expected 0 for the paper variant (every "
            "CNP cuts), got \"4us\"");
}

TEST(DcqcnOverride, OverrideWithoutCongestionControlIsAnError) {
  std::string text = WithDcqcn("    rate_ai: 20Mbps\n");
  text.replace(text.find("dcqcn-paper"), 11, "none");
  EXPECT_EQ(LoadErrorOf(text),
            "s.yaml:9: fabric.dcqcn.rate_ai: expected fabric.cc dcqcn-paper or dcqcn-firmware "
            "along with a DCQCN override, got \"none\"");
  EXPECT_EQ(LoadErrorOf(NoCc(), {"fabric.dcqcn.cnp_class=5"}),
            "<--set>: fabric.dcqcn.cnp_class: expected fabric.cc dcqcn-paper or dcqcn-firmware "
            "along with a DCQCN override, got \"none\"");
}

TEST(DcqcnOverride, CnpClassIsStrictAndNotTheDataClass) {
  Scenario s = LoadScenarioText(WithDcqcn("    cnp_class: 7\n"), "s.yaml");
  EXPECT_EQ(s.net.cnp_class, 7);
  EXPECT_EQ(s.net.sw.strict_mask, 1u << 7);
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    cnp_class: 3\n")),
            "s.yaml:9: fabric.dcqcn.cnp_class: expected a class other than the data class 3, "
            "got \"3\"");
  EXPECT_EQ(LoadErrorOf(WithDcqcn("    cnp_class: 9\n")),
            "s.yaml:9: fabric.dcqcn.cnp_class: expected an integer from 0 to 7, got \"9\"");
}

}  // namespace
}  // namespace lossless::scenario
