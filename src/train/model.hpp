#pragma once
// The training model without the engine (docs/train.md): dense decoder
// presets, GPU generations, the compute time of each part of a step, memory
// per GPU and the textbook bytes each strategy moves.
//
// FLOP accounting (Narayanan et al. 2021, "Efficient Large-Scale Language
// Model Training on GPU Clusters Using Megatron-LM", SC'21, appendix): a
// transformer layer's forward pass costs 2 FLOPs per weight of its matrix
// multiplications per token plus 4 s h FLOPs per token for the attention
// scores and their product with the values (s: sequence length, h: hidden
// size); the logit layer 2 V h per token; the backward pass twice the
// forward. Narayanan's 24 B s h^2 is the 2 x 12 h^2 weights of a GPT layer;
// counting the weights instead carries the formula to grouped-query
// attention and SwiGLU MLPs (Llama 2). Full activation recomputation adds one
// forward pass to the backward; MFU counts model FLOPs without it (Chowdhery
// et al. 2022, PaLM, appendix B).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "units/units.hpp"

namespace lossless::train {

// A dense decoder-only transformer (Llama 2 layout: RMSNorm, grouped-query
// attention, SwiGLU MLP, untied input and output embeddings).
struct ModelSpec {
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t ffn = 0;  // MLP inner size (SwiGLU: 3 matrices of hidden x ffn)
  int64_t vocab = 0;
  int64_t seq_len = 0;
  std::string source;  // where the numbers come from

  // Weights of one layer's matrix multiplications: Q and O (h x h), K and V
  // (h x kv_heads x head_dim each), gate, up and down (h x ffn each).
  int64_t LayerMatmulParams() const;
  int64_t LayerParams() const;  // + the two RMSNorm weight vectors
  int64_t EmbeddingParams() const { return vocab * hidden; }
  int64_t HeadParams() const { return vocab * hidden + hidden; }  // + the final norm
  int64_t TotalParams() const;
};

// "1.1b" (TinyLlama), "7b", "13b", "70b" (Llama 2, Touvron et al. 2023). Throws InputError at
// `field` of "<cli>" for another name, listing the presets.
ModelSpec FindModel(const std::string& name, const std::string& field = "--model");
std::vector<std::string> ModelNames();

// A GPU generation: dense BF16 tensor-core peak, the achieved fraction of it
// (docs/train.md says where each default comes from), HBM and NVLink.
struct GpuSpec {
  std::string name;
  double peak_bf16_tflops = 0;  // dense (without structured sparsity)
  double efficiency = 0;        // achieved fraction of the peak in the layers' kernels
  int64_t hbm_bytes = 0;
  units::Rate nvlink_rate;  // per GPU and direction: the node preset's (node/node.hpp)
};
// "a100", "h100", "h200", "b200"; InputError at `field` otherwise.
GpuSpec FindGpu(const std::string& name, const std::string& field = "--gpu");
std::vector<std::string> GpuNames();

// kHsdp: hybrid sharding, FSDP inside each node, replicas across nodes.
enum class Strategy { kDdp, kFsdp, kHsdp };
enum class Recompute { kAuto, kNone, kFull };
const char* StrategyName(Strategy s);
const char* RecomputeName(Recompute r);

struct TrainConfig {
  ModelSpec model;
  GpuSpec gpu;
  Strategy strategy = Strategy::kFsdp;
  int nodes = 1;
  int gpus_per_node = 8;
  int tp = 1;                                // tensor-parallel degree, inside a node
  int pp = 1;                                // pipeline stages: nodes / pp nodes each, DDP only
  int64_t micro_batch = 1;                   // sequences per GPU per micro-batch
  int64_t global_batch = 0;                  // sequences per step; 0: micro_batch x DP ranks
  std::optional<int64_t> micro_batches;      // per step, when given: sets global_batch (Validate)
  int64_t bucket_bytes = int64_t{25} << 20;  // DDP (PyTorch bucket_cap_mb = 25)
  Recompute recompute = Recompute::kAuto;    // resolved by Validate
  int steps = 1;
  // Bytes per gradient element in the gradient collectives (DDP's bucket
  // all-reduces, FSDP's reduce-scatters, HSDP's shard all-reduces): 2 (bf16,
  // the default) or 1 (fp8, as FP8-LM, Peng et al. 2023, communicates
  // them). Parameter all-gathers stay bf16; memory still counts bf16
  // gradients, fp32 master weights and Adam moments (docs/train.md).
  int64_t grad_bytes = 2;
  int64_t GradBytes(int64_t params) const { return grad_bytes * params; }

