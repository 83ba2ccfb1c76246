// `lossless train --model 70b --strategy fsdp --nodes 16 --fabric ib-ndr`:
// training steps with their data-parallel collectives at packet level over a
// profile's fabric (docs/train.md, train/train_run.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/file.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "profile/profile.hpp"
#include "scenario/scenario.hpp"
#include "train/train_run.hpp"

namespace lossless::cli {

void AddTrainCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "train",
      "Training steps over the modelled fabric: step time, exposed communication, MFU "
      "(`lossless train --model 70b --strategy fsdp --nodes 16 --fabric ib-ndr`, docs/train.md)");
  struct Opts {
    std::string model = "70b", strategy = "fsdp", fabric = "ib-ndr", scenario, gpu = "h100";
    std::string recompute = "auto", json, grad_precision = "bf16";
    int nodes = 16, gpus_per_node = 8, tp = 1, pp = 1, steps = 1;
    int64_t micro_batch = 1, global_batch = 0, micro_batches = 0;
    double bucket_mb = 25, efficiency = -1, stall_us = 0, max_idle_us = -1;
    int stall_step = -1;
    std::vector<std::string> slow_gpu, degrade, stall_nic;
    bool exact = false, quiet = false, timing = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--model", o->model, "Model preset: 1.1b (TinyLlama), 7b, 13b, 70b (Llama 2; default 70b)");
  cmd->add_option(
      "--strategy", o->strategy,
      "ddp, fsdp or hsdp (FSDP inside each node, replicated across nodes; default fsdp)");
  cmd->add_option("--tp", o->tp, "Tensor-parallel degree inside a node (default 1)");
  cmd->add_option("--pp", o->pp,
                  "Pipeline stages across the nodes, 1F1B (default 1; with --strategy ddp)");
  cmd->add_option("--nodes", o->nodes, "Nodes (default 16)");
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node, one NIC each (default 8)");
  cmd->add_option("--fabric", o->fabric, "Fabric profile (default ib-ndr; lossless profiles)");
  cmd->add_option("--scenario", o->scenario,
                  "A scenario file whose fabric and topology replace the profile's (its traffic "
                  "is ignored)");
  cmd->add_option("--gpu", o->gpu, "GPU generation: a100, h100, h200, b200 (default h100)");
  cmd->add_option(
      "--efficiency", o->efficiency,
      "Achieved fraction of the GPU's dense BF16 peak (default per GPU, docs/train.md)");
  cmd->add_option("--micro-batch", o->micro_batch, "Sequences per GPU per micro-batch (default 1)");
  cmd->add_option("--global-batch", o->global_batch,
                  "Sequences per step (default micro-batch x data-parallel ranks)");
  CLI::Option* micro_batches =
      cmd->add_option("--micro-batches", o->micro_batches,
                      "Micro-batches per step (sets the global batch; pipeline's m)");
  cmd->add_option("--bucket-mb", o->bucket_mb, "DDP gradient bucket, MiB (default 25)");
  cmd->add_option("--recompute", o->recompute,
                  "Activation recomputation: auto (full only when needed to fit), none, full");
  cmd->add_option("--steps", o->steps, "Steps (default 1)");
  cmd->add_option("--grad-precision", o->grad_precision,
                  "Gradients on the wire: bf16 (default) or fp8 (1 B per element; master "
                  "weights and optimizer states stay higher precision, docs/train.md)");
  cmd->add_option("--stall-step", o->stall_step,
                  "A step (from 0) at whose first collective GPU 0's NIC stops receiving");
  cmd->add_option("--stall-us", o->stall_us, "How long that NIC stops receiving, us (default 200)");
  cmd->add_option("--slow-gpu", o->slow_gpu,
                  "RANK:FACTOR@STEP[-LAST]: GPU RANK computes FACTOR times slower in those steps "
                  "(from STEP to the end without -LAST); repeatable");
  cmd->add_option("--degrade", o->degrade,
                  "LINK=BER@STEP[-LAST]: LINK (a-b as `lossless links` names it, or a->b for one "
                  "direction) loses frames at post-FEC bit error rate BER in those steps; "
                  "repeatable");
  cmd->add_option("--stall-nic", o->stall_nic,
                  "HOST@STEP:US: the NIC of GPU HOST stops receiving for US microseconds from "
                  "step STEP's first collective; repeatable");
  cmd->add_option("--max-idle-us", o->max_idle_us,
                  "Simulate at most this much idle network time before each simulated collective "
                  "(default: all of it; lossless compare uses 1000)");
  cmd->add_option("--json", o->json, "Write the lossless.train/1 document to FILE (- = stdout)");
  cmd->add_flag("--exact", o->exact,
                "Simulate every collective (default: identical ones reuse a measured time)");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress line");
  cmd->add_flag("--timing", o->timing, "Wall-clock time and simulated events on stderr");
  cmd->callback([o, micro_batches, &ctx] {
    train::TrainConfig c;
    c.model = train::FindModel(o->model);
    c.gpu = train::FindGpu(o->gpu);
    if (o->efficiency != -1) {
      if (!(o->efficiency > 0 && o->efficiency <= 1))
        throw InputError({"<cli>", 0, "--efficiency"},
                         fmt::format("expected a fraction in (0, 1], got {:g}", o->efficiency));
      c.gpu.efficiency = o->efficiency;
    }
    if (o->strategy == "ddp")
      c.strategy = train::Strategy::kDdp;
    else if (o->strategy == "fsdp")
      c.strategy = train::Strategy::kFsdp;
    else if (o->strategy == "hsdp")
      c.strategy = train::Strategy::kHsdp;
    else
      throw InputError({"<cli>", 0, "--strategy"}, Expected("ddp, fsdp or hsdp", o->strategy));
    if (o->recompute == "auto")
      c.recompute = train::Recompute::kAuto;
    else if (o->recompute == "none")
      c.recompute = train::Recompute::kNone;
    else if (o->recompute == "full")
      c.recompute = train::Recompute::kFull;
    else
      throw InputError({"<cli>", 0, "--recompute"}, Expected("auto, none or full", o->recompute));
    if (o->grad_precision == "bf16")
      c.grad_bytes = 2;
    else if (o->grad_precision == "fp8")
      c.grad_bytes = 1;
    else
      throw InputError({"<cli>", 0, "--grad-precision"},
                       Expected("bf16 or fp8", o->grad_precision));
    if (!(o->bucket_mb > 0 && o->bucket_mb <= 1 << 20))
      throw InputError({"<cli>", 0, "--bucket-mb"},
                       fmt::format("expected 0 < MiB <= 1048576, got {:g}", o->bucket_mb));
    c.bucket_bytes = std::max<int64_t>(1, std::llround(o->bucket_mb * (1 << 20)));
    c.nodes = o->nodes;
    c.gpus_per_node = o->gpus_per_node;
    c.tp = o->tp;
    c.pp = o->pp;
    c.micro_batch = o->micro_batch;
    c.global_batch = o->global_batch;
    if (micro_batches->count() > 0) c.micro_batches = o->micro_batches;
    c.steps = o->steps;
    if (o->steps > 100000)
      throw InputError({"<cli>", 0, "--steps"},
                       fmt::format("expected at most 100000, got {}", o->steps));
    train::Validate(c);
    train::Faults faults;
    if (o->stall_step != -1 || o->stall_us != 0) {
      if (o->stall_step < 0 || o->stall_step >= c.steps)
        throw InputError({"<cli>", 0, "--stall-step"},
                         fmt::format("expected a step from 0 to {} (--steps {}), got {}",
                                     c.steps - 1, c.steps, o->stall_step));
      const double us = o->stall_us == 0 ? 200 : o->stall_us;
      if (!(us > 0 && us <= 1e6))
        throw InputError({"<cli>", 0, "--stall-us"},
                         fmt::format("expected 0 < us <= 1e6, got {:g}", o->stall_us));
      faults.stalls.push_back({0, o->stall_step, units::Time::Ps(static_cast<int64_t>(us * 1e6))});
    }
    for (const std::string& v : o->slow_gpu) faults.slow_gpus.push_back(train::ParseSlowGpu(v, c));
    for (const std::string& v : o->degrade) faults.degraded.push_back(train::ParseDegrade(v, c));
    for (const std::string& v : o->stall_nic) faults.stalls.push_back(train::ParseStallNic(v, c));
    units::Time max_idle = units::Time::Max();
    if (o->max_idle_us != -1) {
      if (!(o->max_idle_us >= 0 && o->max_idle_us <= 1e9))
        throw InputError({"<cli>", 0, "--max-idle-us"},
                         fmt::format("expected 0 <= us <= 1e9, got {:g}", o->max_idle_us));
      max_idle = units::Time::Ps(static_cast<int64_t>(std::llround(o->max_idle_us * 1e6)));
    }
    scenario::Scenario s;
    std::string name;
    if (!o->scenario.empty()) {
      s = scenario::LoadFabricFile(o->scenario);
      name = s.name;
      if (!s.traffic.empty())
        fmt::print(stderr, "lossless train: the traffic of {} is ignored (train makes its own)\n",
                   text::OneLine(o->scenario));
    } else {
      name = o->fabric;
      s = profile::Load(name, c.nodes, {fmt::format("topology.gpus_per_node={}", c.gpus_per_node)});
    }
    if (!o->json.empty() && o->json != "-") CheckOutputPath(o->json, {o->json, 0, "--json"});
    ProgressLine line(!o->quiet && ProgressLine::StderrIsTerminal());
    InterruptScope interrupts;
    const auto t0 = std::chrono::steady_clock::now();
    train::TrainResult r;
    try {
      r = train::RunTraining(
          c, s, name, o->exact,
          [&](int step, int done, int total) {
            if (!line.Due()) return;
            const double share = (step + static_cast<double>(done) / std::max(1, total)) / c.steps;
            const double secs =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            line.Draw(fmt::format("step {}/{}: collective {}/{}, {:.0f}% done, {:.0f} s", step + 1,
                                  c.steps, done, total, 100 * share, secs));
          },
          faults, max_idle);
    } catch (const train::TrainFailure& e) {
      line.Clear();
      fmt::print(stderr, "error: {}\n", text::OneLine(e.what()));
      ctx.exit_code = 1;
      return;
    }
    line.Clear();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o->json == "-") {
      fmt::print("{}\n", train::TrainJson(r).dump(2));
    } else {
      // The profile or scenario name came from a file: escape its control characters.
      fmt::print("{}", text::ForTerminal(train::FormatTrain(r)));
      if (!o->json.empty())
        WriteFileAtomically(o->json, train::TrainJson(r).dump(2) + "\n", {o->json, 0, "--json"});
    }
    if (o->timing)
      fmt::print(stderr, "timing: {:.1f} s wall, {} events, {} collectives simulated, {} reused\n",
                 wall, r.events, r.simulated, r.reused);
    ctx.exit_code = r.interrupted ? kExitInterrupted : 0;
  });
}

}  // namespace lossless::cli
