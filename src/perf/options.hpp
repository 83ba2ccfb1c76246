#pragma once
// `lossless perf` options: nccl-tests' flags with nccl-tests' meanings and
// defaults (nccl-tests `src/common.cu`, tag v2.19.6: getopt string, `parsesize`,
// defaults), plus lossless's own --nodes, --fabric, --scenario, --format, --json,
// --model (docs/model/collectives.md#perf-options).
//
// Short options take their value attached or as the next argument (`-b8`, `-b 8`);
// long options as `--minbytes 8` or `--minbytes=8`. Sizes (`-b -e -i`) are a
// number with an optional K/M/G suffix (powers of 1024, fractions allowed: `0.5G`);
// counts are decimal or 0x-hex integers. Stricter than nccl-tests where nccl-tests
// would loop forever or misbehave silently: every bad value is an InputError with
// field = the flag as the user wrote it and file "<cli>".
//
// Ranks: lossless models one process per node with `-t` threads of `-g` GPUs each
// (as `mpirun -N 1 all_reduce_perf -g 8` on every node), so ranks = nodes x t x g.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collective/model/collective.hpp"

namespace lossless::perf {

enum class OutputFormat { kG3, kG2 };

struct PerfOptions {
  collective::Collective collective = collective::Collective::kAllReduce;
  // nccl-tests flags (v2.19.6 defaults).
  int64_t n_threads = 1;                  // -t --nthreads
  int64_t n_gpus = 1;                     // -g --ngpus (per thread)
  int64_t min_bytes = int64_t{32} << 20;  // -b --minbytes
  int64_t max_bytes = int64_t{32} << 20;  // -e --maxbytes
  int64_t step_bytes = int64_t{1} << 20;  // -i --stepbytes (used when step_factor <= 1)
  int64_t step_factor = 1;                // -f --stepfactor
  int64_t iters = 20;                     // -n --iters
  int64_t warmup_iters = 1;               // -w --warmup_iters
  int64_t agg_iters = 1;                  // -m --agg_iters
  int64_t run_cycles = 1;                 // -N --run_cycles (0 = forever: rejected here)
  int64_t parallel_init = 0;              // -p --parallel_init
  int64_t check = 1;                      // -c --check (0: #wrong is N/A)
  std::vector<collective::RedOp> ops = {collective::RedOp::kSum};  // -o --op (or all)
  std::vector<collective::DataType> types = {
      collective::DataType::kFloat};  // -d --datatype (or all)
  int64_t root = 0;                   // -r --root (-1: every rank in turn)
  int64_t blocking = 0;               // -z --blocking 0..3
  int64_t stream_null = 0;            // -y --stream_null
  int64_t timeout = 0;                // -T --timeout (s)
  int64_t cudagraph = 0;              // -G --cudagraph
  int64_t report_cputime = 0;         // -C --report_cputime
  int64_t average = 1;                // -a --average 0..3
  int64_t local_register = 0;         // -R --local_register 0..2
  int64_t cta_policy = -1;            // -x --cta_policy (unset: -1)
  int64_t device_impl = 0;            // -D --device_implementation
  int64_t device_cta_count = 16;      // -V --device_cta_count
  std::string output_file;            // -J --output_file (nccl-tests' JSON; must end .json)
  int64_t report_timestamps = 0;      // -S --report_timestamps
  int64_t memory_report = 0;          // -M --memory
  int64_t unalign = 0;                // -u --unalign
  int64_t per_iter_timing = 0;        // -I --per_iter_timing
  int64_t per_iter_skip = 0;          // -K --per_iter_skip
  bool help = false;                  // -h --help
  // lossless's own.
  int64_t nodes = 1;     // --nodes
  std::string fabric;    // --fabric NAME (checked by the caller against the profiles)
  std::string scenario;  // --scenario FILE
  OutputFormat format = OutputFormat::kG3;  // --format g3|g2
  std::string json;                         // --json FILE (lossless.perf/1)
  std::string trace;  // --trace FILE: outputs.trace, the timeline (docs/capture.md)
  std::string pcap;   // --pcap FILE: outputs.pcap, the packet capture
  bool timing = false;  // --timing: wall time, events and packet-hops on standard error
  bool model = false;                       // --model: print the alpha-beta model beside each row
  // The GPU node (src/node/node.hpp, docs/model/node.md), over the
  // scenario's `node:` block: --gpu a100|h100|h200|b200 (its preset), --topo
  // FILE (an `nvidia-smi topo -m` matrix: each GPU its nearest NIC),
  // --nic-map LIST (NIC index per GPU), --gdr on|off (-1: the scenario's),
  // --pcie-gen 3..6 (the GPU-to-NIC path's generation; -1: the preset's).
  // Names and files are checked by the caller (run::NodeFor).
  std::string gpu;
  std::string topo;
  std::string nic_map;
  int64_t gdr = -1;
  int64_t pcie_gen = -1;
  // Not a flag: false runs only the out-of-place half (its in-place twin moves
  // the same packets; `compare` reads out-of-place busbw only).
  bool in_place = true;
  // --algo ring|tree, or NCCL_ALGO=Ring|Tree (SetAlgo): "" = Ring, NCCL's
  // channel count from its own choice; "ring"/"tree" force the algorithm as
  // NCCL_ALGO does (tree: all_reduce only).
  std::string algo;
  // --proto ll|ll128|simple, or NCCL_PROTO (SetProto): "" = NCCL's choice per
  // size; otherwise NCCL_PROTO's list syntax as NCCL takes it ("LL128",
  // "^LL128", "LL,Simple"), names as NCCL spells them.
  std::string proto;
  // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (-1: unset) and NCCL_BUFFSIZE (the
  // Simple protocol's buffer per connection; its step is an eighth of it).
  int64_t min_channels = -1;
  int64_t max_channels = -1;
  int64_t buffsize = int64_t{1} << 22;
  // NCCL_IB_QPS_PER_CONNECTION (1-128) and NCCL_IB_SPLIT_DATA_ON_QPS (0, 1);
  // -1: unset, the scenario's transport.qps_per_connection and
  // transport.split_data_on_qps (NCCL's defaults 1 and 0) apply.
  int64_t qps_per_connection = -1;
  int64_t split_data_on_qps = -1;