  int DpRanks() const { return nodes * gpus_per_node / (tp * pp); }
  int NodesPerStage() const { return nodes / pp; }
  // Bytes of one micro-batch's activation (or its gradient) sent between two
  // pipeline stages: b x s x h in bf16, by each TP rank (no scatter/gather).
  int64_t PipeBytes() const { return 2 * micro_batch * model.seq_len * model.hidden; }
  // Ranks one parameter is sharded over: all data-parallel ranks (FSDP),
  // the node's (HSDP), none (DDP: 1).
  int ShardRanks() const {
    return strategy == Strategy::kFsdp   ? DpRanks()
           : strategy == Strategy::kHsdp ? gpus_per_node / tp
                                         : 1;
  }
  int64_t GlobalBatch() const { return global_batch > 0 ? global_batch : micro_batch * DpRanks(); }
  int64_t Accumulation() const { return GlobalBatch() / (micro_batch * DpRanks()); }
  int64_t TokensPerMicroBatch() const { return micro_batch * model.seq_len; }
};

// Memory per GPU, bytes (mixed-precision Adam at 16 B per
// parameter, sharded as the strategy shards it; activations after
// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", eqs. 2 and 4, tensor parallel without sequence
// parallelism).
struct Memory {
  int64_t states = 0;       // bf16 weights and gradients, fp32 master weights and two moments
  int64_t gathered = 0;     // FSDP: two gathered units (prefetch) and one unsharded gradient
  int64_t activations = 0;  // one micro-batch in flight; pipeline: the stage's in-flight ones
  int64_t Total() const { return states + gathered + activations; }
};
Memory MemoryPerGpu(const TrainConfig& c, Recompute r);

// Checks `c` (TP degree against GPUs per node and heads, batch divisibility,
// memory against HBM) and resolves recompute kAuto (kNone when it fits, else
// kFull). Throws InputError ("<cli>", the flag) saying what does not fit and
// by how much.
void Validate(TrainConfig& c);

// One part of the model as FSDP wraps it and DDP's buckets see it: the input
// embedding, each layer, the final norm with the output layer. Per GPU (the
// TP shard), per micro-batch.
struct Unit {
  std::string name;
  int64_t params = 0;  // on this GPU
  units::Time forward;
  units::Time backward;    // with the recomputed forward when recompute is on
  units::Time tp_forward;  // its TP all-reduces over NVLink (on the critical path)
  units::Time tp_backward;
  double model_flops = 0;  // forward + backward without recomputation
};
std::vector<Unit> Units(const TrainConfig& c);
// The pipeline stage of unit `u` of Units(c): the embedding on stage 0, layer
// l on stage l / (layers / pp), the output layer on the last stage.
int UnitStage(const TrainConfig& c, size_t u);

// Per-token forward FLOPs of a layer and of the logit layer (whole model, not
// per TP shard).
double LayerForwardFlopsPerToken(const ModelSpec& m);
double HeadForwardFlopsPerToken(const ModelSpec& m);

// Time of a ring all-reduce of `bytes` over `ranks` GPUs on NVLink at `rate`
// per direction with `latency` per step: 2 (n - 1) steps of bytes / n each
// (the ring engine's NVLink model: a message serialises at the rate, plus the
// latency). 0 for one rank.
units::Time NvlinkAllReduce(int64_t bytes, int ranks, units::Rate rate, units::Time latency);

// Bytes of gradient (grad_bytes per element) per GPU per step, and the textbook bytes each GPU
// sends per step over the data-parallel collectives: DDP 2 (n - 1)/n of the
// gradient per all-reduce; FSDP per micro-batch two parameter all-gathers and
// one gradient reduce-scatter of (n - 1)/n each; HSDP the same inside the
// node (k ranks) plus an all-reduce of the 1/k shard across the m nodes,
// 2 (m - 1)/m; TP 2 all-reduces of b s h
// activations per layer forward and 2 backward, 2 (t - 1)/t each.
int64_t DpBytesPerGpu(const TrainConfig& c);
int64_t TpBytesPerGpu(const TrainConfig& c);

}  // namespace lossless::train
