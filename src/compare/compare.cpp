// `lossless compare` (compare.hpp): each profile's cases run as independent
// tasks on a pool of threads (RunSmall, RunSweep, RunJitterAndStall,
// RunDegradedLink, RunTrain, RunScaling), the all-reduce sweep and the
// training step that what-if and tune share, and the options' check. The
// document the measurements become is built in document.cpp.
#include "compare/compare.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "base/error.hpp"
#include "compare/cases.hpp"
#include "compare/document.hpp"
#include "lossless/version.hpp"
#include "perf/options.hpp"
#include "profile/profile.hpp"
#include "run/perf_run.hpp"
#include "tco/tco.hpp"
#include "train/train_run.hpp"

namespace lossless::compare {
namespace detail {

std::vector<int64_t> ScalingNodes(const Options& o) {
  std::vector<int64_t> v;
  if (!o.full) return v;
  for (int64_t n : {2, 4, 8, 16})
    if (n <= o.nodes) v.push_back(n);
  return v;
}

int64_t SweepNodes(const Options& o) { return o.full ? o.nodes : std::min(o.nodes, o.sweep_nodes); }

std::string SizeLabel(int64_t b) {
  if (b >= (int64_t{1} << 30) && b % (int64_t{1} << 30) == 0) return fmt::format("{} GiB", b >> 30);
  if (b >= (int64_t{1} << 20) && b % (int64_t{1} << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

}  // namespace detail

std::vector<int64_t> DefaultSweepSizes(bool full) {
  std::vector<int64_t> v;
  const int64_t last = full ? int64_t{4} << 30 : int64_t{512} << 20;
  for (int64_t b = int64_t{8} << 20; b <= last; b *= 2) v.push_back(b);
  return v;
}

namespace {

using nlohmann::json;
using units::Time;
using detail::Column;
using detail::ProfileData;
using detail::ScalingNodes;
using detail::SizeLabel;
using detail::SweepNodes;
using detail::kIncastBytes;
using detail::kIncastSenders;
using detail::kLatencyBytes;
using detail::kScalingBytes;
using detail::kTrainMaxIdle;

const Location kCli{"<cli>", 0, "compare"};

// The --qos column: the from-qos profile file at the comparison's link rate
// (its buffer, PFC and ECN values stay the config's).
Column QosColumn(const Options& o) {
  Column c{o.qos_label, o.qos_label, {}, o.qos_file};
  if (o.rate == "800g") c.sets = {"node.preset=b200", "node.pcie_gen=6", "fabric.link_rate=800Gbps"};
  else c.sets = {"fabric.link_rate=400Gbps"};
  return c;
}

Column ColumnFor(const std::string& requested, const std::string& rate) {
  Column c{requested, requested, {}, {}};
  if (rate == "800g") {
    c.sets = {"node.preset=b200", "node.pcie_gen=6"};
    if (requested == "ib-ndr" || requested == "ib-hdr") {
      c.name = "ib-xdr";
    } else if (requested.rfind("ib-", 0) != 0) {
      c.sets.emplace_back("fabric.link_rate=800Gbps");
    }
  }
  return c;
}

scenario::Scenario LoadColumn(const Column& c, int64_t nodes, const Options& o) {
  scenario::Scenario s =
      profile::Load(c.Source(), nodes, c.sets, {"<cli>", 0, c.file.empty() ? "--profiles" : "--qos"});
  s.seed = o.seed;
  if (!o.scenario.empty()) {
    // The scenario's topology and faults replace the profile's.
    const scenario::Scenario sc = scenario::LoadFabricFile(o.scenario);
    const units::Rate rate = s.clos.link_rate;  // the profile's links
    const int gpn = s.clos.gpus_per_node;
    s.topology_kind = sc.topology_kind;
    s.clos = sc.clos;
    s.clos.link_rate = rate;
    s.clos.gpus_per_node = gpn;
    s.hosts_per_leaf = sc.hosts_per_leaf;
    s.spines = sc.spines;
    s.topology_file = sc.topology_file;
    s.topology_where = sc.topology_where;
    s.nic_stall = sc.nic_stall;
    s.pause_inject = sc.pause_inject;
    s.cnp_inject = sc.cnp_inject;
    s.link_loss = sc.link_loss;
    s.ber = sc.ber;
    // A headroom the profile left to its default follows the links the
    // scenario's topology has (as `run` derives it), not the profile's.
    if (s.net.pfc.enabled && s.pfc_headroom_basis != "fabric.pfc.headroom") {
      std::string basis;
      s.net.pfc.headroom = scenario::TopologyPfcHeadroom(s, &basis);
      s.pfc_headroom_basis = "default for " + basis;
      if (s.net.pfc.xoff.count() + s.net.pfc.headroom.count() > s.net.sw.buffer.count())
        throw InputError({o.scenario, 0, "topology"},
                         fmt::format("expected links whose PFC headroom fits profile {}'s switch "
                                     "buffer: XOFF {} B + headroom {} B (for {}) > fabric.buffer {} B",
                                     c.name, s.net.pfc.xoff.count(), s.net.pfc.headroom.count(), basis,
                                     s.net.sw.buffer.count()));
    }
  }
  return s;
}

// A profile's work comes in independent tasks (each its own simulations), so
// the threads stay busy when one profile is much slower than the others (a
// shared profile's tenant traffic): the result does not depend on which
// thread runs a task or when.
enum class Task { kSmall, kSweep, kJitterAndStall, kDegradedLink, kTrain, kScaling };

struct TaskRef {
  size_t profile = 0;
  Task task = Task::kSmall;
  int64_t nodes = 0;  // kScaling
  double weight = 0;  // share of the profile's work (progress) and scheduling order
};

// Everything a profile's tasks share, loaded once before they start.
void PrepareProfile(const Options& o, ProfileData& d) {
  d.s = LoadColumn(d.col, SweepNodes(o), o);
  profile::ProfileText(d.col.Source(), &d.file);
  const int64_t g = d.s.clos.gpus_per_node;
  d.line_rate_gbs = static_cast<double>(g) * static_cast<double>(d.s.clos.link_rate.bps()) / 8e9;
}

// `keep_going`: false ends a task's simulation early (Ctrl-C); the task then
// leaves its ran_* flag false.
using KeepGoing = std::function<bool()>;

void RunSweep(const Options& o, ProfileData& d, const std::function<void(const char*)>& stage,
              const KeepGoing& keep_going) {
  stage("all-reduce sweep");
  SweepOutcome r = RunAllReduceSweep(d.s, d.col.name, SweepNodes(o), o.sizes, o.iterations,
                                     o.stop_at_plateau, keep_going);
  if (r.interrupted) return;
  d.sweep = std::move(r.sweep);
  d.sweep_failure = std::move(r.failure);
  d.ran_sweep = true;
}

void RunJitterAndStall(const Options& o, ProfileData& d, const std::function<void(const char*)>& stage,
                       const KeepGoing& keep_going) {
  const int64_t nodes = SweepNodes(o);
  const int64_t g = d.s.clos.gpus_per_node;
  stage("jitter");
  d.jitter = RunRepeated(d.s, d.col.name, nodes, g, o.jitter_bytes, o.jitter_iterations, keep_going);
  if (d.jitter.interrupted) return;
  stage("fault: stalled NIC");
  scenario::Scenario f = d.s;
  // The stall starts in the third measured iteration: one warm-up and two
  // clean ones before it, timed by the fault-free run's samples at the same
  // places (on a shared profile later iterations are slower).
  const std::vector<double> early =
      PairedFaultFree(static_cast<size_t>(2 * o.fault_iterations), d.jitter.iterations_us);
  const double base = early.empty() ? 0 : Percentile(early, 50);
  d.stall_at = Time::Ps(static_cast<int64_t>(base * 3.5 * 1e6));
  f.nic_stall.host = static_cast<int64_t>(nodes > 1 ? (nodes - 1) * g : 0);
  f.nic_stall.at = d.stall_at;
  f.nic_stall.until = d.stall_at + o.stall;
  f.nic_stall.where = {"<cli>", 0, "--stall"};
  d.stall = RunRepeated(f, d.col.name, nodes, g, o.jitter_bytes, o.fault_iterations, keep_going);
  d.ran_jitter_stall = !d.stall.interrupted;
}

void RunDegradedLink(const Options& o, ProfileData& d, const std::function<void(const char*)>& stage,
                     const KeepGoing& keep_going) {
  stage("fault: degraded link");
  scenario::Scenario f = d.s;
  scenario::LinkLossFault l;
  const topology::Topology topo = scenario::BuildTopology(f);
  const uint32_t host = topo.hosts[0];
  // host 0's link, both directions.
  for (const topology::Link& k : topo.links) {
    if (k.a == host || k.b == host) {
      l.link = topo.nodes[k.a].name + "<->" + topo.nodes[k.b].name;
      break;
    }
  }
  l.loss.ber = o.fault_ber;
  l.ber_given = true;
  l.where = {"<cli>", 0, "--fault-ber"};
  f.link_loss.push_back(l);
  f.net.rc.timeout_exp = std::min(f.net.rc.timeout_exp, o.fault_timeout_exp);
  d.ber = RunRepeated(f, d.col.name, SweepNodes(o), d.s.clos.gpus_per_node, o.jitter_bytes,
                      o.fault_iterations, keep_going);
  d.ran_degraded = !d.ber.interrupted;
}

void RunTrain(const Options& o, ProfileData& d, const std::function<void(const char*)>& stage) {
  stage("training step");
  TrainOutcome t = RunTrainStep(d.s, d.col.name, o.train_model, SweepNodes(o));
  d.train = std::move(t.result);
  d.train_failure = std::move(t.failure);
  d.ran_train = !d.train_failure.empty() || (!d.train.interrupted && !d.train.steps.empty());
}

void RunSmall(const Options& o, ProfileData& d, const std::function<void(const char*)>& stage) {
  stage("latency");
  d.latency = RunLatency(d.s, o.latency_samples, kLatencyBytes);
  stage("incast");
  d.incast = RunIncast(d.s, kIncastSenders, kIncastBytes, Time::Us(1));
  stage("tco");
  tco::Options t;
  t.gpus = o.nodes * d.s.clos.gpus_per_node;
  t.fabric = d.col.Source();
  t.prices_file = o.prices_file;
  t.server_capex = o.server_capex;
  t.sets = d.col.sets;
  if (!o.scenario.empty()) {
    // TCO prices the scenario's topology when it is one the sizing knows;
    // a topology file or LS-RING is priced as the profile's fabric, and a
    // caveat says so.
    const std::string& kind = d.s.topology_kind;
    if (kind == "rail-optimized" || kind == "leaf-spine" || kind == "fat-tree") {
      t.sets.push_back("topology.kind=" + kind);
      t.sets.push_back(fmt::format("topology.radix={}", d.s.clos.radix));
      t.sets.push_back(fmt::format("topology.oversubscription={:g}", d.s.clos.oversubscription));
    } else {
      d.tco_caveat = fmt::format(
          "{}: TCO prices the profile's own fabric for {} GPUs: the scenario's {} topology "
          "cannot be sized from parts.",
          d.col.name, t.gpus, kind);
    }
  }
  d.tco = tco::Run(t);
  d.ran_small = true;
}

// The busbw of the 1 GiB all-reduce on n nodes (0: it failed), nullopt when
// interrupted.
std::optional<double> RunScaling(const Options& o, const ProfileData& d, int64_t n,
                                 const std::function<void(const char*)>& stage,
                                 const KeepGoing& keep_going) {
  const std::string name = fmt::format("scaling {} nodes", n);
  stage(name.c_str());
  const int64_t g = d.s.clos.gpus_per_node;
  const scenario::Scenario sn = LoadColumn(d.col, n, o);
  const CollectiveRun c = RunRepeated(sn, d.col.name, n, g, kScalingBytes, o.iterations, keep_going);
  if (c.interrupted) return std::nullopt;
  if (!c.failure.empty() || c.perf.sizes.empty()) return 0;
  return perf::ToRow(c.perf.sizes[0], collective::Collective::kAllReduce, n * g).out_of_place.busbw_gbs;
}

// Every task of every profile, heaviest first (a shared profile's tenant
// traffic makes its tasks several times slower than a dedicated one's).
std::vector<TaskRef> Tasks(const Options& o, const std::vector<ProfileData>& data) {
  std::vector<TaskRef> tasks;
  const std::vector<int64_t> scaling = ScalingNodes(o);
  for (size_t i = 0; i < data.size(); ++i) {
    tasks.push_back({i, Task::kSweep, 0, 0.4});
    tasks.push_back({i, Task::kJitterAndStall, 0, 0.3});
    tasks.push_back({i, Task::kDegradedLink, 0, 0.2});
    if (o.train_model != "none") tasks.push_back({i, Task::kTrain, 0, 0.2});
    tasks.push_back({i, Task::kSmall, 0, 0.1});
    for (int64_t n : scaling) tasks.push_back({i, Task::kScaling, n, 0.4 * static_cast<double>(n) / 4});
  }
  auto cost = [&](const TaskRef& t) {
    return t.weight * (data[t.profile].s.shared.tenant_load > 0 ? 8.0 : 1.0);
  };
  std::stable_sort(tasks.begin(), tasks.end(),
                   [&](const TaskRef& a, const TaskRef& b) { return cost(a) > cost(b); });
  return tasks;
}

}  // namespace

SweepOutcome RunAllReduceSweep(const scenario::Scenario& s, const std::string& name, int64_t nodes,
                               const std::vector<int64_t>& sizes, int64_t iterations,
                               bool stop_at_plateau, const std::function<bool()>& keep_going) {
  SweepOutcome out;
  perf::PerfOptions po;
  po.nodes = nodes;
  po.n_gpus = s.clos.gpus_per_node;
  po.iters = iterations;
  po.warmup_iters = 1;
  po.in_place = false;  // busbw is out-of-place's; the in-place half would move the same packets
  // The plateau that counts is that of what NCCL picks for the sweep's largest
  // size (Ring/Simple on the default sweep): sizes below it may run LL128,
  // whose busbw NCCL's model caps (perChMaxRingLL128Bw), and a plateau there
  // says nothing about the fabric's peak.
  const collective::TuningModel tuning = run::PerfModelFor(po, s.net, s.clos.link_rate).tuning;
  const collective::AlgoChoice largest = tuning.Choose(
      po.collective,
      collective::CountsFor(po.collective, sizes.empty() ? 0 : sizes.back(), po.types.front(),
                            po.Ranks())
          .size_bytes);
  // The sizes as given (not necessarily a geometric series): one row each.
  for (int64_t b : sizes) {
    po.min_bytes = po.max_bytes = b;
    std::string failure;
    perf::PerfResult r = run::RunPerf(po, s, name, &failure, [&](const run::PerfProgress&) {
      return !keep_going || keep_going();
    });
    if (r.interrupted) {
      out.interrupted = true;
      return out;
    }
    for (const perf::LinkCounters& l : r.links) {
      out.drops += l.drops;
      out.retransmissions += l.retransmissions;
    }
    if (out.sweep.sizes.empty()) out.sweep = r;
    else out.sweep.sizes.insert(out.sweep.sizes.end(), r.sizes.begin(), r.sizes.end());
    if (!failure.empty() && out.failure.empty()) out.failure = failure;
    if (!out.failure.empty()) break;
    if (stop_at_plateau && SweepStops(out.sweep, po.Ranks(), largest)) break;
  }
  return out;
}

std::optional<double> BusbwAt(const perf::PerfResult& sweep, int64_t size_bytes, int64_t ranks) {
  for (const perf::SizeResult& r : sweep.sizes)
    if (r.counts.size_bytes == size_bytes)
      return perf::ToRow(r, sweep.options.collective, ranks).out_of_place.busbw_gbs;
  return std::nullopt;
}

TrainOutcome RunTrainStep(const scenario::Scenario& s, const std::string& name, const std::string& model,
                          int64_t nodes) {
  // The training step's configuration (docs/compare.md#training-step): the
  // model under FSDP on the sweep's nodes, H100, one micro-batch per GPU.
  train::TrainConfig c;
  c.model = train::FindModel(model, "--train-model");
  c.gpu = train::FindGpu("h100");
  c.strategy = train::Strategy::kFsdp;
  c.nodes = static_cast<int>(nodes);
  c.gpus_per_node = static_cast<int>(s.clos.gpus_per_node);
  c.recompute = train::Recompute::kAuto;
  train::Validate(c);
  TrainOutcome out;
  try {
    // The network runs at most kTrainMaxIdle of each compute gap: a shared
    // profile's tenants would otherwise be simulated through the whole
    // step's compute (seconds of simulated traffic).
    out.result = train::RunTraining(c, s, name, false, {}, {}, kTrainMaxIdle);
  } catch (const train::TrainFailure& e) {
    out.failure = e.what();
  }
  return out;
}

// The algorithm/protocol a sweep ran, as ranges of consecutive sizes:
// "Ring/LL128 8 MiB-64 MiB, Ring/Simple 128 MiB-4 GiB".
std::string SweepChoices(const perf::PerfResult& sweep) {
  std::string out;
  size_t i = 0;
  while (i < sweep.sizes.size()) {
    const collective::AlgoChoice& c = sweep.sizes[i].choice;
    size_t j = i;
    while (j + 1 < sweep.sizes.size() && sweep.sizes[j + 1].choice.algorithm == c.algorithm &&
           sweep.sizes[j + 1].choice.protocol == c.protocol)
      ++j;
    const std::string lo = SizeLabel(sweep.sizes[i].counts.size_bytes);
    const std::string hi = SizeLabel(sweep.sizes[j].counts.size_bytes);
    out += fmt::format("{}{}/{} {}", out.empty() ? "" : ", ", collective::AlgorithmName(c.algorithm),
                       collective::ProtocolName(c.protocol), i == j ? lo : lo + "-" + hi);
    i = j + 1;
  }
  return out;
}

std::vector<double> PairedFaultFree(size_t fault_samples, const std::vector<double>& fault_free_us) {
  const size_t n = std::min(fault_samples, fault_free_us.size());
  return {fault_free_us.begin(), fault_free_us.begin() + static_cast<std::ptrdiff_t>(n)};
}

double StarvedBeyondFaultFree(double stalled_us, int64_t stall_iterations, double fault_free_us,
                              int64_t fault_free_iterations) {
  // One warm-up iteration before the measured ones in both runs (RunRepeated).
  const double scale =
      static_cast<double>(stall_iterations + 1) / static_cast<double>(fault_free_iterations + 1);
  return stalled_us - fault_free_us * scale;
}

bool SweepStops(const perf::PerfResult& sweep, int64_t ranks, const collective::AlgoChoice& largest) {
  const size_t n = sweep.sizes.size();
  auto busbw = [&](size_t i) {
    return perf::ToRow(sweep.sizes[i], sweep.options.collective, ranks).out_of_place.busbw_gbs;
  };
  auto runs_largest = [&](size_t i) {
    return sweep.sizes[i].choice.algorithm == largest.algorithm &&
           sweep.sizes[i].choice.protocol == largest.protocol;
  };
  if (n >= 2 && detail::AtPlateau(sweep, ranks) && runs_largest(n - 1) && runs_largest(n - 2))
    return true;
  return n >= 3 && busbw(n - 1) < busbw(n - 2) && busbw(n - 2) < busbw(n - 3);
}

void Check(const Options& o) {
  if (o.profiles.empty()) throw InputError({"<cli>", 0, "--profiles"}, "expected at least one profile");
  for (const std::string& p : o.profiles) {
    std::string path;
    profile::ProfileText(ColumnFor(p, o.rate).name, &path, {"<cli>", 0, "--profiles"});
  }
  if (!o.qos_file.empty()) {
    std::string path;
    profile::ProfileText(o.qos_file, &path, {"<cli>", 0, "--qos"});
  }
  std::map<std::string, int> seen;
  if (!o.qos_file.empty()) ++seen[o.qos_label];
  for (const std::string& p : o.profiles)
    if (++seen[p] > 1)
      throw InputError({"<cli>", 0, "--profiles"}, fmt::format("expected each profile once, got {} twice", p));
  if (o.train_model != "none") train::FindModel(o.train_model, "--train-model");
  if (o.rate != "400g" && o.rate != "800g")
    throw InputError({"<cli>", 0, "--rate"}, Expected("400g or 800g", o.rate));
  if (o.nodes < 2) throw InputError({"<cli>", 0, "--nodes"}, fmt::format("expected 2 nodes or more, got {}", o.nodes));
  for (int64_t b : o.sizes)
    if (b <= 0 || b > (int64_t{16} << 30))
      throw InputError({"<cli>", 0, "--sizes"}, fmt::format("expected sizes from 1 B to 16 GiB, got {} B", b));
  if (o.latency_samples < 1 || o.latency_samples > 1000000)
    throw InputError({"<cli>", 0, "--latency-samples"},
                     fmt::format("expected 1 to 1000000, got {}", o.latency_samples));
  if (o.iterations < 1) throw InputError({"<cli>", 0, "--iterations"}, "expected at least 1 iteration");
  if (o.jitter_iterations < 1)
    throw InputError({"<cli>", 0, "--jitter-iterations"}, "expected at least 1 iteration");
  if (o.fault_iterations < 1)
    throw InputError({"<cli>", 0, "--fault-iterations"}, "expected at least 1 iteration");
  if (!(o.fault_ber > 0 && o.fault_ber <= 1e-2))
    throw InputError({"<cli>", 0, "--fault-ber"}, fmt::format("expected a BER in (0, 0.01], got {:g}", o.fault_ber));
}

json Run(const Options& in, const std::function<void(const Progress&)>& progress,
         const std::function<bool()>& stop) {
  Options o = in;
  Check(o);
  // The default reduced sweep stops early (SweepStops); --sizes and --full
  // run every size.
  o.stop_at_plateau = o.sizes.empty() && !o.full;
  if (o.sizes.empty()) o.sizes = DefaultSweepSizes(o.full);
  if (!o.scenario.empty()) {
    // The scenario's topology sets the node count of every case (and TCO).
    const Column first = ColumnFor(o.profiles.front(), o.rate);
    const scenario::Scenario s = LoadColumn(first, 0, o);
    const int64_t hosts = static_cast<int64_t>(scenario::BuildTopology(s).hosts.size());
    const int64_t g = s.clos.gpus_per_node;
    if (g <= 0 || hosts % g != 0 || hosts / g < 2)
      throw InputError({o.scenario, 0, "topology"},
                       fmt::format("expected a topology of whole nodes of {} GPUs (2 or more), got "
                                   "{} hosts",
                                   g, hosts));
    o.nodes = o.sweep_nodes = hosts / g;
    o.full = false;
  }
  std::vector<ProfileData> data(o.profiles.size() + (o.qos_file.empty() ? 0 : 1));
  for (size_t i = 0; i < o.profiles.size(); ++i) data[i].col = ColumnFor(o.profiles[i], o.rate);
  if (!o.qos_file.empty()) data.back().col = QosColumn(o);
  // Load every profile first: bad input fails before any simulation.
  for (ProfileData& d : data) PrepareProfile(o, d);
  const std::vector<TaskRef> tasks = Tasks(o, data);
  std::vector<double> total(data.size(), 0), done(data.size(), 0);
  for (const TaskRef& t : tasks) total[t.profile] += t.weight;
  std::mutex mu;
  const KeepGoing keep_going = [&stop] { return !stop || !stop(); };
  using Clock = std::chrono::steady_clock;
  auto run_task = [&](const TaskRef& t) {
    ProfileData& d = data[t.profile];
    std::vector<std::pair<std::string, double>> wall;
    Clock::time_point started = Clock::now();
    std::string current;
    auto close = [&] {
      const Clock::time_point now = Clock::now();
      if (!current.empty()) wall.emplace_back(current, std::chrono::duration<double>(now - started).count());
      started = now;
    };
    auto stage = [&](const char* name) {
      close();
      current = name;
      if (!progress) return;
      std::lock_guard<std::mutex> lock(mu);
      progress({d.col.name, name, done[t.profile] / total[t.profile]});
    };
    switch (t.task) {
      case Task::kSmall: RunSmall(o, d, stage); break;
      case Task::kSweep: RunSweep(o, d, stage, keep_going); break;
      case Task::kJitterAndStall: RunJitterAndStall(o, d, stage, keep_going); break;
      case Task::kDegradedLink: RunDegradedLink(o, d, stage, keep_going); break;
      case Task::kTrain: RunTrain(o, d, stage); break;
      case Task::kScaling: {
        const std::optional<double> busbw = RunScaling(o, d, t.nodes, stage, keep_going);
        if (!busbw) break;
        std::lock_guard<std::mutex> lock(mu);
        d.scaling.emplace_back(t.nodes, *busbw);
        break;
      }
    }
    close();
    std::lock_guard<std::mutex> lock(mu);
    for (auto& w : wall) d.wall_s.push_back(std::move(w));
    done[t.profile] += t.weight;
    if (progress && done[t.profile] >= total[t.profile] - 1e-9) progress({d.col.name, "done", 1.0});
  };
  const size_t jobs = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(o.jobs), tasks.size()));
  std::vector<std::exception_ptr> errors(tasks.size());
  size_t next = 0;
  std::vector<std::thread> pool;
  for (size_t w = 0; w < jobs; ++w) {
    pool.emplace_back([&] {
      for (;;) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(mu);
          // After Ctrl-C no task starts; those running end at their next slice.
          if (next >= tasks.size() || !keep_going()) return;
          i = next++;
        }
        try {
          run_task(tasks[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  for (ProfileData& d : data) std::sort(d.scaling.begin(), d.scaling.end());
  return detail::Document(o, data);
}

}  // namespace lossless::compare
