// `lossless perf` over ranks (distrun/perf.hpp, docs/perf.md "Over MPI
// ranks"): over the in-process loopback, 1, 2, 3, 4 ranks and random
// placements of the partition units give the serial sweep's nccl-tests text
// and PerfResult JSON byte for byte (and its event and packet-hop counts),
// for Ring and Tree all_reduce on
// InfiniBand, Ring on RoCE with DCQCN, alltoall with pause frames and
// sendrecv. Each case prints its cross-rank events and same-time ties and
// requires both above zero.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "distrun/perf.hpp"
#include "parallel/loopback.hpp"
#include "parallel/partition.hpp"
#include "perf/options.hpp"
#include "perf/result.hpp"
#include "run/perf_run.hpp"
#include "scenario/scenario.hpp"
#include "sim/rng.hpp"
#include "sim/simulator.hpp"

namespace lossless::distrun {
namespace {
namespace dist_perf_test {

using scenario::Scenario;

std::string Path(const std::string& rel) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/" + rel;
}

struct Outputs {
  std::string text, json, failure;
  // Over the links with activity (perf::LinkCounters): pause frames, ECN
  // marks, CNPs (flow and congestion control at work).
  int64_t pauses = 0, marks = 0, cnps = 0;
  // Not in the text or JSON (`--timing` prints them): summed over ranks.
  uint64_t events = 0, packet_hops = 0;
  int64_t tenant_bytes = 0;  // other tenants' bursts posted (PerfResult::tenant_bytes)
  std::string pcap, trace;   // outputs.pcap / outputs.trace files, when set
};

Outputs Of(const perf::PerfResult& r, const std::string& failure) {
  Outputs out;
  out.text = perf::FormatNcclTests(r, run::PerfNotes(r));
  out.json = perf::ToJson(r).dump(1);
  out.failure = failure;
  for (const perf::LinkCounters& l : r.links) {
    out.pauses += l.pause_frames;
    out.marks += l.ecn_marks;
    out.cnps += l.cnps;
  }
  out.events = r.events;
  out.packet_hops = r.packet_hops;
  out.tenant_bytes = r.tenant_bytes;
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `s` with its capture files (if any) at scratch paths of `tag`.
Scenario At(Scenario s, const std::string& tag) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("lossless-distperf-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  if (!s.capture.pcap.empty()) s.capture.pcap = (dir / (tag + ".pcapng")).string();
  if (!s.capture.trace.empty()) s.capture.trace = (dir / (tag + ".json")).string();
  return s;
}

void ReadFiles(const Scenario& s, Outputs& out) {
  if (!s.capture.pcap.empty()) out.pcap = Slurp(s.capture.pcap);
  if (!s.capture.trace.empty()) out.trace = Slurp(s.capture.trace);
}

perf::PerfOptions Options_(std::vector<std::string> args) {
  return perf::ParsePerfArgs(args);
}

// A small fabric of a scenario file (its traffic is ignored by perf).
Scenario Fabric(const std::string& rel, const std::vector<std::string>& sets) {
  return scenario::LoadScenarioFile(Path(rel), sets);
}

// Units shuffled onto ranks by `seed` (every rank keeps one).
std::vector<int32_t> RandomPlacement(const Scenario& s, int ranks, uint64_t seed) {
  const topology::Topology t = scenario::BuildTopology(s);
  const parallel::Partition p =
      parallel::PartitionFabric(t, s.clos.gpus_per_node, ranks, {"t", 0, "r"});
  sim::Rng rng(seed, 3, 4);
  std::vector<int32_t> rank_of_unit(p.units);
  for (uint32_t u = 0; u < p.units; ++u)
    rank_of_unit[u] = u < static_cast<uint32_t>(ranks)
                          ? static_cast<int32_t>(u)
                          : static_cast<int32_t>(rng.NextU64() % ranks);
  for (uint32_t u = p.units; u > 1; --u)
    std::swap(rank_of_unit[u - 1], rank_of_unit[rng.NextU64() % u]);
  std::vector<int32_t> r(t.nodes.size());
  for (size_t n = 0; n < r.size(); ++n) r[n] = rank_of_unit[p.unit_of_node[n]];
  return r;
}

Outputs Serial(const perf::PerfOptions& o, const Scenario& base) {
  const Scenario s = At(base, "serial");
  std::string failure;
  const perf::PerfResult r = run::RunPerf(o, s, "test-fabric", &failure);
  Outputs out = Of(r, failure);
  ReadFiles(s, out);
  return out;
}

Stats ExpectSame(const std::string& what, const perf::PerfOptions& o, const Scenario& base,
                 const Outputs& serial, int ranks, const std::vector<int32_t>& placement = {},
                 uint64_t jitter = 0, bool delivered = true) {
  const Scenario s = At(base, "dist");
  Outputs out;
  Stats st;
  std::mutex m;
  parallel::LoopbackOptions lo;
  lo.jitter_seed = jitter;
  parallel::RunLoopback(
      ranks,
      [&](parallel::Comm& comm) {
        distrun::Options opt;
        opt.rank_of_node = placement;
        Stats stats;
        std::string failure;
        const perf::PerfResult r =
            RunPerf(o, s, "test-fabric", &failure, comm, opt, &stats, /*count_ties=*/true);
        if (comm.Rank() == 0) {
          std::lock_guard<std::mutex> lock(m);
          out = Of(r, failure);
          st = stats;
        }
      },
      lo);
  std::printf("%s, %d ranks%s%s: %s\n", what.c_str(), ranks,
              placement.empty() ? "" : ", random placement", jitter ? ", jitter" : "",
              StatsLine(st).c_str());
  EXPECT_EQ(out.text, serial.text) << what << " " << ranks << " ranks";
  EXPECT_TRUE(out.json == serial.json) << what << " " << ranks << " ranks: JSON differs";
  EXPECT_EQ(out.failure, serial.failure);
  EXPECT_EQ(out.events, serial.events) << what << " " << ranks << " ranks";
  EXPECT_EQ(out.packet_hops, serial.packet_hops) << what << " " << ranks << " ranks";
  EXPECT_EQ(out.tenant_bytes, serial.tenant_bytes) << what << " " << ranks << " ranks";
  ReadFiles(s, out);
  EXPECT_TRUE(out.pcap == serial.pcap)
      << what << " " << ranks << " ranks: pcapng differs (" << out.pcap.size() << " bytes, serial "
      << serial.pcap.size() << ")";
  EXPECT_TRUE(out.trace == serial.trace)
      << what << " " << ranks << " ranks: trace differs (" << out.trace.size() << " bytes, serial "
      << serial.trace.size() << ")";
  if (ranks > 1) {
    EXPECT_GT(st.sent, 0u) << what << " " << ranks << " ranks: no event crossed ranks";
    // A sweep that stops at a QP failure leaves frames in flight.
    if (delivered) {
      EXPECT_EQ(st.sent, st.received);
    } else {
      EXPECT_GE(st.sent, st.received);
    }
    EXPECT_GT(st.ties, 0u) << what << " " << ranks << " ranks: no same-time tie across ranks";
  }
  return st;
}

void AllCounts(const std::string& what, const perf::PerfOptions& o, const Scenario& s,
               const Outputs& serial) {
  for (int k : {1, 2, 3, 4}) ExpectSame(what, o, s, serial, k);
  ExpectSame(what, o, s, serial, 3, RandomPlacement(s, 3, 11), 5);
}

// InfiniBand with credits on a fat tree of 4 pods (radix 4): 8 nodes of 2
// GPUs, one NIC each; a node is two hosts on one edge switch. Cables of
// 400 m (2 us): windows of the lookahead are few enough for a fast test.
Scenario IbFatTree() {
  return Fabric("scenarios/ib-fat-tree.json",
                {"topology.gpus=16", "topology.radix=4", "topology.gpus_per_node=2",
                 "fabric.cable_length=400"});
}
// RoCE with PFC and DCQCN on a leaf-spine of 4 leaves (radix 8), 400 m
// cables; ECN marks from 4 KB of queue, so that a ring's ECMP collisions
// mark and DCQCN acts.
Scenario RoceLeafSpine() {
  return Fabric(
      "scenarios/roce-incast.yaml",
      {"topology.gpus=16", "topology.radix=8", "topology.gpus_per_node=2", "fabric.cc=dcqcn-paper",
       "fabric.cable_length=400", "fabric.ecn.kmin=4KB", "fabric.ecn.kmax=40KB"});
}

TEST(DistributedPerf, IbRingAllReduceIsTheSerialSweep) {
  const Scenario s = IbFatTree();
  const perf::PerfOptions o = Options_({"all_reduce", "-b", "256K", "-e", "256K", "-g", "2",
                                        "--nodes", "8", "-n", "1", "-w", "0", "--algo", "ring"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  AllCounts("ib fat tree, Ring all_reduce", o, s, serial);
}

TEST(DistributedPerf, IbTreeAllReduceIsTheSerialSweep) {
  const Scenario s = IbFatTree();
  const perf::PerfOptions o = Options_({"all_reduce", "-b", "128K", "-e", "128K", "-g", "2",
                                        "--nodes", "8", "-n", "2", "-w", "0", "--algo", "tree"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  AllCounts("ib fat tree, Tree all_reduce", o, s, serial);
}

TEST(DistributedPerf, RoceRingWithDcqcnIsTheSerialSweep) {
  const Scenario s = RoceLeafSpine();
  const perf::PerfOptions o = Options_({"all_reduce", "-b", "1M", "-e", "1M", "-g", "2", "--nodes",
                                        "8", "-n", "1", "-w", "0", "--algo", "ring"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  std::printf("roce Ring: %lld pause frames, %lld ECN marks, %lld CNPs\n",
              static_cast<long long>(serial.pauses), static_cast<long long>(serial.marks),
              static_cast<long long>(serial.cnps));
  EXPECT_GT(serial.marks, 0);
  EXPECT_GT(serial.cnps, 0);
  AllCounts("roce leaf-spine, Ring all_reduce", o, s, serial);
}

TEST(DistributedPerf, RoceAlltoallWithPauseFramesIsTheSerialSweep) {
  // XOFF at 16 KB: alltoall's incasts pause their senders.
  const Scenario s =
      Fabric("scenarios/roce-incast.yaml",
             {"topology.gpus=16", "topology.radix=8", "topology.gpus_per_node=2",
              "fabric.cc=dcqcn-paper", "fabric.cable_length=400", "fabric.pfc.xoff=16KB"});
  const perf::PerfOptions o = Options_(
      {"alltoall", "-b", "2M", "-e", "2M", "-g", "2", "--nodes", "8", "-n", "1", "-w", "0"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  // Flow control at work: pause frames in the per-link counters (gathered
  // from the ranks that own the ports).
  std::printf("roce alltoall: %lld pause frames, %lld ECN marks, %lld CNPs\n",
              static_cast<long long>(serial.pauses), static_cast<long long>(serial.marks),
              static_cast<long long>(serial.cnps));
  EXPECT_GT(serial.pauses, 0);
  AllCounts("roce leaf-spine, alltoall", o, s, serial);
}

TEST(DistributedPerf, SendrecvIsTheSerialSweep) {
  const Scenario s = IbFatTree();
  const perf::PerfOptions o = Options_(
      {"sendrecv", "-b", "512K", "-e", "512K", "-g", "2", "--nodes", "8", "-n", "1", "-w", "0"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  ExpectSame("ib fat tree, sendrecv", o, s, serial, 2);
  ExpectSame("ib fat tree, sendrecv", o, s, serial, 4, RandomPlacement(s, 4, 7), 3);
}

// --pcap and --trace: rank 0 replays every rank's log in the serial order;
// the timeline's steps posted by the kernel launch (an event every rank runs
// for its own GPUs) merge in the ring's launch order.
TEST(DistributedPerf, PcapAndTraceOfARingAreTheSerialFiles) {
  Scenario s = RoceLeafSpine();
  s.capture.pcap = "x.pcapng";
  s.capture.pcap_snaplen = 96;
  s.capture.trace = "x.json";
  const perf::PerfOptions o = Options_({"all_reduce", "-b", "256K", "-e", "256K", "-g", "2",
                                        "--nodes", "8", "-n", "1", "-w", "0", "--algo", "ring"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  std::printf("ring captures: %zu pcap bytes, %zu trace bytes\n", serial.pcap.size(),
              serial.trace.size());
  ASSERT_GT(serial.pcap.size(), 4096u);
  ASSERT_NE(serial.trace.find("\"rank 15\""), std::string::npos);
  for (int k : {2, 3}) ExpectSame("roce Ring captures", o, s, serial, k);
  ExpectSame("roce Ring captures", o, s, serial, 4, RandomPlacement(s, 4, 19), 3);
}

// Other tenants (the cloud-shared profile's tenants.load) during a sweep.
TEST(DistributedPerf, OtherTenantsDuringASweepAreTheSerialSweep) {
  Scenario s = RoceLeafSpine();
  s.shared.tenant_load = 0.2;
  s.shared.tenant_burst = 16 << 10;
  const perf::PerfOptions o = Options_({"all_reduce", "-b", "256K", "-e", "256K", "-g", "2",
                                        "--nodes", "8", "-n", "1", "-w", "0", "--algo", "ring"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  std::printf("tenants during the sweep: %lld bytes posted\n",
              static_cast<long long>(serial.tenant_bytes));
  EXPECT_GT(serial.tenant_bytes, 0);
  for (int k : {2, 3}) ExpectSame("roce Ring with tenants", o, s, serial, k);
  ExpectSame("roce Ring with tenants", o, s, serial, 4, RandomPlacement(s, 4, 29), 5);
}

// The launch is queued on every rank under the key its GPU's owner draws:
// the other ranks' counters for that entity are stale (they run none of its
// events), so a key drawn there would order the launch elsewhere among
// same-time events.
TEST(DistributedPerf, EveryRankQueuesTheLaunchUnderTheOwnersKey) {
  std::mutex m;
  std::vector<uint64_t> keys(3);
  std::vector<uint64_t> owner_next(3);
  parallel::RunLoopback(3, [&](parallel::Comm& comm) {
    sim::Simulator sim(1);
    for (int e = 0; e < 4; ++e) sim.AddEntity();
    // The owner (rank 1) has drawn 5 keys of entity 2 before; the others none.
    if (comm.Rank() == 1)
      for (int i = 0; i < 5; ++i) (void)sim.DrawKey(2);
    const uint64_t key = AgreedLaunchKey(comm, sim, comm.Rank() == 1, 2);
    std::lock_guard<std::mutex> lock(m);
    keys[static_cast<size_t>(comm.Rank())] = key;
    owner_next[static_cast<size_t>(comm.Rank())] = sim.DrawKey(2);
  });
  const uint64_t serial = (uint64_t{2} << 40) | 5;
  for (int r = 0; r < 3; ++r) EXPECT_EQ(keys[static_cast<size_t>(r)], serial) << "rank " << r;
  // The owner's counter moved on as the serial one does.
  EXPECT_EQ(owner_next[1], serial + 1);
}

TEST(DistributedPerf, MoreRanksThanUnitsIsRefusedWithTheCount) {
  const Scenario s = IbFatTree();
  const topology::Topology t = scenario::BuildTopology(s);
  const parallel::Partition p =
      parallel::PartitionFabric(t, s.clos.gpus_per_node, 1, {"t", 0, "r"});
  try {
    CheckRanks(s, static_cast<int>(p.units) + 1);
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(p.units) + " partition units"),
              std::string::npos)
        << e.what();
  }
}

TEST(DistributedPerf, IbRingAllReduceWithACutLinkDownIsTheSerialSweep) {
  // A core link cut at 2 and 3 ranks goes down at 60 us, in the middle of
  // the Ring (its frames in flight lost, counted by the sender's rank; the
  // queue pairs resend what the NAKs ask for) and comes back at 62 us;
  // reroutes 1 us after each change (docs/parallel.md, "A cut link going
  // down"). The sweep is the serial one, a slower Ring than without the
  // fault.
  const std::vector<std::string> down{"faults.link_down.0.link=spine0-core1",
                                      "faults.link_down.0.at=60us", "faults.link_down.0.up_at=62us",
                                      "faults.reroute.ib=1us"};
  const std::vector<std::string> fabric{"topology.gpus=16", "topology.radix=4",
                                        "topology.gpus_per_node=2", "fabric.cable_length=400"};
  std::vector<std::string> sets = fabric;
  sets.insert(sets.end(), down.begin(), down.end());
  const Scenario s = Fabric("scenarios/ib-fat-tree.json", sets);
  const perf::PerfOptions o = Options_({"all_reduce", "-b", "256K", "-e", "256K", "-g", "2",
                                        "--nodes", "8", "-n", "1", "-w", "0", "--algo", "ring"});
  const Outputs serial = Serial(o, s);
  ASSERT_TRUE(serial.failure.empty()) << serial.failure;
  ASSERT_NE(serial.text, Serial(o, IbFatTree()).text) << "the link down changed nothing";
  for (int k : {2, 3}) {
    const topology::Topology t = scenario::BuildTopology(s);
    const parallel::Partition p = parallel::PartitionFabric(t, 2, k, {"t", 0, "r"});
    bool cut = false;
    for (uint32_t l : p.cut_links)
      cut =
          cut || (t.nodes[t.links[l].a].name == "spine0" && t.nodes[t.links[l].b].name == "core1");
    ASSERT_TRUE(cut) << k << " ranks: spine0-core1 is not cut";
    const Stats st = ExpectSame("ib fat tree, Ring all_reduce, a core link down", o, s, serial, k);
    std::printf(
        "  %llu frames lost in flight on the cut link, %llu of them after the "
        "receiver's down\n",
        static_cast<unsigned long long>(st.cut_frames_lost),
        static_cast<unsigned long long>(st.late_frames_lost));
    EXPECT_GT(st.cut_frames_lost, 0u) << k << " ranks";
  }
}

// A queue pair out of retries (transport.retry_cnt 0, every 20th frame lost
// on a link from a spine of pod 2 to a core, which crosses ranks at 2 and 3)
// ends the serial sweep in the collective that holds it, with the QP's text
// and the row's #wrong. Distributed, a first pass finds the failing event and
// the sweep is re-run to exactly it (docs/parallel.md, "A QP failure"): the
// same text, JSON and failure, rank 0's text naming the QP of another rank.
TEST(DistributedPerf, AQpOutOfRetriesEndsTheSweepAsSerial) {
  const Scenario s =
      Fabric("scenarios/ib-fat-tree.json",
             {"topology.gpus=16", "topology.radix=4", "topology.gpus_per_node=2",
              "fabric.cable_length=400", "transport.retry_cnt=0",
              "faults.link_loss.0.link=spine4->core0", "faults.link_loss.0.every=20"});
  const perf::PerfOptions o =
      Options_({"all_reduce", "-b", "256K", "-e", "1M", "-f", "2", "-g", "2", "--nodes", "8", "-n",
                "1", "-w", "0", "--algo", "ring"});
  const Outputs serial = Serial(o, s);
  ASSERT_NE(serial.failure.find("retry count 0 exhausted"), std::string::npos) << serial.failure;
  std::printf("serial: %s\n", serial.failure.c_str());
  int elsewhere = 0;
  for (int k : {2, 3}) {
    const Stats st = ExpectSame("qp failure", o, s, serial, k, {}, 0, /*delivered=*/false);
    EXPECT_GE(st.failure_rerun_ps, 0) << k << " ranks: not re-run to a failure";
    elsewhere += st.failure_rank > 0 ? 1 : 0;
  }
  const Stats st =
      ExpectSame("qp failure", o, s, serial, 3, RandomPlacement(s, 3, 12), 6, /*delivered=*/false);
  EXPECT_GE(st.failure_rerun_ps, 0);
  elsewhere += st.failure_rank > 0 ? 1 : 0;
  EXPECT_GT(elsewhere, 0) << "the failing QP was on rank 0 in every case";
}

}  // namespace dist_perf_test
}  // namespace
}  // namespace lossless::distrun
