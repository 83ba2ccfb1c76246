// `perf` at packet level: 2 nodes x 8 GPUs on a rail-optimized InfiniBand
// fabric; large-message bus bandwidth against the alpha-beta model of the same
// links, determinism, a failed queue pair as #wrong, refusals.
#include "run/perf_run.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collective/model/alpha_beta.hpp"
#include "perf/options.hpp"
#include "perf/result.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {
namespace {

constexpr const char* kTwoNodes = R"(name: two-dgx
fabric:
  preset: infiniband
  link_rate: 400Gbps
  cut_through: true
topology:
  kind: rail-optimized
  gpus: 16
  gpus_per_node: 8
  radix: 64
)";

perf::PerfOptions Opts(const std::vector<std::string>& args) {
  return perf::ParsePerfArgs(args);
}

// Large messages run close to the NICs' payload rate, 8 NICs of 400 Gb/s x
// 4,096 / 4,122 (the IB data packet; its ACKs are coalesced, one per message,
// docs/model/transport.md#ack-coalescing): the rest is NCCL's launch and
// per-hop latencies paid while the pipeline fills (about 3 % at 256 MiB).
// The alpha-beta model's time is printed beside it: it adds NCCL's per-hop
// latencies one after another (about 10 % at this size), where the engine
// pays them once while the pipeline fills (docs/perf.md).
TEST(PerfRunTest, LargeRingAllReduceRunsAtTheNicBound) {
  const scenario::Scenario s = scenario::LoadFabricText(kTwoNodes, "s.yaml");
  std::string failure;
  const perf::PerfResult r =
      RunPerf(Opts({"all_reduce", "-b", "256M", "-e", "256M", "-g", "8", "--nodes", "2", "-n",
                    "2", "-w", "0"}),
              s, "two-dgx", &failure);
  ASSERT_TRUE(failure.empty()) << failure;
  ASSERT_EQ(r.sizes.size(), 1u);
  const perf::SizeResult& row = r.sizes[0];
  ASSERT_TRUE(row.model_us.has_value());
  ASSERT_EQ(row.out_of_place.samples_us.size(), 2u);
  const double t = row.out_of_place.MeanUs();
  std::printf("perf 2 x 8 GPUs, 256 MiB on IB 400G: %.2f us simulated, %.2f us alpha-beta\n", t,
              *row.model_us);
  const double bytes = 256.0 * (1 << 20);
  const double busbw = bytes / (t * 1e-6) * 2 * 15 / 16 / 1e9;
  const double bound = 8 * 400e9 / 8 * 4096 / 4122 / 1e9;
  EXPECT_LE(busbw, bound);
  EXPECT_GE(busbw, 0.95 * bound) << busbw << " GB/s";
  EXPECT_LT(t, *row.model_us);
  EXPECT_EQ(row.out_of_place.wrong, std::optional<int64_t>(0));
  // Same seed, same bytes out.
  const perf::PerfResult again =
      RunPerf(Opts({"all_reduce", "-b", "256M", "-e", "256M", "-g", "8", "--nodes", "2", "-n",
                    "2", "-w", "0"}),
              s, "two-dgx", &failure);
  EXPECT_EQ(perf::FormatNcclTests(r, PerfNotes(r)), perf::FormatNcclTests(again, PerfNotes(again)));
}

TEST(PerfRunTest, AQueuePairOutOfRetriesShowsAsWrongElements) {
  const scenario::Scenario s = scenario::LoadFabricText(
      kTwoNodes, "s.yaml",
      {"transport.retry_cnt=0", "faults.link_loss.0.link=host0<->leaf0",
       "faults.link_loss.0.every=50"});
  std::string failure;
  const perf::PerfResult r = RunPerf(
      Opts({"all_reduce", "-b", "64M", "-e", "128M", "-f", "2", "-g", "8", "--nodes", "2"}), s,
      "two-dgx", &failure);
  EXPECT_NE(failure.find("retry count 0 exhausted"), std::string::npos) << failure;
  ASSERT_EQ(r.sizes.size(), 1u);  // the sweep ends at the failed row
  EXPECT_EQ(r.sizes[0].out_of_place.wrong, std::optional<int64_t>(r.sizes[0].counts.count));
  EXPECT_NE(perf::FormatNcclTests(r, PerfNotes(r)).find("FAILED"), std::string::npos);
}

