// The fabric on the window engine (docs/parallel.md): over the in-process
// loopback, every rank count and placement gives the serial run's text and
// JSON byte for byte. Each case prints its cross-rank events and same-time
// ties (a tie: consecutive events at one time on one rank, one of them from
// another rank) and requires both above zero, or it would not test much.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "distrun/distributed.hpp"
#include "parallel/loopback.hpp"
#include "parallel/partition.hpp"
#include "report/run_report.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "sim/rng.hpp"

namespace lossless::distrun {
namespace {
namespace dist_test {

using scenario::Scenario;

std::string Path(const std::string& rel) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/" + rel;
}

struct Outputs {
  std::string text, json, digests, csv;
};

Outputs Serial(const Scenario& s) {
  std::vector<run::EntityDigestLine> d;
  run::RunHooks hooks;
  hooks.digests = &d;
  const report::RunResult r = run::RunScenario(s, hooks);
  return {report::RunText(r), report::RunJson(r).dump(1), run::DigestText(d),
          report::SeriesCsv(r.series)};
}

// Placement: empty = the partitioner's; else units shuffled onto ranks by `seed`.
std::vector<int32_t> RandomPlacement(const Scenario& s, int ranks, uint64_t seed) {
  const topology::Topology t = scenario::BuildTopology(s);
  const bool clos = s.topology_kind == "leaf-spine" || s.topology_kind == "fat-tree" ||
                    s.topology_kind == "rail-optimized";
  const parallel::Partition p =
      parallel::PartitionFabric(t, clos ? s.clos.gpus_per_node : 1, ranks, {"t", 0, "r"});
  sim::Rng rng(seed, 1, 2);
  std::vector<int32_t> rank_of_unit(p.units);
  for (uint32_t u = 0; u < p.units; ++u)
    rank_of_unit[u] = u < static_cast<uint32_t>(ranks)
                          ? static_cast<int32_t>(u)
                          : static_cast<int32_t>(rng.NextU64() % ranks);
  // Shuffle which unit got which rank (Fisher-Yates), every rank keeps one.
  for (uint32_t u = p.units; u > 1; --u)
    std::swap(rank_of_unit[u - 1], rank_of_unit[rng.NextU64() % u]);
  std::vector<int32_t> r(t.nodes.size());
  for (size_t n = 0; n < r.size(); ++n) r[n] = rank_of_unit[p.unit_of_node[n]];
  return r;
}

Outputs Distributed(const Scenario& s, int ranks, const std::vector<int32_t>& placement,
                    uint64_t jitter, Stats* st) {
  Outputs out;
  parallel::LoopbackOptions lo;
  lo.jitter_seed = jitter;
  std::mutex m;
  parallel::RunLoopback(
      ranks,
      [&](parallel::Comm& comm) {
        Options opt;
        opt.rank_of_node = placement;
        Stats stats;
        std::vector<run::EntityDigestLine> d;
        const report::RunResult r = Run(s, comm, opt, &stats, &d);
        if (comm.Rank() == 0) {
          std::lock_guard<std::mutex> lock(m);
          out = {report::RunText(r), report::RunJson(r).dump(1), run::DigestText(d),
                 report::SeriesCsv(r.series)};
          *st = stats;
        }
      },
      lo);
  return out;
}

// `delivered`: every frame sent to another rank arrived there before the end
// (not so when the run stops with frames in flight, as other tenants' are
// when the job's flows are done).
void ExpectSame(const std::string& what, const Scenario& s, const Outputs& serial, int ranks,
                const std::vector<int32_t>& placement = {}, uint64_t jitter = 0,
                bool delivered = true) {
  Stats st;
  const Outputs d = Distributed(s, ranks, placement, jitter, &st);
  std::printf("%s, %d ranks%s%s: %s\n", what.c_str(), ranks,
              placement.empty() ? "" : ", random placement", jitter ? ", jitter" : "",
              StatsLine(st).c_str());
  EXPECT_EQ(d.text, serial.text) << what << " " << ranks << " ranks";
  if (d.text != serial.text || d.digests != serial.digests) {
    // Where they differ first: the digests name the entity.
    size_t i = 0;
    while (i < d.digests.size() && i < serial.digests.size() && d.digests[i] == serial.digests[i])
      ++i;
    const size_t from = d.digests.rfind('\n', i);
    std::printf("first differing digest line: %s\n   serial: %s\n",
                d.digests.substr(from + 1, d.digests.find('\n', i) - from - 1).c_str(),
                serial.digests.substr(from + 1, serial.digests.find('\n', i) - from - 1).c_str());
  }
  EXPECT_TRUE(d.json == serial.json) << what << " " << ranks << " ranks: JSON differs";
  EXPECT_TRUE(d.digests == serial.digests) << what << " " << ranks << " ranks: digests differ";
  EXPECT_TRUE(d.csv == serial.csv) << what << " " << ranks << " ranks: series CSV differs";
  if (ranks > 1) {
    EXPECT_GT(st.sent, 0u) << what << " " << ranks << " ranks: no event crossed ranks";
    if (delivered) {
      EXPECT_EQ(st.sent, st.received);
    } else {
      EXPECT_GE(st.sent, st.received);
    }
    EXPECT_GT(st.ties, 0u) << what << " " << ranks << " ranks: no same-time tie across ranks";
  }
}

void AllCounts(const std::string& what, const Scenario& s, std::vector<int> counts,
               std::vector<int> random) {
  const Outputs serial = Serial(s);
  for (int k : counts) ExpectSame(what, s, serial, k);
  for (int k : random) ExpectSame(what, s, serial, k, RandomPlacement(s, k, 10 + k));
}

}  // namespace dist_test
}  // namespace

using namespace dist_test;

TEST(Distributed, RoceIncastWithDcqcnIsTheSerialRun) {
  const Scenario s = scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"),
                                                {"fabric.cc=dcqcn-paper", "traffic.0.bytes=256KiB",
                                                 "traffic.1.bytes=128KiB", "traffic.1.start=2us"});
  AllCounts("roce-incast dcqcn", s, {1, 2, 3, 4, 7}, {3, 4});
  // Batches landing in random orders (jitter): slow on a loaded machine, so once.
  ExpectSame("roce-incast dcqcn", s, Serial(s), 2, {}, /*jitter=*/77);
}

