#include "train/model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/error.hpp"
#include "collective/ring_engine.hpp"
#include "node/node.hpp"

namespace lossless::train {
namespace {

// Llama 2 (Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat
// Models", table 1: 4k context, GQA for 70B) with the dimensions of Meta's
// released configurations (config.json of meta-llama/Llama-2-{7b,13b,70b}-hf:
// hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads, vocab_size 32000). TinyLlama 1.1B (Zhang et al. 2024,
// "TinyLlama: An Open-Source Small Language Model", arXiv:2401.02385) is the
// Llama 2 layout at 1.1B parameters with a 2k context (config.json of
// TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T; untied embeddings).
const ModelSpec kModels[] = {
    {"1.1b", 22, 2048, 32, 4, 5632, 32000, 2048, "TinyLlama 1.1B (Zhang et al. 2024; config.json)"},
    {"7b", 32, 4096, 32, 32, 11008, 32000, 4096, "Llama 2 7B (Touvron et al. 2023; config.json)"},
    {"13b", 40, 5120, 40, 40, 13824, 32000, 4096, "Llama 2 13B (Touvron et al. 2023; config.json)"},
    {"70b", 80, 8192, 64, 8, 28672, 32000, 4096, "Llama 2 70B (Touvron et al. 2023; config.json)"},
};

constexpr int64_t kGB = 1000LL * 1000 * 1000;

// Dense BF16 peaks from NVIDIA's datasheets (the sparsity figures halved):
// A100 SXM4 80GB 312 TFLOPS; H100 SXM5 989 TFLOPS; H200 SXM 989 TFLOPS,
// 141 GB; HGX B200 36 PFLOPS sparse FP16/BF16 for 8 GPUs (2.25 dense per
// GPU), 1.4 TB HBM3e (180 GB per GPU). NVLink comes from the node preset of
// the same name (node::NodePresets, docs/model/node.md#presets), the one
// table of it. Efficiencies (docs/train.md): A100 0.52, the 163 of 312
// TFLOP/s per GPU of Narayanan et al. 2021; H100 0.43, the upper end of the
// 38-43% BF16 MFU of Llama 3 405B on H100 (Dubey et al. 2024, table 4); H200
// and B200 take H100's (unverified).
const GpuSpec kGpus[] = {
    {"a100", 312, 0.52, 80 * kGB, {}},
    {"h100", 989, 0.43, 80 * kGB, {}},
    {"h200", 989, 0.43, 141 * kGB, {}},
    {"b200", 2250, 0.43, 180 * kGB, {}},
};

units::Time Seconds(double s) {
  return units::Time::Ps(static_cast<int64_t>(std::llround(s * 1e12)));
}

double GB(int64_t b) {
  return static_cast<double>(b) / 1e9;
}

}  // namespace

int64_t ModelSpec::LayerMatmulParams() const {
  const int64_t head_dim = hidden / heads;
  return 2 * hidden * hidden + 2 * hidden * kv_heads * head_dim + 3 * hidden * ffn;
}
int64_t ModelSpec::LayerParams() const {
  return LayerMatmulParams() + 2 * hidden;
}
int64_t ModelSpec::TotalParams() const {
  return layers * LayerParams() + EmbeddingParams() + HeadParams();
}

ModelSpec FindModel(const std::string& name, const std::string& field) {
  for (const ModelSpec& m : kModels)
    if (m.name == name) return m;
  throw InputError({"<cli>", 0, field}, fmt::format("expected one of {}, got '{}'",
                                                    fmt::join(ModelNames(), ", "), name));
}
std::vector<std::string> ModelNames() {
  std::vector<std::string> v;
  for (const ModelSpec& m : kModels) v.push_back(m.name);
  return v;
}

GpuSpec FindGpu(const std::string& name, const std::string& field) {
  for (const GpuSpec& g : kGpus) {
    if (g.name != name) continue;
    GpuSpec spec = g;
    spec.nvlink_rate = node::FindNodePreset(g.name, {"<cli>", 0, field}).nvlink_rate;
    return spec;
  }
  throw InputError({"<cli>", 0, field},
                   fmt::format("expected one of {}, got '{}'", fmt::join(GpuNames(), ", "), name));
}
std::vector<std::string> GpuNames() {
  std::vector<std::string> v;
  for (const GpuSpec& g : kGpus) v.push_back(g.name);
  return v;
}

const char* StrategyName(Strategy s) {
  return s == Strategy::kDdp ? "ddp" : s == Strategy::kHsdp ? "hsdp" : "fsdp";
}
const char* RecomputeName(Recompute r) {
  return r == Recompute::kFull ? "full" : r == Recompute::kNone ? "none" : "auto";
}

double LayerForwardFlopsPerToken(const ModelSpec& m) {
  return 2.0 * static_cast<double>(m.LayerMatmulParams()) +
         4.0 * static_cast<double>(m.seq_len) * static_cast<double>(m.hidden);
}
double HeadForwardFlopsPerToken(const ModelSpec& m) {
  return 2.0 * static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
}

units::Time NvlinkAllReduce(int64_t bytes, int ranks, units::Rate rate, units::Time latency) {
  if (ranks < 2 || bytes <= 0) return units::Time::Zero();
  const double n = ranks;
  const double per_step = static_cast<double>(bytes) / n * 8.0 / static_cast<double>(rate.bps());
  return Seconds(2.0 * (n - 1) * per_step) +
         units::Time::Ps(int64_t{2} * (ranks - 1) * latency.ps());
}

Memory MemoryPerGpu(const TrainConfig& c, Recompute r) {
  const ModelSpec& m = c.model;
  Memory mem;
  // A pipeline stage holds its layers and, on the last stage (the larger end),
  // the output layer and final norm; stage 0 the smaller input embedding.
  const int64_t params =
      (c.pp <= 1 ? m.TotalParams() : m.layers / c.pp * m.LayerParams() + m.HeadParams()) / c.tp;
  mem.states = 16 * params / c.ShardRanks();
  if (c.strategy != Strategy::kDdp) {
    const int64_t unit = std::max({m.LayerParams(), m.EmbeddingParams(), m.HeadParams()}) / c.tp;
    mem.gathered = int64_t{3} * 2 * unit;
  }
  const double s = static_cast<double>(m.seq_len), b = static_cast<double>(c.micro_batch),
               h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads),
               t = static_cast<double>(c.tp);
  // Korthikanti et al. 2022: s b h (10 + 24/t + 5 a s / (h t)) bytes per layer
  // without recomputation (eq. 4 without sequence parallelism); with full
  // recomputation each layer keeps its input (2 s b h) and one layer's
  // activations live while it is recomputed.
  const double layer = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
  const double kept = r == Recompute::kFull ? 2.0 * s * b * h : layer;
  // 1F1B (Narayanan et al. 2021, section 2.2.1): stage s keeps the
  // activations of up to pp - s micro-batches; stage 0 the most, min(pp, m)
  // micro-batches of its layers / pp layers.
  const int pp = std::max(c.pp, 1);
  const double in_flight =
      static_cast<double>(std::min<int64_t>(pp, std::max<int64_t>(c.Accumulation(), 1)));
  const double act =
      // NOLINTNEXTLINE(bugprone-integer-division): exact, Validate() requires pp to divide layers
      in_flight * static_cast<double>(m.layers / pp) * kept + (r == Recompute::kFull ? layer : 0.0);
  mem.activations = static_cast<int64_t>(act);
  return mem;
}

