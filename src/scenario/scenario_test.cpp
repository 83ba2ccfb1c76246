#include "scenario/scenario.hpp"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario/params.hpp"
#include "scenario/scenario_test_util.hpp"

namespace lossless::scenario {
namespace {

using testing::ErrorOf;
using testing::kGood;

TEST(Scenario, LoadsPresetDefaultsAndOverrides) {
  Scenario s = LoadScenarioText(kGood, "s.yaml");
  EXPECT_EQ(s.seed, 3u);
  EXPECT_EQ(s.net.framing.WireBytes(4096), 4178);
  EXPECT_EQ(s.net.sw.latency, units::Time::Ns(300));
  EXPECT_EQ(s.net.routing, fabric::RoutingMode::kEcmp);
  Scenario ib = LoadScenarioText(kGood, "s.yaml",
                                 {"fabric.preset=infiniband", "fabric.switch_latency=150ns"});
  EXPECT_EQ(ib.net.framing.WireBytes(4096), 4122);
  EXPECT_EQ(ib.net.sw.latency, units::Time::Ns(150));  // --set beats the preset
  EXPECT_EQ(ib.net.routing, fabric::RoutingMode::kAdaptive);
  EXPECT_EQ(ib.clos.link_delay, units::Time::Ns(50));  // 10 m default cable at 5 ns/m
}

TEST(Scenario, UnknownKeyNamesLineAndNearestField) {
  std::string text = kGood;
  text.replace(text.find("link_rate"), 9, "link_rat");
  EXPECT_EQ(
      ErrorOf(text),
      "s.yaml:5: fabric.link_rat: unknown field; did you mean 'link_rate'? (valid here: preset, "
      "link_rate, link_delay, cable_length, mtu, frame_overhead, vlan_tag, switch_latency, "
      "cut_through, buffer, alpha, routing, data_class, pcie_rate, ib, ecn, pfc, nic, ber, cc, "
      "dcqcn, ibcc)");
}

// Every registry field is resolved, in registry order, with its unit; the
// traffic entries follow (validate --show and the run JSON print this).
TEST(Scenario, ResolvedListsEveryFieldWithItsUnit) {
  const Scenario s = LoadScenarioText(kGood, "s.yaml");
  const auto& params = Params();
  ASSERT_GE(s.resolved.size(), params.size() + 1);
  for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(s.resolved[i].first, params[i].name);
  auto value = [&](const std::string& name) {
    for (const auto& [k, v] : s.resolved)
      if (k == name) return v;
    return std::string("missing");
  };
  EXPECT_EQ(value("fabric.link_rate"), "400Gbps");
  EXPECT_EQ(value("fabric.mtu"), "4096B");
  EXPECT_EQ(value("fabric.frame_overhead"), "62B");
  EXPECT_EQ(value("fabric.cable_length"), "10m");
  EXPECT_EQ(value("fabric.pcie_rate"), "none (line rate)");
  EXPECT_EQ(value("outputs.series.interval"), "(none)");
  EXPECT_THAT(value("fabric.pfc.xon"), ::testing::EndsWith(std::string("B")));
  EXPECT_THAT(value("traffic.0"), ::testing::StartsWith("pattern=ring bytes="));
}

TEST(Scenario, MalformedUnitsZeroRatesAndZeroLatency) {
  // A bare number for a rate or a byte size is refused (docs/units.md): it
  // used to mean 400 bit/s.
  EXPECT_EQ(ErrorOf(kGood, {"fabric.link_rate=400"}),
            "<--set>: fabric.link_rate: expected a rate with a unit such as 400Gbps, got \"400\"");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.buffer=32"}),
            "<--set>: fabric.buffer: expected a size with a unit such as 9KiB or 4096B, got "
            "\"32\"");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.ecn.kmin=150.5"}),
            "<--set>: fabric.ecn.kmin: expected a size with a unit such as 9KiB or 4096B, got "
            "\"150.5\"");
  EXPECT_EQ(ErrorOf(kGood, {"traffic.0.bytes=1048576"}),
            "<--set>: traffic.0.bytes: expected a size with a unit such as 9KiB or 4096B, got "
            "\"1048576\"");
  EXPECT_EQ(ErrorOf(kGood, {"stop_time=5"}),
            "<--set>: stop_time: expected a time such as 1.5us (a unit is required), got \"5\"");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.buffer=1048576B", "traffic.0.bytes=64KiB"}), "no error");
  // mtu stays in bytes, counts stay plain numbers.
  EXPECT_EQ(ErrorOf(kGood, {"fabric.mtu=4096", "topology.gpus=16"}), "no error");
  std::string t = kGood;
  t.replace(t.find("400Gbps"), 7, "fast");
  EXPECT_EQ(ErrorOf(t),
            "s.yaml:5: fabric.link_rate: expected a rate such as 400Gbps, got \"fast\"");
  t = kGood;
  t.replace(t.find("400Gbps"), 7, "0Gbps");
  EXPECT_EQ(ErrorOf(t), "s.yaml:5: fabric.link_rate: expected a rate above zero, got \"0Gbps\"");
  EXPECT_EQ(
      ErrorOf(kGood, {"fabric.link_rate=-5Gbps"}),
      "<--set>: fabric.link_rate: expected a rate such as 400Gbps (not negative), got \"-5Gbps\"");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.link_delay=0ns"}),
            "<--set>: fabric.link_delay: expected a delay above zero (components talk only through "
            "links with "
            "latency), got \"0ns\"");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.link_delay=1.5"}),
            "<--set>: fabric.link_delay: expected a time such as 1.5us (a unit is required), got "
            "\"1.5\"");
}

