#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "topology/topology.hpp"

namespace lossless::topology {
namespace {

const std::string kFixtures = std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/topology/";

// The full one-line message of the error `text` raises, or "<no error>".
std::string ErrorOf(const std::string& text, const TopologyFileLimits& limits = {}) {
  try {
    ParseTopologyText(text, "t.topo", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

const std::string kHead = "defaults rate=400Gbps delay=1us\nswitch sw0\nhost h0\nhost h1\n";

TEST(ParseTopology, FixtureTwoLeaf) {
  const std::string path = kFixtures + "two_leaf.topo";
  const Topology t = ParseTopologyFile(path);
  ASSERT_EQ(t.nodes.size(), 8u);
  ASSERT_EQ(t.hosts.size(), 4u);
  for (size_t r = 0; r < 4; ++r) EXPECT_EQ(t.nodes[t.hosts[r]].name, "h" + std::to_string(r));
  EXPECT_EQ(t.nodes[0].name, "leaf0");
  EXPECT_EQ(t.nodes[0].tier, Tier::kLeaf);
  EXPECT_EQ(t.nodes[0].group, 0);
  EXPECT_EQ(t.nodes[2].tier, Tier::kSpine);
  EXPECT_EQ(t.nodes[2].group, -1);
  EXPECT_EQ(t.nodes[t.hosts[0]].kind, NodeKind::kHost);
  EXPECT_EQ(t.nodes[t.hosts[0]].tier, Tier::kHost);
  ASSERT_EQ(t.links.size(), 9u);  // 4 host links + 2 parallel + 3
  EXPECT_EQ(t.links[0].a, t.hosts[0]);
  EXPECT_EQ(t.links[0].b, 0u);
  EXPECT_EQ(t.links[0].rate, units::Rate::Gbps(400));
  EXPECT_EQ(t.links[0].delay, units::Time::Us(1));
  EXPECT_EQ(t.links[3].delay, units::Time::Ns(150));
  EXPECT_EQ(t.links[4].rate, units::Rate::Gbps(800));
  EXPECT_EQ(t.links[5].rate, units::Rate::Gbps(800));
  EXPECT_EQ(t.links[5].a, 0u);
  EXPECT_EQ(t.links[5].b, 2u);
  EXPECT_EQ(t.links[8].delay, units::Time::Ns(500));
  EXPECT_EQ(t.description, "explicit topology from " + path + ": 4 hosts, 4 switches, 9 links");
}

TEST(ParseTopology, FixtureDisconnected) {
  const std::string path = kFixtures + "disconnected.topo";
  try {
    ParseTopologyFile(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 7);
    EXPECT_EQ(e.message(),
              "hosts \"h0\" and \"h2\" are not connected: the topology has no path between them");
  }
}

TEST(ParseTopology, EveryPrefixParsesOrThrowsInputError) {
  std::ifstream in(kFixtures + "two_leaf.topo");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 100u);
  int ok = 0;
  for (size_t n = 0; n <= text.size(); ++n) {
    try {
      ParseTopologyText(text.substr(0, n), "t.topo");
      ++ok;
    } catch (const InputError&) {
    }
  }
  EXPECT_GE(ok, 1);  // at least the whole file
}

TEST(ParseTopology, MissingFile) {
  try {
    ParseTopologyFile(kFixtures + "no_such.topo");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.message(), "cannot open: No such file or directory");
  }
}

TEST(ParseTopology, HostsMayBeDeclaredAfterLinksAndDefaultsChange) {
  const Topology t = ParseTopologyText(
      "defaults rate=100Gbps length=2m\nlink a s\ndefaults delay=3ns\nlink s b\n"
      "switch s\r\nhost b\nhost a\n",
      "t.topo");
  ASSERT_EQ(t.hosts.size(), 2u);
  EXPECT_EQ(t.nodes[t.hosts[0]].name, "b");
  EXPECT_EQ(t.links[0].delay, units::Time::Ns(10));
  EXPECT_EQ(t.links[0].rate, units::Rate::Gbps(100));
  EXPECT_EQ(t.links[1].delay, units::Time::Ns(3));
  EXPECT_EQ(t.links[1].rate, units::Rate::Gbps(100));
}

TEST(ParseTopology, ErrorMessages) {
  EXPECT_EQ(ErrorOf("swich sw0\n"),
            "t.topo:1: keyword: expected one of defaults, switch, host or link, got \"swich\" "
            "(did you mean \"switch\"?)");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0\nlink h1 sw9\n"),
            "t.topo:6: link: expected a node declared by a host or switch line, got \"sw9\" (did "
            "you mean \"sw0\"?)");
  EXPECT_EQ(ErrorOf(kHead + "host h0\n"),
            "t.topo:5: host.name: duplicate node name \"h0\" (first declared on line 3)");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 delay=0ps\nlink h1 sw0\n"),
            "t.topo:5: link.delay: expected a delay above zero (components talk over links with "
            "latency > 0), got \"0ps\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 rate=0Gbps\nlink h1 sw0\n"),
            "t.topo:5: link.rate: expected a rate above zero, got \"0Gbps\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 rate=fast\n"),
            "t.topo:5: link.rate: expected a rate such as 400Gbps, got \"fast\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 dealy=1us\n"),
            "t.topo:5: link: expected a key of rate, delay, length or count, got \"dealy\" (did "
            "you mean \"delay\"?)");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0\n"),
            "t.topo:4: host: host \"h1\" has no link; every host needs exactly one");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0\nlink h1 sw0\nlink h0 sw0\n"),
            "t.topo:7: link: host \"h0\" already has a link (line 5); a host is one NIC port and "
            "takes exactly one link");
}