void Validate(TrainConfig& c) {
  if (c.nodes < 1)
    throw InputError({"<cli>", 0, "--nodes"},
                     fmt::format("expected 1 or more nodes, got {}", c.nodes));
  if (c.gpus_per_node < 1)
    throw InputError({"<cli>", 0, "--gpus-per-node"},
                     fmt::format("expected 1 or more GPUs per node, got {}", c.gpus_per_node));
  if (c.tp < 1 || c.tp > c.gpus_per_node || c.gpus_per_node % c.tp != 0)
    throw InputError({"<cli>", 0, "--tp"},
                     fmt::format("expected a tensor-parallel degree that divides the {} GPUs per "
                                 "node (tensor parallelism stays inside a node), got {}",
                                 c.gpus_per_node, c.tp));
  if (c.model.heads % c.tp != 0 || c.model.kv_heads % c.tp != 0)
    throw InputError({"<cli>", 0, "--tp"},
                     fmt::format("expected a tensor-parallel degree that divides the model's {} "
                                 "attention heads and {} key-value heads, got {}",
                                 c.model.heads, c.model.kv_heads, c.tp));
  if (c.pp < 1)
    throw InputError({"<cli>", 0, "--pp"},
                     fmt::format("expected 1 or more pipeline stages, got {}", c.pp));
  if (c.pp > 1 && c.strategy != Strategy::kDdp)
    throw InputError({"<cli>", 0, "--strategy"},
                     fmt::format("expected ddp with --pp {}: pipeline stages are modelled with DDP "
                                 "across each stage's data-parallel group only (as Megatron-LM; "
                                 "DeepSpeed does not combine ZeRO-3 with pipeline parallelism), "
                                 "got {}",
                                 c.pp, StrategyName(c.strategy)));
  if (c.model.layers % c.pp != 0)
    throw InputError(
        {"<cli>", 0, "--pp"},
        fmt::format("expected a pipeline degree that divides the model's {} layers, "
                    "got {} ({} layers per stage leaves {} over)",
                    c.model.layers, c.pp, c.model.layers / c.pp, c.model.layers % c.pp));
  if (c.nodes % c.pp != 0)
    throw InputError(
        {"<cli>", 0, "--pp"},
        fmt::format("expected pp x tp x dp = {} GPUs with whole nodes per stage (stages are "
                    "across nodes): {} stages do not divide {} nodes",
                    static_cast<int64_t>(c.nodes) * c.gpus_per_node, c.pp, c.nodes));
  if (c.micro_batches) {
    const int64_t mbs = *c.micro_batches;
    if (mbs < 1)
      throw InputError({"<cli>", 0, "--micro-batches"},
                       fmt::format("expected 1 or more micro-batches per step, got {}", mbs));
    if (c.micro_batch < 1)
      throw InputError({"<cli>", 0, "--micro-batch"},
                       fmt::format("expected 1 or more sequences, got {}", c.micro_batch));
    const int64_t g = mbs * c.micro_batch * c.DpRanks();
    if (c.global_batch != 0 && c.global_batch != g)
      throw InputError({"<cli>", 0, "--micro-batches"},
                       fmt::format("expected --global-batch {} = {} micro-batches x micro-batch {} "
                                   "x {} data-parallel ranks, or no --global-batch, got {}",
                                   g, mbs, c.micro_batch, c.DpRanks(), c.global_batch));
    c.global_batch = g;
  }
  if (c.DpRanks() * static_cast<int64_t>(c.tp) * c.pp < 2)
    throw InputError({"<cli>", 0, "--nodes"}, "expected 2 or more GPUs: one GPU moves nothing");
  if (c.strategy == Strategy::kHsdp && c.ShardRanks() < 2)
    throw InputError({"<cli>", 0, "--strategy"},
                     fmt::format("expected 2 or more data-parallel GPUs per node to shard over "
                                 "with hsdp, got {} (GPUs per node / tp)",
                                 c.ShardRanks()));
  if (c.micro_batch < 1)
    throw InputError({"<cli>", 0, "--micro-batch"},
                     fmt::format("expected 1 or more sequences, got {}", c.micro_batch));
  if (c.global_batch < 0 || c.GlobalBatch() % (c.micro_batch * c.DpRanks()) != 0)
    throw InputError(
        {"<cli>", 0, "--global-batch"},
        fmt::format("expected a multiple of micro-batch x data-parallel ranks = {} x "
                    "{} = {} sequences, got {}",
                    c.micro_batch, c.DpRanks(), c.micro_batch * c.DpRanks(), c.global_batch));
  if (c.bucket_bytes < 1)
    throw InputError({"<cli>", 0, "--bucket-mb"}, "expected a bucket of more than 0 MB");
  if (c.steps < 1)
    throw InputError({"<cli>", 0, "--steps"},
                     fmt::format("expected 1 or more steps, got {}", c.steps));
  const int64_t hbm = c.gpu.hbm_bytes;
  const Recompute asked = c.recompute;
  const Memory none = MemoryPerGpu(c, Recompute::kNone);
  const Memory full = MemoryPerGpu(c, Recompute::kFull);
  if (asked == Recompute::kNone || (asked == Recompute::kAuto && none.Total() <= hbm)) {
    c.recompute = Recompute::kNone;
  } else {
    c.recompute = Recompute::kFull;
  }
  const Memory m = c.recompute == Recompute::kFull ? full : none;
  if (m.Total() > hbm) {
    throw InputError(
        {"<cli>", 0, c.strategy == Strategy::kFsdp ? "--nodes" : "--strategy"},
        fmt::format("{} with {} on {} GPUs (tp {}, recompute {}) needs {:.1f} GB per GPU "
                    "(weights, gradients and Adam states {:.1f} GB, gathered layers {:.1f} GB, "
                    "activations {:.1f} GB), {:.1f} GB more than the {}'s {:.1f} GB of HBM",
                    c.model.name, StrategyName(c.strategy), c.nodes * c.gpus_per_node, c.tp,
                    RecomputeName(c.recompute), GB(m.Total()), GB(m.states), GB(m.gathered),
                    GB(m.activations), GB(m.Total() - hbm), c.gpu.name, GB(hbm)));
  }
}

