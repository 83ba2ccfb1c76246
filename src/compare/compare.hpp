#pragma once
// `lossless compare` (docs/compare.md): the same measurements on every fabric
// profile, side by side. Each profile runs five cases on the packet-level
// simulator and one model:
//   latency    ib_write_lat-style ping-pong of small RDMA writes between two
//              nodes (half the round trip per sample);
//   collective nccl-tests' all_reduce sweep on the collective engine
//              (run::RunPerf), peak busbw and its share of line rate;
//   jitter     many iterations of one all-reduce size: p99/p50 and CV;
//   incast     N-to-1 incast plus a victim flow and victim probes that share
//              the congested switches but not the destination;
//   fault      the jitter all-reduce again with one degraded link (post-FEC
//              bit errors) and, separately, one stalled NIC;
//   training   one FSDP step of a Llama 2 model (train::RunTraining): step
//              time, exposed communication, MFU;
// and the TCO model (src/tco) at the cluster size. The result is one JSON
// document (schema lossless.compare/1, docs/compare-results.md) from which
// the text matrix, the CSV and the HTML report are rendered.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collective/model/tuning.hpp"
#include "perf/result.hpp"
#include "scenario/scenario.hpp"
#include "train/train_run.hpp"

namespace lossless::compare {

struct Options {
  std::vector<std::string> profiles = {"ib-ndr", "roce-tuned", "roce-untuned", "cloud-shared"};
  int64_t nodes = 16;         // cluster size: TCO, and the sweep with --full
  int64_t sweep_nodes = 4;    // nodes of the reduced sweep and of the jitter and fault cases
  bool full = false;          // the checklist sweep -b 8M -e 4G -f 2 -g 8 on `nodes` nodes
  std::vector<int64_t> sizes; // all-reduce sizes (bytes); empty = the default sweep
  std::string rate = "400g";  // 400g | 800g
  uint64_t seed = 1;
  std::string scenario;       // a scenario file: its topology and faults replace the profile's
  int64_t latency_samples = 1000;
  int64_t iterations = 5;         // measured iterations per sweep size (-n)
  int64_t jitter_iterations = 40; // measured iterations of the jitter case (x2: both halves)
  int64_t fault_iterations = 10;  // measured iterations of each fault case (x2: both halves)
  int64_t jitter_bytes = int64_t{32} << 20;
  double fault_ber = 1e-7;        // post-FEC BER of the degraded link
  // transport.timeout of the degraded-link case: 12 = 16.8 ms. At the
  // default 20 (4.3 s, NCCL_IB_TIMEOUT's default) one tail loss simulates
  // seconds of the other tenants' traffic on a shared profile (minutes of
  // wall time); the output says what a timeout would cost at 20.
  int fault_timeout_exp = 12;
  units::Time stall = units::Time::Us(200);  // how long the stalled NIC stops receiving
  int jobs = 1;                   // simulations run at once (threads; each profile's cases are separate tasks)
  std::string prices_file;        // TCO price overrides
  double server_capex = -1;       // USD per GPU, < 0 = not given
  bool stop_at_plateau = false;   // set by Run for the default sweep: stop at the plateau
  bool timing = false;            // wall-clock seconds per stage in the document ("timing")
  std::string train_model = "7b";  // the training step's model (train::FindModel), "none": no step
  // --qos: a profile file (lossless scenario from-qos: a switch config's
  // values on a profile's fabric) run as one more column, `qos_label`, after
  // the profiles, at the comparison's link rate.
  std::string qos_file;
  std::string qos_label = "your-config";
};

// Whether the default sweep (Options::stop_at_plateau) stops after its last
// row: at the plateau of what NCCL picks for the sweep's largest size
// (`largest`; smaller sizes may run LL128, which NCCL's model caps, so a
// plateau there is not the fabric's peak): the last size gains less than 3 %
// busbw over the one before and both ran `largest`'s algorithm and protocol;
// or when busbw fell at each of the last two sizes (the fabric, not the
// protocol, limits it; larger sizes would not raise the peak).
bool SweepStops(const perf::PerfResult& sweep, int64_t ranks, const collective::AlgoChoice& largest);
// What a sweep ran per size, as ranges of consecutive sizes with the same
// algorithm and protocol: "Ring/LL128 8 MiB-64 MiB, Ring/Simple 128 MiB-4 GiB".
std::string SweepChoices(const perf::PerfResult& sweep);
// The stalled-NIC case's credit-starved time beyond the fault-free run: the
// fault-free run (the jitter case) has its own iteration count, so its
// starved time is scaled to the stall run's calls (one warm-up each) before
// it is subtracted.
double StarvedBeyondFaultFree(double stalled_us, int64_t stall_iterations, double fault_free_us,
                              int64_t fault_free_iterations);
// The fault-free samples a fault case's `fault_samples` compare with: the
// fault-free run's first as many (same seed, same places in the run), all of
// them when it has fewer. On a shared profile the tenants' queues fill over
// the first iterations; against all 2 x 40 fault-free samples the fault
// case's 2 x 10 early ones looked faster than no fault at all.
std::vector<double> PairedFaultFree(size_t fault_samples, const std::vector<double>& fault_free_us);

// The note of a row whose case did not finish (Ctrl-C); its value is null.
inline constexpr const char* kNotRunNote = "not run";

// What one profile's run reports while it goes (called from its thread).
struct Progress {
  std::string profile;
  std::string stage;  // "latency", "collective", ...
  double done = 0;    // 0..1 of this profile's work
};

// The all-reduce sweep of the collective case (docs/compare.md), one source of
// truth for `compare` and `what-if`: nccl-tests' all_reduce, out-of-place,
// float sum, `iterations` measured iterations after one warm-up, on `nodes`
// nodes of `s.clos.gpus_per_node` GPUs, one run per size of `sizes` in the
// order given. With `stop_at_plateau` it stops after the row SweepStops
// accepts. It also stops at the first failed size (`failure` says why).
// `keep_going` (when set) is asked between slices; false ends it early,
// marked interrupted.
struct SweepOutcome {
  perf::PerfResult sweep;  // one SizeResult per size that ran
  std::string failure;     // a QP out of retries, a stuck collective
  bool interrupted = false;
  // Over every size's run, all ports: frames dropped (congestion and link
  // losses) and data packets resent (perf::LinkCounters summed).
  int64_t drops = 0, retransmissions = 0;
};
SweepOutcome RunAllReduceSweep(const scenario::Scenario& s, const std::string& name, int64_t nodes,
                               const std::vector<int64_t>& sizes, int64_t iterations,
                               bool stop_at_plateau, const std::function<bool()>& keep_going = {});

// The default sweep's sizes: 8 MiB to 512 MiB by 2 (4 GiB with `full`).
std::vector<int64_t> DefaultSweepSizes(bool full);

// Out-of-place busbw (GB/s) of `sweep`'s row for `size_bytes` on `ranks`
// ranks; nullopt when it has no such row.
std::optional<double> BusbwAt(const perf::PerfResult& sweep, int64_t size_bytes, int64_t ranks);

// The training case (docs/compare.md#training-step): one FSDP step of
// `model` (train::FindModel) on `nodes` nodes of `s`'s GPUs per node, H100,
// the network simulating at most 1 ms of each compute gap. `failure` is set
// (and `result` empty) when a collective could not complete.
struct TrainOutcome {
  train::TrainResult result;
  std::string failure;
};
TrainOutcome RunTrainStep(const scenario::Scenario& s, const std::string& name, const std::string& model,
                          int64_t nodes);

// Validates `o` (InputError naming the field, exit code 2 in the CLI): known
// profiles, rate, sizes (empty = the default sweep), counts. Run calls it
// before any simulation; the CLI calls it before creating the output folder.
void Check(const Options& o);

// Runs every case on every profile and returns the lossless.compare/1
// document. Deterministic: the same options give the same document whatever
// `jobs` is. `stop` (when set) is asked between slices of simulation: true
// (Ctrl-C) starts no further task and ends the running ones early; the
// document then has "interrupted": true, the rows of unfinished cases are
// null with the note "not run", and the summary draws no conclusion.
nlohmann::json Run(const Options& in, const std::function<void(const Progress&)>& progress = {},
                   const std::function<bool()>& stop = {});

// The comparison matrix as text (one column per profile).
std::string MatrixText(const nlohmann::json& doc);

// results.csv: section,key,label,unit,profile,value,note.
std::string MatrixCsv(const nlohmann::json& doc);

}  // namespace lossless::compare