// --json's "node": the preset, its PCIe and GPUDirect RDMA, one rail per
// GPU with its path, and the transport's queue pairs per connection (here
// from the scenario's transport.qps_per_connection, with NCCL's rule
// NCCL_IB_SPLIT_DATA_ON_QPS=1 from the environment's option).
TEST(PerfRunTest, JsonNamesTheNodeAndItsRails) {
  const scenario::Scenario s =
      scenario::LoadFabricText(kTwoNodes, "s.yaml", {"transport.qps_per_connection=2"});
  perf::PerfOptions o =
      Opts({"all_reduce", "-b", "1M", "-e", "1M", "-g", "8", "--nodes", "2", "-n", "1", "-w", "0"});
  o.split_data_on_qps = 1;
  std::string failure;
  const perf::PerfResult r = RunPerf(o, s, "two-dgx", &failure);
  ASSERT_TRUE(failure.empty()) << failure;
  const nlohmann::json j = perf::ToJson(r);
  ASSERT_TRUE(j.contains("node"));
  const nlohmann::json& n = j["node"];
  EXPECT_EQ(n["preset"], "h100");
  EXPECT_EQ(n["pcie_gen"], 5);
  EXPECT_EQ(n["pcie_lanes"], 16);
  EXPECT_EQ(n["gdr"], true);
  EXPECT_EQ(n["qps_per_connection"], 2);
  EXPECT_EQ(n["split_data_on_qps"], true);
  ASSERT_EQ(n["rails"].size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(n["rails"][k]["gpu"], k);
    EXPECT_EQ(n["rails"][k]["pcie_path"], "PIX");
    EXPECT_EQ(n["rails"][k]["gdr"], true);
  }
}

TEST(PerfRunTest, RefusesOneRankAndMismatchedTopologies) {
  const scenario::Scenario s = scenario::LoadFabricText(kTwoNodes, "s.yaml");
  std::string failure;
  EXPECT_THROW(RunPerf(Opts({"all_gather", "-g", "1", "--nodes", "1"}), s, "", &failure),
               InputError);
  EXPECT_THROW(RunPerf(Opts({"all_reduce", "-g", "8", "--nodes", "4"}), s, "", &failure),
               InputError);
}

