#pragma once
// Rules over a parsed nccl-tests run (typed model -> verdicts).
//
// Efficiency: busbw is compared with the line rate of the NICs of one node,
// nic_gbps x nics_per_node / 8 GB/s (docs/model/nccl-tests.md#ring-all-reduce-across-nodes,
// #calibration-figures: multi-node ring busbw ~= NICs per node x eta x line rate, eta 0.92-0.96
// when healthy). Each size gets an efficiency, but only sizes >= large_from_bytes are judged:
// smaller messages are latency-bound and say nothing about the fabric. The run
// passes when the best judged size reaches min_efficiency (the plateau);
// dips between large sizes are caught by the falling-busbw rule instead.
//
// Verdicts: kFail when any anomaly is found (wrong elements, out-of-bounds
// footer, busbw falling at larger sizes, in-place far below out-of-place, a
// table without footer, efficiency below threshold); kIndeterminate when the
// fabric cannot be judged (single node, busbw above what the NICs can carry,
// no large sizes); kPass otherwise. Without a NIC rate, efficiency is not
// judged and the verdict rests on the anomaly rules alone (a note says so).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "audit/nccl/nccl_log.hpp"
#include "audit/verdict.hpp"

namespace lossless::audit::nccl {

struct NcclRulesConfig {
  std::optional<double> nic_gbps;          // line rate of one NIC, Gb/s
  std::optional<int64_t> nics_per_node;    // required with nic_gbps
  double min_efficiency = 0.92;            // of line rate, at large sizes
  int64_t large_from_bytes = 256LL << 20;  // efficiency verdict applies from here
  int64_t anomaly_from_bytes = 1LL << 20;  // shape rules ignore smaller sizes (noise)
  double max_falling_drop = 0.10;          // busbw may fall this much below a smaller size
  double max_inplace_gap = 0.20;           // in-place may be this much below out-of-place
  size_t max_findings_per_rule = 5;        // further hits are summarised in one line
};

struct NcclFinding {
  std::string code;                   // e.g. "wrong_elements", "above_line_rate"
  Verdict severity = Verdict::kPass;  // fail, indeterminate, or pass for a note
  int64_t line = 0;                   // 0 = whole run
  std::string message;
};

struct NcclSizeResult {
  int64_t line = 0;
  int64_t size_bytes = 0;
  double busbw_gbs = 0;              // best of out-of-place and in-place
  std::optional<double> efficiency;  // busbw / line rate, when a NIC rate is given
  bool judged = false;               // size >= large_from_bytes
};

struct NcclRunReport {
  std::string file;
  int64_t first_line = 0;
  NcclGeneration generation = NcclGeneration::kG2Classic;
  Collective collective = Collective::kUnknown;
  bool collective_inferred = false;
  int64_t ranks = 0;             // 0 = no Rank lines
  std::optional<int64_t> nodes;  // distinct hosts of the Rank lines
  double peak_busbw_gbs = 0;
  int64_t peak_size_bytes = 0;
  double avg_busbw_gbs = 0;
  bool avg_from_footer = false;           // false: mean of the printed busbw values
  std::optional<double> line_rate_gbs;    // NICs of one node, GB/s
  std::optional<double> peak_efficiency;  // best judged size
  std::vector<NcclSizeResult> sizes;      // one per row, in input order
  std::vector<NcclFinding> findings;
  Verdict verdict = Verdict::kPass;  // pass, fail or indeterminate
};

// Throws InputError(<cli>) when nic_gbps is given without nics_per_node or a
// value is out of range.
void ValidateConfig(const NcclRulesConfig& config);

NcclRunReport EvaluateNcclRun(const NcclRun& run, const NcclRulesConfig& cfg);

}  // namespace lossless::audit::nccl
