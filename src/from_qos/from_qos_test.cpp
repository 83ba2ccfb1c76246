// `lossless scenario from-qos` (docs/from-qos.md):
// every real config of tests/fixtures/real/qos/ gives a scenario that loads,
// every fabric value says where it came from, and the values of a full SONiC
// config reach the simulator as the config states them.
#include "from_qos/from_qos.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audit/qos/qos_parse.hpp"
#include "base/error.hpp"
#include "scenario/scenario.hpp"

namespace lossless::from_qos {
namespace {
namespace from_qos_test {

const std::string kReal = LOSSLESS_SOURCE_DIR "/tests/fixtures/real/qos/";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result Convert(const std::string& name, const Options& o = {}) {
  const std::string path = kReal + name;
  return FromQos(audit::qos::ParseQosText(Slurp(path), path), path, o);
}

// The lines of the `fabric:` and `topology:` sections that carry a value.
std::vector<std::string> ValueLines(const std::string& yaml) {
  std::vector<std::string> out;
  std::istringstream in(yaml);
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line == "fabric:" || line == "topology:") {
      in_section = true;
      continue;
    }
    if (line.empty() || line[0] != ' ') {
      in_section = false;
      continue;
    }
    if (in_section && line.find(": ") != std::string::npos && line.back() != ':') out.push_back(line);
  }
  return out;
}

}  // namespace from_qos_test
using namespace from_qos_test;

TEST(FromQos, EveryRealConfigGivesAScenarioThatLoadsWithEveryValueSourced) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kReal))
    if (e.is_regular_file()) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 40u);
  int with_values = 0;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const Result r = Convert(f);
    EXPECT_NO_THROW(scenario::LoadFabricText(r.yaml, f + ".yaml"));
    const std::vector<std::string> lines = ValueLines(r.yaml);
    EXPECT_FALSE(lines.empty());
    for (const std::string& l : lines) {
      const bool sourced = l.find("# default (profile roce-tuned)") != std::string::npos ||
                           l.find("# " + kReal + f) != std::string::npos;
      EXPECT_TRUE(sourced) << l;
    }
    EXPECT_EQ(static_cast<size_t>(r.defaults) + r.mapped.size(), lines.size());
    if (!r.mapped.empty()) ++with_values;
  }
  // Counters-only captures (show pfc counters, ...) set nothing; the others do.
  EXPECT_GE(with_values, 25);
}