const std::vector<std::string> kSmallIncast{"traffic.0.bytes=256KiB", "traffic.1.bytes=128KiB",
                                            "traffic.1.start=2us"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Injected CNPs (experiment E5's fault) run on their flow's source NIC; the
// report's reaction point comes from the rank that owns that NIC (rank 0's
// own replica never saw the cuts).
TEST(Distributed, InjectedCnpsAndTheirReportAreTheSerialRun) {
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      With(kSmallIncast,
           {"fabric.cc=dcqcn-paper", "faults.cnp_inject.0.flow=100", "faults.cnp_inject.0.at=1us",
            "faults.cnp_inject.0.count=3", "faults.cnp_inject.0.every=2us"}));
  const Outputs serial = Serial(s);
  // The injection took effect in the serial run: its reaction point cut.
  const auto j = nlohmann::json::parse(serial.json);
  ASSERT_EQ(j.at("injections").at("cnp").size(), 1u);
  EXPECT_GE(j.at("injections").at("cnp")[0].at("cuts").get<int64_t>(), 1);
  for (int k : {2, 3}) ExpectSame("cnp inject", s, serial, k);
  ExpectSame("cnp inject", s, serial, 4, RandomPlacement(s, 4, 14));
}

// DCQCN with flows that finish before a time limit: a reaction point stops
// its timers and ignores CNPs once its source has sent every byte, which
// the source's rank knows (it once read the destination's "done", which a
// source on another rank never saw: 12,582 events serially, 12,584 at 2
// ranks). Flow 0 (32 KiB) ends long before the 60 us limit; flow 1 does not.
TEST(Distributed, DcqcnTimersEndOnTheSourcesOwnViewAsSerial) {
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      {"traffic.0.bytes=32KiB", "traffic.1.bytes=2MiB", "traffic.1.start=1us",
       "fabric.cc=dcqcn-paper", "fabric.ecn.kmin=8KB", "fabric.ecn.kmax=80KB", "stop_time=60us"});
  const Outputs serial = Serial(s);
  const auto j = nlohmann::json::parse(serial.json);
  ASSERT_GT(j.at("cc").at("notifications").get<int64_t>(), 0) << "no CNP: nothing to test";
  for (int k : {2, 3}) ExpectSame("dcqcn, time limit", s, serial, k);
  ExpectSame("dcqcn, time limit", s, serial, 4, RandomPlacement(s, 4, 21));
}

TEST(Distributed, InfinibandCreditsAndAdaptiveRoutingAreTheSerialRun) {
  // Credits on every link: FCPs cross the cut links against the data; the
  // preset routes adaptively (least-loaded egress).
  const Scenario s =
      scenario::LoadScenarioFile(Path("scenarios/ib-fat-tree.json"), {"traffic.0.bytes=64KiB"});
  ASSERT_TRUE(s.net.ib.enabled);
  // At 2 ranks the contiguous placement gives each rank a pod, and the
  // all-to-all among the first 32 hosts stays in pod 0: nothing crosses.
  // A random placement at 2 ranks does cut its paths.
  AllCounts("ib-fat-tree credits", s, {1, 3, 4, 7}, {2, 3, 4});
}

// Credits with lost FCPs (IbLinkConfig::fcp_loss, a test knob; E3's run
// set 2 check 4): a port's losses are drawn from its own stream, so they are
// the same FCPs on any rank; the periodic FCPs heal them. The losses must
// change the serial run, or the test would not test them.
TEST(Distributed, InfinibandWithLostFcpsIsTheSerialRun) {
  Scenario s =
      scenario::LoadScenarioFile(Path("scenarios/ib-fat-tree.json"), {"traffic.0.bytes=64KiB"});
  ASSERT_TRUE(s.net.ib.enabled);
  const Outputs lossless_fcps = Serial(s);
  s.net.ib.fcp_loss = 0.2;
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.text, lossless_fcps.text) << "losing FCPs changed nothing";
  // At 2 ranks the contiguous placement keeps this traffic in one pod
  // (InfinibandCreditsAndAdaptiveRoutingAreTheSerialRun): a random one cuts it.
  for (int k : {3, 4}) ExpectSame("ib-fat-tree, 20 % of FCPs lost", s, serial, k);
  for (int k : {2, 4})
    ExpectSame("ib-fat-tree, 20 % of FCPs lost", s, serial, k, RandomPlacement(s, k, 23));
}

TEST(Distributed, PfcWatchdogAndAStalledNicAreTheSerialRun) {
  // The incast target's NIC stalls: a pause storm, the watchdog acts and
  // drops; the run ends at stop_time with flows unfinished (time limit).
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      With(kSmallIncast,
           {"fabric.pfc.watchdog.enabled=true", "fabric.pfc.watchdog.poll=20us",
            "fabric.pfc.watchdog.restore=50us", "faults.nic_stall.host=0",
            "faults.nic_stall.at=10us", "faults.nic_stall.until=150us", "stop_time=400us"}));
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.text.find("1 PFC watchdog actions"), std::string::npos) << serial.text;
  ASSERT_NE(serial.text.find("time limit"), std::string::npos);
  for (int k : {2, 3, 4}) ExpectSame("roce-incast watchdog", s, serial, k);
  ExpectSame("roce-incast watchdog", s, serial, 4, RandomPlacement(s, 4, 13));
}

TEST(Distributed, PacketSprayingIsTheSerialRun) {
  const Scenario s = scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"),
                                                With(kSmallIncast, {"fabric.routing=spray"}));
  const Outputs serial = Serial(s);
  for (int k : {2, 3, 7}) ExpectSame("roce-incast spray", s, serial, k);
  ExpectSame("roce-incast spray", s, serial, 3, RandomPlacement(s, 3, 14));
}

TEST(Distributed, LongCutLinksKeepTheirFramesKeysInWireOrder) {
  // A cut link's receiver holds a copy of the sender's wire and queues one
  // arrival at a time, the keys of the frames behind it kept in wire order
  // (Network::DeliverRemote). With 2 km cables (10 us, which is also the
  // lookahead and the window) a window's frames are delivered while the
  // previous window's are still on the wire, so a busy link's copy never
  // drains: its key FIFO runs past 1,024 used keys and is compacted
  // (1,536 frames per 6 MiB flow).
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      {"fabric.cable_length=2000", "traffic.0.hosts=32", "traffic.0.bytes=6MiB",
       "traffic.1.bytes=4KiB", "traffic.1.senders=2"});
  const Outputs serial = Serial(s);
  for (int k : {2, 3}) ExpectSame("roce-incast 2 km cables", s, serial, k);
}

TEST(Distributed, SeriesOfAPfcIncastAreTheSerialSeries) {
  // Every port and flow series (queues, utilization, PAUSE frames, CNPs,
  // goodput, DCQCN rate/target/alpha) sampled every 2us by the ranks that own
  // them at the serial sample times, gathered on rank 0: the CSV, the JSON
  // (series included) and the digests (the sampler's events) are the serial
  // run's. The run ends when the last flow completes, between two samples.
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      With(kSmallIncast, {"fabric.cc=dcqcn-paper", "stop_time=1ms", "outputs.series.interval=2us",
                          "outputs.series.ports=busy", "outputs.series.flows=all"}));
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.csv.find("pause_frames"), std::string::npos);
  ASSERT_NE(serial.csv.find("dcqcn_rate_gbps"), std::string::npos);
  ASSERT_NE(serial.text.find("PAUSE"), std::string::npos) << serial.text;
  for (int k : {1, 2, 3, 4, 7}) ExpectSame("roce-incast series", s, serial, k);
  ExpectSame("roce-incast series", s, serial, 4, RandomPlacement(s, 4, 15));
  ExpectSame("roce-incast series", s, serial, 3, RandomPlacement(s, 3, 16), /*jitter=*/5);
}