TEST(Scenario, UnknownPresetAndEnums) {
  EXPECT_EQ(ErrorOf(kGood, {"fabric.preset=infiniban"}),
            "<--set>: fabric.preset: expected one of infiniband, roce, raw, got \"infiniban\" (did "
            "you mean "
            "'infiniband'?)");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.nonsense=1"}),
            "<--set>: fabric.nonsense: unknown field; did you mean 'fabric.preset'?");
}

TEST(Scenario, RadixLimitIsNamed) {
  std::string t = kGood;
  t.replace(t.find("gpus: 32"), 8, "gpus: 200");
  std::string e = ErrorOf(t, {"topology.tiers=2"});
  EXPECT_EQ(e.rfind("s.yaml:8: topology.", 0), 0u) << e;
  EXPECT_NE(e.find("at most 128"), std::string::npos) << e;
  EXPECT_NE(e.find("got 200"), std::string::npos) << e;
}

TEST(Scenario, DisconnectedTopologyNamesAPair) {
  const std::string topo_path = ::testing::TempDir() + "/split.topo";
  {
    std::ofstream f(topo_path);
    f << "defaults rate=400Gbps delay=1us\nswitch a\nswitch b\nhost h0\nhost h1\nlink h0 a\nlink "
         "h1 b\n";
  }
  std::string e =
      ErrorOf(std::string(kGood) + "", {"topology.kind=file", "topology.file=" + topo_path});
  EXPECT_NE(e.find("h0"), std::string::npos) << e;
  EXPECT_NE(e.find("h1"), std::string::npos) << e;
}

TEST(Scenario, GarbageIsOneClearError) {
  EXPECT_EQ(ErrorOf(""), "s.yaml:1: expected a scenario, got an empty file");
  EXPECT_EQ(ErrorOf("- just\n- a list\n"),
            "s.yaml:1: expected a mapping of scenario fields at the top level");
  EXPECT_NE(ErrorOf("a: [1, 2\n").find("s.yaml:"), std::string::npos);
  EXPECT_EQ(ErrorOf(std::string(100, '[')), "s.yaml:1: expected at most 32 levels of nesting");
  EXPECT_NE(ErrorOf(std::string("\x00\x01\xff\xfe", 4)).find("s.yaml"), std::string::npos);
}

TEST(Scenario, DocsScenariosMdMatchesTheRegistry) {
  std::ifstream f(std::string(LOSSLESS_SOURCE_DIR) + "/docs/scenarios.md");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), ParamsMarkdown())
      << "refresh with: build/lossless params --markdown > docs/scenarios.md";
}

