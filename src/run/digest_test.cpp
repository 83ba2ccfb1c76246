// Per-entity event digests (`lossless run --digest`): equal for equal runs,
// different where the runs differ, named by port and switch.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "scenario/scenario_test_util.hpp"

namespace lossless::run {
namespace {

using scenario::LoadScenarioText;
using scenario::Scenario;
using scenario::testing::kGood;

std::vector<EntityDigestLine> Digests(const Scenario& s, report::RunResult* r = nullptr) {
  std::vector<EntityDigestLine> d;
  RunHooks hooks;
  hooks.digests = &d;
  report::RunResult res = RunScenario(s, hooks);
  if (r != nullptr) *r = res;
  return d;
}

TEST(Digest, SameRunSameDigestsAndTheyCountEveryEvent) {
  Scenario s = LoadScenarioText(kGood, "s.yaml", {"fabric.pfc.enabled=false"});
  report::RunResult r;
  const std::vector<EntityDigestLine> a = Digests(s, &r);
  const std::vector<EntityDigestLine> b = Digests(s);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(DigestText(a), DigestText(b));
  uint64_t events = 0;
  for (const EntityDigestLine& l : a) {
    events += l.digest.events;
    EXPECT_GT(l.digest.events, 0u);
    EXPECT_FALSE(l.name.empty());
  }
  EXPECT_EQ(events, r.events);
  // Ports are named by their link direction.
  EXPECT_NE(DigestText(a).find("->"), std::string::npos);
  // Recording digests changes nothing in the run.
  const report::RunResult plain = RunScenario(s);
  EXPECT_EQ(plain.events, r.events);
  EXPECT_EQ(plain.fct.max, r.fct.max);
}

TEST(Digest, ADifferentRunShowsWhichEntitiesDiffer) {
  // Another ECMP salt moves flows to other spines: some entities' digests
  // change, under the same names.
  const std::vector<std::string> sets{"fabric.pfc.enabled=false", "traffic.1.pattern=incast",
                                      "traffic.1.bytes=256KiB"};
  std::vector<std::string> other = sets;
  other.push_back("seed=4");
  Scenario s = LoadScenarioText(kGood, "s.yaml", sets);
  Scenario t = LoadScenarioText(kGood, "s.yaml", other);
  const std::vector<EntityDigestLine> a = Digests(s), b = Digests(t);
  size_t differ = 0;
  for (const EntityDigestLine& x : a) {
    for (const EntityDigestLine& y : b) {
      if (x.entity != y.entity) continue;
      ASSERT_EQ(x.name, y.name);
      if (!(x.digest == y.digest)) ++differ;
    }
  }
  EXPECT_GT(differ, 0u);
  EXPECT_NE(DigestText(a), DigestText(b));
}

}  // namespace
}  // namespace lossless::run
