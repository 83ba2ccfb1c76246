// Link names (docs/what-if.md#link-names): one name per topology link,
// "#k" for parallel links, names matched whole (node names may contain '-'),
// either endpoint order, one direction "a->b", and the errors that name the
// field and the nearest link.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "scenario/scenario.hpp"
#include "topology/topology.hpp"

namespace lossless::scenario {
namespace {

topology::Topology TwoLeaf() {
  return topology::ParseTopologyFile(std::string(LOSSLESS_SOURCE_DIR) +
                                     "/tests/fixtures/topology/two_leaf.topo");
}

std::string ErrorOf(const std::string& name, const topology::Topology& t, bool direction = false) {
  try {
    if (direction) {
      FindLinkDirection(name, t, {"f.yaml", 3, "faults.x.0.link"});
    } else {
      FindLink(name, t, {"f.yaml", 3, "faults.x.0.link"});
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LinkNames, EveryLinkHasOneNameAndParallelLinksANumber) {
  const topology::Topology t = TwoLeaf();
  EXPECT_EQ(LinkNames(t), (std::vector<std::string>{
                              "h0-leaf0", "h1-leaf0", "h2-leaf1", "h3-leaf1", "leaf0-spine0#0",
                              "leaf0-spine0#1", "leaf0-spine1", "leaf1-spine0", "leaf1-spine1"}));
}

TEST(LinkNames, FindLinkTakesEitherOrderTheOlderSpellingAndOneDirection) {
  const topology::Topology t = TwoLeaf();
  EXPECT_EQ(FindLink("leaf1-spine0", t, {}), 7u);
  EXPECT_EQ(FindLink("spine0-leaf1", t, {}), 7u);
  EXPECT_EQ(FindLink("leaf1<->spine0", t, {}), 7u);
  EXPECT_EQ(FindLink("spine0-leaf0#1", t, {}), 5u);
  EXPECT_EQ(FindLink(" h3-leaf1 ", t, {}), 3u);
  EXPECT_EQ(FindLinkDirection("leaf1->spine0", t, {}), 14u);  // link 7, from its end a
  EXPECT_EQ(FindLinkDirection("spine0->leaf1", t, {}), 15u);
  EXPECT_EQ(FindLinkDirection("spine0->leaf0#1", t, {}), 11u);
  LinkLossFault both;
  both.link = "leaf0-spine1";
  EXPECT_EQ(LinkLossPorts(both, t), (std::vector<uint32_t>{12, 13}));
  both.link = "leaf0->spine1";
  EXPECT_EQ(LinkLossPorts(both, t), (std::vector<uint32_t>{12}));
}

TEST(LinkNames, NamesWithDashesMatchWhole) {
  const topology::Topology t = topology::ParseTopologyFile(
      std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/topology/rail_2su_thin_uplinks.topo");
  const std::vector<std::string> names = LinkNames(t);
  ASSERT_EQ(names.size(), 24u);
  EXPECT_EQ(names[0], "n0-nic0-su0-rail0");
  EXPECT_EQ(names[8], "su0-rail0-spine0");
  EXPECT_EQ(FindLink("spine0-su0-rail0", t, {}), 8u);
  EXPECT_EQ(FindLink("su1-rail1-spine3", t, {}), 23u);
}

TEST(LinkNames, AnUnknownLinkOrAnUnnumberedBundleIsOneClearError) {
  const topology::Topology t = TwoLeaf();
  EXPECT_EQ(ErrorOf("leaf0-spine0", t),
            "f.yaml:3: faults.x.0.link: \"leaf0-spine0\" is a bundle of 2 parallel links: expected "
            "one of them by its number, leaf0-spine0#0 ... leaf0-spine0#1");
  EXPECT_EQ(ErrorOf("leaf0-spine0#2", t),
            "f.yaml:3: faults.x.0.link: expected a link of this topology such as h0-leaf0, "
            "h1-leaf0, h2-leaf1, leaf0-spine0#0 (lossless links lists them), got "
            "\"leaf0-spine0#2\"");
  EXPECT_EQ(ErrorOf("leaf2-spine0", t),
            "f.yaml:3: faults.x.0.link: expected a link of this topology such as h0-leaf0, "
            "h1-leaf0, h2-leaf1, leaf1-spine0 (lossless links lists them), got \"leaf2-spine0\"");
  EXPECT_EQ(ErrorOf("leaf0-spine1", t, true),
            "f.yaml:3: faults.x.0.link: expected a link direction of this topology such as "
            "h0->leaf0, leaf0->h0, h1->leaf0, leaf0->h1 (a->b#k for one of parallel links; "
            "lossless links lists the links), got \"leaf0-spine1\"");
  EXPECT_EQ(ErrorOf("leaf0->spine0", t, true),
            "f.yaml:3: faults.x.0.link: \"leaf0->spine0\" is a bundle of 2 parallel links: "
            "expected one of them by its number, leaf0-spine0#0 ... leaf0-spine0#1");
}

}  // namespace
}  // namespace lossless::scenario
