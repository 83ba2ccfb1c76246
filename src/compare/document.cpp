// The lossless.compare/1 document (docs/compare-results.md) built from what
// compare::Run measured on each profile: the options, the profiles, the rows
// of each section (latency, collective, jitter, incast, fault, training, TCO),
// the series the report draws, the summary, the caveats and the operations
// facts, one function per section. Internal to the compare module
// (document.hpp).
#include "compare/document.hpp"
#include "compare/document_sections.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "lossless/version.hpp"

namespace lossless::compare::detail {
namespace {

using nlohmann::json;

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

}  // namespace

json Num(double v, int digits) {
  if (!std::isfinite(v)) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

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

std::string ModelLabel(const std::string& m) {
  const std::string source = train::FindModel(m, "--train-model").source;
  return source.substr(0, source.find(" ("));
}

json Sections::OptionsJson() const {
  return {{"nodes", o.nodes},
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
}

json Sections::Timing() const {
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
  return t;
}

json Sections::Profiles() const {
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
  return profiles;
}

// Series for the report.
json Sections::Series() const {
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
  return series;
}

// Summary: what the numbers say, computed from them.
json Sections::Summary(json* claim_out) const {
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
  *claim_out = claim;
  return summary;
}

json Sections::Caveats() const {
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
  return caveats;
}

json Document(const Options& o, const std::vector<ProfileData>& data) {
  const int64_t g = data.empty() ? 8 : data[0].s.clos.gpus_per_node;
  const int64_t nodes = SweepNodes(o);
  const Sections s{o, data, g, nodes, nodes * g, o.nodes * g};
  json doc;
  doc["schema"] = "lossless.compare/1";
  doc["lossless_version"] = kVersion;
  doc["options"] = s.OptionsJson();
  if (o.timing) doc["timing"] = s.Timing();
  doc["profiles"] = s.Profiles();
  RowBuilder rb;
  s.LatencyRows(rb);
  s.CollectiveRows(rb);
  s.JitterRows(rb);
  s.IncastRows(rb);
  s.FaultRows(rb);
  s.TrainingRows(rb);
  s.TcoRows(rb);
  MarkNotRun(o, data, rb.rows);
  doc["rows"] = rb.rows;
  doc["series"] = s.Series();
  json claim;
  doc["summary"] = s.Summary(&claim);
  doc["claim_30_50"] = Interrupted(o, data) ? json(nullptr) : claim;
  doc["interrupted"] = Interrupted(o, data);
  doc["caveats"] = s.Caveats();
  doc["operations"] = Operations(data);
  return doc;
}

}  // namespace lossless::compare::detail
