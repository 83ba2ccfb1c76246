#include "train/train_run.hpp"

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
    n.push_back(
        "approximation: FSDP's all-gathers, reduce-scatters (and HSDP's all-reduces) share one "
        "communication stream (serialized), where PyTorch overlaps them on two");
  else
    n.push_back(
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
  if (r.stall.step >= 0)
    n.push_back(fmt::format(
        "fault: the NIC of GPU 0 (node 0, rail 0) stops receiving for {} from the first "
        "collective of step {}",
        units::FormatTime(r.stall.duration), r.stall.step));
  n.push_back(
      "not modelled: optimizer step, data loading, kernel launch gaps, pipeline parallelism");
  return n;
}

}  // namespace

TrainResult RunTraining(const TrainConfig& c, const scenario::Scenario& s,
                        const std::string& fabric_name, bool exact,
                        const std::function<void(int, int, int)>& progress,
                        const StallSpec& stall) {
  TrainResult r;
  r.config = c;
  r.fabric = fabric_name;
  r.exact = exact;
  r.stall = stall;
  r.memory = MemoryPerGpu(c, c.recompute);
  const std::vector<Unit> units = Units(c);
  for (const Unit& u : units) r.model_flops_per_gpu += u.model_flops;
  r.model_flops_per_gpu *= static_cast<double>(c.Accumulation());
  r.tp_bytes_per_gpu = TpBytesPerGpu(c);
  {
    std::vector<Task> tasks = BuildStep(c, units);
    InstantComm instant(c);
    r.ideal_step = Schedule(tasks, instant, units::Time::Zero()).step;
  }
  FabricComm fabric(s, c, exact);
  fabric.SetStall(stall.step, stall.duration);
  units::Time at = fabric.Now();
  for (int k = 0; k < c.steps; ++k) {
    std::vector<Task> tasks = BuildStep(c, units);
    int total = 0;
    for (const Task& t : tasks) total += t.comm ? 1 : 0;
    Counted counted(fabric, total, k, progress);
    const FabricCounters before = fabric.Counters();
    fabric.BeginStep(k);
    StepResult sr;
    try {
      sr.times = Schedule(tasks, counted, at);
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
  return r;
}

std::string FormatTrain(const TrainResult& r) {
  const TrainConfig& c = r.config;
  std::string out;
  for (const std::string& n : Notes(r)) out += "# " + n + "\n";
  out += fmt::format(
      "# model {} ({}, {:.2f}B parameters, {} layers, hidden {}, seq {}), {} x {} GPUs {}, {} "
      "tp {} dp {}, micro-batch {}, global batch {} ({} micro-batches per step), recompute {}\n",
      c.model.name, c.model.source, static_cast<double>(c.model.TotalParams()) / 1e9,
      c.model.layers, c.model.hidden, c.model.seq_len, c.nodes, c.gpus_per_node, c.gpu.name,
      StrategyName(c.strategy), c.tp, c.DpRanks(), c.micro_batch, c.GlobalBatch(), c.Accumulation(),
      RecomputeName(c.recompute));
  if (c.strategy == Strategy::kDdp)
    out += fmt::format("# DDP bucket {}\n", units::FormatBytes(units::Bytes(c.bucket_bytes)));
  out += fmt::format(
      "# memory per GPU {:.1f} GB (states {:.1f}, gathered {:.1f}, activations {:.1f}) of "
      "{:.1f} GB HBM\n",
      static_cast<double>(r.memory.Total()) / 1e9, static_cast<double>(r.memory.states) / 1e9,
      static_cast<double>(r.memory.gathered) / 1e9, static_cast<double>(r.memory.activations) / 1e9,
      static_cast<double>(c.gpu.hbm_bytes) / 1e9);
  out += fmt::format("# step on an infinitely fast network: {:.3f} ms\n", Ms(r.ideal_step));
  out += fmt::format(
      "{:>5} {:>11} {:>11} {:>10} {:>11} {:>11} {:>6} {:>7} {:>11} {:>10} {:>7} "
      "{:>10} {:>9} {:>8} {:>7}\n",
      "step", "step(ms)", "compute(ms)", "tp(ms)", "dp_comm(ms)", "exposed(ms)", "MFU%", "fabric",
      "dp_GB/GPU", "tp_GB/GPU", "pause", "paused(us)", "ecn", "cnp", "retx");
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const StepResult& s = r.steps[k];
    out += fmt::format(
        "{:>5} {:>11.3f} {:>11.3f} {:>10.3f} {:>11.3f} {:>11.3f} {:>6.1f} {:>7.3f} {:>11.3f} "
        "{:>10.3f} {:>7} {:>10.1f} {:>9} {:>8} {:>7}\n",
        k, Ms(s.times.step), Ms(s.times.compute), Ms(s.times.tp), Ms(s.times.dp_comm),
        Ms(s.times.exposed), 100 * s.mfu,
        static_cast<double>(s.times.step.ps()) / static_cast<double>(r.ideal_step.ps()),
        static_cast<double>(s.times.dp_bytes) / 1e9, static_cast<double>(r.tp_bytes_per_gpu) / 1e9,
        s.counters.pause_frames, s.counters.paused_us, s.counters.ecn_marks, s.counters.cnps,
        s.counters.retransmissions);
  }
  out +=
      "# fabric: step time over the step on an infinitely fast network; exposed = step - compute\n";
  if (r.interrupted)
    out += fmt::format("# interrupted: {} of {} steps done\n", r.steps.size(), c.steps);
  if (r.stall.step >= 0 && r.stall.step < static_cast<int>(r.steps.size()) && r.steps.size() > 1) {
    const units::Time hit = r.steps[static_cast<size_t>(r.stall.step)].times.step;
    const units::Time base = r.steps[r.stall.step == 0 ? 1 : 0].times.step;
    out += fmt::format(
        "# stall at step {}: {:+.3f} ms against step {} ({:+.2f}% of a step)\n", r.stall.step,
        Ms(hit - base), r.stall.step == 0 ? 1 : 0,
        100.0 * static_cast<double>((hit - base).ps()) / static_cast<double>(base.ps()));
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
                 {"micro_batch", c.micro_batch},
                 {"global_batch", c.GlobalBatch()},
                 {"accumulation", c.Accumulation()},
                 {"bucket_bytes", c.bucket_bytes},
                 {"recompute", RecomputeName(c.recompute)},
                 {"exact", r.exact}};
  j["stall"] =
      r.stall.step >= 0
          ? nlohmann::json{{"step", r.stall.step},
                           {"gpu", 0},
                           {"duration_us", static_cast<double>(r.stall.duration.ps()) / 1e6}}
          : nlohmann::json(nullptr);
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
                     {"credit_starved_us", s.counters.credit_starved_us}});
  }
  j["steps"] = steps;
  j["interrupted"] = r.interrupted;
  return j;
}

}  // namespace lossless::train