TEST(Distributed, SeriesOnInfinibandCreditsAreTheSerialSeries) {
  // Credit-based InfiniBand on the fat tree, adaptive routing: port and flow
  // series every 1 us, flows' goodput read at their destinations.
  const Scenario s =
      scenario::LoadScenarioFile(Path("scenarios/ib-fat-tree.json"),
                                 {"traffic.0.bytes=64KiB", "stop_time=5ms",
                                  "outputs.series.interval=1us", "outputs.series.flows=all"});
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.csv.find("goodput_gbps"), std::string::npos);
  ExpectSame("ib-fat-tree series", s, serial, 3);
  ExpectSame("ib-fat-tree series", s, serial, 2, RandomPlacement(s, 2, 19));
}

TEST(Distributed, SeriesUntilTheTimeLimitAreTheSerialSeries) {
  // A stalled NIC keeps the run going to stop_time: samples to the last one
  // at stop_time, the sampler's last event included.
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      With(kSmallIncast,
           {"faults.nic_stall.host=0", "faults.nic_stall.at=10us", "faults.nic_stall.until=300us",
            "stop_time=200us", "outputs.series.interval=10us", "outputs.series.flows=none"}));
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.text.find("time limit"), std::string::npos) << serial.text;
  for (int k : {2, 3}) ExpectSame("roce-incast series to stop_time", s, serial, k);
}

TEST(Distributed, SeriesMemoryCapEndsEveryRankWithTheSerialError) {
  // The cap on series values held (not a field; lowered here) is reached at
  // the same sample on every rank: each ends with the serial run's InputError.
  Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      With(kSmallIncast, {"stop_time=1ms", "outputs.series.interval=1us",
                          "outputs.series.ports=leaf0->host0", "outputs.series.flows=none"}));
  s.series.max_values = 20;  // 4 series x 5 samples
  std::string serial_error;
  try {
    (void)run::RunScenario(s);
  } catch (const InputError& e) {
    serial_error = e.what();
  }
  ASSERT_NE(serial_error.find("got 4 series x 6 samples by 6us"), std::string::npos)
      << serial_error;
  for (int k : {2, 3}) {
    std::mutex m;
    std::vector<std::string> errors;
    EXPECT_THROW(parallel::RunLoopback(k,
                                       [&](parallel::Comm& comm) {
                                         try {
                                           (void)distrun::Run(s, comm, {});
                                         } catch (const InputError& e) {
                                           std::lock_guard<std::mutex> lock(m);
                                           errors.push_back(e.what());
                                           throw;
                                         }
                                       }),
                 std::exception);
    ASSERT_EQ(errors.size(), static_cast<size_t>(k)) << "every rank ends with the error";
    for (const std::string& e : errors) EXPECT_EQ(e, serial_error);
  }
}

TEST(RefE9_Distributed, PfcDeadlockRingIsNamedAsInTheSerialRun) {
  // Reference experiment E9, run 1 (scenarios/experiments/E9-pfc-deadlock.yaml):
  // the four-switch PFC ring deadlocks; the detector, fed on rank 0 with every
  // rank's PFC facts in the serial order, confirms the cycle at the serial
  // time and every rank stops there (deadlock.stop auto = yes).
  const Scenario s =
      scenario::LoadScenarioFile(Path("scenarios/experiments/E9-pfc-deadlock.yaml"), {});
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.text.find("deadlock"), std::string::npos) << serial.text;
  ASSERT_NE(serial.json.find("spine1:leaf1:3"), std::string::npos) << serial.json;
  for (int k : {2, 3, 4}) ExpectSame("E9 deadlock ring", s, serial, k);
  ExpectSame("E9 deadlock ring", s, serial, 3, RandomPlacement(s, 3, 17));
  // A sample due at the confirmation's instant (1.07192192 ms = 8 x the
  // interval): the serial detector (an earlier entity) stops the run first,
  // so there are 7 samples, distributed too.
  const Scenario with_series = scenario::LoadScenarioFile(
      Path("scenarios/experiments/E9-pfc-deadlock.yaml"),
      {"outputs.series.interval=133.99024us", "outputs.series.flows=none"});
  const Outputs serial_series = Serial(with_series);
  ASSERT_NE(serial_series.text.find("7 samples every 133.99024us"), std::string::npos)
      << serial_series.text;
  ExpectSame("E9 deadlock ring with series", with_series, serial_series, 2);
}

TEST(RefE9_Distributed, WatchdogBreaksTheRingAndTheDetectorCountsItAsSerial) {
  // E9 run 2 (watchdog timings / 100): deadlock.stop auto = no with the
  // watchdog on, so the run goes on; the watchdog breaks the ring, it forms
  // again and the detector counts both, with series sampled meanwhile. Ends
  // at stop_time (time limit) with the detector's events pending.
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/experiments/E9-pfc-deadlock.yaml"),
      {"fabric.pfc.watchdog.enabled=true", "fabric.pfc.watchdog.poll=1ms",
       "fabric.pfc.watchdog.restore=2ms", "stop_time=8ms", "outputs.series.interval=100us",
       "outputs.series.flows=none"});
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.text.find("2 in this run"), std::string::npos) << serial.text;
  ASSERT_NE(serial.text.find("4 PFC watchdog actions"), std::string::npos) << serial.text;
  // About 7,800 windows, each with a gather of PFC facts: two cases only.
  ExpectSame("E9 watchdog", s, serial, 2);
  ExpectSame("E9 watchdog", s, serial, 3, RandomPlacement(s, 3, 18));
}

