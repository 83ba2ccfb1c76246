// The shared cloud's mechanisms in `perf` and `run` (docs/model/shared-cloud.md):
// a collective on the cloud-shared profile with other tenants ends, and its
// iteration times spread more (p99 / p50) than on roce-tuned at the same size,
// also with the per-message virtualization jitter at 0 (the spread comes from
// the tenants' traffic on the shared queues, not from a jitter input); `run`
// simulates tenants and the virtualization delay.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perf/options.hpp"
#include "run/perf_run.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {

std::string Profile(const std::string& name) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/profiles/" + name + ".yaml";
}

// 2 nodes x 2 GPUs (one NIC each), 4 MiB, 20 timed iterations after 2 warm-up.
perf::PerfResult Sweep(const std::string& profile, std::vector<std::string> sets) {
  sets.emplace_back("topology.nodes=2");
  sets.emplace_back("topology.gpus_per_node=2");
  const scenario::Scenario s = scenario::LoadFabricFile(Profile(profile), sets);
  std::string failure;
  perf::PerfResult r = RunPerf(
      perf::ParsePerfArgs(std::vector<std::string>{"all_reduce", "-b", "4M", "-e", "4M", "-g", "2",
                                                   "--nodes", "2", "-n", "20", "-w", "2"}),
      s, profile, &failure);
  EXPECT_TRUE(failure.empty()) << failure;  // ended, no hang
  EXPECT_EQ(r.sizes.size(), 1u);
  return r;
}

perf::HalfResult Iterations(const std::string& profile, const std::vector<std::string>& sets) {
  const perf::PerfResult r = Sweep(profile, sets);
  return r.sizes.empty() ? perf::HalfResult{} : r.sizes[0].out_of_place;
}

bool HasNote(const perf::PerfResult& r, const std::string& what) {
  for (const std::string& n : PerfNotes(r))
    if (n.find(what) != std::string::npos) return true;
  return false;
}

double Spread(const perf::HalfResult& h) {
  return h.PercentileUs(99) / h.PercentileUs(50);
}

// On 3 seeds: roce-tuned's iterations are nearly identical (p99 / p50 below
// 1.01); cloud-shared's spread by more than 3 %, with and without jitter.
TEST(SharedCloudTest, CloudSharedIterationsSpreadMoreThanRoceTunedEvenWithoutJitter) {
  for (const char* seed : {"seed=1", "seed=2", "seed=3"}) {
    const perf::HalfResult roce = Iterations("roce-tuned", {seed});
    const perf::HalfResult cloud = Iterations("cloud-shared", {seed});
    const perf::HalfResult no_jitter =
        Iterations("cloud-shared", {seed, "virtualization.jitter=0ns"});
    ASSERT_EQ(cloud.samples_us.size(), 20u);
    std::printf("%s: p99/p50 roce-tuned %.4f, cloud-shared %.4f, without jitter %.4f\n", seed,
                Spread(roce), Spread(cloud), Spread(no_jitter));
    EXPECT_LT(Spread(roce), 1.01) << seed;
    EXPECT_GT(Spread(cloud), Spread(roce) + 0.03) << seed;
    EXPECT_GT(Spread(no_jitter), Spread(roce) + 0.03) << seed;
    EXPECT_GT(cloud.PercentileUs(50), roce.PercentileUs(50)) << seed;
  }
}

TEST(SharedCloudTest, CloudSharedPerfIsDeterministicPerSeedAndSaysWhatItSimulates) {
  const perf::PerfResult a = Sweep("cloud-shared", {"seed=4"});
  const perf::PerfResult b = Sweep("cloud-shared", {"seed=4"});
  const perf::PerfResult c = Sweep("cloud-shared", {"seed=5"});
  EXPECT_EQ(perf::FormatNcclTests(a, PerfNotes(a)), perf::FormatNcclTests(b, PerfNotes(b)));
  EXPECT_EQ(a.sizes[0].out_of_place.samples_us, b.sizes[0].out_of_place.samples_us);
  EXPECT_NE(a.sizes[0].out_of_place.samples_us, c.sizes[0].out_of_place.samples_us);
  EXPECT_GT(a.tenant_bytes, 0);
  EXPECT_EQ(a.tenant_load, 0.3);
  EXPECT_TRUE(HasNote(a, "other tenants' Poisson bursts (mean 1MiB) offer 0.3 of every NIC"));
  EXPECT_TRUE(HasNote(a, "every RDMA message waits 2 us + Exp(mean 1 us)"));
  const perf::PerfResult dedicated = Sweep("roce-tuned", {});
  EXPECT_EQ(dedicated.tenant_bytes, 0);
  EXPECT_FALSE(HasNote(dedicated, "tenants"));
  EXPECT_FALSE(HasNote(dedicated, "virtualization"));
}

// `run` of a scenario on the shared fabric: the tenants' queue pairs are not
// flows of the scenario (counts, FCTs and the stop condition are the job's),
// and the flow pays the virtualization latency.
TEST(SharedCloudTest, RunSimulatesTenantsAndTheVirtualizationDelay) {
  std::ifstream in(Profile("cloud-shared"));
  std::stringstream text;
  text << in.rdbuf() << "traffic:\n  - {pattern: flow, src: 0, dst: 12, bytes: 1MiB}\n";
  auto run = [&](std::vector<std::string> sets) {
    sets.emplace_back("topology.nodes=2");
    sets.emplace_back("transport.kind=rc");
    return RunScenario(scenario::LoadScenarioText(text.str(), "cloud-shared.yaml", sets));
  };
  const report::RunResult quiet =
      run({"tenants.load=0", "virtualization.latency=0ns", "virtualization.jitter=0ns"});
  const report::RunResult virt = run({"tenants.load=0", "virtualization.jitter=0ns"});
  const report::RunResult shared = run({});
  for (const report::RunResult* r : {&quiet, &virt, &shared}) {
    EXPECT_EQ(r->flows, 1u);
    EXPECT_EQ(r->flows_done, 1u);
    EXPECT_EQ(r->stop_reason, "completed");
  }
  EXPECT_TRUE(quiet.warnings.empty()) << quiet.warnings.front();
  EXPECT_EQ((virt.fct.max - quiet.fct.max).ps(), units::Time::Us(2).ps());
  EXPECT_GT(shared.packets, 2 * quiet.packets);  // the tenants' bursts were simulated
}

}  // namespace
}  // namespace lossless::run