TEST(ParseTopology, MoreErrors) {
  EXPECT_EQ(ErrorOf(""), "t.topo: host: expected at least one host line, got none");
  EXPECT_EQ(ErrorOf("switch sw0\nhost h0\nlink h0 sw0\n"),
            "t.topo:3: link.rate: no rate: give rate= on the link or in a defaults line above it");
  EXPECT_EQ(ErrorOf(kHead + "link sw0 sw0\n"),
            "t.topo:5: link: expected two different nodes, got \"sw0\" twice");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 count=2\n"),
            "t.topo:5: link.count: a link to host \"h0\" cannot have count=2; a host is one NIC "
            "port and takes exactly one link");
  // Found by the fuzzer: 22 digits once overflowed int64_t while being read.
  EXPECT_EQ(ErrorOf(kHead + "switch sw1\nlink sw0 sw1 count=2000000000000000000000\n"),
            "t.topo:6: link.count: expected a link count from 1 to 65536, got "
            "\"2000000000000000000000\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 length=0m\n"),
            "t.topo:5: link.length: expected a cable length above zero such as 30m or 2.5m, got "
            "\"0m\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 delay=1us length=2m\n"),
            "t.topo:5: link.length: give either delay= or length=, not both");
  EXPECT_EQ(ErrorOf("switch sw0 tier=spin\n"),
            "t.topo:1: switch.tier: expected a tier of leaf, spine, core or other, got \"spin\" "
            "(did you mean \"spine\"?)");
  // '#' starts a comment anywhere, so this declares host "h".
  EXPECT_EQ(ErrorOf("host h#0\n"),
            "t.topo:1: host: host \"h\" has no link; every host needs exactly one");
  EXPECT_EQ(ErrorOf("host h@0\n"),
            "t.topo:1: host.name: expected a name of letters, digits and _ . - : /, got "
            "\"h@0\"");
  EXPECT_EQ(ErrorOf("host\n"),
            "t.topo:1: host.name: expected \"host NAME [key=value...]\", got "
            "\"host\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0\n"),
            "t.topo:5: link: expected \"link A B [key=value...]\", got \"link h0\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 fast\n"),
            "t.topo:5: link: expected key=value with a key of rate, delay, length or count, got "
            "\"fast\"");
  EXPECT_EQ(ErrorOf(kHead + "link h0 sw0 rate=1G rate=2G\n"),
            "t.topo:5: link.rate: key \"rate\" given twice");
  EXPECT_EQ(ErrorOf("host h0 group=-1\n"),
            "t.topo:1: host.group: expected a group from 0 to 2147483647, got \"-1\"");
}

TEST(FindUnreachableHosts, FirstPairByRank) {
  Topology t;
  for (const char* name : {"sw0", "h0", "h1", "h2", "h3", "sw1"}) {
    Node n;
    n.name = name;
    n.kind = name[0] == 'h' ? NodeKind::kHost : NodeKind::kSwitch;
    t.nodes.push_back(n);
  }
  // Ranks 0 and 2 (nodes 1, 3) on sw0; ranks 1 and 3 (nodes 2, 4) on sw1.
  t.hosts = {1, 2, 3, 4};
  const units::Rate r = units::Rate::Gbps(400);
  const units::Time d = units::Time::Us(1);
  t.links = {{1, 0, r, d}, {2, 5, r, d}, {3, 0, r, d}, {4, 5, r, d}};
  auto pair = FindUnreachableHosts(t);
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->first, 0u);  // ranks, not node indices
  EXPECT_EQ(pair->second, 1u);
  t.hosts = {1, 3, 2, 4};
  pair = FindUnreachableHosts(t);
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->second, 2u);
  t.links.push_back({5, 0, r, d});
  EXPECT_FALSE(FindUnreachableHosts(t).has_value());
  t.hosts = {1};
  EXPECT_FALSE(FindUnreachableHosts(t).has_value());
}

// Issue 16: 300 lines of `link s0 s1 count=65536` made 19.7 M links. Links
// and ports are counted line by line, before any is built.
TEST(ParseTopology, LinksAndPortsAreCapped) {
  std::string text = kHead + "switch sw1\nlink h0 sw0\nlink h1 sw1\n";
  for (int i = 0; i < 300; ++i) text += "link sw0 sw1 count=65536\n";
  EXPECT_EQ(ErrorOf(text),
            "t.topo:8: link.count: \"sw0\" has 65537 links so far: expected at most 4096 ports "
            "at one node");
  // The total, with small limits: 3 switch pairs of 3 links against 8.
  std::string pairs = kHead + "switch sw1\nswitch sw2\nlink h0 sw0\nlink h1 sw1\n";
  pairs += "link sw0 sw1 count=3\nlink sw1 sw2 count=3\nlink sw2 sw0 count=3\n";
  TopologyFileLimits links;
  links.max_links = 8;
  EXPECT_EQ(ErrorOf(pairs, links),
            "t.topo:11: link.count: 11 links so far: expected at most 8 links in a topology file");
  TopologyFileLimits nodes;
  nodes.max_nodes = 4;
  EXPECT_EQ(ErrorOf(pairs, nodes),
            "t.topo:6: switch: more than 4 hosts and switches: expected at most 4 nodes in a "
            "topology file");
  EXPECT_EQ(ParseTopologyText(pairs, "t.topo").links.size(), 11u);
}

}  // namespace
}  // namespace lossless::topology
