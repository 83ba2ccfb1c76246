// The rows of the lossless.compare/1 document (docs/compare-results.md), one
// function per section: latency, collective (the sweep, peak busbw against
// line rate, checklist 1, --full's scaling), jitter, incast, fault, training
// and TCO. Each row has one value per column and, where a value needs one, a
// note. Internal to the compare module (document_sections.hpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compare/document_sections.hpp"

namespace lossless::compare::detail {
namespace {

using nlohmann::json;

constexpr double kCheck1 = 0.92;  // checklist check 1: busbw >= 92 % of line rate

}  // namespace

void Sections::LatencyRows(RowBuilder& rb) const {
  const std::string lat = fmt::format("RDMA write latency, {} B", kLatencyBytes);
  rb.Add("latency", "latency_p50_us", lat + ", p50", "us", "lower",
         Each([](const ProfileData& d) { return Num(Percentile(d.latency.samples_us, 50), 3); }));
  rb.Add("latency", "latency_p99_us", lat + ", p99", "us", "lower",
         Each([](const ProfileData& d) { return Num(Percentile(d.latency.samples_us, 99), 3); }));
  rb.Add("latency", "latency_p999_us", lat + ", p99.9", "us", "lower",
         Each([](const ProfileData& d) { return Num(Percentile(d.latency.samples_us, 99.9), 3); }));
}

void Sections::CollectiveRows(RowBuilder& rb) const {
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    rb.Add("collective", fmt::format("busbw_{}", o.sizes[i]),
           fmt::format("all_reduce busbw, {}", SizeLabel(o.sizes[i])), "GB/s", "higher",
           Each([&](const ProfileData& d) -> json {
             if (i >= d.sweep.sizes.size()) return nullptr;
             return Num(perf::ToRow(d.sweep.sizes[i], collective::Collective::kAllReduce, ranks)
                            .out_of_place.busbw_gbs,
                        2);
           }));
  }
  rb.Add("collective", "peak_busbw_gbs", "all_reduce peak busbw", "GB/s", "higher",
         Each([&](const ProfileData& d) {
           int64_t at = 0;
           return Num(PeakBusbw(d.sweep, ranks, &at), 2);
         }));
  rb.Add("collective", "line_rate_gbs", "line rate (NICs of one node)", "GB/s", "",
         Each([](const ProfileData& d) { return Num(d.line_rate_gbs, 1); }));
  json eff_notes = json::object();
  for (const ProfileData& d : data)
    if (!AtPlateau(d.sweep, ranks))
      eff_notes[d.col.name] = "not at plateau: the largest size still gains 3 % or more";
  rb.Add("collective", "efficiency_pct", "peak busbw / line rate", "%", "higher",
         Each([&](const ProfileData& d) {
           int64_t at = 0;
           return Num(100 * PeakBusbw(d.sweep, ranks, &at) / d.line_rate_gbs, 1);
         }),
         eff_notes);
  rb.Add("collective", "check1", "checklist 1: busbw >= 92 % of line rate", "", "",
         Each([&](const ProfileData& d) -> json {
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
           "higher", Each([&](const ProfileData& d) -> json {
             for (const auto& [nodes_run, busbw] : d.scaling)
               if (nodes_run == n && busbw > 0) return Num(busbw, 2);
             return nullptr;
           }));
  }
}

void Sections::JitterRows(RowBuilder& rb) const {
  const std::string jl = fmt::format("all_reduce {} iteration", SizeLabel(o.jitter_bytes));
  rb.Add("jitter", "iter_p50_us", jl + " p50", "us", "lower",
         Each([](const ProfileData& d) { return Num(Percentile(d.jitter.iterations_us, 50), 2); }));
  rb.Add("jitter", "iter_p99_us", jl + " p99", "us", "lower",
         Each([](const ProfileData& d) { return Num(Percentile(d.jitter.iterations_us, 99), 2); }));
  rb.Add("jitter", "iter_p99_over_p50", jl + " p99/p50", "", "lower", Each([](const ProfileData& d) {
           const double p50 = Percentile(d.jitter.iterations_us, 50);
           return p50 > 0 ? Num(Percentile(d.jitter.iterations_us, 99) / p50, 4) : json(nullptr);
         }));
  rb.Add("jitter", "iter_cv", jl + " coefficient of variation", "", "lower",
         Each([](const ProfileData& d) { return Num(Cv(d.jitter.iterations_us), 5); }));
}

void Sections::IncastRows(RowBuilder& rb) const {
  const std::string il = fmt::format("incast {}x{}", kIncastSenders, SizeLabel(kIncastBytes));
  rb.Add("incast", "incast_time_us", il + ": time until the last incast byte arrived", "us",
         "lower", Each([](const ProfileData& d) { return Num(d.incast.duration_us, 2); }));
  rb.Add("incast", "victim_probe_p50_us", il + ": victim probe latency p50", "us", "lower",
         Each([](const ProfileData& d) { return Num(d.incast.probe_p50_us, 3); }));
  rb.Add("incast", "victim_probe_p99_us", il + ": victim probe latency p99", "us", "lower",
         Each([](const ProfileData& d) { return Num(d.incast.probe_p99_us, 3); }));
  rb.Add("incast", "victim_gbps", il + ": victim flow throughput", "Gb/s", "higher",
         Each([](const ProfileData& d) { return Num(d.incast.victim_gbps, 2); }));
  rb.Add("incast", "incast_gbps", il + ": goodput into the target", "Gb/s", "higher",
         Each([](const ProfileData& d) { return Num(d.incast.incast_gbps, 2); }));
  rb.Add("incast", "pause_frames", il + ": PAUSE frames", "count", "lower",
         Each([](const ProfileData& d) { return d.incast.pause_frames; }));
  rb.Add("incast", "paused_pct", il + ": most-paused port, paused time", "%", "lower",
         Each([](const ProfileData& d) { return Num(100 * d.incast.max_paused_fraction, 2); }));
  rb.Add("incast", "credit_starved_pct", il + ": most credit-starved port, starved time", "%",
         "lower", Each([](const ProfileData& d) -> json {
           if (!d.s.net.ib.enabled) return nullptr;
           return Num(100 * d.incast.max_credit_starved_fraction, 2);
         }),
         RoceNotes("no credit flow control on RoCE"));
  rb.Add("incast", "ecn_marks", il + ": ECN marks", "count", "",
         Each([](const ProfileData& d) { return d.incast.ecn_marks; }));
  rb.Add("incast", "drops", il + ": congestion drops", "count", "lower",
         Each([](const ProfileData& d) { return d.incast.drops; }));
  json incast_notes = json::object();
  for (const ProfileData& d : data)
    if (!d.incast.failure.empty()) incast_notes[d.col.name] = d.incast.failure;
  rb.Add("incast", "retransmissions", il + ": retransmitted packets", "count", "lower",
         Each([](const ProfileData& d) { return d.incast.retransmissions; }), incast_notes);
  rb.Add("incast", "naks", il + ": NAKs", "count", "lower",
         Each([](const ProfileData& d) { return d.incast.naks; }));
  rb.Add("incast", "ack_timeouts", il + ": ACK timeouts", "count", "lower",
         Each([](const ProfileData& d) { return d.incast.ack_timeouts; }));
}

// Faults, each against the fault-free samples at the same places in the
// run (PairedFaultFree; the mean of all of them showed cloud-shared 22 %
// faster with a degraded link than without).
void Sections::FaultRows(RowBuilder& rb) const {
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
         Each([&](const ProfileData& d) { return slowdown(d.ber, d.jitter); }), ber_notes);
  rb.Add("fault", "ber_slowdown_p50_pct", bl + ": all_reduce slowdown (median)", "%", "lower",
         Each([&](const ProfileData& d) -> json {
           if (!d.ber.failure.empty() || d.ber.iterations_us.empty()) return nullptr;
           const double b = Percentile(paired(d.ber, d.jitter), 50);
           return b > 0 ? Num(100 * (Percentile(d.ber.iterations_us, 50) / b - 1), 2) : json(nullptr);
         }));
  rb.Add("fault", "ber_ack_timeouts", bl + fmt::format(": ACK timeouts ({:.3g} s each)", timeout_s),
         "count", "lower", Each([](const ProfileData& d) { return d.ber.perf.ack_timeouts; }));
  auto links_sum = [](const CollectiveRun& c, auto field) {
    int64_t n = 0;
    for (const perf::LinkCounters& l : c.perf.links) n += field(l);
    return n;
  };
  rb.Add("fault", "ber_losses", bl + ": frames lost and recovered", "count", "",
         Each([&](const ProfileData& d) {
           return links_sum(d.ber, [](const perf::LinkCounters& l) { return l.drops; });
         }));
  rb.Add("fault", "ber_retx", bl + ": retransmitted packets", "count", "lower",
         Each([&](const ProfileData& d) {
           return links_sum(d.ber, [](const perf::LinkCounters& l) { return l.retransmissions; });
         }));
  const std::string sl =
      fmt::format("stalled NIC ({} us)", static_cast<double>(o.stall.ps()) / 1e6);
  rb.Add("fault", "stall_worst_extra_us", sl + ": worst iteration minus p50", "us", "lower",
         Each([&](const ProfileData& d) -> json {
           if (!d.stall.failure.empty() || d.stall.iterations_us.empty()) return nullptr;
           return Num(Percentile(d.stall.iterations_us, 100) - Percentile(paired(d.stall, d.jitter), 50), 2);
         }),
         stall_notes);
  rb.Add("fault", "stall_slowdown_pct", sl + ": all_reduce slowdown (mean)", "%", "lower",
         Each([&](const ProfileData& d) { return slowdown(d.stall, d.jitter); }),
         stall_slowdown_notes);
  rb.Add("fault", "stall_pause_frames", sl + ": PAUSE frames", "count", "lower",
         Each([&](const ProfileData& d) {
           return links_sum(d.stall, [](const perf::LinkCounters& l) { return l.pause_frames; });
         }));
  rb.Add("fault", "stall_paused_us", sl + ": paused time, all ports", "us", "lower",
         Each([&](const ProfileData& d) -> json {
           if (d.s.net.ib.enabled) return nullptr;
           double t = 0;
           for (const perf::LinkCounters& l : d.stall.perf.links) t += l.paused_us;
           return Num(t, 2);
         }),
         IbNotes("InfiniBand has no PAUSE: see credit-starved time"));
  rb.Add("fault", "stall_starved_extra_us",
         sl + ": credit-starved time beyond the fault-free run, all ports", "us", "lower",
         Each([&](const ProfileData& d) -> json {
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
         RoceNotes("no credit flow control on RoCE"));
}

void Sections::TrainingRows(RowBuilder& rb) const {
  // No row without a training step (--train-model none).
  if (o.train_model == "none") return;
  json train_notes = json::object();
  for (const ProfileData& d : data)
    if (!d.train_failure.empty()) train_notes[d.col.name] = d.train_failure;
  const std::string tl = fmt::format("{} FSDP step", ModelLabel(o.train_model));
  auto step_value = [&](auto f) {
    return Each([&](const ProfileData& d) -> json {
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

void Sections::TcoRows(RowBuilder& rb) const {
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
           Each([&](const ProfileData& d) { return bom(d.tco, item, false); }), cloud_note());
    rb.Add("tco", fmt::format("tco_{}_usd", item), fmt::format("{}: {} cost", tl, item), "USD",
           "lower", Each([&](const ProfileData& d) { return bom(d.tco, item, true); }), cloud_note());
  }
  rb.Add("tco", "tco_capex_usd", tl + ": fabric capex", "USD", "lower",
         Each([](const ProfileData& d) -> json {
           return d.tco.cost_model == "cloud" ? json(nullptr) : Num(d.tco.capex_usd, 0);
         }),
         cloud_note());
  rb.Add("tco", "tco_power_kw", tl + ": fabric power", "kW", "lower",
         Each([](const ProfileData& d) -> json {
           return d.tco.cost_model == "cloud" ? json(nullptr) : Num(d.tco.power_w / 1e3, 2);
         }),
         cloud_note());
  rb.Add("tco", "tco_opex_usd_year", tl + ": operations", "USD/year", "lower",
         Each([](const ProfileData& d) -> json {
           for (const tco::CostLine& c : d.tco.annual)
             if (c.item == "operations") return Num(c.usd_per_year, 0);
           return nullptr;
         }),
         cloud_note());
  json per_gpu_notes = json::object();
  for (const ProfileData& d : data)
    if (d.tco.cost_model == "cloud") per_gpu_notes[d.col.name] = d.tco.comparability;
  rb.Add("tco", "tco_per_gpu_year", tl + ": cost per GPU per year", "USD/GPU/year", "lower",
         Each([](const ProfileData& d) { return Num(d.tco.per_gpu_year, 0); }), per_gpu_notes);
  rb.Add("tco", "tco_per_gbs_year",
         tl + ": cost per GPU per year per GB/s of its busbw", "USD/year per GB/s", "lower",
         Each([&](const ProfileData& d) -> json {
           int64_t at = 0;
           const double per_gpu_busbw = PeakBusbw(d.sweep, ranks, &at) / static_cast<double>(g);
           return per_gpu_busbw > 0 ? Num(d.tco.per_gpu_year / per_gpu_busbw, 2) : json(nullptr);
         }),
         per_gpu_notes);
}

}  // namespace lossless::compare::detail