// Splits a Markdown table row on unescaped '|' and trims each cell.
std::vector<std::string> TableCells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      const size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += row[i];
    }
  }
  return cells;
}

std::string StripTicks(const std::string& s) {
  return s.size() >= 2 && s.front() == '`' && s.back() == '`' ? s.substr(1, s.size() - 2) : s;
}

TEST(Scenario, DocsDefaultsMatchTheIndependentList) {
  // tests/golden/scenario_defaults.tsv is written by hand from the sources it
  // names; docs/scenarios.md is generated from the registry. Every field of
  // the main table must be in the list with the same default, and no more.
  std::map<std::string, std::string> listed;
  std::ifstream golden(std::string(LOSSLESS_SOURCE_DIR) + "/tests/golden/scenario_defaults.tsv");
  ASSERT_TRUE(golden);
  for (std::string line; std::getline(golden, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    ASSERT_NE(t2, std::string::npos) << "three tab-separated columns: " << line;
    ASSERT_TRUE(listed.emplace(line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1)).second)
        << "listed twice: " << line;
  }
  std::ifstream docs(std::string(LOSSLESS_SOURCE_DIR) + "/docs/scenarios.md");
  std::set<std::string> seen;
  for (std::string line; std::getline(docs, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> cells = TableCells(line);
    ASSERT_GE(cells.size(), 3u) << line;
    const std::string field = StripTicks(cells[0]);
    seen.insert(field);
    auto it = listed.find(field);
    if (it == listed.end()) {
      ADD_FAILURE() << field << " is not in tests/golden/scenario_defaults.tsv";
    } else {
      EXPECT_EQ(StripTicks(cells[2]), it->second) << field;
    }
    if (field == "stop_time") break;  // the end of the main table
  }
  EXPECT_GE(seen.size(), 90u);
  for (const auto& [field, def] : listed)
    EXPECT_TRUE(seen.count(field)) << field << " listed but not documented";
}

}  // namespace
}  // namespace lossless::scenario

namespace lossless::scenario {
namespace {

// Misconfigurations a user may want to study run, with a loud warning
// (issue 3's bad-input rule): ECN above the PFC trigger, too little headroom.
TEST(Scenario, EcnAbovePfcTriggerAndShortHeadroomWarnButLoad) {
  Scenario ok = LoadScenarioText(kGood, "s.yaml");
  EXPECT_TRUE(ok.warnings.empty());
  Scenario ecn =
      LoadScenarioText(kGood, "s.yaml",
                       {"fabric.cc=dcqcn-paper", "fabric.ecn.enabled=true", "fabric.ecn.kmin=300KB",
                        "fabric.ecn.kmax=600KB", "fabric.pfc.xoff=200KB"});
  ASSERT_EQ(ecn.warnings.size(), 1u);
  EXPECT_NE(ecn.warnings[0].find("fabric.ecn.kmin: ECN starts marking an egress queue at 300000 B, "
                                 "at or above the PFC trigger of one ingress queue (200000 B)"),
            std::string::npos)
      << ecn.warnings[0];
  Scenario room = LoadScenarioText(kGood, "s.yaml", {"fabric.pfc.headroom=20KB"});
  ASSERT_EQ(room.warnings.size(), 1u);
  EXPECT_NE(room.warnings[0].find("fabric.pfc.headroom: 20000 B is below the"), std::string::npos)
      << room.warnings[0];
}

// Issue 16: an oversubscription a leaf's ports cannot give is built as the
// nearest ratio they allow, with a warning that says which.
TEST(Scenario, OversubscriptionALeafCannotGiveWarns) {
  Scenario s =
      LoadScenarioText(kGood, "s.yaml", {"topology.radix=8", "topology.oversubscription=64"});
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0],
            "topology.oversubscription: 64:1 asked, but a radix-8 leaf splits into 7 down and 1 up "
            "ports, so the fabric is built 7:1");
  EXPECT_TRUE(LoadScenarioText(kGood, "s.yaml", {"topology.oversubscription=3"}).warnings.empty());
}

