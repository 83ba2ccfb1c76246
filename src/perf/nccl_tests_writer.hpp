#pragma once
// The nccl-tests output writer: byte-exact G3 (nccl-tests v2.17.3+, default) and
// G2 (v2.16.7-v2.17.2, `--format g2`) layouts (docs/model/nccl-tests.md,
// docs/model/collectives.md#output). Format strings are nccl-tests' own
// (`src/util.cu` `writeDeviceReport`, `writeResultHeader`,
// `writeBenchmarkLinePreamble`, `writeBenchmarkLineBody`, `getFloatStr`,
// `writeResultFooter` at v2.19.6; `src/common.cu` at v2.17.2 for G2), printed
// with C snprintf so every number rounds as nccl-tests rounds it.
//
// Use: Preamble() once, AddRow() per size (in order), Footer() once. The footer's
// `# Avg bus bandwidth` is the mean of every unrounded busbw passed to AddRow()
// (both halves), `# Out of bounds values` the number of row halves with wrong
// elements (nccl-tests counts one per failed check and thread; lossless has one
// check per half).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perf/options.hpp"

namespace lossless::perf {

// One `#  Rank ...` line.
struct DeviceLine {
  int64_t rank = 0;
  int64_t group = 0;
  int64_t pid = 0;
  std::string host;
  int64_t device = 0;
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;
  std::string gpu_name;
};

// Modelled devices: one process per node (pid 10000 + node), host "node-<i>",
// device = local GPU index, PCI bus numbers in the style of an 8-GPU HGX board
// (0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb, then repeated; invented for
// the layout, not copied from a particular system), the given
// GPU name. Ranks are node-major.
std::vector<DeviceLine> ModelledDevices(int64_t nodes, int64_t gpus_per_node,
                                        const std::string& gpu_name = "NVIDIA H100 80GB HBM3");

// The run parameters the header prints.
struct RunHeader {
  std::string binary = "all_reduce_perf";
  int64_t n_threads = 1;
  int64_t n_gpus = 1;
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;
  int64_t step_factor = 1;
  int64_t step_bytes = 0;
  int64_t warmup_iters = 1;
  int64_t iters = 20;
  int64_t agg_iters = 1;
  int64_t check = 1;
  int64_t graph = 0;
  int64_t unalign = 0;
  int64_t blocking = 0;
  int64_t parallel_init = 0;
  bool report_cputime = false;
  bool per_iter_timing = false;  // -I 1 (G3 only): i_min i_max i_p99 i_cv% after each half
  int64_t per_iter_skip = 0;     // -K
  std::string nccl_tests_version = "2.19.6";  // G3 first line
  int64_t nccl_version_code = 22707;          // nccl-headers= and nccl-library=
  // Extra comment lines printed as "# <note>" after the parameter line: what
  // produced the output (lossless, model or simulation, the modelled NCCL version,
  // modelled host names). Parsers skip unknown comment lines.
  std::vector<std::string> notes;
};
RunHeader HeaderFromOptions(const PerfOptions& o);

// One row half. `wrong` nullopt prints N/A (check off, or in-place alltoall/sendrecv).
struct HalfRow {
  double time_us = 0;
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  std::optional<int64_t> wrong = 0;
  // Per-iteration times (us) for the -I summary, leading -K samples already dropped.
  std::vector<double> iter_us;
};
struct Row {
  int64_t size_bytes = 0;
  int64_t count = 0;
  std::string type = "float";
  std::string redop = "sum";  // "none" for the non-reducing collectives
  int64_t root = -1;
  HalfRow out_of_place;
  HalfRow in_place;
};

// nccl-tests' getFloatStr: "%*.2f" if it fits in `width`, else "%*.1f", "%*.0f",
// else "%*.1e" (width >= 7) or "%*.0e"; right-aligned in `width`.
std::string GetFloatStr(double value, int width);
// nccl-tests' -I summary of `iter_us` (`computeIterStats`): min, max, p99 (nearest
// rank), coefficient of variation in % (population standard deviation / mean).
struct IterStats {
  double min_us = 0;
  double max_us = 0;
  double p99_us = 0;
  double cv_pct = 0;
};
IterStats ComputeIterStats(const std::vector<double>& iter_us);

// G2's time string: >= 10000 "%7.0f", >= 100 "%7.1f", else "%7.2f".
std::string G2TimeStr(double time_us);

class NcclTestsWriter {
 public:
  NcclTestsWriter(OutputFormat format, RunHeader header);

  // From the first line to the third column-header line, each line ending in '\n'.
  std::string Preamble(const std::vector<DeviceLine>& devices) const;
  // One table row with its '\n'; adds its busbw values to the average.
  std::string AddRow(const perf::Row& row);
  // The footer lines to the end of the output. `min_bw_gbs` is NCCL_TESTS_MIN_BW
  // (OK/FAILED after the average; unset: nothing but the trailing space).
  std::string Footer(std::optional<double> min_bw_gbs = std::nullopt) const;

  double AvgBusBw() const { return n_bw_ == 0 ? 0 : bw_sum_ / static_cast<double>(n_bw_); }
  int64_t OutOfBounds() const { return errors_; }

 private:
  OutputFormat format_;
  RunHeader header_;
  double bw_sum_ = 0;
  int64_t n_bw_ = 0;
  int64_t errors_ = 0;
};

}  // namespace lossless::perf