TEST(FromQos, SonicConfigReachesTheSimulatorAsStated) {
  // sonic_config_db_full_3_0_3.json (audit qos: PFC on 3 and 4, PG profile
  // pg_lossless_100000_40m_profile with dynamic_th -3 on ingress_lossless_pool
  // 35621248 B, WRED AZURE_LOSSLESS 1 MiB / 2 MiB / 5 %).
  const Result r = Convert("sonic_config_db_full_3_0_3.json");
  const scenario::Scenario s = scenario::LoadFabricText(r.yaml, "sonic.yaml");
  EXPECT_TRUE(s.net.pfc.enabled);
  EXPECT_EQ(s.net.pfc.priorities, 1u << 3);
  EXPECT_EQ(s.net.nic.data_class, 3);
  // alpha 1/8: alpha x pool / (1 + alpha) = 35621248 / 9.
  EXPECT_EQ(s.net.pfc.xoff.count(), 35621248 / 9);
  EXPECT_EQ(s.net.pfc.headroom.count(), 177632);
  EXPECT_EQ(s.net.sw.buffer.count(), 35621248);
  EXPECT_TRUE(s.net.sw.ecn[3].enabled);
  EXPECT_EQ(s.net.sw.ecn[3].kmin.count(), 1 << 20);
  EXPECT_EQ(s.net.sw.ecn[3].kmax.count(), 2 << 20);
  EXPECT_DOUBLE_EQ(s.net.sw.ecn[3].pmax, 0.05);
  EXPECT_EQ(s.clos.link_rate.bps(), 100'000'000'000);
  bool prio4 = false;
  for (const std::string& i : r.ignored) prio4 = prio4 || i.find("PFC on priority 4") != std::string::npos;
  EXPECT_TRUE(prio4);
  EXPECT_TRUE(r.unmapped.empty());
}

TEST(FromQos, ValueTheSimulatorRefusesIsListedWithItsLineAndTheProfilesIsUsed) {
  // nxos_azure_local_qos_policy.md sets WRED minimum = maximum = 300000 B:
  // the simulator needs Kmin below Kmax.
  const Result r = Convert("nxos_azure_local_qos_policy.md");
  ASSERT_EQ(r.unmapped.size(), 1u);
  EXPECT_NE(r.unmapped[0].find("nxos_azure_local_qos_policy.md:201: fabric.ecn.kmin = 300000B not used: expected "
                               "Kmin below Kmax"),
            std::string::npos)
      << r.unmapped[0];
  const scenario::Scenario s = scenario::LoadFabricText(r.yaml, "nxos.yaml");
  EXPECT_EQ(s.net.sw.ecn[s.net.nic.data_class].kmin.count(), 50'000);  // roce-tuned's
  EXPECT_EQ(s.net.sw.ecn[s.net.nic.data_class].kmax.count(), 300'000);
  EXPECT_NE(r.yaml.find("# Not mapped"), std::string::npos);
}

TEST(FromQos, NxosIngressQueuingPauseBufferReachesTheSimulatorWithItsLine) {
  // nxos_nexus3132_tor1_microsoft_sdn.cfg line 122: the ingress queuing class
  // RDMA of INPUT_QUEUING (applied on the host ports) states `pause buffer-size
  // 101920 pause-threshold 46800 resume-threshold 34320` for the no-drop CoS 3;
  // `lossless audit qos` reads the same values (qos_parse_test.cpp).
  const Result r = Convert("nxos_nexus3132_tor1_microsoft_sdn.cfg");
  const scenario::Scenario s = scenario::LoadFabricText(r.yaml, "nxos.yaml");
  EXPECT_TRUE(s.net.pfc.enabled);
  EXPECT_EQ(s.net.pfc.priorities, 1u << 3);
  EXPECT_EQ(s.net.pfc.xoff.count(), 46'800);
  EXPECT_EQ(s.net.pfc.headroom.count(), 101'920 - 46'800);
  EXPECT_EQ(s.clos.link_rate.bps(), 10'000'000'000);
  EXPECT_NE(r.yaml.find("xoff: 46800B   # " + kReal +
                        "nxos_nexus3132_tor1_microsoft_sdn.cfg:122: PFC trigger of priority 3 "
                        "(static 46800B, queuing input INPUT_QUEUING RDMA pause buffer)"),
            std::string::npos)
      << r.yaml;
  EXPECT_NE(r.yaml.find("xon: 34320B   # " + kReal + "nxos_nexus3132_tor1_microsoft_sdn.cfg:122"),
            std::string::npos)
      << r.yaml;
  EXPECT_TRUE(r.unmapped.empty());
}

TEST(FromQos, JunosFillLevelsBecomeBytesOfTheProfilesPfcTriggerMarkedAsSuch) {
  // junos_cos_dcqcn_qfx5240_rocm.txt line 15: `fill-level [ 45 90 ]` of the
  // drop profile the NO-LOSS scheduler names; the config states no PFC
  // trigger in bytes, so the shares are of roce-tuned's (200 KB).
  const Result r = Convert("junos_cos_dcqcn_qfx5240_rocm.txt");
  const scenario::Scenario s = scenario::LoadFabricText(r.yaml, "junos.yaml");
  const auto& e = s.net.sw.ecn[static_cast<size_t>(s.net.nic.data_class)];
  EXPECT_EQ(s.net.pfc.xoff.count(), 200'000);
  EXPECT_EQ(e.kmin.count(), 90'000);
  EXPECT_EQ(e.kmax.count(), 180'000);
  EXPECT_NE(r.yaml.find("junos_cos_dcqcn_qfx5240_rocm.txt:15: ECN Kmin at fill level 45 % of the queue's buffer on "
                        "queue 4 (priority 3), taken as the PFC trigger of priority 3 (200000 B) from the profile "
                        "roce-tuned"),
            std::string::npos)
      << r.yaml;
}

TEST(FromQos, DefaultsNameTheProfileGivenAndAnUnknownProfileIsBadInput) {
  Options o;
  o.profile = "roce-untuned";
  const Result r = Convert("sonic_show_ecn.txt", o);
  EXPECT_NE(r.yaml.find("# default (profile roce-untuned)"), std::string::npos);
  EXPECT_EQ(r.yaml.find("# default (profile roce-tuned)"), std::string::npos);
  o.profile = "roce-tunned";
  EXPECT_THROW(Convert("sonic_show_ecn.txt", o), InputError);
}

}  // namespace
}  // namespace lossless::from_qos
