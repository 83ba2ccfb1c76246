#pragma once
// What a `perf` run produced, engine-independent: the collective engine (or the
// analytic model) fills a PerfResult; the nccl-tests writer and the JSON writer
// (`"schema": "lossless.perf/1"`, docs/model/collectives.md#perf-json) read it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collective/model/collective.hpp"
#include "collective/model/tuning.hpp"
#include "perf/nccl_tests_writer.hpp"
#include "perf/options.hpp"

namespace lossless::perf {

// One half (out-of-place or in-place) of one size.
struct HalfResult {
  // Per-iteration times of one collective (us): `iters` samples, each the mean of its
  // `agg_iters` collectives. The reported time is their mean (nccl-tests' -a 1).
  std::vector<double> samples_us;
  // Wrong elements found by the data check; nullopt when not checked (-c 0, or the
  // in-place half of alltoall and sendrecv).
  std::optional<int64_t> wrong = 0;

  double MeanUs() const;
  // Nearest-rank percentile as nccl-tests' -I summary (`percentileIndex`):
  // sorted[min(n - 1, ceil(n p / 100) - 1)]; 0 without samples.
  double PercentileUs(int p) const;
  double MaxUs() const;
};

struct SizeResult {
  int64_t requested_bytes = 0;    // the loop's size before rounding
  collective::CollCounts counts;  // size column, count column
  collective::DataType type = collective::DataType::kFloat;
  collective::RedOp op = collective::RedOp::kSum;
  int64_t root = -1;
  collective::AlgoChoice choice;  // what NCCL's tuning model picked for this size
  HalfResult out_of_place;
  HalfResult in_place;
  std::optional<double> model_us;  // the alpha-beta model's time (perf --model)
};

// Per-link counters the engine reports (--json only).
struct LinkCounters {
  std::string link;  // e.g. "node-0/nic-3 -> leaf-3"
  int64_t pause_frames = 0;
  double paused_us = 0;
  int64_t ecn_marks = 0;
  int64_t cnps = 0;
  int64_t drops = 0;
  int64_t retransmissions = 0;
  double credit_starved_us = 0;  // InfiniBand: time a VL waited for credits
};

// The simulated GPU node as `--json` reports it (filled by the simulation
// from src/node; plain data here, as perf does not depend on node).
struct PerfRail {
  int gpu = 0;          // the rail's first GPU
  std::string nic;      // the NIC's name, or NIC<k>
  std::string hop;      // PCIe path GPU -> NIC: PIX, PXB, PHB, NODE, SYS
  bool gdr = true;      // GPUDirect RDMA on this path (else staged in host memory)
  double nic_gbs = 0;   // what the path lets the NIC inject, GB/s (0: the link's rate)
};
struct PerfNode {
  std::string preset;
  int gpus_per_node = 0;  // of the preset (or the topo matrix)
  double nvlink_gbs = 0;  // per GPU and direction
  int pcie_gen = 0;
  int pcie_lanes = 0;
  bool gdr = true;
  std::vector<int> nic_of_gpu;  // the NIC map (index into rails' NICs); empty: one NIC per GPU
  std::vector<PerfRail> rails;
  // The transport's queue pairs per network connection and their use.
  int qps_per_connection = 1;
  bool split_data_on_qps = false;
};

struct PerfResult {
  PerfOptions options;
  bool simulated = false;  // false: the rows are the analytic model
  std::string fabric;      // profile or scenario name; may be empty
  std::string nccl_version = collective::Nccl2_27Constants().nccl_version;
  std::vector<SizeResult> sizes;  // in output order (cycles x types x ops x roots x sizes)
  // Ctrl-C ended the sweep: `sizes` holds the rows finished before it.
  bool interrupted = false;
  std::vector<LinkCounters> links;
  // RC transport over the run: local ACK timeouts (each waits 4.096 us x
  // 2^transport.timeout) and NAKs the requesters received.
  int64_t ack_timeouts = 0;
  int64_t naks = 0;
  // What the simulation did (`--timing`, not in the outputs): engine events
  // executed and packet-hops (a packet sent on one link).
  uint64_t events = 0;
  uint64_t packet_hops = 0;
  // Shared-fabric mechanisms the simulation ran (docs/model/shared-cloud.md;
  // all zero on a dedicated fabric): other tenants' load (share of each NIC)
  // and mean burst, the payload they posted over the sweep, and the
  // virtualization delay per message (fixed and mean exponential extra, us).
  double tenant_load = 0;
  int64_t tenant_burst = 0;
  int64_t tenant_bytes = 0;
  double virt_latency_us = 0;
  double virt_jitter_us = 0;
  // The GPU node when it is not the default H100 one (preset, rails and
  // their paths): header notes.
  std::vector<std::string> node_notes;
  // The device name the Rank lines print (the node preset's GPU, as
  // cudaGetDeviceProperties names it).
  std::string gpu_name = "NVIDIA H100 80GB HBM3";
  // The simulated node (`--json`'s "node"; absent for the model run).
  std::optional<PerfNode> node;
  // Outputs a limit cut (outputs.pcap_limit, outputs.trace_limit): printed
  // on standard error, not in the JSON.
  std::vector<std::string> warnings;
};

// The nccl-tests row of one size: time = mean, algbw = size / time, busbw =
// algbw x factor, `redop` "none" for the non-reducing collectives; the samples
// after the first `per_iter_skip` for the -I summary.
Row ToRow(const SizeResult& s, collective::Collective c, int64_t n_ranks,
          int64_t per_iter_skip = 0);

// The whole nccl-tests output (preamble, rows, footer) of a result. `notes` go
// into the header (what produced the numbers).
std::string FormatNcclTests(const PerfResult& r, const std::vector<std::string>& notes);

// The block FormatNcclTests prints after the footer of a simulation, every
// line a comment so nccl-tests parsers skip it: per size the algorithm,
// protocol and channels that ran (NCCL's choice) with NCCL's predicted time;
// with --model also the simulated out-of-place time, the alpha-beta model's
// time, their ratio and the model's busbw.
std::string ChoiceTable(const PerfResult& r);

// {"schema": "lossless.perf/1", "kind": "model"|"simulation", "collective", "binary",
//  "nodes", "gpus_per_node", "ranks", "nccl_version", "fabric", "options": {...},
//  "results": [{"size", "count", "type", "redop", "root", "algorithm", "protocol",
//  "channels", "model_us", "model_busbw_gbs", "nccl_model_us", "out_of_place": {"time_us", "algbw_gbs", "busbw_gbs",
//  "wrong", "iterations", "p50_us", "p99_us", "max_us"}, "in_place": {...}}],
//  "avg_busbw_gbs", "out_of_bounds", "interrupted", "links": [...]}
nlohmann::json ToJson(const PerfResult& r);

}  // namespace lossless::perf
