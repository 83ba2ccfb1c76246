#pragma once
// `lossless tune` (docs/tune.md): searches a RoCE fabric's ECN thresholds
// (Kmin, Kmax, Pmax on the switches) and DCQCN parameters (the ones ConnectX
// NICs expose: additive and hyper increase steps, alpha gain g, the increase
// timer, the alpha timer, CNP pacing) against one target made of the
// comparison's cases (compare/cases.hpp):
//   incast stress  16 senders x 1 MiB into one host with a victim flow and a
//                  64-B probe beside it: PAUSE frames, ECN marks, victim
//                  probe p99 (compare::RunIncast);
//   all-reduce     one large size repeated: busbw (compare::RunRepeated).
// The default goal: the fewest PAUSE frames, then the lowest victim p99, at
// no more than `max_busbw_loss_pct` below the baseline's busbw.
//
// Search: the baseline (the fabric as given), a coarse grid, then local
// refinement (every one-step neighbour of the best point so far, batch by
// batch) until the budget is spent or no neighbour is better. Points are
// spread over the ranks of a parallel::Comm with the sweep's assignment
// (sweep::Share: point i of a batch on rank i mod ranks); every rank gets
// every figure back, so every rank takes the same next step and the result
// does not depend on the number of ranks.
//
// Deterministic: the same fabric, options and seed give the same document.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parallel/comm.hpp"
#include "scenario/scenario.hpp"
#include "units/units.hpp"

