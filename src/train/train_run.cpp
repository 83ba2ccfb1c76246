#include "train/train_run.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/progress.hpp"
#include "lossless/version.hpp"

namespace lossless::train {
namespace {

double Ms(units::Time t) {
  return static_cast<double>(t.ps()) / 1e9;
}

struct StopRequested {};

// Forwards to a backend and reports each collective.
class Counted final : public CommBackend {
 public:
  Counted(CommBackend& inner, int total, int step, const std::function<void(int, int, int)>& f)
      : inner_(inner), total_(total), step_(step), f_(f) {}
  CommCost Run(CommKind kind, CommGroup group, int64_t bytes, units::Time start) override {
    CommCost c = inner_.Run(kind, group, bytes, start);
    if (f_) f_(step_, ++done_, total_);
    if (InterruptRequested()) throw StopRequested{};
    return c;
  }
  CommCost Send(int from, int to, int64_t bytes, units::Time start) override {
    CommCost c = inner_.Send(from, to, bytes, start);
    if (f_) f_(step_, ++done_, total_);
    if (InterruptRequested()) throw StopRequested{};
    return c;
  }

 private:
  CommBackend& inner_;
  int total_, step_, done_ = 0;
  const std::function<void(int, int, int)>& f_;
};

std::vector<std::string> Notes(const TrainResult& r) {
  const TrainConfig& c = r.config;
  std::vector<std::string> n;
  n.push_back(fmt::format(
      "lossless {}: data-parallel collectives simulated at packet level (NCCL ring, Simple "
      "protocol) on {}; compute is a time budget from peak FLOP/s x {:g} ({}), not simulated",
      kVersion, r.fabric, c.gpu.efficiency, c.gpu.name));
  if (c.strategy == Strategy::kHsdp)
    n.push_back(fmt::format(
        "approximation: HSDP's {} replica groups (one GPU per node each) all-reduce at the same "
        "time on their own rails; the group on rail 0 runs at packet level and the others are "
        "taken to need the same time; gathers and scatters inside a node run on NVLink only",
        c.ShardRanks()));
  if (c.strategy != Strategy::kDdp)
    n.emplace_back(
        "approximation: FSDP's all-gathers, reduce-scatters (and HSDP's all-reduces) share one "
        "communication stream (serialized), where PyTorch overlaps them on two");
  else
    n.emplace_back(
        "approximation: DDP buckets are cut at exactly the bucket size in reverse layer order, "
        "gradients appear evenly over each layer's backward (PyTorch never splits a tensor and "
        "makes its first bucket 1 MiB)");
  if (c.tp > 1)
    n.push_back(fmt::format(
        "approximation: tensor-parallel all-reduces are analytic over NVLink ({}/direction); the "
        "data-parallel group of TP rank 0 runs at packet level and the other {} groups are taken "
        "to need the same time on their own rails",
        units::FormatRate(c.gpu.nvlink_rate), c.tp - 1));
  if (!r.exact)
    n.push_back(fmt::format(
        "{} collectives simulated, {} reused the time of an identical collective measured "
        "before (--exact simulates every one); counters cover the simulated ones",
        r.simulated, r.reused));
  if (c.grad_bytes == 1)
    n.emplace_back(
        "precision: gradients are reduced in fp8 (1 B per element, as FP8-LM, Peng et al. 2023, "
        "communicates them); parameter all-gathers stay bf16, and memory counts bf16 gradients, "
        "fp32 master weights and Adam moments; per-tensor scaling and its cost are not modelled");
  if (r.idle_skipped > units::Time::Zero())
    n.push_back(fmt::format(
        "approximation: the network runs at most {} of the idle time before each simulated "
        "collective ({} skipped in all): other tenants' traffic and congestion-control timers "
        "are not simulated through the rest of the compute gaps",
        units::FormatTime(r.max_idle), units::FormatTime(r.idle_skipped)));
  for (const std::string& f : r.faults.Describe()) n.push_back(f);
  if (r.faults.Any())
    n.emplace_back(
        "faults: a step with a fault active is simulated at packet level in full (no reused "
        "collective); a fault on a NIC or rail outside the simulated groups is applied to the "
        "same node's NIC of the simulated group (the groups are symmetric); the engine starts "
        "each collective when its last rank is ready");
  if (c.pp > 1)
    n.push_back(fmt::format(
        "approximation: pipeline sends run at packet level between the stages' first nodes (GPU "
        "0; the other pipelines are taken to need the same time on their own NICs), each "
        "stage's data-parallel collectives on stage 0's nodes; operations that overlap in time "
        "are each simulated alone ({} stages, contention between them left out)",
        c.pp));
  n.emplace_back("not modelled: optimizer step, data loading, kernel launch gaps");
  return n;
}

FaultSummary Summarize(const TrainResult& r) {
  FaultSummary f;
  f.first_step = r.faults.FirstStep();
  if (f.first_step < 0) return f;
  std::vector<double> before, after, clean;
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const double ms = Ms(r.steps[k].times.step);
    (static_cast<int>(k) < f.first_step ? before : after).push_back(ms);
    if (!r.steps[k].faulted) clean.push_back(ms);
  }
  f.before_steps = static_cast<int>(before.size());
  f.after_steps = static_cast<int>(after.size());
  f.before_p50_ms = StepPercentile(before, 50);
  f.before_p99_ms = StepPercentile(before, 99);
  f.before_max_ms = StepPercentile(before, 100);
  f.after_p50_ms = StepPercentile(after, 50);
  f.after_p99_ms = StepPercentile(after, 99);
  f.after_max_ms = StepPercentile(after, 100);
  f.has_baseline = !clean.empty();
  f.baseline_ms = StepPercentile(clean, 50);
  for (const StepResult& s : r.steps) {
    if (!s.faulted) continue;
    ++f.faulted_steps;
    if (f.has_baseline) f.lost_ms += Ms(s.times.step) - f.baseline_ms;
  }
  if (f.has_baseline && f.baseline_ms > 0) f.lost_steps = f.lost_ms / f.baseline_ms;
  return f;
}

// "0-3, 5, 7-8": the steps whose flag is set.
std::string StepList(const std::vector<StepResult>& steps, bool (*pick)(const StepResult&)) {
  std::string out;
  for (size_t k = 0; k < steps.size();) {
    if (!pick(steps[k])) {
      ++k;
      continue;
    }
    size_t e = k;
    while (e + 1 < steps.size() && pick(steps[e + 1])) ++e;
    if (!out.empty()) out += ", ";
    out += e == k ? fmt::format("{}", k) : fmt::format("{}-{}", k, e);
    k = e + 1;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

TrainResult RunTraining(const TrainConfig& c, const scenario::Scenario& s,
                        const std::string& fabric_name, bool exact,
                        const std::function<void(int, int, int)>& progress, const Faults& faults,
                        units::Time max_idle) {
  TrainResult r;
  r.config = c;
  r.fabric = fabric_name;
  r.exact = exact;
  r.faults = faults;
  r.max_idle = max_idle;
  r.memory = MemoryPerGpu(c, c.recompute);
  const std::vector<Unit> units = Units(c);
  for (const Unit& u : units) r.model_flops_per_gpu += u.model_flops;
  // Pipeline: a GPU holds one stage; the average over the stages.
  r.model_flops_per_gpu *= static_cast<double>(c.Accumulation()) / static_cast<double>(c.pp);
  r.tp_bytes_per_gpu = TpBytesPerGpu(c);
  {
    std::vector<Task> tasks = BuildStep(c, units);
    InstantComm instant(c);
    r.ideal = Schedule(tasks, instant, units::Time::Zero());
    r.ideal_step = r.ideal.step;
    r.ideal = WithBubble(r.ideal, r.ideal_step, c.pp);
  }
  FabricComm fabric(s, c, exact);
  fabric.SetFaults(faults);
  fabric.set_max_idle(max_idle);
  units::Time at = fabric.Now();
  for (int k = 0; k < c.steps; ++k) {
    // A slow GPU: every rank of its stage waits for it, so its stage (the
    // whole step without pipeline stages) computes at its pace.
    const double factor = faults.ComputeFactor(k);
    std::vector<Unit> slowed = units;
    const int64_t stage_gpus = static_cast<int64_t>(c.NodesPerStage()) * c.gpus_per_node;
    for (size_t u = 0; u < slowed.size(); ++u) {
      const double f = faults.StageFactor(k, stage_gpus, UnitStage(c, u));
      if (f != 1) {
        auto scale = [f](units::Time t) {
          return units::Time::Ps(
              static_cast<int64_t>(std::llround(static_cast<double>(t.ps()) * f)));
        };
        slowed[u].forward = scale(slowed[u].forward);
        slowed[u].backward = scale(slowed[u].backward);
      }
    }
    std::vector<Task> tasks = BuildStep(c, slowed);
    units::Time ideal = r.ideal_step;
    if (c.pp > 1 && factor != 1) {
      std::vector<Task> free_tasks = tasks;
      InstantComm instant(c);
      ideal = Schedule(free_tasks, instant, units::Time::Zero()).step;
    }
    int total = 0;
    for (const Task& t : tasks) total += t.comm ? 1 : 0;
    Counted counted(fabric, total, k, progress);
    const FabricCounters before = fabric.Counters();
    fabric.BeginStep(k);
    StepResult sr;
    sr.faulted = faults.ActiveAt(k);
    sr.compute_factor = factor;
    try {
      sr.times = WithBubble(Schedule(tasks, counted, at), ideal, c.pp);
    } catch (const StopRequested&) {
      r.interrupted = true;
      break;
    }
    sr.counters = fabric.Counters() - before;
    sr.mfu = r.model_flops_per_gpu /
             (static_cast<double>(sr.times.step.ps()) / 1e12 * c.gpu.peak_bf16_tflops * 1e12);
    at = at + sr.times.step;
    r.reused += sr.times.reused;
    r.steps.push_back(sr);
  }
  r.simulated = fabric.simulated();
  r.events = fabric.events();
  r.idle_skipped = fabric.skipped();
  r.fault_summary = Summarize(r);
  r.fault_summary.degraded_link_used = faults.degraded.empty() || fabric.DegradedLinkPackets() > 0;
  return r;
}

std::string FormatTrain(const TrainResult& r) {
  const TrainConfig& c = r.config;
  std::string out;
  for (const std::string& n : Notes(r)) out += "# " + n + "\n";
  out += fmt::format(
      "# model {} ({}, {:.2f}B parameters, {} layers, hidden {}, seq {}), {} x {} GPUs {}, {} "
      "tp {} dp {}{}, micro-batch {}, global batch {} ({} micro-batches per step), recompute "
      "{}\n",
      c.model.name, c.model.source, static_cast<double>(c.model.TotalParams()) / 1e9,
      c.model.layers, c.model.hidden, c.model.seq_len, c.nodes, c.gpus_per_node, c.gpu.name,
      StrategyName(c.strategy), c.tp, c.DpRanks(), c.pp > 1 ? fmt::format(" pp {}", c.pp) : "",
      c.micro_batch, c.GlobalBatch(), c.Accumulation(), RecomputeName(c.recompute));
  if (c.strategy == Strategy::kDdp)
    out += fmt::format("# DDP bucket {}\n", units::FormatBytes(units::Bytes(c.bucket_bytes)));
  out += fmt::format(
      "# memory per GPU {:.1f} GB (states {:.1f}, gathered {:.1f}, activations {:.1f}) of "
      "{:.1f} GB HBM\n",
      static_cast<double>(r.memory.Total()) / 1e9, static_cast<double>(r.memory.states) / 1e9,
      static_cast<double>(r.memory.gathered) / 1e9, static_cast<double>(r.memory.activations) / 1e9,
      static_cast<double>(c.gpu.hbm_bytes) / 1e9);
  if (c.pp > 1) {
    const double p = c.pp, m = static_cast<double>(c.Accumulation());
    out += fmt::format(
        "# pipeline: {} stages of {} layers ({} node{} each; the embedding on stage 0, the output "
        "layer on stage {}), {} micro-batches per step in 1F1B order (PipeDream-Flush, Narayanan "
        "et al. 2021); {} of activation per send; bubble (P-1)/(m+P-1) = {:.1f}% for equal "
        "stages; on an infinitely fast network the busiest stage ({}) computes {:.3f} ms and "
        "idles {:.3f} ms ({:.1f}%)\n",
        c.pp, c.model.layers / c.pp, c.NodesPerStage(), c.NodesPerStage() > 1 ? "s" : "", c.pp - 1,
        c.Accumulation(), units::FormatBytes(units::Bytes(c.PipeBytes())),
        100 * (p - 1) / (m + p - 1), r.ideal.busiest_stage, Ms(r.ideal.compute + r.ideal.tp),
        Ms(r.ideal.bubble),
        100 * static_cast<double>(r.ideal.bubble.ps()) / static_cast<double>(r.ideal.step.ps()));
  }
  out += fmt::format("# step on an infinitely fast network: {:.3f} ms\n", Ms(r.ideal_step));
  const bool pipe = c.pp > 1;
  out += fmt::format("{:>5} {:>11} {:>11} {:>10} {:>11} {:>11}", "step", "step(ms)", "compute(ms)",
                     "tp(ms)", "dp_comm(ms)", "exposed(ms)");
  if (pipe) out += fmt::format(" {:>10} {:>11} {:>10}", "bubble(ms)", "pp_comm(ms)", "pp_GB/GPU");
  out +=
      fmt::format(" {:>6} {:>7} {:>11} {:>10} {:>7} {:>10} {:>9} {:>8} {:>7}\n", "MFU%", "fabric",
                  "dp_GB/GPU", "tp_GB/GPU", "pause", "paused(us)", "ecn", "cnp", "retx");
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const StepResult& s = r.steps[k];
    out +=
        fmt::format("{:>5} {:>11.3f} {:>11.3f} {:>10.3f} {:>11.3f} {:>11.3f}", k, Ms(s.times.step),
                    Ms(s.times.compute), Ms(s.times.tp), Ms(s.times.dp_comm), Ms(s.times.exposed));
    if (pipe)
      out += fmt::format(" {:>10.3f} {:>11.3f} {:>10.3f}", Ms(s.times.bubble), Ms(s.times.pp_comm),
                         static_cast<double>(s.times.pp_bytes) / c.pp / 1e9);
    out += fmt::format(
        " {:>6.1f} {:>7.3f} {:>11.3f} {:>10.3f} {:>7} {:>10.1f} {:>9} {:>8} {:>7}\n", 100 * s.mfu,
        static_cast<double>(s.times.step.ps()) / static_cast<double>(r.ideal_step.ps()),
        static_cast<double>(s.times.dp_bytes) / 1e9, static_cast<double>(r.tp_bytes_per_gpu) / 1e9,
        s.counters.pause_frames, s.counters.paused_us, s.counters.ecn_marks, s.counters.cnps,
        s.counters.retransmissions);
  }
  if (pipe)
    out +=
        "# fabric: step time over the step on an infinitely fast network; compute, tp: the "
        "busiest stage's; bubble: its idle time on an infinitely fast network; exposed = step - "
        "compute - bubble (TP, exposed sends and collectives); pp_comm: the sends' time summed "
        "over the stages; pp_GB/GPU: what the pipeline's sends move, per stage\n";
  else
    out +=
        "# fabric: step time over the step on an infinitely fast network; exposed = step - "
        "compute\n";
  if (r.interrupted)
    out += fmt::format("# interrupted: {} of {} steps done\n", r.steps.size(), c.steps);
  // The stall of --stall-step at step K against an unstalled step.
  for (const NicStall& st : r.faults.stalls) {
    if (st.step >= static_cast<int>(r.steps.size()) || r.steps.size() < 2) continue;
    const int other = st.step == 0 ? 1 : 0;
    if (r.steps[static_cast<size_t>(other)].faulted) continue;
    const units::Time hit = r.steps[static_cast<size_t>(st.step)].times.step;
    const units::Time base = r.steps[static_cast<size_t>(other)].times.step;
    out += fmt::format(
        "# stall at step {}: {:+.3f} ms against step {} ({:+.2f}% of a step)\n", st.step,
        Ms(hit - base), other,
        100.0 * static_cast<double>((hit - base).ps()) / static_cast<double>(base.ps()));
  }
  if (r.faults.Any() && !r.steps.empty()) {
    const FaultSummary& f = r.fault_summary;
    out += fmt::format("# exact steps (every collective simulated at packet level): {}\n",
                       StepList(r.steps, [](const StepResult& s) { return s.Exact(); }));
    out += fmt::format("# faulted steps: {}\n",
                       StepList(r.steps, [](const StepResult& s) { return s.faulted; }));
    auto dist = [](int n, double p50, double p99, double max) {
      return n == 0 ? std::string("no steps")
                    : fmt::format("p50 {:.3f} p99 {:.3f} max {:.3f} ms over {} step{}", p50, p99,
                                  max, n, n == 1 ? "" : "s");
    };
    if (f.before_steps > 0)
      out += fmt::format("# step time before step {}: {}\n", f.first_step,
                         dist(f.before_steps, f.before_p50_ms, f.before_p99_ms, f.before_max_ms));
    out += fmt::format("# step time from step {} on: {}\n", f.first_step,
                       dist(f.after_steps, f.after_p50_ms, f.after_p99_ms, f.after_max_ms));
    if (f.has_baseline)
      out += fmt::format(
          "# cost of the faults: {:+.3f} ms over {} faulted step{} = {:+.3f} steps of the "
          "unfaulted step ({:.3f} ms, median of the unfaulted steps)\n",
          f.lost_ms, f.faulted_steps, f.faulted_steps == 1 ? "" : "s", f.lost_steps, f.baseline_ms);
    else
      out +=
          "# cost of the faults: no unfaulted step to compare with (start the fault at step 1 or "
          "later, or run more steps)\n";
    if (!f.degraded_link_used)
      out +=
          "# warning: the degraded link carried no simulated packet (not on the simulated "
          "groups' rails: with --tp t only rails 0, t, 2t, ... run at packet level; HSDP's "
          "replica group uses rail 0)\n";
  }
  return out;
}

nlohmann::json TrainJson(const TrainResult& r) {
  const TrainConfig& c = r.config;
  nlohmann::json j;
  j["schema"] = "lossless.train/1";
  j["version"] = kVersion;
  j["fabric"] = r.fabric;
  j["notes"] = Notes(r);
  j["model"] = {{"name", c.model.name},
                {"parameters", c.model.TotalParams()},
                {"layers", c.model.layers},
                {"hidden", c.model.hidden},
                {"seq_len", c.model.seq_len}};
  j["config"] = {{"strategy", StrategyName(c.strategy)},
                 {"gpu", c.gpu.name},
                 {"efficiency", c.gpu.efficiency},
                 {"nodes", c.nodes},
                 {"gpus_per_node", c.gpus_per_node},
                 {"tp", c.tp},
                 {"dp", c.DpRanks()},
                 {"pp", c.pp},
                 {"micro_batch", c.micro_batch},
                 {"global_batch", c.GlobalBatch()},
                 {"accumulation", c.Accumulation()},
                 {"bucket_bytes", c.bucket_bytes},
                 {"recompute", RecomputeName(c.recompute)},
                 {"grad_precision", c.grad_bytes == 1 ? "fp8" : "bf16"},
                 {"exact", r.exact}};
  // The first stall as before (the --stall-step flag), and every fault.
  j["stall"] = r.faults.stalls.empty()
                   ? nlohmann::json(nullptr)
                   : nlohmann::json{{"step", r.faults.stalls[0].step},
                                    {"gpu", r.faults.stalls[0].host},
                                    {"duration_us",
                                     static_cast<double>(r.faults.stalls[0].duration.ps()) / 1e6}};
  nlohmann::json faults = nlohmann::json::array();
  for (const SlowGpu& f : r.faults.slow_gpus)
    faults.push_back({{"kind", "slow_gpu"},
                      {"gpu", f.rank},
                      {"factor", f.factor},
                      {"first_step", f.first},
                      {"last_step", f.last}});
  for (const LinkDegrade& f : r.faults.degraded)
    faults.push_back({{"kind", "degraded_link"},
                      {"link", f.link},
                      {"ber", f.ber},
                      {"first_step", f.first},
                      {"last_step", f.last}});
  for (const NicStall& f : r.faults.stalls)
    faults.push_back({{"kind", "stalled_nic"},
                      {"gpu", f.host},
                      {"first_step", f.step},
                      {"last_step", f.step},
                      {"duration_us", static_cast<double>(f.duration.ps()) / 1e6}});
  j["faults"] = faults;
  if (r.faults.Any()) {
    const FaultSummary& f = r.fault_summary;
    j["fault_summary"] = {
        {"first_step", f.first_step},
        {"before",
         {{"steps", f.before_steps},
          {"p50_ms", f.before_p50_ms},
          {"p99_ms", f.before_p99_ms},
          {"max_ms", f.before_max_ms}}},
        {"after",
         {{"steps", f.after_steps},
          {"p50_ms", f.after_p50_ms},
          {"p99_ms", f.after_p99_ms},
          {"max_ms", f.after_max_ms}}},
        {"baseline_ms", f.has_baseline ? nlohmann::json(f.baseline_ms) : nlohmann::json(nullptr)},
        {"faulted_steps", f.faulted_steps},
        {"lost_ms", f.has_baseline ? nlohmann::json(f.lost_ms) : nlohmann::json(nullptr)},
        {"lost_steps", f.has_baseline ? nlohmann::json(f.lost_steps) : nlohmann::json(nullptr)},
        {"degraded_link_used", f.degraded_link_used}};
  } else {
    j["fault_summary"] = nullptr;
  }
  j["memory_bytes"] = {{"states", r.memory.states},
                       {"gathered", r.memory.gathered},
                       {"activations", r.memory.activations},
                       {"total", r.memory.Total()},
                       {"hbm", c.gpu.hbm_bytes}};
  j["ideal_step_ms"] = Ms(r.ideal_step);
  j["collectives"] = {{"simulated", r.simulated}, {"reused", r.reused}};
  nlohmann::json steps = nlohmann::json::array();
  for (const StepResult& s : r.steps) {
    steps.push_back({{"step_ms", Ms(s.times.step)},
                     {"compute_ms", Ms(s.times.compute)},
                     {"tp_ms", Ms(s.times.tp)},
                     {"dp_comm_ms", Ms(s.times.dp_comm)},
                     {"exposed_ms", Ms(s.times.exposed)},
                     {"bubble_ms", Ms(s.times.bubble)},
                     {"pp_comm_ms", Ms(s.times.pp_comm)},
                     {"pp_bytes", s.times.pp_bytes},
                     {"mfu", s.mfu},
                     {"fabric_share", static_cast<double>(s.times.step.ps()) /
                                          static_cast<double>(r.ideal_step.ps())},
                     {"dp_bytes_per_gpu", s.times.dp_bytes},
                     {"tp_bytes_per_gpu", r.tp_bytes_per_gpu},
                     {"collectives", s.times.collectives},
                     {"reused", s.times.reused},
                     {"pause_frames", s.counters.pause_frames},
                     {"paused_us", s.counters.paused_us},
                     {"ecn_marks", s.counters.ecn_marks},
                     {"cnps", s.counters.cnps},
                     {"retransmissions", s.counters.retransmissions},
                     {"drops", s.counters.drops},
                     {"credit_starved_us", s.counters.credit_starved_us},
                     {"faulted", s.faulted},
                     {"compute_factor", s.compute_factor},
                     {"exact", s.Exact()}});
  }
  j["steps"] = steps;
  j["interrupted"] = r.interrupted;
  return j;
}

}  // namespace lossless::train