// Every other collective at packet level on the same 2 x 8 GPUs, 256 MiB:
// at or below the NICs' payload bound for its traffic (all_gather,
// reduce_scatter, broadcast, reduce: the ring's edges leave each node on 8
// rails, busbw bound 8 NIC rates; alltoall: every NIC sends 8 shares of
// S/16, so algbw <= 2 NIC rates and busbw <= 2 x 15/16 NIC rates; sendrecv:
// one NIC per node) and close to it; every row checked; alltoall's and
// sendrecv's in-place halves N/A as in nccl-tests; the same bytes twice.
TEST(PerfRunTest, EveryCollectiveRunsNearItsNicBound) {
  const scenario::Scenario s = scenario::LoadFabricText(kTwoNodes, "s.yaml");
  const double nic = 400e9 / 8 * 4096 / (4122 + 30) / 1e9;
  struct Case {
    const char* name;
    double bound;  // busbw GB/s
    double floor;  // share of the bound it reaches at least
  };
  // The chains fill a pipeline of 15 hops with 512-KiB steps, each hop
  // paying NCCL's hop latency and the step's serialisation on a NIC that
  // several channels share (about 200 us against 680 us of data at 256 MiB).
  for (const Case& c : {Case{"reduce_scatter", 8 * nic, 0.9}, Case{"all_gather", 8 * nic, 0.9},
                        Case{"broadcast", 8 * nic, 0.75}, Case{"reduce", 8 * nic, 0.75},
                        Case{"alltoall", nic * 2 * 15 / 16, 0.95},
                        Case{"sendrecv", nic, 0.95}}) {
    std::string failure;
    const std::vector<std::string> args = {c.name, "-b", "256M", "-e", "256M", "-g", "8",
                                           "--nodes", "2", "-n", "1", "-w", "0"};
    const perf::PerfResult r = RunPerf(Opts(args), s, "two-dgx", &failure);
    ASSERT_TRUE(failure.empty()) << failure;
    ASSERT_EQ(r.sizes.size(), 1u);
    const perf::SizeResult& row = r.sizes[0];
    const double busbw = collective::BusBwGbs(r.options.collective, 16, row.counts.size_bytes,
                                              row.out_of_place.MeanUs());
    std::printf("perf %s 2 x 8 GPUs, 256 MiB on IB 400G: busbw %.1f GB/s (bound %.1f), "
                "alpha-beta %.1f GB/s\n",
                c.name, busbw, c.bound,
                collective::BusBwGbs(r.options.collective, 16, row.counts.size_bytes,
                                     *row.model_us));
    EXPECT_LE(busbw, c.bound) << c.name;
    EXPECT_GE(busbw, c.floor * c.bound) << c.name;
    EXPECT_EQ(row.out_of_place.wrong, std::optional<int64_t>(0)) << c.name;
    const bool p2p = std::string(c.name) == "alltoall" || std::string(c.name) == "sendrecv";
    EXPECT_EQ(row.in_place.wrong.has_value(), !p2p) << c.name;
    EXPECT_EQ(row.choice.algorithm,
              p2p ? collective::Algorithm::kP2p : collective::Algorithm::kRing) << c.name;
    const perf::PerfResult again = RunPerf(Opts(args), s, "two-dgx", &failure);
    EXPECT_EQ(perf::FormatNcclTests(r, PerfNotes(r)), perf::FormatNcclTests(again, PerfNotes(again)));
  }
}

// --algo tree runs NCCL's double binary tree: on 2 nodes each tree crosses
// the nodes once each way, so busbw passes the 8 NICs' ring ceiling (the
// reason NCCL's maintainers judge 2-node fabrics with NCCL_ALGO=Ring), and
// the header names the tree.
TEST(PerfRunTest, TreeAllReduceOnTwoNodesPassesTheRingCeiling) {
  const scenario::Scenario s = scenario::LoadFabricText(kTwoNodes, "s.yaml");
  std::string failure;
  const perf::PerfResult r =
      RunPerf(Opts({"all_reduce", "-b", "256M", "-e", "256M", "-g", "8", "--nodes", "2", "-n",
                    "1", "-w", "0", "--algo", "tree", "--proto", "Simple"}),
              s, "two-dgx", &failure);
  ASSERT_TRUE(failure.empty()) << failure;
  const perf::SizeResult& row = r.sizes[0];
  EXPECT_EQ(row.choice.algorithm, collective::Algorithm::kTree);
  const double busbw = collective::BusBwGbs(collective::Collective::kAllReduce, 16,
                                            row.counts.size_bytes, row.out_of_place.MeanUs());
  const double ring_ceiling = 8 * 400e9 / 8 * 4096 / (4122 + 30) / 1e9;
  std::printf("perf tree all_reduce 2 x 8 GPUs, 256 MiB: busbw %.1f GB/s (ring ceiling %.1f)\n",
              busbw, ring_ceiling);
  EXPECT_GT(busbw, 1.1 * ring_ceiling);
  EXPECT_EQ(row.out_of_place.wrong, std::optional<int64_t>(0));
  const std::string out = perf::FormatNcclTests(r, PerfNotes(r));
  EXPECT_NE(out.find("(forced: NCCL_ALGO=tree NCCL_PROTO=Simple)"), std::string::npos) << out;
  EXPECT_NE(out.find("\n#    268435456   Tree  Simple"), std::string::npos) << out;
}