// Issue 16: duplicate keys were accepted, the last one winning (1 GiB flows
// instead of 1 MiB), and two `fabric:` maps were merged.
TEST(Scenario, DuplicateKeysAreRefused) {
  std::string t = kGood;
  t += "    bytes: 1GiB\n";
  EXPECT_EQ(ErrorOf(t), "s.yaml:13: traffic.0.bytes: given twice in this entry (first on line 12)");
  t = kGood;
  t.replace(t.find("topology:"), 0, "fabric:\n  buffer: 16MiB\n");
  EXPECT_EQ(ErrorOf(t), "s.yaml:6: fabric: given twice (first on line 3)");
  t = std::string(kGood) + "faults:\n  pause_inject:\n    - {host: 0, at: 1us, at: 2us}\n";
  EXPECT_EQ(ErrorOf(t),
            "s.yaml:15: faults.pause_inject.0.at: given twice in this entry (first on line 15)");
}

// Issue 16: text after a JSON scenario's object was ignored.
TEST(Scenario, TextAfterTheScenarioIsRefused) {
  const std::string json =
      R"({"topology": {"kind": "leaf-spine", "gpus": 16, "radix": 8}, "traffic": )"
      R"([{"pattern": "ring", "bytes": "64KiB"}]})";
  EXPECT_EQ(ErrorOf(json), "no error");
  // A JSON object followed by "," made yaml-cpp's LoadAll loop forever (the
  // scenario fuzzer's timeout, kept in tests/fuzz/scenario_fuzz/).
  EXPECT_EQ(ErrorOf(R"({"name": "x"},)"
                    "\n"
                    R"(  "seed": 2})"
                    "\n"),
            "s.yaml:1: expected one scenario, got more after it (trailing text or a second YAML "
            "document)");
  EXPECT_EQ(ErrorOf(json + "\n\ntrailing garbage\n"),
            "s.yaml:3: expected one scenario, got more after it (trailing text or a second YAML "
            "document)");
  // A second document is reported where it starts: its "---" line.
  EXPECT_EQ(ErrorOf(std::string(kGood) + "---\nseed: 4\n"),
            "s.yaml:13: expected one scenario, got more after it (trailing text or a second YAML "
            "document)");
}

// Issue 16, item 10: physically meaningless settings. Each is a warning
// (the run can still be studied) except an XOFF plus headroom larger than
// the whole switch buffer, which PFC cannot honour: an error.
TEST(Scenario, MeaninglessSettingsWarnOrFail) {
  auto warning = [](const std::vector<std::string>& sets) {
    Scenario s = LoadScenarioText(kGood, "s.yaml", sets);
    return s.warnings.size() == 1 ? s.warnings[0] : std::to_string(s.warnings.size()) + " warnings";
  };
  EXPECT_EQ(warning({"fabric.cable_length=1e6", "fabric.pfc.enabled=false"}).substr(0, 68),
            "fabric.cable_length: 1e+06 m is longer than any data-center link (10");
  EXPECT_EQ(warning({"fabric.preset=infiniband", "fabric.vlan_tag=true"}),
            "fabric.vlan_tag: a VLAN tag is an Ethernet (RoCE) setting; the infiniband preset "
            "ignores it");
  EXPECT_EQ(warning({"fabric.preset=infiniband", "fabric.ecn.enabled=true"}),
            "fabric.ecn.enabled: ECN marking is an Ethernet (RoCE) mechanism; InfiniBand "
            "congestion control is fabric.cc: ib-cc with fabric.ibcc.*");
  EXPECT_EQ(warning({"stop_time=1ms", "traffic.0.start=2ms"}),
            "traffic.0.start: 2ms is at or after stop_time (1ms): the entry's flows never start");
  EXPECT_EQ(warning({"stop_time=10us", "traffic.0.repeat=100", "traffic.0.every=1us"}),
            "traffic.0.repeat: only 10 of the 100 repeats start before stop_time (10us); the rest "
            "are not run");
  EXPECT_EQ(warning({"traffic.0.rate=800Gbps"}),
            "traffic.0.rate: 800Gbps is above the link rate (400Gbps): the flow runs at line rate");
  EXPECT_EQ(ErrorOf(kGood, {"fabric.buffer=1MiB", "fabric.pfc.xoff=2MiB"}).substr(0, 80),
            "<--set>: fabric.pfc.xoff: expected XOFF plus headroom (2097152 B + 90538 B, the ");
}

