#pragma once
// `lossless run` over ranks (docs/parallel.md): the fabric on the window
// engine, giving the serial run's results byte for byte for any rank count
// and any placement of the partition units.
//
// Every rank builds the whole scenario (network, flows, faults) and keeps
// only the queued events of the entities it owns: the ports and switches of
// its units (a unit is a switch with its hosts, never split). Frames, PAUSE
// frames and FCPs sent on cut links cross as engine events under the keys
// the sender drew where the serial run draws them (fabric::Network's
// RemoteLinks); the receiver runs their arrivals (and the link's loss
// draws). "All flows done" is agreed by the engine's StopRule; statistics
// are integers merged on rank 0 in entity order (Network::ImportResults);
// the peak of packets alive is the maximum of the merged per-event counts
// of the windows that may hold it (docs/parallel.md#the-peak-of-packets-alive).
// The series sampler and the deadlock detector run at window boundaries (the
// engine's parallel::Boundaries) at their serial times: each rank samples
// what it owns, rank 0 replays every rank's PFC facts through the detector
// in (time, key) order, and a confirmation that stops the run stops every
// rank at that serial instant.
//
// Links going down and up (faults.link_down) and the reroutes around them:
// each port's link-state event runs on its rank, and on a cut link the
// receiver's rank runs a copy that drops its copy of the wire; the sender's
// rank counts the frames lost (docs/parallel.md, "A cut link going down").
// Other tenants (tenants.load): every rank runs every host's arrivals (the
// generator is a pure function of the host's stream and the clock, so the
// queue pairs and keys are the serial ones everywhere) and only the owner of
// the host's NIC posts the burst (workload::TenantTraffic::SetOwnedHosts).
// Captures and timelines (outputs.pcap, outputs.trace): each rank logs what
// its events hand them, rank 0 replays the logs in the serial order
// (run::Captures). Every scenario field runs distributed. A QP failure
// (transport.retry_cnt exhausted) stops the serial run at its event: a first
// pass finds the earliest over the ranks (parallel::FailureFound), a second
// runs the scenario again from scratch to exactly that event, and rank 0
// gets the failing rank's record. Injected CNPs run on
// their flow's source NIC; the reaction points rank 0 reports come from the
// ranks that own the sources (Network::ExportResults).
#include <string>
#include <vector>

#include "parallel/comm.hpp"
#include "report/result.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"

namespace lossless::distrun {

struct Options {
  // Rank per topology node; empty = parallel::PartitionFabric's placement.
  std::vector<int32_t> rank_of_node;
  // The stop rule's lower bound is recomputed only when the run comes near
  // the last one (off: every window, as before; tests compare the two).
  bool reuse_stop_bound = true;
  // The packets-alive log held for the exact peak is pruned of the windows
  // that can no longer hold it each time it doubles, from this many changes
  // (docs/parallel.md#the-peak-of-packets-alive; tests set it small).
  size_t peak_log_prune = size_t{1} << 16;
};

// What the distributed run did, on this rank (and the totals on rank 0).
struct Stats {
  int ranks = 1;
  uint32_t cut_links = 0;
  uint32_t switch_links = 0;
  units::Time lookahead;
  uint64_t windows = 0;
  uint64_t sent = 0;      // cross-rank events this rank sent (rank 0: all ranks)
  uint64_t received = 0;  // ... received
  // Same-time pairs of consecutive events, one from another rank: counted
  // with digests only (`--digest`; a per-event probe the run otherwise skips).
  uint64_t ties = 0;
  bool ties_counted = false;
  uint64_t careful = 0;       // windows that waited for the stop verdict
  uint64_t stop_bounds = 0;   // times this rank computed the stop rule's bound
  uint64_t reductions = 0;    // integer reductions (rank 0's)
  uint64_t exchanges = 0;     // batch exchanges (rank 0's)
  uint64_t sent_bytes = 0;    // batch bytes sent (rank 0: all ranks)
  uint64_t events = 0;        // events run (rank 0: all ranks)
  uint64_t kept_changes = 0;  // packets-alive changes merged for the exact peak (rank 0)
  uint64_t held_changes = 0;  // ... held by this rank at the run's end, before the last drop
  // Windows that could not hold the peak (their changes dropped).
  uint64_t peak_windows_dropped = 0;
  // Frames lost in flight on cut links that went down (faults.link_down),
  // counted by the senders' ranks; of them, those that reached the
  // receiver's rank after it had run the down (rank 0: all ranks).
  uint64_t cut_frames_lost = 0;
  uint64_t late_frames_lost = 0;
  double wait_s = 0;  // rank 0: the largest over ranks
  double run_s = 0;
  double cpu_s = 0;           // rank 0: the sum over ranks of WindowStats::cpu_s
  double critical_cpu_s = 0;  // WindowStats::critical_cpu_s
  // Wall time of this rank's distributed run outside the engine: placing
  // the fabric and keeping its events (before), and after it ending the run
  // and gathering the results (rank 0: and merging them).
  double setup_s = 0;
  double finish_s = 0;
  // A QP failure's time when the run was re-run to it (docs/parallel.md, "A
  // QP failure": the first pass finds it, the second stops there); -1: not.
  int64_t failure_rerun_ps = -1;
  int failure_rank = -1;  // rank 0: the rank whose QP failed (the re-run's)
};

// Throws InputError when the fabric cannot be cut into `ranks` (more ranks
// than partition units, a cut link without delay).
void CheckRanks(const scenario::Scenario& s, int ranks);

// Runs `s` over comm's ranks. Collective. Rank 0 gets the result (the other
// ranks a result they should not print); `digests` as RunHooks::digests.
report::RunResult Run(const scenario::Scenario& s, parallel::Comm& comm, const Options& opt,
                      Stats* stats = nullptr,
                      std::vector<run::EntityDigestLine>* digests = nullptr);

// The results gathered at the end (Network::ExportResults: each owned
// port's record as its nonzero words, flows' halves, totals) cross ranks
// with their zero runs packed: a run of at least 16 zero bytes becomes its
// length. Format, little-endian: u64 size, then repeated {u64 n, n bytes as
// they are, u64 zeros}. Unpack throws std::runtime_error on anything else.
std::string PackZeroRuns(const std::string& in);
std::string UnpackZeroRuns(const std::string& in);

// One line for stderr: "distributed: K ranks, C of S switch links cut,
// lookahead L, W windows (V waiting for a stop verdict, N synchronisations
// each), E cross-rank events (B batch bytes), T same-time ties (with
// `run --digest`; else "same-time ties not counted"), waiting X %
// of Y s ...; work Z s CPU over the ranks, P s on the critical path ...;
// outside the engine S s before, F s after (rank 0)", and for a run re-run
// to a QP failure "; re-run from the start to the QP failure at T ...".
std::string StatsLine(const Stats& st);

}  // namespace lossless::distrun