// 4 nodes x 8 GPUs, Simple on both: Tree wins up to some size, Ring above,
// and the simulated crossover falls in the same factor-of-4 bracket of
// sizes as NCCL's own model (tuning.cc's time per algorithm, Simple).
TEST(PerfRunTest, RingAndTreeCrossOverWhereNcclsModelSays) {
  const scenario::Scenario s = scenario::LoadFabricText(R"(name: four-dgx
fabric:
  preset: infiniband
  link_rate: 400Gbps
  cut_through: true
topology:
  kind: rail-optimized
  gpus: 32
  gpus_per_node: 8
  radix: 64
)",
                                                        "s.yaml");
  const std::vector<int64_t> sizes = {int64_t{4} << 20, int64_t{16} << 20, int64_t{64} << 20,
                                      int64_t{256} << 20};
  auto times = [&](const std::string& algo) {
    std::string failure;
    const perf::PerfResult r =
        RunPerf(Opts({"all_reduce", "-b", "4M", "-e", "256M", "-f", "4", "-g", "8", "--nodes", "4",
                      "-n", "1", "-w", "0", "--algo", algo, "--proto", "Simple"}),
                s, "four-dgx", &failure);
    EXPECT_TRUE(failure.empty()) << failure;
    std::vector<double> t;
    for (const perf::SizeResult& row : r.sizes) t.push_back(row.out_of_place.MeanUs());
    return t;
  };
  const std::vector<double> ring = times("ring"), tree = times("tree");
  ASSERT_EQ(ring.size(), sizes.size());
  ASSERT_EQ(tree.size(), sizes.size());
  const PerfModel m = PerfModelFor(Opts({"all_reduce", "-g", "8", "--nodes", "4"}), s.net,
                                   units::Rate::Gbps(400));
  auto first_ring_win = [&](auto ring_us, auto tree_us) {
    for (size_t k = 0; k < sizes.size(); ++k)
      if (ring_us(k) < tree_us(k)) return static_cast<int>(k);
    return static_cast<int>(sizes.size());
  };
  const int sim = first_ring_win([&](size_t k) { return ring[k]; },
                                 [&](size_t k) { return tree[k]; });
  auto model = [&](collective::Algorithm a, size_t k) {
    return *m.tuning.Time(collective::Collective::kAllReduce, a, collective::Protocol::kSimple,
                          sizes[k]);
  };
  const int nccl = first_ring_win([&](size_t k) { return model(collective::Algorithm::kRing, k); },
                                  [&](size_t k) { return model(collective::Algorithm::kTree, k); });
  for (size_t k = 0; k < sizes.size(); ++k)
    std::printf("4 x 8 GPUs, %lld MiB: ring %.1f us, tree %.1f us; NCCL's model ring %.1f, tree "
                "%.1f\n",
                static_cast<long long>(sizes[k] >> 20), ring[k], tree[k],
                model(collective::Algorithm::kRing, k), model(collective::Algorithm::kTree, k));
  EXPECT_GT(sim, 0);  // Tree wins the smallest size
  EXPECT_LT(sim, static_cast<int>(sizes.size()));  // Ring wins the largest
  EXPECT_EQ(sim, nccl);
}

// Rooted collectives loop over every root with -r -1, one row per root, and
// a chain's time does not depend on where it starts on a symmetric fabric.
TEST(PerfRunTest, RootedCollectivesHonourTheRoot) {
  const scenario::Scenario s = scenario::LoadFabricText(kTwoNodes, "s.yaml");
  std::string failure;
  const perf::PerfResult all = RunPerf(
      Opts({"broadcast", "-b", "8M", "-e", "8M", "-g", "8", "--nodes", "2", "-n", "1", "-w", "0",
            "-r", "-1", "--proto", "Simple"}),
      s, "two-dgx", &failure);
  ASSERT_TRUE(failure.empty()) << failure;
  ASSERT_EQ(all.sizes.size(), 16u);
  for (size_t k = 0; k < 16; ++k) EXPECT_EQ(all.sizes[k].root, static_cast<int64_t>(k));
  EXPECT_NEAR(all.sizes[5].out_of_place.MeanUs(), all.sizes[0].out_of_place.MeanUs(),
              0.05 * all.sizes[0].out_of_place.MeanUs());
}

}  // namespace
}  // namespace lossless::run
