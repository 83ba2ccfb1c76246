// The training model without the engine: presets against their published
// parameter counts, the FLOP formula against Narayanan et al. 2021, memory
// and the errors of configurations that do not fit.
#include "train/model.hpp"

#include <string>

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless::train {
namespace {

TrainConfig Config(const std::string& model, Strategy s, int nodes, int tp = 1) {
  TrainConfig c;
  c.model = FindModel(model);
  c.gpu = FindGpu("h100");
  c.strategy = s;
  c.nodes = nodes;
  c.tp = tp;
  return c;
}

std::string ErrorOf(TrainConfig c) {
  try {
    Validate(c);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The parameter counts of Meta's Llama 2 checkpoints (the model cards' 7B,
// 13B and 70B; exact counts of the released weights) and TinyLlama 1.1B's.
TEST(TrainModelTest, PresetsHaveTheLlama2ParameterCounts) {
  EXPECT_EQ(FindModel("1.1b").TotalParams(), 1100048384);
  EXPECT_EQ(FindModel("7b").TotalParams(), 6738415616);
  EXPECT_EQ(FindModel("13b").TotalParams(), 13015864320);
  EXPECT_EQ(FindModel("70b").TotalParams(), 68976648192);
  EXPECT_THROW(FindModel("65b"), InputError);
}

// Narayanan et al. 2021: a GPT layer's forward is 24 B s h^2 + 4 B s^2 h
// FLOPs; a layer with GPT's 12 h^2 weights (multi-head attention, 8 h^2 in
// the MLP: ffn = 8h/3 with three SwiGLU matrices) gives the same per token.
TEST(TrainModelTest, LayerFlopsFollowNarayanan2021) {
  ModelSpec m{"gpt", 1, 3072, 24, 24, 8192, 50000, 2048, ""};
  const double h = 3072, s = 2048;
  EXPECT_DOUBLE_EQ(LayerForwardFlopsPerToken(m), 24 * h * h + 4 * s * h);
  EXPECT_DOUBLE_EQ(HeadForwardFlopsPerToken(m), 2.0 * 50000 * h);
}

TEST(TrainModelTest, LayerTimesAreFlopsOverAchievedPeak) {
  TrainConfig c = Config("7b", Strategy::kFsdp, 2);
  c.recompute = Recompute::kNone;
  const std::vector<Unit> u = Units(c);
  ASSERT_EQ(u.size(), 34u);  // embedding, 32 layers, output
  const double flops = LayerForwardFlopsPerToken(c.model) * 4096;
  const double s = flops / (989e12 * 0.43);
  EXPECT_NEAR(static_cast<double>(u[1].forward.ps()) / 1e12, s, 1e-12);
  EXPECT_EQ(u[1].backward.ps(), 2 * u[1].forward.ps());
  EXPECT_EQ(u[0].forward.ps(), 0);
  c.recompute = Recompute::kFull;  // the backward recomputes the forward
  EXPECT_NEAR(static_cast<double>(Units(c)[1].backward.ps()), 3.0 * u[1].forward.ps(), 1);
  c.tp = 2;  // half the work per GPU, and 2 + 2 all-reduces (4 with recompute: 2 + 2 + 2)
  const std::vector<Unit> t = Units(c);
  EXPECT_NEAR(static_cast<double>(t[1].forward.ps()), u[1].forward.ps() / 2.0, 1);
  EXPECT_GT(t[1].tp_forward.ps(), 0);
  EXPECT_EQ(t[1].tp_backward.ps(), 2 * t[1].tp_forward.ps());
}

// A ring all-reduce over NVLink: 2 (n - 1) steps of bytes / n at the rate,
// each with the hop latency.
TEST(TrainModelTest, NvlinkAllReduceIsTheRingFormula) {
  const units::Time t =
      NvlinkAllReduce(int64_t{8} << 20, 4, units::Rate::Gbps(3600), units::Time::Ns(600));
  const double expect = 6.0 * (8 << 20) / 4 * 8 / 3600e9 + 6 * 600e-9;
  EXPECT_NEAR(static_cast<double>(t.ps()) / 1e12, expect, 1e-12);
  EXPECT_EQ(NvlinkAllReduce(1 << 20, 1, units::Rate::Gbps(3600), units::Time::Ns(600)).ps(), 0);
}

TEST(TrainModelTest, FsdpShardsSixteenBytesPerParameter) {
  TrainConfig c = Config("70b", Strategy::kFsdp, 16);
  Validate(c);
  EXPECT_EQ(c.recompute, Recompute::kFull);  // 80 layers of activations do not fit without
  const Memory m = MemoryPerGpu(c, c.recompute);
  EXPECT_EQ(m.states, 16 * FindModel("70b").TotalParams() / 128);
  EXPECT_LE(m.Total(), c.gpu.hbm_bytes);
  // HSDP shards over the node's 8 GPUs only.
  TrainConfig h = Config("13b", Strategy::kHsdp, 16);
  Validate(h);
  EXPECT_EQ(MemoryPerGpu(h, h.recompute).states, 16 * FindModel("13b").TotalParams() / 8);
  EXPECT_NE(
      ErrorOf(Config("13b", Strategy::kHsdp, 16, 8)).find("2 or more data-parallel GPUs per node"),
      std::string::npos);
  EXPECT_NE(ErrorOf(Config("70b", Strategy::kHsdp, 16)).find("more than the h100's"),
            std::string::npos);
  TrainConfig d = Config("7b", Strategy::kDdp, 2, 2);
  Validate(d);
  EXPECT_EQ(MemoryPerGpu(d, d.recompute).states, 16 * (FindModel("7b").TotalParams() / 2));
}

TEST(TrainModelTest, WhatDoesNotFitIsSaidWithTheShortfall) {
  // 70B under DDP: 16 B x 69e9 parameters on every GPU.
  const std::string ddp = ErrorOf(Config("70b", Strategy::kDdp, 16));
  EXPECT_NE(ddp.find("--strategy"), std::string::npos) << ddp;
  EXPECT_NE(ddp.find("more than the h100's 80.0 GB of HBM"), std::string::npos) << ddp;
  EXPECT_NE(ddp.find("1103.6 GB"), std::string::npos) << ddp;  // the states alone
  const std::string tp = ErrorOf(Config("70b", Strategy::kFsdp, 16, 16));
  EXPECT_NE(tp.find("--tp"), std::string::npos) << tp;
  EXPECT_NE(ErrorOf(Config("70b", Strategy::kFsdp, 16, 3)).find("divides the 8 GPUs"),
            std::string::npos);
  TrainConfig b = Config("7b", Strategy::kFsdp, 2);
  b.global_batch = 20;  // not a multiple of 16 ranks x 1
  EXPECT_NE(ErrorOf(b).find("--global-batch"), std::string::npos);
  b.global_batch = 32;
  EXPECT_EQ(ErrorOf(b), "");
  EXPECT_EQ(b.Accumulation(), 2);
  TrainConfig none = Config("70b", Strategy::kFsdp, 16);
  none.recompute = Recompute::kNone;
  EXPECT_NE(ErrorOf(none).find("recompute none"), std::string::npos);
}

// The textbook bytes: DDP 2 (n - 1)/n of the bf16 gradient; FSDP two
// all-gathers and a reduce-scatter of (n - 1)/n each; TP 2 + 2 all-reduces
// of b s h bf16 activations per layer, 2 (t - 1)/t each.
TEST(TrainModelTest, TextbookBytesPerGpu) {
  TrainConfig c = Config("7b", Strategy::kDdp, 2);
  const double grad = 2.0 * static_cast<double>(FindModel("7b").TotalParams());
  EXPECT_NEAR(static_cast<double>(DpBytesPerGpu(c)), 2.0 * 15 / 16 * grad, 8);
  c.strategy = Strategy::kFsdp;
  EXPECT_NEAR(static_cast<double>(DpBytesPerGpu(c)), 3.0 * 15 / 16 * grad, 8);
  // fp8 gradients: half the bytes of DDP's all-reduces; FSDP's reduce-scatter
  // halves while its two bf16 parameter all-gathers stay (2.5 of 3).
  c.grad_bytes = 1;
  EXPECT_NEAR(static_cast<double>(DpBytesPerGpu(c)), 2.5 * 15 / 16 * grad, 8);
  c.strategy = Strategy::kDdp;
  EXPECT_NEAR(static_cast<double>(DpBytesPerGpu(c)), 15.0 / 16 * grad, 8);
  c.grad_bytes = 2;
  c.strategy = Strategy::kFsdp;
  c.tp = 2;
  c.recompute = Recompute::kNone;
  EXPECT_EQ(TpBytesPerGpu(c), int64_t{4} * 32 * (2 * 4096 * 4096));  // 2 (t - 1)/t = 1
}

// Pipeline stages: a GPU holds its stage's layers (the last stage also the
// output layer) and, under 1F1B, the activations of min(P, m) micro-batches
// of its layers (Narayanan et al. 2021: stage 0 keeps P in flight).
TEST(TrainModelTest, PipelineMemoryIsTheStagesLayersAndInFlightMicroBatches) {
  const ModelSpec m = FindModel("70b");
  TrainConfig c = Config("70b", Strategy::kDdp, 16, 8);
  c.pp = 8;
  c.recompute = Recompute::kFull;
  c.global_batch = 16 * c.DpRanks();  // 16 micro-batches
  ASSERT_EQ(c.DpRanks(), 2);
  const Memory mem = MemoryPerGpu(c, Recompute::kFull);
  EXPECT_EQ(mem.states, 16 * ((10 * m.LayerParams() + m.HeadParams()) / 8));
  TrainConfig one = c;
  one.pp = 1;
  one.nodes = 2;  // the same DP and TP, one stage
  one.global_batch = c.global_batch;
  const Memory flat = MemoryPerGpu(one, Recompute::kFull);
  // Kept inputs: 80 layers x 1 micro-batch without stages, 10 layers x 8
  // micro-batches with them: the same; one recomputed layer on top of both.
  EXPECT_EQ(mem.activations, flat.activations);
  c.global_batch = 2 * c.DpRanks();  // 2 micro-batches: 2 in flight, not 8
  const Memory two = MemoryPerGpu(c, Recompute::kFull);
  const double layer_in = 2.0 * 4096 * 8192;  // 2 s b h kept per layer
  EXPECT_NEAR(static_cast<double>(mem.activations - two.activations), 6 * 10 * layer_in, 16);
  Validate(c);  // 70B fits on 128 H100 with tp 8 pp 8 under DDP
  EXPECT_EQ(c.recompute, Recompute::kFull);
}

// Bad pipeline input: one error naming the flag and what does not fit.
TEST(TrainModelTest, PipelineErrorsNameWhatDoesNotFit) {
  TrainConfig c = Config("70b", Strategy::kDdp, 16, 8);
  c.pp = 3;  // 80 layers
  std::string e = ErrorOf(c);
  EXPECT_NE(e.find("--pp"), std::string::npos) << e;
  EXPECT_NE(e.find("divides the model's 80 layers, got 3 (26 layers per stage leaves 2 over)"),
            std::string::npos)
      << e;
  c.pp = 5;  // divides 80 layers, not 16 nodes
  e = ErrorOf(c);
  EXPECT_NE(e.find("expected pp x tp x dp = 128 GPUs"), std::string::npos) << e;
  EXPECT_NE(e.find("5 stages do not divide 16 nodes"), std::string::npos) << e;
  c.pp = 0;
  EXPECT_NE(ErrorOf(c).find("expected 1 or more pipeline stages"), std::string::npos);
  c.pp = 8;
  c.strategy = Strategy::kFsdp;
  e = ErrorOf(c);
  EXPECT_NE(e.find("--strategy"), std::string::npos) << e;
  EXPECT_NE(e.find("expected ddp with --pp 8"), std::string::npos) << e;
  c.strategy = Strategy::kDdp;
  c.micro_batches = 0;
  e = ErrorOf(c);
  EXPECT_NE(e.find("--micro-batches"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 1 or more micro-batches per step, got 0"), std::string::npos) << e;
  c.micro_batches = 4;
  c.global_batch = 7;
  EXPECT_NE(ErrorOf(c).find("expected --global-batch 8 = 4 micro-batches"), std::string::npos);
  c.global_batch = 0;
  Validate(c);
  EXPECT_EQ(c.GlobalBatch(), 8);
  EXPECT_EQ(c.Accumulation(), 4);
}

}  // namespace
}  // namespace lossless::train
