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
#include "lossless/version.hpp"
#include "perf/options.hpp"
#include "profile/profile.hpp"
#include "run/perf_run.hpp"
#include "tco/tco.hpp"
#include "train/train_run.hpp"

namespace lossless::compare {
namespace {

using nlohmann::json;
using units::Time;

const Location kCli{"<cli>", 0, "compare"};
constexpr double kCheck1 = 0.92;  // checklist check 1: busbw >= 92 % of line rate
constexpr int64_t kLatencyBytes = 8;  // ib_write_lat -s 8
constexpr int kIncastSenders = 16;
constexpr int64_t kIncastBytes = int64_t{1} << 20;
constexpr int64_t kScalingBytes = int64_t{1} << 30;  // --full: busbw at 2, 4, 8, 16 nodes
// The training step simulates at most this much of each idle gap before a
// collective (train::FabricComm::set_max_idle).
constexpr Time kTrainMaxIdle = Time::Ms(1);

// --full's scaling points: 2, 4, 8 and 16 nodes, up to the cluster size.
std::vector<int64_t> ScalingNodes(const Options& o) {
  std::vector<int64_t> v;
  if (!o.full) return v;
  for (int64_t n : {2, 4, 8, 16})
    if (n <= o.nodes) v.push_back(n);
  return v;
}

}  // namespace

std::vector<int64_t> DefaultSweepSizes(bool full) {
  std::vector<int64_t> v;
  const int64_t last = full ? int64_t{4} << 30 : int64_t{512} << 20;
  for (int64_t b = int64_t{8} << 20; b <= last; b *= 2) v.push_back(b);
  return v;
}

namespace {

std::string SizeLabel(int64_t b) {
  if (b >= (int64_t{1} << 30) && b % (int64_t{1} << 30) == 0) return fmt::format("{} GiB", b >> 30);
  if (b >= (int64_t{1} << 20) && b % (int64_t{1} << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

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
  Time stall_at;
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

int64_t SweepNodes(const Options& o) { return o.full ? o.nodes : std::min(o.nodes, o.sweep_nodes); }

// The sweep reached its plateau when its largest size gains less than 3 %
// busbw over the size before it.
bool AtPlateau(const perf::PerfResult& r, int64_t ranks);

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

// "7b" -> "7B", as the model's name is written.
// "Llama 2 7B", "TinyLlama 1.1B": the preset's source up to its citation.
std::string ModelLabel(const std::string& m) {
  const std::string source = train::FindModel(m, "--train-model").source;
  return source.substr(0, source.find(" ("));
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

// ---- the document ----------------------------------------------------------

json Num(double v, int digits) {
  if (!std::isfinite(v)) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

struct RowBuilder {
  json rows = json::array();
  void Add(const std::string& section, const std::string& key, const std::string& label,
           const std::string& unit, const std::string& better, json values, json notes = json::object()) {
    json r;
    r["section"] = section;
    r["key"] = key;
    r["label"] = label;
    r["unit"] = unit;
    r["values"] = std::move(values);
    if (!notes.empty()) r["notes"] = std::move(notes);
    r["better"] = better;
    rows.push_back(std::move(r));
  }
};

double PeakBusbw(const perf::PerfResult& r, int64_t ranks, int64_t* at_bytes) {
  double best = 0;
  for (const perf::SizeResult& s : r.sizes) {
    const perf::Row row = perf::ToRow(s, r.options.collective, ranks);
    if (row.out_of_place.busbw_gbs > best) {
      best = row.out_of_place.busbw_gbs;
      *at_bytes = s.counts.size_bytes;
    }
  }
  return best;
}

bool AtPlateau(const perf::PerfResult& r, int64_t ranks) {
  if (r.sizes.size() < 2) return false;
  const double last = perf::ToRow(r.sizes.back(), r.options.collective, ranks).out_of_place.busbw_gbs;
  const double prev =
      perf::ToRow(r.sizes[r.sizes.size() - 2], r.options.collective, ranks).out_of_place.busbw_gbs;
  return prev > 0 && last / prev < 1.03;
}

json CdfPoints(std::vector<double> v) {
  json out = json::array();
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const size_t points = std::min<size_t>(200, n);
  for (size_t k = 0; k < points; ++k) {
    const size_t i = points == 1 ? 0 : k * (n - 1) / (points - 1);
    out.push_back({{"p", Num(static_cast<double>(i + 1) / static_cast<double>(n), 4)},
                   {"us", Num(v[i], 4)}});
  }
  return out;
}

json Operations(const std::vector<ProfileData>& data) {
  struct Fact {
    const char* label;
    const char* ib;
    const char* roce;
    const char* cloud;
    const char* source;
  };
  static const Fact kFacts[] = {
      {"Management plane", "subnet manager (OpenSM or UFM) computes every route centrally",
       "distributed routing protocol (BGP/ECMP) on each switch, configured per switch or by automation",
       "operated by the provider; not visible to the tenant",
       "InfiniBand Architecture Specification vol. 1, ch. 14 (subnet management); RFC 7938 (BGP in "
       "large-scale data centres)"},
      {"Vendor sourcing", "switches, NICs and optics from one vendor (NVIDIA Quantum / ConnectX)",
       "switch silicon from several vendors (Broadcom, NVIDIA Spectrum, Cisco, Marvell); "
       "multi-source optics",
       "provider's choice",
       "NVIDIA InfiniBand product pages; Ultra Ethernet Consortium member list"},
      {"Telemetry", "UFM, perfquery and port counters through the subnet manager",
       "SNMP, gNMI/OpenConfig streaming telemetry, per-queue PFC/ECN counters on each switch",
       "provider metrics; switch counters usually not exposed",
       "NVIDIA UFM documentation; OpenConfig gNMI specification"},
      {"Skills", "InfiniBand fabric administration (subnet manager, partitions, IB diagnostics)",
       "Ethernet data-centre networking plus lossless tuning (PFC headroom, ECN, DCQCN)",
       "cloud operations; little network tuning possible",
       "commissioning checklist checks 2 and 5 (docs/compare.md)"},
  };
  json out = json::array();
  for (const Fact& f : kFacts) {
    json values = json::object();
    for (const ProfileData& d : data) {
      const bool ib = d.s.net.ib.enabled;
      const bool cloud = d.s.cost_model == "cloud";
      values[d.col.name] = cloud ? f.cloud : ib ? f.ib : f.roce;
    }
    out.push_back({{"label", f.label}, {"values", values}, {"source", f.source}});
  }
  return out;
}

// The price names of the TCO model's "placeholder NAME = ..." warnings.
std::vector<std::string> PlaceholderNames(const tco::Result& t) {
  std::vector<std::string> names;
  const std::string lead = "placeholder ";
  for (const std::string& w : t.warnings) {
    if (w.rfind(lead, 0) != 0) continue;
    const size_t end = w.find(' ', lead.size());
    names.push_back(w.substr(lead.size(), end == std::string::npos ? std::string::npos : end - lead.size()));
  }
  return names;
}

// Under which prices "30-50 % cheaper" holds (issue 11): the factor on one
// fabric's hardware prices, the other's unchanged (tco::SavingUnderPrices).
std::string ClaimWindowSentence(const tco::SavingWindow& w) {
  auto range = [](double low, double high, const char* who) {
    if (high <= 0) return fmt::format("no {} hardware price reaches it", who);
    return fmt::format("{} hardware at {:.2f}-{:.2f}x these prices", who, low, high);
  };
  return fmt::format(
      "The claim holds with {}, or with {}, the other fabric's prices, energy and operations "
      "unchanged.",
      range(w.eth_low, w.eth_high, "Ethernet"), range(w.ib_low, w.ib_high, "InfiniBand"));
}

// Whether `d` finished the task a row of `section` and `key` comes from.
bool RanRow(const Options& o, const ProfileData& d, const std::string& section,
            const std::string& key) {
  if (key == "line_rate_gbs") return true;  // the profile's, not measured
  if (section == "latency" || section == "incast" || section == "tco") return d.ran_small;
  if (section == "jitter") return d.ran_jitter_stall;
  if (section == "fault") return key.starts_with("ber_") ? d.ran_degraded : d.ran_jitter_stall;
  if (section == "training") return d.ran_train;
  if (key.starts_with("scaling_busbw_")) {
    const int64_t n = std::stoll(key.substr(std::string("scaling_busbw_").size()));
    for (const auto& sc : d.scaling)
      if (sc.first == n) return true;
    return std::find(ScalingNodes(o).begin(), ScalingNodes(o).end(), n) == ScalingNodes(o).end();
  }
  return d.ran_sweep;  // the other collective rows
}

// Whether any task of any profile did not finish.
bool Interrupted(const Options& o, const std::vector<ProfileData>& data) {
  for (const ProfileData& d : data) {
    if (!d.ran_small || !d.ran_sweep || !d.ran_jitter_stall || !d.ran_degraded) return true;
    if (o.train_model != "none" && !d.ran_train) return true;
    if (d.scaling.size() != ScalingNodes(o).size()) return true;
  }
  return false;
}

// Rows whose task did not finish: value null, note "not run".
void MarkNotRun(const Options& o, const std::vector<ProfileData>& data, json& rows) {
  for (json& r : rows) {
    for (const ProfileData& d : data) {
      if (RanRow(o, d, r.at("section").get<std::string>(), r.at("key").get<std::string>())) continue;
      r["values"][d.col.name] = nullptr;
      r["notes"][d.col.name] = std::string(kNotRunNote) + ": the comparison was interrupted (Ctrl-C)";
    }
  }
}

json Document(const Options& o, const std::vector<ProfileData>& data) {
  json doc;
  doc["schema"] = "lossless.compare/1";
  doc["lossless_version"] = kVersion;
  const int64_t g = data.empty() ? 8 : data[0].s.clos.gpus_per_node;
  const int64_t nodes = SweepNodes(o);
  const int64_t ranks = nodes * g;
  doc["options"] = {{"nodes", o.nodes},
                    {"sweep_nodes", nodes},
                    {"gpus_per_node", g},
                    {"rate", o.rate},
                    {"seed", o.seed},
                    {"full", o.full},
                    {"sizes", o.sizes},
                    {"tco_gpus", o.nodes * g},
                    {"latency_samples", o.latency_samples},
                    {"iterations", o.iterations},
                    {"jitter_bytes", o.jitter_bytes},
                    {"jitter_iterations", o.jitter_iterations},
                    {"fault_iterations", o.fault_iterations},
                    {"sweep_stops_at_plateau", o.stop_at_plateau},
                    {"fault_ber", o.fault_ber},
                    {"stall_us", Num(static_cast<double>(o.stall.ps()) / 1e6, 3)},
                    {"scenario", o.scenario},
                    {"train_model", o.train_model}};
  if (o.timing) {
    // Wall-clock seconds per profile and stage (--timing): varies run to run.
    json t = json::object();
    const std::vector<std::string> order = {"latency", "incast", "tco", "all-reduce sweep", "jitter",
                                            "fault: stalled NIC", "fault: degraded link",
                                            "training step"};
    auto rank = [&](const std::string& stage) {
      return static_cast<size_t>(std::find(order.begin(), order.end(), stage) - order.begin());
    };
    for (const ProfileData& d : data) {
      std::vector<std::pair<std::string, double>> wall = d.wall_s;
      std::stable_sort(wall.begin(), wall.end(), [&](const auto& a, const auto& b) {
        return rank(a.first) != rank(b.first) ? rank(a.first) < rank(b.first) : a.first < b.first;
      });
      json stages = json::array();
      for (const auto& [stage, sec] : wall) stages.push_back({{"stage", stage}, {"seconds", Num(sec, 3)}});
      t[d.col.name] = stages;
    }
    doc["timing"] = t;
  }
  json profiles = json::array();
  for (const ProfileData& d : data) {
    json p;
    p["name"] = d.col.name;
    p["description"] = d.s.description;
    p["file"] = d.file;
    p["link_layer"] = d.s.net.ib.enabled ? "infiniband" : "roce";
    p["link_rate_gbps"] = d.s.clos.link_rate.bps() / 1000000000;
    p["line_rate_gbs"] = Num(d.line_rate_gbs, 3);
    p["topology"] = scenario::BuildTopology(d.s).description;
    json warn = json::array();
    for (const std::string& w : PlaceholderNames(d.tco)) warn.push_back(w);
    p["placeholders"] = warn;
    profiles.push_back(p);
  }
  doc["profiles"] = profiles;

  RowBuilder rb;
  auto each = [&](auto f) {
    json v = json::object();
    for (const ProfileData& d : data) v[d.col.name] = f(d);
    return v;
  };
  auto notes_where = [&](bool ib, const char* text) {
    json n = json::object();
    for (const ProfileData& d : data)
      if (d.s.net.ib.enabled == ib) n[d.col.name] = text;
    return n;
  };
  auto ib_notes = [&](const char* text) { return notes_where(true, text); };
  auto roce_notes = [&](const char* text) { return notes_where(false, text); };
  // Latency.
  const std::string lat = fmt::format("RDMA write latency, {} B", kLatencyBytes);
  rb.Add("latency", "latency_p50_us", lat + ", p50", "us", "lower",
         each([](const ProfileData& d) { return Num(Percentile(d.latency.samples_us, 50), 3); }));
  rb.Add("latency", "latency_p99_us", lat + ", p99", "us", "lower",
         each([](const ProfileData& d) { return Num(Percentile(d.latency.samples_us, 99), 3); }));
  rb.Add("latency", "latency_p999_us", lat + ", p99.9", "us", "lower",
         each([](const ProfileData& d) { return Num(Percentile(d.latency.samples_us, 99.9), 3); }));
  // Collective.
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    rb.Add("collective", fmt::format("busbw_{}", o.sizes[i]),
           fmt::format("all_reduce busbw, {}", SizeLabel(o.sizes[i])), "GB/s", "higher",
           each([&](const ProfileData& d) -> json {
             if (i >= d.sweep.sizes.size()) return nullptr;
             return Num(perf::ToRow(d.sweep.sizes[i], collective::Collective::kAllReduce, ranks)
                            .out_of_place.busbw_gbs,
                        2);
           }));
  }
  rb.Add("collective", "peak_busbw_gbs", "all_reduce peak busbw", "GB/s", "higher",
         each([&](const ProfileData& d) {
           int64_t at = 0;
           return Num(PeakBusbw(d.sweep, ranks, &at), 2);
         }));
  rb.Add("collective", "line_rate_gbs", "line rate (NICs of one node)", "GB/s", "",
         each([](const ProfileData& d) { return Num(d.line_rate_gbs, 1); }));
  json eff_notes = json::object();
  for (const ProfileData& d : data)
    if (!AtPlateau(d.sweep, ranks))
      eff_notes[d.col.name] = "not at plateau: the largest size still gains 3 % or more";
  rb.Add("collective", "efficiency_pct", "peak busbw / line rate", "%", "higher",
         each([&](const ProfileData& d) {
           int64_t at = 0;
           return Num(100 * PeakBusbw(d.sweep, ranks, &at) / d.line_rate_gbs, 1);
         }),
         eff_notes);
  rb.Add("collective", "check1", "checklist 1: busbw >= 92 % of line rate", "", "",
         each([&](const ProfileData& d) -> json {
           int64_t at = 0;
           const double e = PeakBusbw(d.sweep, ranks, &at) / d.line_rate_gbs;
           if (!d.sweep_failure.empty()) return "fail (" + d.sweep_failure + ")";
           if (e >= kCheck1) return "pass";
           return AtPlateau(d.sweep, ranks) ? "fail" : "not at plateau";
         }));
  for (size_t k = 0; k < ScalingNodes(o).size(); ++k) {
    const int64_t n = ScalingNodes(o)[k];
    rb.Add("collective", fmt::format("scaling_busbw_{}", n),
           fmt::format("all_reduce busbw, {} on {} nodes", SizeLabel(kScalingBytes), n), "GB/s",
           "higher", each([&](const ProfileData& d) -> json {
             for (const auto& [nodes_run, busbw] : d.scaling)
               if (nodes_run == n && busbw > 0) return Num(busbw, 2);
             return nullptr;
           }));
  }
  // Jitter.
  const std::string jl = fmt::format("all_reduce {} iteration", SizeLabel(o.jitter_bytes));
  rb.Add("jitter", "iter_p50_us", jl + " p50", "us", "lower",
         each([](const ProfileData& d) { return Num(Percentile(d.jitter.iterations_us, 50), 2); }));
  rb.Add("jitter", "iter_p99_us", jl + " p99", "us", "lower",
         each([](const ProfileData& d) { return Num(Percentile(d.jitter.iterations_us, 99), 2); }));
  rb.Add("jitter", "iter_p99_over_p50", jl + " p99/p50", "", "lower", each([](const ProfileData& d) {
           const double p50 = Percentile(d.jitter.iterations_us, 50);
           return p50 > 0 ? Num(Percentile(d.jitter.iterations_us, 99) / p50, 4) : json(nullptr);
         }));
  rb.Add("jitter", "iter_cv", jl + " coefficient of variation", "", "lower",
         each([](const ProfileData& d) { return Num(Cv(d.jitter.iterations_us), 5); }));
  // Incast.
  const std::string il = fmt::format("incast {}x{}", kIncastSenders, SizeLabel(kIncastBytes));
  rb.Add("incast", "incast_time_us", il + ": time until the last incast byte arrived", "us",
         "lower", each([](const ProfileData& d) { return Num(d.incast.duration_us, 2); }));
  rb.Add("incast", "victim_probe_p50_us", il + ": victim probe latency p50", "us", "lower",
         each([](const ProfileData& d) { return Num(d.incast.probe_p50_us, 3); }));
  rb.Add("incast", "victim_probe_p99_us", il + ": victim probe latency p99", "us", "lower",
         each([](const ProfileData& d) { return Num(d.incast.probe_p99_us, 3); }));
  rb.Add("incast", "victim_gbps", il + ": victim flow throughput", "Gb/s", "higher",
         each([](const ProfileData& d) { return Num(d.incast.victim_gbps, 2); }));
  rb.Add("incast", "incast_gbps", il + ": goodput into the target", "Gb/s", "higher",
         each([](const ProfileData& d) { return Num(d.incast.incast_gbps, 2); }));
  rb.Add("incast", "pause_frames", il + ": PAUSE frames", "count", "lower",
         each([](const ProfileData& d) { return d.incast.pause_frames; }));
  rb.Add("incast", "paused_pct", il + ": most-paused port, paused time", "%", "lower",
         each([](const ProfileData& d) { return Num(100 * d.incast.max_paused_fraction, 2); }));
  rb.Add("incast", "credit_starved_pct", il + ": most credit-starved port, starved time", "%",
         "lower", each([](const ProfileData& d) -> json {
           if (!d.s.net.ib.enabled) return nullptr;
           return Num(100 * d.incast.max_credit_starved_fraction, 2);
         }),
         roce_notes("no credit flow control on RoCE"));
  rb.Add("incast", "ecn_marks", il + ": ECN marks", "count", "",
         each([](const ProfileData& d) { return d.incast.ecn_marks; }));
  rb.Add("incast", "drops", il + ": congestion drops", "count", "lower",
         each([](const ProfileData& d) { return d.incast.drops; }));
  json incast_notes = json::object();
  for (const ProfileData& d : data)
    if (!d.incast.failure.empty()) incast_notes[d.col.name] = d.incast.failure;
  rb.Add("incast", "retransmissions", il + ": retransmitted packets", "count", "lower",
         each([](const ProfileData& d) { return d.incast.retransmissions; }), incast_notes);
  rb.Add("incast", "naks", il + ": NAKs", "count", "lower",
         each([](const ProfileData& d) { return d.incast.naks; }));
  rb.Add("incast", "ack_timeouts", il + ": ACK timeouts", "count", "lower",
         each([](const ProfileData& d) { return d.incast.ack_timeouts; }));
  // Faults, each against the fault-free samples at the same places in the
  // run (PairedFaultFree; the mean of all of them showed cloud-shared 22 %
  // faster with a degraded link than without).
  auto paired = [](const CollectiveRun& f, const CollectiveRun& base) {
    return PairedFaultFree(f.iterations_us.size(), base.iterations_us);
  };
  auto slowdown = [&](const CollectiveRun& f, const CollectiveRun& base) -> json {
    if (!f.failure.empty() || f.iterations_us.empty()) return nullptr;
    const double b = Mean(paired(f, base));
    return b > 0 ? Num(100 * (Mean(f.iterations_us) / b - 1), 2) : json(nullptr);
  };
  json ber_notes = json::object(), stall_notes = json::object();
  for (const ProfileData& d : data) {
    if (!d.ber.failure.empty()) ber_notes[d.col.name] = d.ber.failure;
    if (!d.stall.failure.empty()) stall_notes[d.col.name] = d.stall.failure;
  }
  const std::string bl = fmt::format("degraded link (BER {:g})", o.fault_ber);
  // One local ACK timeout (a loss no later packet reveals) stalls the
  // collective for the whole timeout when it waits for that message, longer
  // than all the case's samples take without it: the mean slowdown then
  // measures whether one happened (a timeout for a message the collective no
  // longer waits for, e.g. its last ACK lost, costs nothing). The count goes
  // beside it, with the median iteration's slowdown, which one stalled
  // iteration does not move.
  const double timeout_s = static_cast<double>(4096LL << std::min(o.fault_timeout_exp, 40)) / 1e9;
  for (const ProfileData& d : data) {
    const int64_t n = d.ber.perf.ack_timeouts;
    if (n > 0 && d.ber.failure.empty() && !d.ber.iterations_us.empty())
      ber_notes[d.col.name] = fmt::format(
          "{} ACK timeout{} ({:.3g} s each) during the {} samples: see the median row", n,
          n == 1 ? "" : "s", timeout_s, d.ber.iterations_us.size());
  }
  // A faulted run faster than the fault-free one: on a profile with other
  // tenants the fault hits their traffic too (lost frames and go-back-N on
  // the degraded link, PAUSE behind the stalled NIC), which frees the shared
  // queues for the job; and its iterations vary. Said, not hidden.
  auto faster_note = [&](const ProfileData& d, const CollectiveRun& f, json& notes) {
    const json v = slowdown(f, d.jitter);
    if (!v.is_number() || v.get<double>() >= 0 || d.s.shared.tenant_load <= 0 ||
        notes.contains(d.col.name))
      return;
    notes[d.col.name] = fmt::format(
        "faster than without the fault: the fault also hits the other tenants' traffic, which "
        "can free the shared queues for the job, and fault-free iterations vary (coefficient of "
        "variation {:.2f}); read it as no measurable slowdown",
        Cv(d.jitter.iterations_us));
  };
  json stall_slowdown_notes = stall_notes;
  for (const ProfileData& d : data) {
    faster_note(d, d.ber, ber_notes);
    faster_note(d, d.stall, stall_slowdown_notes);
  }
  rb.Add("fault", "ber_slowdown_pct", bl + ": all_reduce slowdown (mean)", "%", "lower",
         each([&](const ProfileData& d) { return slowdown(d.ber, d.jitter); }), ber_notes);
  rb.Add("fault", "ber_slowdown_p50_pct", bl + ": all_reduce slowdown (median)", "%", "lower",
         each([&](const ProfileData& d) -> json {
           if (!d.ber.failure.empty() || d.ber.iterations_us.empty()) return nullptr;
           const double b = Percentile(paired(d.ber, d.jitter), 50);
           return b > 0 ? Num(100 * (Percentile(d.ber.iterations_us, 50) / b - 1), 2) : json(nullptr);
         }));
  rb.Add("fault", "ber_ack_timeouts", bl + fmt::format(": ACK timeouts ({:.3g} s each)", timeout_s),
         "count", "lower", each([](const ProfileData& d) { return d.ber.perf.ack_timeouts; }));
  auto links_sum = [](const CollectiveRun& c, auto field) {
    int64_t n = 0;
    for (const perf::LinkCounters& l : c.perf.links) n += field(l);
    return n;
  };
  rb.Add("fault", "ber_losses", bl + ": frames lost and recovered", "count", "",
         each([&](const ProfileData& d) {
           return links_sum(d.ber, [](const perf::LinkCounters& l) { return l.drops; });
         }));
  rb.Add("fault", "ber_retx", bl + ": retransmitted packets", "count", "lower",
         each([&](const ProfileData& d) {
           return links_sum(d.ber, [](const perf::LinkCounters& l) { return l.retransmissions; });
         }));
  const std::string sl =
      fmt::format("stalled NIC ({} us)", static_cast<double>(o.stall.ps()) / 1e6);
  rb.Add("fault", "stall_worst_extra_us", sl + ": worst iteration minus p50", "us", "lower",
         each([&](const ProfileData& d) -> json {
           if (!d.stall.failure.empty() || d.stall.iterations_us.empty()) return nullptr;
           return Num(Percentile(d.stall.iterations_us, 100) - Percentile(paired(d.stall, d.jitter), 50), 2);
         }),
         stall_notes);
  rb.Add("fault", "stall_slowdown_pct", sl + ": all_reduce slowdown (mean)", "%", "lower",
         each([&](const ProfileData& d) { return slowdown(d.stall, d.jitter); }),
         stall_slowdown_notes);
  rb.Add("fault", "stall_pause_frames", sl + ": PAUSE frames", "count", "lower",
         each([&](const ProfileData& d) {
           return links_sum(d.stall, [](const perf::LinkCounters& l) { return l.pause_frames; });
         }));
  rb.Add("fault", "stall_paused_us", sl + ": paused time, all ports", "us", "lower",
         each([&](const ProfileData& d) -> json {
           if (d.s.net.ib.enabled) return nullptr;
           double t = 0;
           for (const perf::LinkCounters& l : d.stall.perf.links) t += l.paused_us;
           return Num(t, 2);
         }),
         ib_notes("InfiniBand has no PAUSE: see credit-starved time"));
  rb.Add("fault", "stall_starved_extra_us",
         sl + ": credit-starved time beyond the fault-free run, all ports", "us", "lower",
         each([&](const ProfileData& d) -> json {
           if (!d.s.net.ib.enabled) return nullptr;
           // The fault-free run is the jitter case's, of --jitter-iterations
           // (40) against the stall's --fault-iterations (10), one warm-up
           // each: its starved time per collective call, scaled to the
           // stall's calls. (Subtracting it whole gave -152,387 us on 16
           // nodes x 8 GPUs, the first --full run.)
           double stalled = 0, fault_free = 0;
           for (const perf::LinkCounters& l : d.stall.perf.links) stalled += l.credit_starved_us;
           for (const perf::LinkCounters& l : d.jitter.perf.links) fault_free += l.credit_starved_us;
           return Num(StarvedBeyondFaultFree(stalled, o.fault_iterations, fault_free,
                                             o.jitter_iterations),
                      2);
         }),
         roce_notes("no credit flow control on RoCE"));
  // Training step.
  if (o.train_model != "none") {
    json train_notes = json::object();
    for (const ProfileData& d : data)
      if (!d.train_failure.empty()) train_notes[d.col.name] = d.train_failure;
    const std::string tl = fmt::format("{} FSDP step", ModelLabel(o.train_model));
    auto step_value = [&](auto f) {
      return each([&](const ProfileData& d) -> json {
        if (!d.train_failure.empty() || d.train.steps.empty()) return nullptr;
        return f(d.train, d.train.steps[0]);
      });
    };
    auto ms = [](units::Time t) { return static_cast<double>(t.ps()) / 1e9; };
    rb.Add("training", "train_step_ms", tl + ": step time", "ms", "lower",
           step_value([&](const train::TrainResult&, const train::StepResult& s) {
             return Num(ms(s.times.step), 3);
           }),
           train_notes);
    rb.Add("training", "train_exposed_ms", tl + ": exposed communication", "ms", "lower",
           step_value([&](const train::TrainResult&, const train::StepResult& s) {
             return Num(ms(s.times.exposed), 3);
           }),
           train_notes);
    rb.Add("training", "train_mfu_pct", tl + ": MFU", "%", "higher",
           step_value([&](const train::TrainResult&, const train::StepResult& s) {
             return Num(100 * s.mfu, 2);
           }),
           train_notes);
    rb.Add("training", "train_fabric_share", tl + ": step / step on an infinitely fast network", "",
           "lower", step_value([&](const train::TrainResult& r, const train::StepResult& s) {
             return Num(
                 static_cast<double>(s.times.step.ps()) / static_cast<double>(r.ideal_step.ps()),
                 4);
           }),
           train_notes);
  }
  // TCO.
  const int64_t gpus = o.nodes * g;
  auto bom = [](const tco::Result& t, const std::string& item, bool usd) -> json {
    for (const tco::BomLine& l : t.bom)
      if (l.item == item) return usd ? Num(l.total_usd, 0) : json(l.count);
    return nullptr;
  };
  auto cloud_note = [&]() {
    json n = json::object();
    for (const ProfileData& d : data)
      if (d.tco.cost_model == "cloud") n[d.col.name] = "provider fabric: not sized (price per GPU-hour includes GPUs)";
    return n;
  };
  const std::string tl = fmt::format("{} GPUs", gpus);
  for (const char* item : {"switches", "NICs", "host optics", "switch optics", "fibre runs"}) {
    rb.Add("tco", fmt::format("tco_{}_count", item), fmt::format("{}: {}", tl, item), "count", "",
           each([&](const ProfileData& d) { return bom(d.tco, item, false); }), cloud_note());
    rb.Add("tco", fmt::format("tco_{}_usd", item), fmt::format("{}: {} cost", tl, item), "USD",
           "lower", each([&](const ProfileData& d) { return bom(d.tco, item, true); }), cloud_note());
  }
  rb.Add("tco", "tco_capex_usd", tl + ": fabric capex", "USD", "lower",
         each([](const ProfileData& d) -> json {
           return d.tco.cost_model == "cloud" ? json(nullptr) : Num(d.tco.capex_usd, 0);
         }),
         cloud_note());
  rb.Add("tco", "tco_power_kw", tl + ": fabric power", "kW", "lower",
         each([](const ProfileData& d) -> json {
           return d.tco.cost_model == "cloud" ? json(nullptr) : Num(d.tco.power_w / 1e3, 2);
         }),
         cloud_note());
  rb.Add("tco", "tco_opex_usd_year", tl + ": operations", "USD/year", "lower",
         each([](const ProfileData& d) -> json {
           for (const tco::CostLine& c : d.tco.annual)
             if (c.item == "operations") return Num(c.usd_per_year, 0);
           return nullptr;
         }),
         cloud_note());
  json per_gpu_notes = json::object();
  for (const ProfileData& d : data)
    if (d.tco.cost_model == "cloud") per_gpu_notes[d.col.name] = d.tco.comparability;
  rb.Add("tco", "tco_per_gpu_year", tl + ": cost per GPU per year", "USD/GPU/year", "lower",
         each([](const ProfileData& d) { return Num(d.tco.per_gpu_year, 0); }), per_gpu_notes);
  rb.Add("tco", "tco_per_gbs_year",
         tl + ": cost per GPU per year per GB/s of its busbw", "USD/year per GB/s", "lower",
         each([&](const ProfileData& d) -> json {
           int64_t at = 0;
           const double per_gpu_busbw = PeakBusbw(d.sweep, ranks, &at) / static_cast<double>(g);
           return per_gpu_busbw > 0 ? Num(d.tco.per_gpu_year / per_gpu_busbw, 2) : json(nullptr);
         }),
         per_gpu_notes);
  MarkNotRun(o, data, rb.rows);
  doc["rows"] = rb.rows;

  // Series for the report.
  json series;
  json busbw = json::object(), cdf = json::object(), iters = json::object(),
       timeline = json::object(), tco = json::object(), train_steps = json::object();
  for (const ProfileData& d : data) {
    json pts = json::array();
    for (const perf::SizeResult& s : d.sweep.sizes) {
      const perf::Row row = perf::ToRow(s, collective::Collective::kAllReduce, ranks);
      pts.push_back({{"bytes", s.counts.size_bytes},
                     {"busbw_gbs", Num(row.out_of_place.busbw_gbs, 3)},
                     {"time_us", Num(row.out_of_place.time_us, 3)},
                     {"algorithm", collective::AlgorithmName(s.choice.algorithm)},
                     {"protocol", collective::ProtocolName(s.choice.protocol)},
                     {"channels", s.choice.channels}});
    }
    busbw[d.col.name] = pts;
    cdf[d.col.name] = CdfPoints(d.latency.samples_us);
    json it = json::array();
    for (double v : d.jitter.iterations_us) it.push_back(Num(v, 3));
    iters[d.col.name] = {{"bytes", o.jitter_bytes}, {"time_us", it}};
    json paused = json::array();
    for (const auto& [a, b] : d.incast.held) paused.push_back({Num(a, 3), Num(b, 3)});
    json t_us = json::array(), q = json::array();
    for (double v : d.incast.t_us) t_us.push_back(Num(v, 3));
    for (double v : d.incast.queue_bytes) q.push_back(v);
    timeline[d.col.name] = {{"port", d.incast.timeline_port},
                            {"held_port", d.incast.held_port},
                            {"held_kind", d.incast.held_kind},
                            {"t_us", t_us},
                            {"queue_bytes", q},
                            {"paused", paused}};
    json bars = json::object();
    if (d.tco.cost_model != "cloud") {
      for (const tco::BomLine& l : d.tco.bom)
        bars[l.item] = Num(l.annual_usd / static_cast<double>(gpus), 2);
      for (const tco::CostLine& c : d.tco.annual)
        if (c.item == "operations") bars["operations"] = Num(c.usd_per_year / static_cast<double>(gpus), 2);
    } else {
      bars["cloud price (includes GPUs)"] = Num(d.tco.per_gpu_year, 2);
    }
    tco[d.col.name] = bars;
    if (!d.train.steps.empty() && d.train_failure.empty()) {
      // The step's parts: compute, TP all-reduces (on the compute stream)
      // and the data-parallel communication not hidden behind compute.
      const train::StepTimes& st = d.train.steps[0].times;
      auto ms = [](units::Time t) { return Num(static_cast<double>(t.ps()) / 1e9, 3); };
      train_steps[d.col.name] = {{"compute_ms", ms(st.compute)},
                                 {"tp_ms", ms(st.tp)},
                                 {"exposed_dp_ms", ms(st.exposed - st.tp)},
                                 {"step_ms", ms(st.step)},
                                 {"ideal_step_ms", ms(d.train.ideal_step)}};
    }
  }
  series["busbw"] = busbw;
  series["latency_cdf"] = cdf;
  series["iterations"] = iters;
  series["incast_timeline"] = timeline;
  series["tco"] = tco;
  if (o.train_model != "none") series["train_step"] = train_steps;
  doc["series"] = series;

  // Summary: what the numbers say, computed from them.
  json summary = json::array();
  const ProfileData* best = nullptr;
  for (const ProfileData& d : data) {
    int64_t at = 0;
    if (best == nullptr || PeakBusbw(d.sweep, ranks, &at) > PeakBusbw(best->sweep, ranks, &at))
      best = &d;
  }
  if (best != nullptr) {
    int64_t at = 0;
    summary.push_back(fmt::format("Highest all_reduce busbw: {} at {:.1f} GB/s ({:.1f} % of its line rate), "
                                  "{} nodes x {} GPUs.",
                                  best->col.name, PeakBusbw(best->sweep, ranks, &at),
                                  100 * PeakBusbw(best->sweep, ranks, &at) / best->line_rate_gbs, nodes, g));
  }
  auto find = [&](const std::string& prefix) -> const ProfileData* {
    for (const ProfileData& d : data)
      if (d.col.requested == prefix) return &d;
    return nullptr;
  };
  const ProfileData* ib = find("ib-ndr");
  const ProfileData* tuned = find("roce-tuned");
  const ProfileData* untuned = find("roce-untuned");
  json claim = nullptr;  // where "30-50 % cheaper" holds
  if (ib != nullptr && tuned != nullptr) {
    int64_t at = 0;
    const double a = PeakBusbw(ib->sweep, ranks, &at), b = PeakBusbw(tuned->sweep, ranks, &at);
    const bool matches = a > 0 && b / a >= 0.95;
    summary.push_back(fmt::format(
        "Tuned RoCE {} InfiniBand on peak busbw at {}: {:.1f} vs {:.1f} GB/s ({:+.1f} %; the bar "
        "is within 5 %).",
        matches ? "matches" : "does not match", o.rate, b, a, a > 0 ? 100 * (b / a - 1) : 0.0));
    if (ib->tco.annual_usd > 0 && tuned->tco.annual_usd > 0) {
      const double saving = 100 * (1 - tuned->tco.annual_usd / ib->tco.annual_usd);
      summary.push_back(fmt::format(
          "Fabric cost of {} GPUs: {} costs {:.0f} USD/GPU/year, {} {:.0f}: Ethernet is {:.0f} % "
          "{} at these prices; the \"30-50 % cheaper\" claim {} here.",
          gpus, ib->col.name, ib->tco.per_gpu_year, tuned->col.name, tuned->tco.per_gpu_year,
          std::abs(saving), saving >= 0 ? "cheaper" : "dearer",
          saving >= 30 && saving <= 50 ? "holds" : "does not hold"));
      const tco::SavingWindow w = tco::SavingUnderPrices(ib->tco, tuned->tco, 0.30, 0.50);
      summary.push_back(ClaimWindowSentence(w));
      claim = {{"fabrics", {ib->col.name, tuned->col.name}},
               {"saving_pct", Num(100 * w.saving, 2)},
               {"ethernet_hardware_factor", {Num(w.eth_low, 4), Num(w.eth_high, 4)}},
               {"infiniband_hardware_factor", {Num(w.ib_low, 4), Num(w.ib_high, 4)}}};
    }
  }
  if (tuned != nullptr && untuned != nullptr) {
    // A "tuned" column that loses to the untuned one says so, with the sizes.
    std::string slower;
    bool on_tree = false;
    for (const perf::SizeResult& a : tuned->sweep.sizes) {
      for (const perf::SizeResult& b : untuned->sweep.sizes) {
        if (a.counts.size_bytes != b.counts.size_bytes) continue;
        const double x = perf::ToRow(a, tuned->sweep.options.collective, ranks).out_of_place.busbw_gbs;
        const double y = perf::ToRow(b, untuned->sweep.options.collective, ranks).out_of_place.busbw_gbs;
        if (!(x > 0 && y > 0 && x < 0.97 * y)) continue;
        on_tree = on_tree || a.choice.algorithm == collective::Algorithm::kTree;
        slower += fmt::format("{}{} {:.1f} vs {:.1f} GB/s ({}/{})", slower.empty() ? "" : ", ",
                              SizeLabel(a.counts.size_bytes), x, y,
                              collective::AlgorithmName(a.choice.algorithm),
                              collective::ProtocolName(a.choice.protocol));
      }
    }
    if (!slower.empty())
      summary.push_back(fmt::format(
          "{} is slower than {} on the all-reduce at {}. Where this was diagnosed, its ECN marks "
          "from Kmin made DCQCN cut rates where the collective's own traffic queues briefly{}, "
          "which PFC alone carries at line rate "
          "(docs/compare-results.md#three-anomalies-of-the-full-run-explained).",
          tuned->col.name, untuned->col.name, slower,
          on_tree ? " (on Tree, a NIC receiving from its children and parent at once)" : ""));
    summary.push_back(fmt::format(
        "Under the same incast, {} sent {} PAUSE frames against {} for {} (most-paused port {:.1f} % "
        "vs {:.1f} % of the time).",
        untuned->col.name, untuned->incast.pause_frames, tuned->incast.pause_frames,
        tuned->col.name, 100 * untuned->incast.max_paused_fraction,
        100 * tuned->incast.max_paused_fraction));
  }
  const ProfileData* worst_tail = nullptr;
  for (const ProfileData& d : data)
    if (worst_tail == nullptr ||
        Percentile(d.latency.samples_us, 99) > Percentile(worst_tail->latency.samples_us, 99))
      worst_tail = &d;
  if (worst_tail != nullptr)
    summary.push_back(fmt::format("Worst small-message tail: {} (p99 {:.2f} us).", worst_tail->col.name,
                                  Percentile(worst_tail->latency.samples_us, 99)));
  const ProfileData *fast_train = nullptr, *slow_train = nullptr;
  for (const ProfileData& d : data) {
    if (d.train.steps.empty() || !d.train_failure.empty()) continue;
    const units::Time t = d.train.steps[0].times.step;
    if (fast_train == nullptr || t < fast_train->train.steps[0].times.step) fast_train = &d;
    if (slow_train == nullptr || t > slow_train->train.steps[0].times.step) slow_train = &d;
  }
  if (fast_train != nullptr && slow_train != nullptr && fast_train != slow_train) {
    const double a = static_cast<double>(fast_train->train.steps[0].times.step.ps()) / 1e9;
    const double b = static_cast<double>(slow_train->train.steps[0].times.step.ps()) / 1e9;
    summary.push_back(fmt::format(
        "Training step ({} FSDP on {} H100): {} {:.1f} ms, {} {:.1f} ms ({:+.1f} %; "
        "exposed communication {:.1f} vs {:.1f} ms).",
        ModelLabel(o.train_model), ranks, fast_train->col.name, a, slow_train->col.name, b,
        100 * (b / a - 1), static_cast<double>(fast_train->train.steps[0].times.exposed.ps()) / 1e9,
        static_cast<double>(slow_train->train.steps[0].times.exposed.ps()) / 1e9));
  }
  if (Interrupted(o, data)) {
    // Conclusions need every case: none is drawn from a partial run.
    summary = json::array();
    summary.push_back(
        "Interrupted (Ctrl-C) before every case finished: the rows of the cases that did not "
        "finish are null and marked \"not run\"; no conclusion is drawn.");
  }
  doc["summary"] = summary;
  doc["claim_30_50"] = Interrupted(o, data) ? json(nullptr) : claim;
  doc["interrupted"] = Interrupted(o, data);

  json caveats = json::array();
  // What each sweep ran, per size (NCCL's tuning model picks it: docs/compare.md#cases).
  std::vector<std::pair<std::string, std::string>> picks;  // (profile, ranges)
  for (const ProfileData& d : data)
    if (d.ran_sweep && !d.sweep.sizes.empty()) picks.emplace_back(d.col.name, SweepChoices(d.sweep));
  if (!picks.empty()) {
    const bool same = std::all_of(picks.begin(), picks.end(),
                                  [&](const auto& p) { return p.second == picks[0].second; });
    std::string what;
    if (same) {
      what = picks[0].second;
    } else {
      for (const auto& [name, ranges] : picks) what += fmt::format("{}{}: {}", what.empty() ? "" : "; ", name, ranges);
    }
    caveats.push_back(fmt::format(
        "All-reduce rows run the algorithm and protocol NCCL's tuning model picks per size{}: {}.",
        same && picks.size() > 1 ? " (the same on every profile)" : "", what));
  }
  caveats.push_back(
      "NVLS, NVLSTree and CollNet (SHARP) are not modelled: on NVSwitch nodes (H100 and later) and "
      "on InfiniBand with SHARP switches real NCCL may pick them for all-reduce and reach a higher "
      "busbw than Ring.");
  if (!o.full)
    caveats.push_back(fmt::format(
        "Reduced sweep on {} nodes (--full runs the checklist's -b 8M -e 4G -f 2 -g 8 on {} nodes); "
        "TCO is sized for {} GPUs.",
        nodes, o.nodes, gpus));
  caveats.push_back(fmt::format(
      "The degraded-link case runs with transport.timeout {} ({:.3g} s per ACK timeout) instead of "
      "NCCL's default 20 (4.3 s): each timeout it counts would cost about {:g} times more there.",
      o.fault_timeout_exp, static_cast<double>(4096LL << std::min(o.fault_timeout_exp, 40)) / 1e9,
      std::ldexp(1.0, 20 - o.fault_timeout_exp)));
  std::string ooo;
  for (const ProfileData& d : data)
    if (d.s.net.rc.ooo)
      ooo += fmt::format("{}{} {}", ooo.empty() ? "" : ", ", d.col.name,
                         units::FormatTime(d.s.net.rc.reorder_window));
  if (!ooo.empty())
    caveats.push_back(fmt::format(
        "Out-of-order placement (adaptive routing) NAKs a gap only once it outlives the reorder "
        "window ({}; placeholders, docs/profiles.md#reorder-window): each frame the degraded link "
        "loses waits that long for its NAK, which largely sets those columns' degraded-link slowdown, "
        "while a shorter window would resend packets that adaptive routing only reordered.",
        ooo));
  std::string firmware;
  for (const ProfileData& d : data)
    if (d.s.net.dcqcn && d.s.net.dcqcn_params.variant == cc::DcqcnVariant::kFirmware)
      firmware += (firmware.empty() ? "" : ", ") + d.col.name;
  if (!firmware.empty())
    caveats.push_back(fmt::format(
        "{}: DCQCN with ConnectX firmware defaults (docs/model/dcqcn.md#presets): after a run of "
        "CNPs has cut a queue pair's rate, its target rate grows by only 5 Mb/s (additive) or 50 "
        "Mb/s (hyper increase) every 300 us, so an incast can run far below line rate for tens of "
        "milliseconds. This model of the firmware "
        "has not been checked against a NIC; the incast rows of these columns depend on it, and "
        "so do their all-reduce rows where other tenants' traffic keeps ECN marks coming (on "
        "cloud-shared at 8 nodes PFC alone gives 5.5 times the busbw: "
        "docs/compare-results.md#cloud-shared-at-8-nodes-and-more).",
        firmware));
  if (o.train_model != "none")
    caveats.push_back(fmt::format(
        "The training rows are one FSDP step of {} on {} x {} H100 (docs/train.md): "
        "compute is a time budget (989 TFLOP/s x 0.43), the data-parallel collectives run at "
        "packet level, identical collectives reuse the first one's measured time (on a shared "
        "profile it carries that one's noise), and the network simulates at most {} of each "
        "compute gap before a collective.",
        ModelLabel(o.train_model), nodes, g, units::FormatTime(kTrainMaxIdle)));
  caveats.push_back(
      "Latency is the fabric's alone: NIC processing, PCIe and host software are not modelled "
      "(real ib_write_lat figures include them, so they are higher).");
  caveats.push_back(
      "A simulated idle fabric has no noise: latency percentiles spread only where a profile has "
      "a source of randomness (other tenants, virtualization jitter, random routing).");
  for (const ProfileData& d : data) {
    if (!d.tco_caveat.empty()) caveats.push_back(d.tco_caveat);
    for (const std::string& w : d.tco.warnings)
      if (w.rfind("placeholder ", 0) != 0) caveats.push_back(d.col.name + ": " + w);
    const std::vector<std::string> names = PlaceholderNames(d.tco);
    if (names.empty()) continue;
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    caveats.push_back(fmt::format(
        "{}: {} TCO input{} {} placeholder{} (grade D): {}; `lossless tco --fabric {}` shows "
        "them, --prices overrides them.",
        d.col.name, names.size(), names.size() == 1 ? "" : "s", names.size() == 1 ? "is a" : "are",
        names.size() == 1 ? "" : "s", list, d.col.Source()));
  }
  if (!o.qos_file.empty())
    caveats.push_back(fmt::format(
        "{}: the profile file {} (lossless scenario from-qos: a switch config's values, the rest from a "
        "profile; each value's config line and what was ignored are in it), run at the comparison's link "
        "rate ({}).",
        o.qos_label, o.qos_file, o.rate));
  doc["caveats"] = caveats;
  doc["operations"] = Operations(data);
  return doc;
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
  if (n >= 2 && AtPlateau(sweep, ranks) && runs_largest(n - 1) && runs_largest(n - 2)) return true;
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
  return Document(o, data);
}

}  // namespace lossless::compare
