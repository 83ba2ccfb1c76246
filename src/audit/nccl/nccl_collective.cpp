#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "audit/nccl/nccl_log.hpp"
#include "audit/nccl/nccl_log_internal.hpp"

namespace lossless::audit::nccl {
namespace {

struct CollectiveInfo {
  Collective c;
  std::string_view name;
};
constexpr std::array<CollectiveInfo, 11> kCollectives = {{
    {Collective::kAllReduce, "all_reduce"},
    {Collective::kAllGather, "all_gather"},
    {Collective::kReduceScatter, "reduce_scatter"},
    {Collective::kBroadcast, "broadcast"},
    {Collective::kReduce, "reduce"},
    {Collective::kAllToAll, "alltoall"},
    {Collective::kAllToAllV, "alltoallv"},
    {Collective::kSendRecv, "sendrecv"},
    {Collective::kGather, "gather"},
    {Collective::kScatter, "scatter"},
    {Collective::kHypercube, "hypercube"},
}};

}  // namespace

std::string_view GenerationName(NcclGeneration g) {
  switch (g) {
    case NcclGeneration::kG1Legacy:
      return "G1 legacy";
    case NcclGeneration::kG2Classic:
      return "G2 classic";
    case NcclGeneration::kG3Current:
      return "G3 current";
  }
  return "?";
}

std::string_view CollectiveName(Collective c) {
  for (const auto& i : kCollectives)
    if (i.c == c) return i.name;
  return "unknown";
}

Collective CollectiveFromText(std::string_view text) {
  // Longest names first so "alltoallv_perf" is not read as "alltoall".
  Collective best = Collective::kUnknown;
  size_t best_len = 0;
  for (const auto& i : kCollectives) {
    std::string key = std::string(i.name) + "_perf";
    size_t pos = text.find(key);
    if (pos == std::string_view::npos) continue;
    // "reduce_perf" is a suffix of "all_reduce_perf": require a word boundary.
    if (pos > 0) {
      char p = text[pos - 1];
      if ((p >= 'a' && p <= 'z') || p == '_') continue;
    }
    if (key.size() > best_len) {
      best = i.c;
      best_len = key.size();
    }
  }
  return best;
}

double BusBwFactor(Collective c, int64_t n) {
  if (n < 1) return 0;
  double dn = static_cast<double>(n);
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (dn - 1) / dn;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kAllToAllV:
    case Collective::kGather:
    case Collective::kScatter:
      return (dn - 1) / dn;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
    case Collective::kHypercube:
      return 1.0;
    case Collective::kUnknown:
      return 0;
  }
  return 0;
}

std::vector<std::string> NcclRun::Hosts() const {
  std::vector<std::string> out;
  for (const auto& r : ranks)
    if (std::find(out.begin(), out.end(), r.host) == out.end()) out.push_back(r.host);
  return out;
}

int64_t NcclRun::RankCount() const {
  int64_t top = -1;
  for (const auto& r : ranks) top = std::max(top, r.rank);
  return top + 1;
}

namespace internal {

constexpr int64_t kMaxInferRanks = 1 << 16;  // rank counts tried when none is listed

// Guess the collective from the table when the log does not name the binary:
// redop/root columns, whether in-place is checked and busbw/algbw = factor(n).
void InferCollective(NcclRun& run, const Layout& layout) {
  if (run.collective != Collective::kUnknown || run.rows.empty()) return;
  bool any_root = false, blank_redop = false, none_redop = false, ip_unchecked = false,
       op_checked = false;
  std::vector<double> ratios;
  for (const auto& r : run.rows) {
    any_root |= r.root >= 0;
    blank_redop |= r.redop.empty() && layout.Index(Col::kRedop) >= 0;
    none_redop |= r.redop == "none";
    ip_unchecked |= !r.in_place.wrong && r.out_of_place.wrong.has_value();
    op_checked |= r.out_of_place.wrong.has_value();
    for (const NcclHalf* h : {&r.out_of_place, &r.in_place})
      if (h->algbw_gbs >= 1.0) ratios.push_back(h->busbw_gbs / h->algbw_gbs);
  }
  std::optional<double> ratio;
  if (!ratios.empty()) {
    std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
    ratio = ratios[ratios.size() / 2];
  }
  const int64_t n = run.RankCount();
  std::vector<Collective> candidates;
  for (const auto& info : kCollectives) {
    Collective c = info.c;
    bool rooted = c == Collective::kBroadcast || c == Collective::kReduce ||
                  c == Collective::kGather || c == Collective::kScatter;
    bool reducing = c == Collective::kAllReduce || c == Collective::kReduceScatter ||
                    c == Collective::kReduce || c == Collective::kSendRecv;
    bool unchecked_ip =
        c == Collective::kAllToAll || c == Collective::kSendRecv || c == Collective::kAllToAllV;
    if (c == Collective::kAllToAllV) continue;  // never guessed: same table as alltoall
    if (layout.has_error_column) {
      // G1: each binary printed its own leading columns (docs/model/nccl-tests.md#g1-legacy).
      bool want_redop = c == Collective::kAllReduce || c == Collective::kReduceScatter ||
                        c == Collective::kAllToAll || c == Collective::kReduce;
      if ((layout.Index(Col::kRedop) >= 0) != want_redop ||
          (layout.Index(Col::kRoot) >= 0) != rooted)
        continue;
    } else {
      if (layout.Index(Col::kRoot) >= 0 && any_root != rooted) continue;
      if (layout.Index(Col::kRedop) >= 0) {
        if (blank_redop != (c == Collective::kHypercube)) continue;
        if (!blank_redop && none_redop == reducing) continue;
      }
    }
    if (op_checked && ip_unchecked != unchecked_ip) continue;
    auto fits = [&](int64_t k) {
      double f = BusBwFactor(c, k);
      return std::fabs(*ratio - f) <= 0.02 * std::max(f, 0.05);
    };
    if (ratio && n >= 1 && !fits(n)) continue;
    if (ratio && n < 1) {
      // A table pasted without its Rank lines: keep the collectives whose factor
      // matches the ratio for some rank count (all_reduce's 2(n-1)/n reaches 1.5 at
      // n = 4; reduce_scatter's (n-1)/n never exceeds 1).
      bool any = false;
      for (int64_t k = 2; k <= kMaxInferRanks && !any; ++k) any = fits(k);
      if (!any) continue;
    }
    candidates.push_back(c);
  }
  if (candidates.size() == 1) {
    run.collective = candidates.front();
    run.collective_inferred = true;
  }
}

}  // namespace internal
}  // namespace lossless::audit::nccl