std::vector<Unit> Units(const TrainConfig& c) {
  const ModelSpec& m = c.model;
  const double tokens = static_cast<double>(c.TokensPerMicroBatch());
  const double rate = c.gpu.peak_bf16_tflops * 1e12 * c.gpu.efficiency;
  const double t = static_cast<double>(c.tp);
  const bool recompute = c.recompute == Recompute::kFull;
  // Megatron's TP layer: 2 all-reduces of b s h bf16 activations forward, 2 backward.
  const int64_t act_bytes = 2 * c.micro_batch * m.seq_len * m.hidden;
  const collective::RingSpec nv;  // the engine's NVLink latency
  const units::Time tp_pair = units::Time::Ps(
      2 * NvlinkAllReduce(act_bytes, c.tp, c.gpu.nvlink_rate, nv.nvlink_latency).ps());
  std::vector<Unit> units;
  units.push_back({"embedding", m.EmbeddingParams() / c.tp, {}, {}, {}, {}, 0});
  const double layer_f = LayerForwardFlopsPerToken(m) * tokens / t;
  for (int64_t l = 0; l < m.layers; ++l) {
    Unit u{fmt::format("layer {}", l),
           m.LayerParams() / c.tp,
           Seconds(layer_f / rate),
           Seconds((recompute ? 3 : 2) * layer_f / rate),
           tp_pair,
           recompute ? units::Time::Ps(2 * tp_pair.ps()) : tp_pair,
           3 * layer_f};
    units.push_back(u);
  }
  const double head_f = HeadForwardFlopsPerToken(m) * tokens / t;
  units.push_back({"output",
                   m.HeadParams() / c.tp,
                   Seconds(head_f / rate),
                   Seconds(2 * head_f / rate),
                   {},
                   {},
                   3 * head_f});
  return units;
}