// Issue 16, item 20: a missing topology file is reported at the scenario
// line that named it.
TEST(Scenario, MissingTopologyFileNamesTheScenarioLine) {
  std::string t = kGood;
  t.replace(t.find("  kind: leaf-spine"), 18, "  kind: file\n  file: no/such.topo");
  EXPECT_EQ(ErrorOf(t),
            "s.yaml:8: topology.file: no/such.topo: cannot open: No such file or directory");
}

// Issue 16 (item 10): the default PFC headroom of a topology file follows its
// own links, not fabric.link_delay: the link that needs the most (here 2 us,
// beside 100 ns links, all at 400 Gb/s) gives the same headroom as a
// generated fabric whose every link is 2 us at 400 Gb/s. (It took 10 m of
// cable from fabric.cable_length: scenarios/deadlock-ring4.yaml, 500 ns links,
// dropped lossless frames.)
TEST(Scenario, PfcHeadroomDefaultFollowsTheTopologyFilesLinks) {
  const std::string topo_path = ::testing::TempDir() + "/mixed.topo";
  std::ofstream(topo_path) << "defaults rate=400Gbps delay=100ns\nswitch s0\nswitch s1\n"
                              "host h0\nhost h1\nhost h2\nlink h0 s0\nlink h1 s0\n"
                              "link s0 s1 delay=2us\nlink h2 s1\n";
  const Scenario file = LoadScenarioText(
      kGood, "s.yaml",
      {"topology.kind=file", "topology.file=" + topo_path, "traffic.0.bytes=4KiB"});
  const Scenario same = LoadScenarioText(kGood, "s.yaml", {"fabric.link_delay=2us"});
  const Scenario fabric_only = LoadScenarioText(kGood, "s.yaml");
  EXPECT_EQ(file.net.pfc.headroom.count(), same.net.pfc.headroom.count());
  // The cable term: 2 x 1.9 us more at 400 Gb/s is 190,000 B more.
  const Scenario short_links = LoadScenarioText(kGood, "s.yaml", {"fabric.link_delay=100ns"});
  EXPECT_EQ(same.net.pfc.headroom.count() - short_links.net.pfc.headroom.count(), 190'000);
  EXPECT_GT(file.net.pfc.headroom.count(), fabric_only.net.pfc.headroom.count());
  EXPECT_EQ(file.pfc_headroom_basis,
            "default for the topology file's link that needs the most (s0 -- s1, 2us at 400Gbps)");
  EXPECT_EQ(fabric_only.pfc_headroom_basis,
            "default for fabric.link_delay 50ns at fabric.link_rate 400Gbps");
  std::map<std::string, std::string> resolved(file.resolved.begin(), file.resolved.end());
  EXPECT_EQ(resolved["fabric.pfc.headroom"], std::to_string(file.net.pfc.headroom.count()) + "B");
  // A given headroom is kept, and the warning measures it against the file's link.
  const Scenario given = LoadScenarioText(
      kGood, "s.yaml",
      {"topology.kind=file", "topology.file=" + topo_path, "fabric.pfc.headroom=60KB"});
  EXPECT_EQ(given.net.pfc.headroom.count(), 60'000);
  EXPECT_EQ(given.pfc_headroom_basis, "fabric.pfc.headroom");
  ASSERT_EQ(given.warnings.size(), 1u);
  EXPECT_NE(given.warnings[0].find("60000 B is below the"), std::string::npos) << given.warnings[0];
  EXPECT_NE(given.warnings[0].find("(s0 -- s1, 2us at 400Gbps)"), std::string::npos);
}

}  // namespace
}  // namespace lossless::scenario