namespace dist_peak_test {

// As mpirun runs without --digest: the simulator's probe loop, no digests.
Outputs WithoutDigests(const Scenario& s, int ranks, const std::vector<int32_t>& placement,
                       Stats* st, size_t prune = Options{}.peak_log_prune) {
  Outputs out;
  std::mutex m;
  parallel::RunLoopback(ranks, [&](parallel::Comm& comm) {
    Options opt;
    opt.rank_of_node = placement;
    opt.peak_log_prune = prune;
    Stats stats;
    const report::RunResult r = Run(s, comm, opt, &stats, nullptr);
    if (comm.Rank() == 0) {
      std::lock_guard<std::mutex> lock(m);
      out = {report::RunText(r), report::RunJson(r).dump(1), "", ""};
      *st = stats;
    }
  });
  return out;
}

std::string PeakLine(const std::string& text) {
  const size_t at = text.find("peak packets alive");
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

}  // namespace dist_peak_test

TEST(Distributed, PeakOfPacketsAliveFromTheKeptWindowsIsTheSerialPeak) {
  // docs/parallel.md#the-peak-of-packets-alive: windows whose summed
  // per-rank maxima cannot beat a count already reached are dropped, the
  // rest merged in serial order. The serial peak, text and JSON at 1-7
  // ranks and a random placement, without digests (the probe loop), with
  // both kinds of window present.
  const Scenario s = scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"), kSmallIncast);
  run::RunHooks none;
  const report::RunResult serial_r = run::RunScenario(s, none);
  const std::string serial_text = report::RunText(serial_r);
  const std::string serial_json = report::RunJson(serial_r).dump(1);
  ASSERT_NE(dist_peak_test::PeakLine(serial_text), "") << serial_text;
  for (int k : {1, 2, 3, 4, 7}) {
    for (bool random : {false, true}) {
      if (random && k != 3 && k != 7) continue;
      Stats st;
      const Outputs d = dist_peak_test::WithoutDigests(
          s, k, random ? RandomPlacement(s, k, 30 + k) : std::vector<int32_t>{}, &st);
      std::printf("peak, %d ranks%s: %s; %llu windows dropped, %llu changes merged\n", k,
                  random ? ", random placement" : "", dist_peak_test::PeakLine(d.text).c_str(),
                  static_cast<unsigned long long>(st.peak_windows_dropped),
                  static_cast<unsigned long long>(st.kept_changes));
      EXPECT_EQ(dist_peak_test::PeakLine(d.text), dist_peak_test::PeakLine(serial_text))
          << k << " ranks";
      EXPECT_EQ(d.text, serial_text) << k << " ranks";
      EXPECT_TRUE(d.json == serial_json) << k << " ranks: JSON differs";
      EXPECT_GT(st.kept_changes, 0u) << k << " ranks: nothing merged";
      if (k > 1) {
        // One rank runs the whole run as one window (no cut link).
        EXPECT_GT(st.peak_windows_dropped, 0u) << k << " ranks: no window dropped";
        EXPECT_LT(st.kept_changes * 10, st.events) << k << " ranks: most changes dropped";
        // Pruned as it runs (from 8 changes on, each time the log doubles):
        // the same bytes and merged changes, no more held. (This run's count
        // rises to its peak, so little can be pruned here; on the 1,024-host
        // permutation rank 0 holds 1.08 M changes unpruned: docs/parallel.md.)
        if (random) continue;
        Stats pruned;
        const Outputs p = dist_peak_test::WithoutDigests(s, k, {}, &pruned, 8);
        std::printf(
            "peak, %d ranks, pruned: %s; %llu changes held by rank 0 at the end, %llu "
            "unpruned\n",
            k, dist_peak_test::PeakLine(p.text).c_str(),
            static_cast<unsigned long long>(pruned.held_changes),
            static_cast<unsigned long long>(st.held_changes));
        EXPECT_EQ(p.text, serial_text) << k << " ranks, pruned";
        EXPECT_TRUE(p.json == serial_json) << k << " ranks, pruned: JSON differs";
        EXPECT_EQ(pruned.kept_changes, st.kept_changes) << k << " ranks, pruned";
        EXPECT_LE(pruned.held_changes, st.held_changes) << k << " ranks";
      }
    }
  }
}

TEST(Distributed, FlowsDoneStopWaitsForAVerdictOnlyNearTheEnd) {
  // The stop rule's lower bound (remaining bytes at each destination over
  // its link rate) lets most windows run on every rank at once with one
  // reduction; windows that may hold the last completion wait for the
  // verdict. Same outputs; a bound that proved wrong would throw.
  const Scenario s = scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"), kSmallIncast);
  ASSERT_TRUE(s.net.stop_when_flows_done);
  const Outputs serial = Serial(s);
  ASSERT_NE(serial.text.find("flows done"), std::string::npos) << serial.text;
  for (int k : {2, 3}) {
    Stats st;
    const Outputs d = Distributed(s, k, {}, 0, &st);
    std::printf("stop verdicts, %d ranks: %s\n", k, StatsLine(st).c_str());
    EXPECT_EQ(d.text, serial.text);
    EXPECT_TRUE(d.json == serial.json);
    EXPECT_GT(st.careful, 0u) << "the last window holds the stop";
    EXPECT_LT(st.careful * 4, st.windows) << "most windows need no verdict";
    // One synchronisation per window (the reduction rides in the batches at
    // 2-3 ranks of a leaf-spine), plus the start and the verdicts.
    EXPECT_LE(st.reductions + st.exchanges, st.windows + 2 + st.careful + 1);
  }
}

namespace dist_down_test {
// Links out of leaf0 (the incast target's leaf, whose uplinks carry the
// permutation out and the incast in) to spines, under the placement (empty:
// the partitioner's): the first `n` whose ends are on different ranks
// (`cut`) or on one rank.
std::vector<std::string> Leaf0Links(const Scenario& s, int ranks,
                                    const std::vector<int32_t>& placement, bool cut, size_t n) {
  const topology::Topology t = scenario::BuildTopology(s);
  std::vector<int32_t> rank = placement;
  if (rank.empty())
    rank = parallel::PartitionFabric(t, s.clos.gpus_per_node, ranks, {"t", 0, "r"}).rank_of_node;
  const std::vector<std::string> names = scenario::LinkNames(t);
  std::vector<std::string> out;
  for (uint32_t l = 0; l < t.links.size() && out.size() < n; ++l) {
    const topology::Link& k = t.links[l];
    if (t.nodes[k.a].name != "leaf0" || t.nodes[k.b].name.rfind("spine", 0) != 0) continue;
    if ((rank[k.a] != rank[k.b]) == cut) out.push_back(names[l]);
  }
  return out;
}

// Link 1 (if any) goes down at 4 us for 100 ns, less than a window (the
// 150 ns lookahead); the others at 3 us, while the permutation and the
// incast cross them, and come back at 9 us. The control plane reroutes 2 us
// after each change.
Scenario WithLinksDown(const std::vector<std::string>& links,
                       const std::string& file = "scenarios/roce-incast.yaml",
                       std::vector<std::string> set = With(kSmallIncast,
                                                           {"faults.reroute.ethernet=2us"})) {
  for (size_t i = 0; i < links.size(); ++i) {
    set.push_back(fmt::format("faults.link_down.{}.link={}", i, links[i]));
    set.push_back(fmt::format("faults.link_down.{}.at={}", i, i == 1 ? "4us" : "3us"));
    set.push_back(fmt::format("faults.link_down.{}.up_at={}", i, i == 1 ? "4100ns" : "9us"));
  }
  return scenario::LoadScenarioFile(Path(file), set);
}

int64_t SerialDrops(const Outputs& serial) {
  return nlohmann::json::parse(serial.json).at("drops").at("total").get<int64_t>();
}
}  // namespace dist_down_test

namespace dist_qp_test {
// RC with no retries and every third data frame lost on each of `links`
// (link directions): a queue pair whose frames cross one fails at its first
// NAK or timeout, and the serial run stops at that event.
Scenario QpFailing(const std::vector<std::string>& links, std::vector<std::string> set = {}) {
  set = With(With(kSmallIncast, {"transport.kind=rc", "transport.retry_cnt=0"}), set);
  for (size_t i = 0; i < links.size(); ++i) {
    set.push_back(fmt::format("faults.link_loss.{}.link={}", i, links[i]));
    set.push_back(fmt::format("faults.link_loss.{}.every=3", i));
  }
  return scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"), set);
}

// The serial report of a QP failure: its QP FAILED line.
std::string QpFailedLine(const Outputs& o) {
  const size_t at = o.text.find("QP FAILED");
  return at == std::string::npos ? std::string() : o.text.substr(at, o.text.find('\n', at) - at);
}

// Frames are in flight when the run stops at the failure (not delivered).
Stats ExpectQpFailSame(const std::string& what, const Scenario& s, const Outputs& serial, int ranks,
                       const std::vector<int32_t>& placement = {}, uint64_t jitter = 0) {
  Stats st;
  const Outputs d = Distributed(s, ranks, placement, jitter, &st);
  std::printf("%s, %d ranks%s%s (QP of rank %d failed): %s\n", what.c_str(), ranks,
              placement.empty() ? "" : ", random placement", jitter ? ", jitter" : "",
              st.failure_rank, StatsLine(st).c_str());
  EXPECT_EQ(QpFailedLine(d), QpFailedLine(serial)) << what << " " << ranks << " ranks";
  EXPECT_EQ(d.text, serial.text) << what << " " << ranks << " ranks";
  EXPECT_TRUE(d.json == serial.json) << what << " " << ranks << " ranks: JSON differs";
  EXPECT_TRUE(d.digests == serial.digests) << what << " " << ranks << " ranks: digests differ";
  EXPECT_GE(st.failure_rerun_ps, 0) << what << " " << ranks << " ranks: not re-run to a failure";
  EXPECT_GE(st.failure_rank, 0);
  EXPECT_NE(StatsLine(st).find("re-run from the start to the QP failure at"), std::string::npos);
  EXPECT_GT(st.sent, 0u) << what << " " << ranks << " ranks: no event crossed ranks";
  EXPECT_GE(st.sent, st.received);
  EXPECT_GT(st.ties, 0u) << what << " " << ranks << " ranks: no same-time tie across ranks";
  return st;
}
}  // namespace dist_qp_test

// A QP out of retries stops the serial run at its event (docs/parallel.md,
// "A QP failure"): distributed, a first pass finds the earliest failure over
// the ranks and a second runs to exactly it, so the report (its QP FAILED
// line, "QP failed"), the JSON and the digests are the serial run's. The
// loss is on a link out of leaf5 (hosts 80-95), so the failing QP's source
// is not on rank 0 at every rank count and placement.
TEST(Distributed, AQpFailureStopsEveryRankAtTheSerialEvent) {
  using namespace dist_qp_test;
  const Scenario s = QpFailing({"leaf5->spine1#0"});
  const Outputs serial = Serial(s);
  ASSERT_NE(QpFailedLine(serial), "") << serial.text;
  ASSERT_NE(serial.text.find("QP failed"), std::string::npos) << serial.text;
  std::printf("serial: %s\n", QpFailedLine(serial).c_str());
  std::set<int> failing;
  for (int k : {2, 3, 4}) failing.insert(ExpectQpFailSame("qp failure", s, serial, k).failure_rank);
  for (int k : {2, 3})
    failing.insert(
        ExpectQpFailSame("qp failure", s, serial, k, RandomPlacement(s, k, 40 + k)).failure_rank);
  failing.insert(ExpectQpFailSame("qp failure", s, serial, 2, {}, /*jitter=*/31).failure_rank);
  EXPECT_TRUE(failing.size() > 1 || !failing.contains(0))
      << "the failing QP was on rank 0 in every case";
}

// Two QPs that fail in one window on different ranks (at 2 ranks: hosts
// 0-63 on rank 0, 64-127 on rank 1): every third frame lost on leaf3's link
// to spine1 fails QP 59 (host 59) at 3.76128 us; on leaf5's to spine0, QP 91
// (host 91) at 3.75784 us, 3.44 ns earlier; on leaf5's to spine2, QP 92 at
// the same 3.76128 us, where the serial order is the events' keys. Each pair
// runs to the serial failure, naming its QP and not the other.
TEST(Distributed, OfTwoQpFailuresInOneWindowTheSerialOneIsNamed) {
  using namespace dist_qp_test;
  auto failed_qp = [](const Outputs& o) {
    const std::string line = QpFailedLine(o);
    return line.substr(0, line.find(" (host"));
  };
  auto failed_at = [](const Scenario& s) {
    run::RunHooks hooks;
    const report::RunResult r = run::RunScenario(s, hooks);
    EXPECT_EQ(r.stop_reason, "QP failed");
    return r.sim_time.ps();
  };
  const std::string a = "leaf3->spine1#0";
  for (const std::string& b : {std::string("leaf5->spine0#1"), std::string("leaf5->spine2#1")}) {
    // Alone, each loss fails its QP, on its own rank, in one window with the other.
    const Scenario sa = QpFailing({a}), sb = QpFailing({b});
    const int64_t ta = failed_at(sa), tb = failed_at(sb);
    EXPECT_LT(std::abs(ta - tb), 150'000) << "not in one window of the 150 ns lookahead";
    EXPECT_EQ(ExpectQpFailSame("qp failure " + a, sa, Serial(sa), 2).failure_rank, 0);
    EXPECT_EQ(ExpectQpFailSame("qp failure " + b, sb, Serial(sb), 2).failure_rank, 1);
    const Scenario both = QpFailing({a, b});
    const Outputs serial = Serial(both);
    std::printf("serial, both: %s\n", QpFailedLine(serial).c_str());
    EXPECT_EQ(failed_qp(serial), failed_qp(ta <= tb ? Serial(sa) : Serial(sb)));
    for (int k : {2, 3}) ExpectQpFailSame("two qp failures " + b, both, serial, k);
    for (uint64_t seed : {51, 52})
      ExpectQpFailSame("two qp failures " + b, both, serial, 2, RandomPlacement(both, 2, seed));
  }
}

TEST(Distributed, CutLinkGoingDownLosesItsFramesInFlightAsSerial) {
  // faults.link_down on links between ranks (docs/parallel.md, "A cut link
  // going down"): the frames on the wire at the down are lost, those the
  // receiver's rank holds and those still on their way to it, counted by the
  // sender's rank at the serial instant; the reroutes run on each switch's
  // rank. The report, JSON and digests are the serial run's.
  uint64_t late = 0;
  struct Case {
    int ranks;
    uint64_t seed;  // 0: the partitioner's placement
  };
  for (const Case c : {Case{2, 0}, Case{3, 0}, Case{4, 0}, Case{3, 21}}) {
    const Scenario base = scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"));
    const std::vector<int32_t> placement =
        c.seed != 0 ? RandomPlacement(base, c.ranks, c.seed) : std::vector<int32_t>{};
    const std::vector<std::string> links =
        dist_down_test::Leaf0Links(base, c.ranks, placement, /*cut=*/true, 2);
    ASSERT_EQ(links.size(), 2u) << c.ranks << " ranks: leaf0 has no two cut spine links";
    // The random placement with port series too (queues, utilization,
    // PAUSE frames sampled by their owners every 2 us, across the downs).
    const Scenario s = dist_down_test::WithLinksDown(
        links, "scenarios/roce-incast.yaml",
        With(kSmallIncast,
             c.seed != 0 ? std::vector<std::string>{"faults.reroute.ethernet=2us", "stop_time=1ms",
                                                    "outputs.series.interval=2us",
                                                    "outputs.series.ports=busy"}
                         : std::vector<std::string>{"faults.reroute.ethernet=2us"}));
    const Outputs serial = Serial(s);
    if (c.seed != 0) {
      ASSERT_NE(serial.csv.find("queue_bytes:leaf0->spine"), std::string::npos);
    }
    // The down lost frames in the serial run (else this tests little).
    ASSERT_GT(dist_down_test::SerialDrops(serial), 0) << serial.text;
    if (c.seed == 0 && c.ranks == 2) {
      ExpectSame("cut link down", s, serial, 1);
      ExpectSame("cut link down", s, serial, 2, {}, /*jitter=*/31);  // batches in random order
    }
    Stats st;
    const Outputs d = Distributed(s, c.ranks, placement, 0, &st);
    std::printf(
        "cut links %s, %s down, %d ranks%s: %llu frames lost in flight on cut links "
        "(%llu reached the receiver after its down); %s\n",
        links[0].c_str(), links[1].c_str(), c.ranks, c.seed ? ", random placement" : "",
        static_cast<unsigned long long>(st.cut_frames_lost),
        static_cast<unsigned long long>(st.late_frames_lost), StatsLine(st).c_str());
    EXPECT_EQ(d.text, serial.text) << c.ranks << " ranks";
    EXPECT_TRUE(d.json == serial.json) << c.ranks << " ranks: JSON differs";
    EXPECT_TRUE(d.digests == serial.digests) << c.ranks << " ranks: digests differ";
    EXPECT_TRUE(d.csv == serial.csv) << c.ranks << " ranks: series CSV differs";
    EXPECT_GT(st.sent, 0u);
    EXPECT_GT(st.ties, 0u);
    EXPECT_GT(st.cut_frames_lost, 0u) << c.ranks << " ranks: the cut link lost nothing in flight";
    late += st.late_frames_lost;
  }
  EXPECT_GT(late, 0u) << "no frame was sent in the window of a down and arrived after it";
}

TEST(Distributed, InfinibandCutLinkGoingDownAndUpIsTheSerialRun) {
  // Credits: the link coming back re-initialises flow control on both
  // ends (each end's own event, on its rank): FCPs of the old
  // initialisation still crossing are void, and the senders wait for the
  // new ones. Adaptive routing skips the dead next hop; reroutes after 2 us.
  struct Case {
    int ranks;
    uint64_t seed;
  };
  for (const Case c : {Case{3, 0}, Case{2, 19}}) {
    const Scenario base = scenario::LoadScenarioFile(Path("scenarios/ib-fat-tree.json"));
    const std::vector<int32_t> placement =
        c.seed != 0 ? RandomPlacement(base, c.ranks, c.seed) : std::vector<int32_t>{};
    const std::vector<std::string> links =
        dist_down_test::Leaf0Links(base, c.ranks, placement, /*cut=*/true, 2);
    ASSERT_EQ(links.size(), 2u) << c.ranks << " ranks: leaf0 has no two cut spine links";
    const Scenario s = dist_down_test::WithLinksDown(
        links, "scenarios/ib-fat-tree.json", {"traffic.0.bytes=64KiB", "faults.reroute.ib=2us"});
    const Outputs serial = Serial(s);
    ASSERT_GT(dist_down_test::SerialDrops(serial), 0) << serial.text;
    Stats st;
    const Outputs d = Distributed(s, c.ranks, placement, 0, &st);
    std::printf("ib cut links %s, %s down, %d ranks%s: %llu frames lost in flight; %s\n",
                links[0].c_str(), links[1].c_str(), c.ranks, c.seed ? ", random placement" : "",
                static_cast<unsigned long long>(st.cut_frames_lost), StatsLine(st).c_str());
    EXPECT_EQ(d.text, serial.text) << c.ranks << " ranks";
    EXPECT_TRUE(d.json == serial.json) << c.ranks << " ranks: JSON differs";
    EXPECT_TRUE(d.digests == serial.digests) << c.ranks << " ranks: digests differ";
    EXPECT_GT(st.sent, 0u);
    EXPECT_GT(st.ties, 0u);
    EXPECT_GT(st.cut_frames_lost, 0u) << c.ranks << " ranks: the cut link lost nothing in flight";
  }
}

TEST(Distributed, LinkInsideARankGoingDownIsTheSerialRun) {
  // Links whose ends are on one rank (every link of leaf0 to the spines on
  // its rank, so that some carry traffic) go down and up as in a serial run:
  // their wires are on that rank. The reroutes still run on every switch's
  // rank.
  for (int k : {2, 3, 4}) {
    const Scenario base = scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"));
    const std::vector<std::string> links =
        dist_down_test::Leaf0Links(base, k, {}, /*cut=*/false, 16);
    ASSERT_GE(links.size(), 1u) << k << " ranks: leaf0 has no spine link on its own rank";
    const Scenario s = dist_down_test::WithLinksDown(links);
    const Outputs serial = Serial(s);
    ASSERT_GT(dist_down_test::SerialDrops(serial), 0) << serial.text;
    ExpectSame("link " + links[0] + " down inside a rank", s, serial, k);
  }
}

// More ranks than partition units: one clear error (docs/parallel.md).
TEST(Distributed, RefusesMoreRanksThanPartitionUnits) {
  EXPECT_THROW(CheckRanks(scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml")), 13),
               InputError);  // 12 units
  EXPECT_NO_THROW(CheckRanks(scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml")), 12));
}

namespace {
namespace dist_capture_test {

// Other tenants' bursts on every host (docs/model/shared-cloud.md) over the
// small incast, and the files of outputs.pcap and outputs.trace: a run's
// report, digests and both files, serial and over the loopback.
struct Run {
  Outputs out;
  std::string pcap, trace;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Scratch(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("lossless-distcap-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// `s` with its capture outputs (if any) at scratch paths of `tag`.
Scenario At(Scenario s, const std::string& tag) {
  if (!s.capture.pcap.empty()) s.capture.pcap = Scratch(tag + ".pcapng");
  if (!s.capture.trace.empty()) s.capture.trace = Scratch(tag + ".json");
  return s;
}

Run Files(const Scenario& s, Outputs out) {
  Run r{std::move(out), {}, {}};
  if (!s.capture.pcap.empty()) r.pcap = Slurp(s.capture.pcap);
  if (!s.capture.trace.empty()) r.trace = Slurp(s.capture.trace);
  return r;
}

// The sending node of each port (port 2l sends from link l's a end).
std::vector<uint32_t> PortSenders(const Scenario& s) {
  const topology::Topology t = scenario::BuildTopology(s);
  std::vector<uint32_t> n(2 * t.links.size());
  for (size_t p = 0; p < n.size(); ++p) n[p] = p % 2 ? t.links[p / 2].b : t.links[p / 2].a;
  return n;
}

// The ports of a pcapng file's enhanced packet blocks (interface i is the
// i-th port of outputs.pcap_ports).
std::set<uint32_t> PcapPorts(const Scenario& s, const std::string& f) {
  const std::vector<uint32_t> iface = scenario::SelectPorts(
      s.capture.pcap_ports, s.capture.pcap_ports_where, scenario::BuildTopology(s));
  std::set<uint32_t> ports;
  size_t at = 0;
  while (at + 12 <= f.size()) {
    uint32_t type = 0, len = 0;
    std::memcpy(&type, f.data() + at, 4);
    std::memcpy(&len, f.data() + at + 4, 4);
    if (len < 12) break;
    if (type == 6) {
      uint32_t i = 0;
      std::memcpy(&i, f.data() + at + 8, 4);
      ports.insert(iface.at(i));
    }
    at += len;
  }
  return ports;
}

// The ports (pid 10 + port) with events other than metadata in a timeline.
std::set<uint32_t> TracePorts(const std::string& text) {
  std::set<uint32_t> ports;
  const nlohmann::json j = nlohmann::json::parse(text);
  for (const nlohmann::json& e : j.at("traceEvents")) {
    const int pid = e.at("pid").get<int>();
    if (e.at("ph") != "M" && pid >= 10) ports.insert(static_cast<uint32_t>(pid - 10));
  }
  return ports;
}

// How many ranks own the ports in `ports` under `placement` (the partitioner's
// when empty).
size_t RanksOf(const Scenario& s, const std::set<uint32_t>& ports, int ranks,
               std::vector<int32_t> placement) {
  if (placement.empty()) {
    const topology::Topology t = scenario::BuildTopology(s);
    placement =
        parallel::PartitionFabric(t, s.clos.gpus_per_node, ranks, {"t", 0, "r"}).rank_of_node;
  }
  const std::vector<uint32_t> sender = PortSenders(s);
  std::set<int32_t> owners;
  for (uint32_t p : ports) owners.insert(placement[sender[p]]);
  return owners.size();
}

void ExpectSameFiles(const std::string& what, const Scenario& base, const Run& serial, int ranks,
                     const std::vector<int32_t>& placement = {}, uint64_t jitter = 0) {
  const Scenario s = At(base, "dist" + std::to_string(ranks));
  Stats st;
  const Run d = Files(s, Distributed(s, ranks, placement, jitter, &st));
  std::printf("%s, %d ranks%s%s: %zu pcap bytes, %zu trace bytes; %s\n", what.c_str(), ranks,
              placement.empty() ? "" : ", random placement", jitter ? ", jitter" : "",
              d.pcap.size(), d.trace.size(), StatsLine(st).c_str());
  EXPECT_EQ(d.out.text, serial.out.text) << what << " " << ranks << " ranks";
  EXPECT_TRUE(d.out.json == serial.out.json) << what << " " << ranks << " ranks: JSON differs";
  EXPECT_TRUE(d.out.digests == serial.out.digests) << what << " " << ranks << " ranks: digests";
  if (d.out.digests != serial.out.digests) {
    std::istringstream a(d.out.digests), b(serial.out.digests);
    for (std::string la, lb; std::getline(a, la) && std::getline(b, lb);)
      if (la != lb) std::printf("digest %s\n serial %s\n", la.c_str(), lb.c_str());
  }
  EXPECT_TRUE(d.pcap == serial.pcap)
      << what << " " << ranks << " ranks: pcapng differs (" << d.pcap.size() << " bytes, serial "
      << serial.pcap.size() << ")";
  EXPECT_TRUE(d.trace == serial.trace)
      << what << " " << ranks << " ranks: trace differs (" << d.trace.size() << " bytes, serial "
      << serial.trace.size() << ")";
  if (ranks > 1) {
    EXPECT_GT(st.sent, 0u) << what << " " << ranks << " ranks: no event crossed ranks";
    EXPECT_GT(st.ties, 0u) << what << " " << ranks << " ranks: no same-time tie across ranks";
    // The files hold what more than one rank's ports did.
    if (!serial.pcap.empty()) {
      EXPECT_GT(RanksOf(s, PcapPorts(s, d.pcap), ranks, placement), 1u) << what;
    }
    if (!serial.trace.empty()) {
      EXPECT_GT(RanksOf(s, TracePorts(d.trace), ranks, placement), 1u) << what;
    }
  }
}

// `shown`: what the serial timeline must hold (so that the comparison covers it).
void AllFiles(const std::string& what, const Scenario& base,
              const std::vector<std::string>& shown = {}) {
  const Scenario s = At(base, "serial");
  const Run serial = Files(s, dist_test::Serial(s));
  ASSERT_TRUE(base.capture.pcap.empty() || !serial.pcap.empty());
  for (const std::string& x : shown)
    ASSERT_NE(serial.trace.find(x), std::string::npos) << "no " << x << " in the timeline";
  for (int k : {1, 2, 3, 4}) ExpectSameFiles(what, base, serial, k);
  // Batches landing in random orders (the loopback's jitter) as well.
  ExpectSameFiles(what, base, serial, 3, RandomPlacement(base, 3, 31), /*jitter=*/41);
}

}  // namespace dist_capture_test
}  // namespace

// Other tenants (tenants.load) on the leaf-spine: every rank runs every
// host's arrivals (the same streams, queue pairs and keys), the owner of the
// host's NIC posts; their bursts cross the spines like the job's.
TEST(Distributed, OtherTenantsBurstsAreTheSerialRun) {
  const Scenario quiet =
      scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"), kSmallIncast);
  const Scenario s =
      scenario::LoadScenarioFile(Path("scenarios/roce-incast.yaml"),
                                 With(kSmallIncast, {"tenants.load=0.3", "tenants.burst=16KiB"}));
  const Outputs serial = Serial(s);
  // The tenants posted: more packets than the job alone, and their hosts'
  // arrival events in the digests.
  const auto with = nlohmann::json::parse(serial.json);
  const auto without = nlohmann::json::parse(Serial(quiet).json);
  const int64_t packets = with.at("totals").at("packets").get<int64_t>();
  const int64_t alone = without.at("totals").at("packets").get<int64_t>();
  std::printf("tenants: %lld packets with, %lld without\n", static_cast<long long>(packets),
              static_cast<long long>(alone));
  EXPECT_GT(packets, alone);
  for (int k : {1, 2, 3, 4}) ExpectSame("tenants", s, serial, k, {}, 0, /*delivered=*/false);
  ExpectSame("tenants", s, serial, 3, RandomPlacement(s, 3, 23), 0, /*delivered=*/false);
}

// Ports of the incast target, of hosts and uplinks on other leaves and of
// spines: on every rank at 2-4 ranks (and the packet capture sees every RC
// frame at its source whatever it keeps: where messages end).
const std::string kSomePorts =
    "host0->leaf0,leaf0->host0,host3->leaf0,leaf0->host3,host17->leaf1,leaf1->host17,"
    "host40->leaf2,leaf2->host40,host100->leaf6,leaf6->host100,host120->leaf7,leaf7->host120,"
    "leaf0->spine0,spine0->leaf0,leaf3->spine2,spine2->leaf3,leaf5->spine1,spine1->leaf5,"
    "leaf7->spine3,spine3->leaf7";

// outputs.pcap and outputs.trace: each rank logs what its ports send (the
// queue and marks of the moment), rank 0 replays the logs in the serial
// order; with DCQCN (marks, CNPs in both files) and PFC (XOFF at 16 KB:
// PAUSE frames, paused slices), and other tenants, whose queue pairs grow at
// their source (the timeline's flow slices).
TEST(Distributed, PcapAndTraceFilesAreTheSerialFiles) {
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      {"traffic.0.bytes=32KiB", "traffic.1.bytes=64KiB", "traffic.1.start=1us",
       "fabric.cc=dcqcn-paper", "fabric.pfc.xoff=16KB", "tenants.load=0.1", "tenants.burst=8KiB",
       "outputs.pcap=x.pcapng", "outputs.pcap_snaplen=96", "outputs.trace=x.json",
       "outputs.pcap_ports=" + kSomePorts, "outputs.trace_ports=" + kSomePorts});
  dist_capture_test::AllFiles(
      "pcap and trace", s,
      {"\"ECN mark\"", "\"CNP\"", "\"PFC frame\"", "\"paused\"", "\"queue prio 3\""});
}

// The limits cut the same records: rank 0 applies them as it replays.
TEST(Distributed, CaptureLimitsCutTheSerialRecords) {
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      {"traffic.0.bytes=32KiB", "traffic.1.bytes=64KiB", "traffic.1.start=1us",
       "outputs.pcap=x.pcapng", "outputs.pcap_snaplen=96", "outputs.pcap_limit=200KiB",
       "outputs.trace=x.json", "outputs.trace_limit=24KiB",
       "outputs.trace_ports=leaf0->spine0,spine0->leaf0,leaf7->spine3,spine3->leaf7,"
       "host1->leaf0,leaf0->host0,leaf6->host100"});
  const Scenario at = dist_capture_test::At(s, "cut-serial");
  const dist_capture_test::Run serial = dist_capture_test::Files(at, Serial(at));
  ASSERT_NE(serial.out.text.find("outputs.pcap: the capture reached"), std::string::npos);
  ASSERT_NE(serial.out.text.find("outputs.trace: the timeline reached"), std::string::npos);
  dist_capture_test::ExpectSameFiles("capture limits", s, serial, 3);
}

namespace dist_bound_test {
// Loopback run with given options; rank 0's Stats and outputs.
Outputs RunWith(const Scenario& s, int ranks, const Options& opt, Stats* st) {
  Outputs out;
  std::mutex m;
  parallel::RunLoopback(ranks, [&](parallel::Comm& comm) {
    Stats stats;
    const report::RunResult r = Run(s, comm, opt, &stats);
    if (comm.Rank() == 0) {
      std::lock_guard<std::mutex> lock(m);
      out = {report::RunText(r), report::RunJson(r).dump(1), "", report::SeriesCsv(r.series)};
      *st = stats;
    }
  });
  return out;
}
}  // namespace dist_bound_test

TEST(Distributed, AReusedStopBoundGivesTheSameRunWithFewerComputations) {
  // The stop rule's lower bound is kept while it lies more than 64 windows
  // ahead (a bound stays a bound); recomputing it every window walked every
  // destination host each window (4 % of a 1,024-host run's instructions).
  // Same outputs and the same windows waiting for a verdict, with the bound
  // computed far less often. Also: the CPU figures, now read twice per
  // window, are positive and the critical path is at most the total work.
  const Scenario s = scenario::LoadScenarioFile(
      Path("scenarios/roce-incast.yaml"),
      {"traffic.0.bytes=1MiB", "traffic.1.bytes=512KiB", "traffic.1.start=2us"});
  const Outputs serial = Serial(s);
  for (int k : {3}) {
    Options fresh;
    fresh.reuse_stop_bound = false;
    Stats st_fresh, st_reused;
    const Outputs a = dist_bound_test::RunWith(s, k, fresh, &st_fresh);
    const Outputs b = dist_bound_test::RunWith(s, k, Options{}, &st_reused);
    std::printf(
        "stop bound, %d ranks: %llu windows; bound computed %llu times fresh, %llu "
        "times reused; %llu and %llu windows waiting for a verdict\n",
        k, static_cast<unsigned long long>(st_reused.windows),
        static_cast<unsigned long long>(st_fresh.stop_bounds),
        static_cast<unsigned long long>(st_reused.stop_bounds),
        static_cast<unsigned long long>(st_fresh.careful),
        static_cast<unsigned long long>(st_reused.careful));
    EXPECT_EQ(a.text, serial.text) << k << " ranks";
    EXPECT_EQ(b.text, serial.text) << k << " ranks";
    EXPECT_TRUE(b.json == serial.json) << k << " ranks: JSON differs";
    EXPECT_EQ(st_reused.windows, st_fresh.windows);
    EXPECT_EQ(st_reused.careful, st_fresh.careful) << k << " ranks";
    EXPECT_GT(st_fresh.stop_bounds, st_fresh.windows / 2) << "every window holding flows";
    EXPECT_LT(st_reused.stop_bounds * 4, st_fresh.stop_bounds) << k << " ranks";
    EXPECT_GT(st_reused.cpu_s, 0.0);
    EXPECT_GT(st_reused.critical_cpu_s, 0.0);
    EXPECT_LE(st_reused.critical_cpu_s, st_reused.cpu_s * (1 + 1e-9));
  }
}

TEST(Distributed, ZeroRunsPackAndUnpackToTheSameBytes) {
  // The gathered results cross ranks with runs of 16+ zero bytes packed.
  std::vector<std::string> cases = {"",
                                    std::string(1, '\0'),
                                    std::string(15, '\0'),
                                    std::string(16, '\0'),
                                    std::string(1000, '\0'),
                                    "abc",
                                    std::string("a\0b", 3)};
  sim::Rng rng(17, 1, 2);
  for (int c = 0; c < 40; ++c) {
    // Runs of zeros (0-40 long) between runs of other bytes (some with zeros).
    std::string x;
    const int parts = static_cast<int>(rng.NextU64() % 20);
    for (int p = 0; p < parts; ++p) {
      x.append(rng.NextU64() % 41, '\0');
      const int lit = static_cast<int>(rng.NextU64() % 30);
      for (int i = 0; i < lit; ++i) x.push_back(static_cast<char>(rng.NextU64() % 3));
    }
    cases.push_back(x);
  }
  size_t packed_long = 0;
  for (const std::string& x : cases) {
    const std::string p = PackZeroRuns(x);
    EXPECT_EQ(UnpackZeroRuns(p), x) << x.size() << " bytes";
    if (x.size() == 1000) packed_long = p.size();
  }
  EXPECT_LT(packed_long, 40u) << "1,000 zeros pack to a count";
  // Malformed input: one clear exception, never a wrong result.
  const std::string good = PackZeroRuns(std::string("xyz") + std::string(100, '\0') + "w");
  EXPECT_THROW(UnpackZeroRuns(good.substr(0, good.size() - 3)), std::runtime_error);
  std::string longer = good;
  longer[0] = 50;  // claims fewer bytes than it holds
  EXPECT_THROW(UnpackZeroRuns(longer), std::runtime_error);
  EXPECT_THROW(UnpackZeroRuns("abc"), std::runtime_error);
}

}  // namespace lossless::distrun