  int64_t GpusPerNode() const { return n_threads * n_gpus; }
  int64_t Ranks() const { return nodes * GpusPerNode(); }
  // Every root this run loops over: {root}, or 0..ranks-1 for -r -1; {-1} when the
  // collective has none.
  std::vector<int64_t> Roots() const;
};

// `args` are the arguments after `perf`: the collective name (positional, one) and
// the flags in any order. Throws InputError for an unknown flag (with the nearest
// one), a missing or bad value, an unknown collective / type / op, -b above -e, a
// step factor below 2 with a zero increment, -b 0 with a step factor, zero or
// negative threads, GPUs or nodes, a root outside the ranks, values outside a
// flag's range, -N 0. With -h the rest is not validated.
PerfOptions ParsePerfArgs(std::span<const std::string> args);

// Sets o.algo from `value` ("ring" or "tree", any case, as --algo or
// NCCL_ALGO spell it) and checks it against o.collective. Throws
// InputError{where} for another name or Tree with a collective other than
// all_reduce (NCCL has no Tree for it).
void SetAlgo(PerfOptions& o, std::string_view value, const Location& where);

// Sets o.proto from `value`: a comma-separated list of LL, LL128 and Simple
// (any case), optionally led by '^' (all but these), as --proto or
// NCCL_PROTO spell it; stored with NCCL's spelling. Throws InputError{where}
// for an unknown name or an empty list.
void SetProto(PerfOptions& o, std::string_view value, const Location& where);

// NCCL's environment as perf reads it: NCCL_ALGO and NCCL_PROTO (unless
// --algo / --proto were given), NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS
// (1..64), NCCL_BUFFSIZE (bytes, 64 KiB .. 1 GiB, a multiple of 4 KiB).
// `get` returns a variable's value or nullptr. Throws InputError{"<env>", 0,
// NAME} for a bad value.
void ApplyNcclEnv(PerfOptions& o, const std::function<const char*(const char*)>& get);

// nccl-tests' parsesize: "<number>[ ]<K|M|G>" (case-insensitive, powers of 1024),
// rounded down to whole bytes. nullopt when malformed, negative or above 2^62.
std::optional<int64_t> ParseSize(std::string_view text);

// The requested sizes of one sweep (nccl-tests `TimeTest`): min, then x factor when
// the factor is > 1, else + step, while <= max. Sizes are requested bytes; the
// printed size comes from collective::CountsFor (rounded down to whole elements
// and, for the per-rank collectives, to 16 bytes per rank).
std::vector<int64_t> SizeSequence(const PerfOptions& o);
// The number of sizes SizeSequence returns, without building it. ParsePerfArgs
// rejects sweeps of more than kMaxSizes sizes (e.g. -b 1 -e 1G -i 1).
int64_t SizeCount(const PerfOptions& o);
inline constexpr int64_t kMaxSizes = 100000;

// The usage text for -h.
std::string PerfUsage();

}  // namespace lossless::perf