int UnitStage(const TrainConfig& c, size_t u) {
  const size_t n = static_cast<size_t>(c.model.layers) + 2;
  if (u == 0 || c.pp <= 1) return 0;
  if (u + 1 >= n) return c.pp - 1;
  return static_cast<int>(static_cast<int64_t>(u - 1) / (c.model.layers / c.pp));
}

int64_t DpBytesPerGpu(const TrainConfig& c) {
  const double n = c.DpRanks();
  if (c.DpRanks() < 2) return 0;
  double params = 0;  // bf16 parameters (2 B each): what FSDP gathers
  double grad = 0;    // gradient bytes (grad_bytes each)
  const std::vector<Unit> units = Units(c);
  for (size_t k = 0; k < units.size(); ++k) {
    // Pipeline: a GPU of the last stage (the largest: its layers and the output layer).
    if (UnitStage(c, k) != c.pp - 1) continue;
    const Unit& u = units[k];
    params += 2.0 * static_cast<double>(u.params);
    grad += static_cast<double>(c.GradBytes(u.params));
  }
  if (c.strategy == Strategy::kDdp) return static_cast<int64_t>(2.0 * (n - 1) / n * grad);
  if (c.strategy == Strategy::kHsdp) {
    const double k = c.ShardRanks(), m = c.nodes;
    return static_cast<int64_t>(static_cast<double>(c.Accumulation()) *
                                ((k - 1) / k * (2 * params + grad) + 2.0 * (m - 1) / m * grad / k));
  }
  return static_cast<int64_t>(static_cast<double>(c.Accumulation()) * (n - 1) / n *
                              (2 * params + grad));
}

int64_t TpBytesPerGpu(const TrainConfig& c) {
  if (c.tp < 2) return 0;
  const double t = c.tp;
  const double act = 2.0 * static_cast<double>(c.micro_batch * c.model.seq_len * c.model.hidden);
  const double per_layer = (c.recompute == Recompute::kFull ? 6.0 : 4.0) * 2.0 * (t - 1) / t * act;
  // NOLINTNEXTLINE(bugprone-integer-division): exact, Validate() requires pp to divide layers
  return static_cast<int64_t>(per_layer * static_cast<double>(c.model.layers / c.pp) *
                              static_cast<double>(c.Accumulation()));
}

}  // namespace lossless::train
