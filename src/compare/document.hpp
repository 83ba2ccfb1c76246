#pragma once
// Internal to the compare module (not API): what `compare::Run` measured on
// each profile (ProfileData) and the lossless.compare/1 document built from it
// (docs/compare-results.md). compare.cpp runs the profiles' tasks and fills
// ProfileData; document.cpp turns it into the document, one function per
// section (options, profiles, each section's rows, series, summary, caveats,
// operations). The case sizes below are shared by both: the runs use them and
// the document's labels name them.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/cases.hpp"
#include "compare/compare.hpp"
#include "perf/result.hpp"
#include "scenario/scenario.hpp"
#include "tco/tco.hpp"
#include "train/train_run.hpp"
#include "units/units.hpp"

namespace lossless::compare::detail {

constexpr int64_t kLatencyBytes = 8;  // ib_write_lat -s 8
constexpr int kIncastSenders = 16;
constexpr int64_t kIncastBytes = int64_t{1} << 20;
constexpr int64_t kScalingBytes = int64_t{1} << 30;  // --full: busbw at 2, 4, 8, 16 nodes
// The training step simulates at most this much of each idle gap before a
// collective (train::FabricComm::set_max_idle).
constexpr units::Time kTrainMaxIdle = units::Time::Ms(1);

// The profile a column runs at `rate`: at 800g the InfiniBand column is XDR
// and the others run 800G links (one namespace for fabrics: docs/profiles.md), and
// every column runs on B200 nodes whose NICs are PCIe Gen6 x16 (an 800G NIC,
// ConnectX-8, is a Gen6 device: behind Gen5 x16, 58.4 GB/s of payload, it
// could not reach its line rate; docs/model/node.md).
struct Column {
  std::string requested, name;
  std::vector<std::string> sets;
  std::string file;  // a profile file loaded under `name` (--qos); empty: `name` is the profile
  const std::string& Source() const { return file.empty() ? name : file; }
};

// Everything measured on one profile.
struct ProfileData {
  Column col;
  scenario::Scenario s;
  std::string file;
  LatencyResult latency;
  perf::PerfResult sweep;
  std::string sweep_failure;
  CollectiveRun jitter, ber, stall;
  std::vector<std::pair<int64_t, double>> scaling;  // --full: (nodes, busbw GB/s) at kScalingBytes
  units::Time stall_at;
  IncastResult incast;
  tco::Result tco;
  double line_rate_gbs = 0;
  // Which tasks finished (Ctrl-C can end the run before some do; their rows
  // are then null, marked "not run").
  train::TrainResult train;   // one training step (RunTrain)
  std::string train_failure;  // a collective that could not complete
  bool ran_small = false, ran_sweep = false, ran_jitter_stall = false, ran_degraded = false,
       ran_train = false;
  std::string tco_caveat;  // --scenario: why TCO did not follow its topology
  // Wall-clock seconds per stage, in run order (in the document only with
  // --timing: the same options give the same bytes otherwise).
  std::vector<std::pair<std::string, double>> wall_s;
};

// --full's scaling points: 2, 4, 8 and 16 nodes, up to the cluster size.
std::vector<int64_t> ScalingNodes(const Options& o);
// Nodes of the sweep and of the jitter and fault cases: `o.nodes` with
// --full, else at most `o.sweep_nodes`.
int64_t SweepNodes(const Options& o);
// "8 MiB", "1 GiB", "512 KiB", "64 B".
std::string SizeLabel(int64_t b);

// The sweep reached its plateau when its largest size gains less than 3 %
// busbw over the size before it.
bool AtPlateau(const perf::PerfResult& r, int64_t ranks);

// The lossless.compare/1 document of `data` (one entry per column, in column
// order) measured under `o` (after Run's defaults: sizes filled in).
nlohmann::json Document(const Options& o, const std::vector<ProfileData>& data);

}  // namespace lossless::compare::detail
