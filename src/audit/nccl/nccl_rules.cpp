#include "audit/nccl/nccl_rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "base/error.hpp"
#include "units/units.hpp"

namespace lossless::audit::nccl {
namespace {

std::string Size(int64_t b) {
  return units::FormatBytes(units::Bytes(b));
}

double Best(const NcclRow& r) {
  return std::max(r.out_of_place.busbw_gbs, r.in_place.busbw_gbs);
}

// Adds findings of one rule, keeping at most `cap` and summarising the rest.
class FindingSink {
 public:
  FindingSink(std::vector<NcclFinding>& out, std::string code, Verdict sev, size_t cap)
      : out_(out), code_(std::move(code)), sev_(sev), cap_(cap) {}
  ~FindingSink() {
    if (extra_ > 0)
      out_.push_back({code_, sev_, 0, fmt::format("... and {} more rows like this", extra_)});
  }
  void Add(int64_t line, std::string msg) {
    if (added_++ < cap_) {
      out_.push_back({code_, sev_, line, std::move(msg)});
    } else {
      ++extra_;
    }
  }

 private:
  std::vector<NcclFinding>& out_;
  std::string code_;
  Verdict sev_;
  size_t cap_;
  size_t added_ = 0;
  size_t extra_ = 0;
};

}  // namespace

void ValidateConfig(const NcclRulesConfig& c) {
  Location cli{"<cli>", 0, ""};
  if (c.nic_gbps && !(*c.nic_gbps > 0 && *c.nic_gbps <= 1e6))
    throw InputError({"<cli>", 0, "--nic-gbps"},
                     fmt::format("expected a rate in Gb/s > 0, got {}", *c.nic_gbps));
  if (c.nics_per_node && (*c.nics_per_node < 1 || *c.nics_per_node > 1024))
    throw InputError({"<cli>", 0, "--nics-per-node"},
                     fmt::format("expected 1 to 1024, got {}", *c.nics_per_node));
  if (c.nic_gbps.has_value() != c.nics_per_node.has_value())
    throw InputError(cli,
                     "--nic-gbps (or --preset) and --nics-per-node go together: busbw is "
                     "compared with the NICs of one node");
  if (!(c.min_efficiency > 0 && c.min_efficiency <= 1.0))
    throw InputError(
        {"<cli>", 0, "--min-efficiency"},
        fmt::format("expected a fraction in (0, 1] or a percentage, got {}", c.min_efficiency));
}

NcclRunReport EvaluateNcclRun(const NcclRun& run, const NcclRulesConfig& cfg) {
  NcclRunReport rep;
  rep.file = run.file;
  rep.first_line = run.first_line;
  rep.generation = run.generation;
  rep.collective = run.collective;
  rep.collective_inferred = run.collective_inferred;
  rep.ranks = run.RankCount();
  const int64_t hosts = static_cast<int64_t>(run.Hosts().size());
  // A shortened Rank list still proves the hosts it names; one host named out of
  // a longer list says nothing about the node count.
  const bool partial = run.RankListIncomplete();
  if (!run.ranks.empty() && !(partial && hosts == 1)) rep.nodes = hosts;
  auto& F = rep.findings;
  if (partial)
    F.push_back({"rank_list_incomplete", Verdict::kPass, 0,
                 fmt::format("Rank lines list {} of {} ranks (rank {} is the highest named): "
                             "the list was shortened, so {}",
                             run.ranks.size(), rep.ranks, rep.ranks - 1,
                             hosts > 1 ? fmt::format("{} nodes is a lower bound", hosts)
                                       : std::string("the node count is unknown"))});

  if (run.rows.empty()) {
    F.push_back({"no_results", Verdict::kFail, run.last_line,
                 "run printed no result rows (aborted before the first size)"});
    rep.verdict = Verdict::kFail;
    return rep;
  }

  // Peak and average.
  double sum = 0;
  int64_t n = 0;
  for (const auto& r : run.rows) {
    double b = Best(r);
    if (b > rep.peak_busbw_gbs) {
      rep.peak_busbw_gbs = b;
      rep.peak_size_bytes = r.size_bytes;
    }
    sum += r.out_of_place.busbw_gbs + r.in_place.busbw_gbs;
    n += 2;
  }
  if (run.avg_busbw_gbs) {
    rep.avg_busbw_gbs = *run.avg_busbw_gbs;
    rep.avg_from_footer = true;
  } else {
    rep.avg_busbw_gbs = sum / static_cast<double>(n);
  }

  if (run.truncated)
    F.push_back({"truncated", Verdict::kFail, run.last_line,
                 "table ends without its footer: the job was killed or the log was cut"});
  if (run.out_of_bounds && (*run.out_of_bounds > 0 || run.out_of_bounds_failed))
    F.push_back({"out_of_bounds", Verdict::kFail, 0,
                 fmt::format("footer reports {} out-of-bounds values (data corruption)",
                             *run.out_of_bounds)});

  // Wrong elements (G2/G3 count; G1 prints an error magnitude and relies on the footer).
  if (run.generation != NcclGeneration::kG1Legacy) {
    FindingSink sink(F, "wrong_elements", Verdict::kFail, cfg.max_findings_per_rule);
    for (const auto& r : run.rows) {
      double w = std::max(r.out_of_place.wrong.value_or(0), r.in_place.wrong.value_or(0));
      if (w > 0)
        sink.Add(r.line, fmt::format("{} wrong elements at size {} (out-of-place {}, in-place {})",
                                     w, Size(r.size_bytes), r.out_of_place.wrong.value_or(0),
                                     r.in_place.wrong.value_or(0)));
    }
  }

  // busbw falling at larger sizes, per (type, op, root) sweep; a size not larger than
  // the previous one starts a new sweep (-N cycles).
  {
    FindingSink sink(F, "falling_busbw", Verdict::kFail, cfg.max_findings_per_rule);
    struct Sweep {
      int64_t last_size = -1;
      double best = 0;
      int64_t best_size = 0;
    };
    std::map<std::tuple<std::string, std::string, int64_t>, Sweep> sweeps;
    for (const auto& r : run.rows) {
      Sweep& s = sweeps[{r.type, r.redop, r.root}];
      if (r.size_bytes <= s.last_size) s = Sweep{};
      s.last_size = r.size_bytes;
      if (r.size_bytes < cfg.anomaly_from_bytes) continue;
      double b = Best(r);
      if (s.best > 0 && b < (1.0 - cfg.max_falling_drop) * s.best) {
        sink.Add(r.line, fmt::format("busbw falls to {:.2f} GB/s at {} from {:.2f} GB/s at {} "
                                     "({:.0f}% lower)",
                                     b, Size(r.size_bytes), s.best, Size(s.best_size),
                                     100.0 * (1.0 - b / s.best)));
      }
      if (b > s.best) {
        s.best = b;
        s.best_size = r.size_bytes;
      }
    }
  }

  // In-place far below out-of-place.
  {
    FindingSink sink(F, "inplace_low", Verdict::kFail, cfg.max_findings_per_rule);
    for (const auto& r : run.rows) {
      if (r.size_bytes < cfg.anomaly_from_bytes) continue;
      double o = r.out_of_place.busbw_gbs, i = r.in_place.busbw_gbs;
      if (o > 0 && i < (1.0 - cfg.max_inplace_gap) * o)
        sink.Add(r.line, fmt::format("in-place busbw {:.2f} GB/s is {:.0f}% below out-of-place "
                                     "{:.2f} GB/s at {}",
                                     i, 100.0 * (1.0 - i / o), o, Size(r.size_bytes)));
    }
  }

  // Per-size efficiency against the NICs of one node.
  const bool single_node = rep.nodes && *rep.nodes == 1;
  if (single_node)
    F.push_back({"single_node", Verdict::kIndeterminate, 0,
                 fmt::format("all {} ranks run on one host ({}): traffic stays on NVLink/PCIe, "
                             "the fabric is not exercised",
                             rep.ranks, run.ranks.front().host)});
  if (cfg.nic_gbps && cfg.nics_per_node) {
    rep.line_rate_gbs = *cfg.nic_gbps * static_cast<double>(*cfg.nics_per_node) / 8.0;
  }
  bool any_judged = false;
  int64_t above_line = 0;
  const NcclRow* first_above = nullptr;
  for (const auto& r : run.rows) {
    NcclSizeResult s;
    s.line = r.line;
    s.size_bytes = r.size_bytes;
    s.busbw_gbs = Best(r);
    s.judged = r.size_bytes >= cfg.large_from_bytes;
    if (rep.line_rate_gbs) {
      s.efficiency = s.busbw_gbs / *rep.line_rate_gbs;
      if (s.busbw_gbs > *rep.line_rate_gbs) {
        if (!first_above) first_above = &r;
        ++above_line;
      }
      if (s.judged) {
        any_judged = true;
        rep.peak_efficiency = std::max(rep.peak_efficiency.value_or(0), *s.efficiency);
      }
    }
    rep.sizes.push_back(s);
  }
  if (!rep.line_rate_gbs) {
    F.push_back({"no_line_rate", Verdict::kPass, 0,
                 "efficiency not judged: give --nic-gbps and --nics-per-node (or --preset)"});
  } else if (!single_node) {
    const std::string nics = fmt::format("{} x {:g} Gb/s NICs", *cfg.nics_per_node, *cfg.nic_gbps);
    if (!rep.nodes && run.ranks.empty())
      F.push_back(
          {"nodes_unknown", Verdict::kPass, 0,
           "no Rank lines: node count unknown, efficiency judged as if the run spans nodes"});
    if (above_line > 0) {
      F.push_back({"above_line_rate", Verdict::kIndeterminate, first_above->line,
                   fmt::format("busbw {:.2f} GB/s at {} exceeds the {:.1f} GB/s that {} can carry "
                               "({} sizes above): traffic is not bound by these NICs (NVLink "
                               "SHARP/NVLS, NVLSTree or Tree on 2 nodes, or intra-node only); "
                               "re-run with NCCL_ALGO=Ring to judge the fabric",
                               Best(*first_above), Size(first_above->size_bytes),
                               *rep.line_rate_gbs, nics, above_line)});
    } else if (!any_judged) {
      F.push_back({"no_large_sizes", Verdict::kIndeterminate, 0,
                   fmt::format("largest size is {}: efficiency is judged only from {} up "
                               "(smaller messages are latency-bound); re-run with -e 1G or more",
                               Size(run.rows.back().size_bytes), Size(cfg.large_from_bytes))});
    } else if (*rep.peak_efficiency < cfg.min_efficiency) {
      F.push_back({"below_line_rate", Verdict::kFail, 0,
                   fmt::format("best large-message busbw is {:.1f}% of the {:.1f} GB/s line rate "
                               "of {} (threshold {:.0f}%)",
                               100.0 * *rep.peak_efficiency, *rep.line_rate_gbs, nics,
                               100.0 * cfg.min_efficiency)});
    }
  }

  for (const auto& f : F) rep.verdict = Worst(rep.verdict, f.severity);
  return rep;
}

}  // namespace lossless::audit::nccl