namespace lossless::tune {

// One searched setting: a scenario field (a --set key) and its candidate
// values in increasing order, as text with units.
struct Axis {
  std::string key;                  // "fabric.ecn.kmin", "fabric.dcqcn.rate_ai"
  std::string label;                // short column label: "kmin"
  bool nic = false;                 // a NIC (DCQCN) setting, else a switch (ECN) one
  std::vector<std::string> values;  // increasing
  std::vector<size_t> coarse;       // indices the coarse grid takes at levels 1, 2, 3 (3 entries
                                    // ordered low, middle, high; empty: not a grid axis)
  size_t start = 0;                 // index grid points use when the axis is not a grid axis
};

// The search space for `base` (a RoCE fabric with PFC and DCQCN): ECN
// thresholds as shares of the PFC trigger (so Kmax always stays below it),
// Pmax, and six DCQCN parameters. InputError at ("<cli>", "--fabric") when
// `base` is InfiniBand, has no PFC, or runs no DCQCN.
std::vector<Axis> SearchSpace(const scenario::Scenario& base);

// A point: one value index per axis.
using Index = std::vector<size_t>;

// Kmin < Kmax (the only combination the space can make invalid).
bool Valid(const std::vector<Axis>& axes, const Index& i);

// The coarse grid at `levels` (1..3) values per grid axis, valid points only,
// in a fixed order (the first axis varies slowest).
std::vector<Index> CoarseGrid(const std::vector<Axis>& axes, int levels);

// The --set overrides of point `i` ("key=value", one per axis).
std::vector<std::string> Sets(const std::vector<Axis>& axes, const Index& i);

// What the target measures on one fabric.
struct Target {
  int incast_senders = 16;
  int64_t incast_bytes = int64_t{1} << 20;
  units::Time probe_every = units::Time::Us(1);
  int64_t allreduce_bytes = int64_t{64} << 20;
  int64_t iterations = 2;           // measured all-reduce iterations (after one warm-up)
  double max_busbw_loss_pct = 2.0;  // the goal's bound on busbw loss against the baseline
  double pause_cut = 10.0;          // the goal's PAUSE reduction factor
};

struct Figures {
  double busbw_gbs = 0;      // all-reduce, out of place
  double victim_p99_us = 0;  // incast: victim probe latency p99
  double victim_gbps = 0;    // incast: the victim's bulk flow
  double incast_us = 0;      // incast: until the last byte arrived
  int64_t pause_frames = 0;  // incast + all-reduce, every port
  int64_t ecn_marks = 0;     // incast + all-reduce
  int64_t cnps = 0;          // incast + all-reduce
  int64_t drops = 0;         // incast + all-reduce congestion drops
  std::string failure;       // a collective or scenario that failed ("" = ran)
};
nlohmann::ordered_json ToJson(const Figures& f);
Figures FiguresFromJson(const nlohmann::json& j);

// Runs the target on `s` (its seed, its topology). Never throws for a
// problem of the fabric: it becomes `failure`.
Figures Evaluate(const scenario::Scenario& s, const Target& t);

struct Options {
  std::string fabric;   // name in the output (profile name or scenario file)
  int64_t budget = 60;  // runs in all: baseline + coarse grid + refinement
  int levels = 2;       // coarse grid values per grid axis (1..3)
  Target target;
};

struct Point {
  std::string stage;  // "baseline" | "coarse" | "refine"
  Index index;        // empty for the baseline
  std::vector<std::string> sets;
  Figures f;
};

struct Result {
  std::vector<Axis> axes;
  std::vector<std::string> base_values;  // the starting fabric's value of each axis
  std::vector<Point> points;             // points[0] is the baseline, then in run order
  size_t chosen = 0;                     // index into points
  std::vector<size_t> pareto;            // indices into points, busbw descending
  std::string stop;                      // "converged" | "budget" | "interrupted"
  // Ctrl-C (InterruptRequested) stopped the search: `points` holds the runs
  // that finished; no point is chosen when only the baseline (or not even it) ran.
  bool interrupted = false;
  bool goal_met = false;
  std::string verdict;  // one or two sentences, the goal met or why not
};

// The baseline and coarse grid's run count; Check() refuses a smaller budget.
int64_t MinimumBudget(const std::vector<Axis>& axes, int levels);

// InputError at ("<cli>", field) for a budget below MinimumBudget, levels
// outside 1..3, a non-positive size or count, a loss bound outside [0, 100).
void Check(const std::vector<Axis>& axes, const Options& o);

// Progress: runs done of the budget.
using OnBatch = std::function<void(int64_t done, int64_t budget)>;

// The fabric with `sets` applied (the seed set): a profile sized to the
// node count, or a scenario file. Throws InputError for a set it refuses.
using Loader = std::function<scenario::Scenario(const std::vector<std::string>& sets)>;

// The search, SPMD over `comm` (every rank returns the same Result).
Result Run(parallel::Comm& comm, const Loader& load, const Options& o,
           const OnBatch& on_batch = {});

// True when point a is better than point b for the goal (feasible first,
// then fewer PAUSE frames, lower victim p99, higher busbw, fewer ECN marks).
bool Better(const Figures& a, const Figures& b, const Figures& baseline, const Target& t);

// The "lossless.tune/1" document and its text rendering.
nlohmann::ordered_json ToJson(const Result& r, const scenario::Scenario& base, const Options& o);
std::string Text(const Result& r, const Options& o, int64_t nodes, int gpus_per_node);

// The chosen settings as vendor snippets: file name -> contents. Switch
// formats the QoS audit reads (SONiC config_db.json, Cumulus NVUE `nv set`,
// Arista EOS, Cisco NX-OS, Junos) and the NIC side (mlxconfig commands), each
// commented with the target and the predicted effect; plus
// "nic-profile.yaml": `base_profile_text` with `user_sets`, the chosen NIC
// settings and the node count, for `lossless scenario from-qos SNIPPET
// --profile` to rebuild the tuned fabric from a switch snippet. `chosen` is
// the fabric of r.points[r.chosen].
struct Snippet {
  std::string file;
  std::string text;
};
std::vector<Snippet> Snippets(const Result& r, const scenario::Scenario& chosen, const Options& o,
                              const std::string& base_profile_text,
                              const std::vector<std::string>& user_sets, int64_t nodes);

}  // namespace lossless::tune
