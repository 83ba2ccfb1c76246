#include "audit/nccl/nccl_log.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <set>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/text.hpp"

namespace lossless::audit::nccl {
namespace {

constexpr size_t kMaxLineChars = 64 * 1024;

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

using text::StartsWith;

// This parser's blanks: kLineBlanks (white space but '\n').
std::string_view Trim(std::string_view s) {
  return text::Trim(s, text::kLineBlanks);
}
std::vector<std::string_view> Split(std::string_view s) {
  return text::SplitWhitespace(s, text::kLineBlanks);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Launcher prefixes: `srun -l` ("12: "), OpenMPI --tag-output ("[1,0]<stdout>:"),
// OpenMPI --timestamp-output is not stripped (it is rare and changes the row).
std::string_view StripLauncherPrefix(std::string_view s) {
  std::string_view t = s;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  size_t colon = t.find(':');
  if (colon != std::string_view::npos && colon > 0 && colon <= 6 && AllDigits(t.substr(0, colon))) {
    std::string_view rest = t.substr(colon + 1);
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return rest;
  }
  if (StartsWith(t, "[")) {
    size_t close = t.find(']');
    if (close != std::string_view::npos && close < 16) {
      std::string_view inside = t.substr(1, close - 1);
      size_t comma = inside.find(',');
      if (comma != std::string_view::npos && AllDigits(inside.substr(0, comma)) &&
          AllDigits(inside.substr(comma + 1))) {
        std::string_view rest = t.substr(close + 1);
        for (std::string_view tag : {"<stdout>:", "<stderr>:", ":"}) {
          if (StartsWith(rest, tag)) {
            rest.remove_prefix(tag.size());
            if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
            return rest;
          }
        }
      }
    }
  }
  return s;
}

std::optional<int64_t> ToInt(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  bool neg = s.front() == '-';
  std::string_view d = neg ? s.substr(1) : s;
  if (!AllDigits(d)) return std::nullopt;
  int64_t v = 0;
  for (char c : d) v = v * 10 + (c - '0');
  return neg ? -v : v;
}

std::optional<double> ToDouble(std::string_view s) {
  if (s.empty() || s.size() > 40) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  // strtod accepts hex floats and "infinity"; nccl-tests prints neither.
  for (char c : tmp) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
      return std::nullopt;
  }
  return v;
}

bool IsDate(std::string_view s) {
  return s.size() == 10 && s[4] == '-' && s[7] == '-' && AllDigits(s.substr(0, 4));
}
bool IsClock(std::string_view s) {
  return s.size() == 8 && s[2] == ':' && s[5] == ':' && AllDigits(s.substr(0, 2));
}

enum class Col { kSize, kCount, kType, kRedop, kRoot, kTime, kAlgbw, kBusbw, kWrong, kExtra };

struct Layout {
  std::vector<Col> preamble;      // columns before the first half
  std::vector<Col> half;          // columns of one half (both halves are alike)
  bool has_error_column = false;  // G1
  size_t Width() const { return preamble.size() + 2 * half.size(); }
  int Index(Col c) const {
    for (size_t i = 0; i < preamble.size(); ++i)
      if (preamble[i] == c) return static_cast<int>(i);
    return -1;
  }
};

// A line that names the columns: "size count type ... time algbw busbw #wrong ...".
bool IsHeaderNamesLine(const std::vector<std::string_view>& t) {
  if (t.size() < 5 || t[0] != "size" || t[1] != "count") return false;
  return std::find(t.begin(), t.end(), "algbw") != t.end();
}

Layout ParseHeader(const std::vector<std::string_view>& t, const Location& where) {
  Layout l;
  size_t i = 0;
  for (; i < t.size() && t[i] != "time" && t[i] != "cputime"; ++i) {
    if (t[i] == "size") {
      l.preamble.push_back(Col::kSize);
    } else if (t[i] == "count") {
      l.preamble.push_back(Col::kCount);
    } else if (t[i] == "type") {
      l.preamble.push_back(Col::kType);
    } else if (t[i] == "redop") {
      l.preamble.push_back(Col::kRedop);
    } else if (t[i] == "root") {
      l.preamble.push_back(Col::kRoot);
    } else {
      throw InputError(
          where, Expected("a column name size, count, type, redop or root", std::string(t[i])));
    }
  }
  if (l.Index(Col::kType) < 0) throw InputError(where, "header has no 'type' column");
  std::vector<std::vector<Col>> halves;
  for (; i < t.size(); ++i) {
    std::string_view n = t[i];
    if (n == "time" || n == "cputime") {
      if (halves.size() == 2) throw InputError(where, "header has more than two result halves");
      halves.push_back({Col::kTime});
    } else if (halves.empty()) {
      break;
    } else if (n == "algbw") {
      halves.back().push_back(Col::kAlgbw);
    } else if (n == "busbw") {
      halves.back().push_back(Col::kBusbw);
    } else if (n == "#wrong") {
      halves.back().push_back(Col::kWrong);
    } else if (n == "error") {
      halves.back().push_back(Col::kWrong);
      l.has_error_column = true;
    } else if (n == "i_min" || n == "i_max" || n == "i_p99" || n == "i_cv%") {
      halves.back().push_back(Col::kExtra);
    } else if (halves.size() == 2 && (n == "timestamp" || n == "time_stamp")) {
      continue;  // trailing -S column; its two row tokens are dropped by pattern
    } else {
      throw InputError(
          where, Expected("a column name time, algbw, busbw, #wrong or error", std::string(n)));
    }
  }
  const std::vector<Col> core = {Col::kTime, Col::kAlgbw, Col::kBusbw, Col::kWrong};
  if (halves.size() != 2 || halves[0] != halves[1] ||
      !std::equal(core.begin(), core.end(), halves[0].begin(),
                  halves[0].begin() + std::min(core.size(), halves[0].size())) ||
      halves[0].size() < core.size()) {
    throw InputError(where,
                     "header must have out-of-place and in-place halves of "
                     "'time algbw busbw #wrong' (or 'error')");
  }
  l.half = halves[0];
  return l;
}

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

namespace {

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

}  // namespace

struct NcclLogParser::State {
  enum class Phase { kPreamble, kTable, kFooter, kDone };
  std::string file;
  RunSink sink;
  int64_t line_no = 0;
  int64_t runs_emitted = 0;
  int64_t rows_seen = 0;
  bool saw_nul_early = false;
  // A row that did not parse, held until the next table or comment line: if
  // only launcher noise (a job manager's "srun: ... Killed") follows it up to
  // the end, the job died while writing it and the run is truncated.
  std::optional<InputError> bad_row;
  bool saw_topo_matrix = false;
  int64_t topo_line = 0;
  std::string pending_binary;  // "<coll>_perf" seen on a command line before the run
  std::optional<NcclRun> run;
  std::vector<NcclRun> deferred;  // row-less runs seen before any row
  Phase phase = Phase::kPreamble;
  Layout layout;
  bool has_params = false;
  bool hold_for_name = false;  // footer read, waiting for a "concluded" line to name the run

  Location Where(std::string field = "") const { return Location{file, line_no, std::move(field)}; }

  void Emit() {
    if (!run) return;
    if (phase == Phase::kTable || phase == Phase::kFooter) run->truncated = true;
    bool has_table = !run->columns.empty();
    if (has_table || !run->ranks.empty() || has_params) {
      InferCollective(*run, layout);
      if (run->rows.empty() && rows_seen == 0) {
        // Held back: if the whole input has no rows it is an error, not a finding.
        deferred.push_back(std::move(*run));
      } else {
        for (auto& d : deferred) {
          ++runs_emitted;
          sink(std::move(d));
        }
        deferred.clear();
        ++runs_emitted;
        sink(std::move(*run));
      }
    }
    run.reset();
    phase = Phase::kPreamble;
    has_params = false;
    layout = Layout{};
  }

  NcclRun& StartRun() {
    Emit();
    run.emplace();
    run->file = file;
    run->first_line = line_no;
    run->last_line = line_no;
    if (!pending_binary.empty()) {
      run->binary = pending_binary;
      run->collective = CollectiveFromText(pending_binary);
      pending_binary.clear();
    }
    return *run;
  }

  // The run this line belongs to; a new one if the current one is finished.
  NcclRun& Current() {
    if (!run || phase == Phase::kDone) return StartRun();
    return *run;
  }

  void ParseParams(std::string_view body) {
    NcclRun& r = (run && phase == Phase::kPreamble && !has_params && run->ranks.empty() &&
                  run->columns.empty())
                     ? *run
                     : StartRun();
    has_params = true;
    auto t = Split(body);
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      if (t[i] == "nThread") {
        auto v = ToInt(t[i + 1]);
        if (!v || *v < 1)
          throw InputError(Where("nThread"), Expected("a positive integer", std::string(t[i + 1])));
        r.n_threads = *v;
      } else if (t[i] == "nGpus") {
        auto v = ToInt(t[i + 1]);
        if (!v || *v < 1)
          throw InputError(Where("nGpus"), Expected("a positive integer", std::string(t[i + 1])));
        r.n_gpus = *v;
      } else if (t[i] == "unalign:" && r.generation != NcclGeneration::kG1Legacy) {
        r.generation = NcclGeneration::kG3Current;
      }
    }
  }

  void ParseRank(std::string_view body) {
    if (run && (phase != Phase::kPreamble || !run->columns.empty())) StartRun();
    NcclRun& r = Current();
    auto t = Split(body);
    NcclRank rank;
    auto need_int = [&](size_t i, const char* field) {
      if (i >= t.size()) throw InputError(Where(field), "rank line ends early");
      auto v = ToInt(t[i]);
      if (!v || *v < 0)
        throw InputError(Where(field), Expected("a non-negative integer", std::string(t[i])));
      return *v;
    };
    size_t i = 1;
    rank.rank = need_int(i++, "rank");
    if (i < t.size() && t[i] == "Group") {
      need_int(i + 1, "group");
      i += 2;
    }
    if (i >= t.size() || t[i] != "Pid")
      throw InputError(Where("rank"), Expected("'Pid'", i < t.size() ? std::string(t[i]) : ""));
    need_int(i + 1, "pid");
    i += 2;
    if (i + 1 >= t.size() || t[i] != "on")
      throw InputError(Where("rank"),
                       Expected("'on <host>'", i < t.size() ? std::string(t[i]) : ""));
    rank.host = std::string(t[i + 1]);
    i += 2;
    if (i >= t.size() || t[i] != "device")
      throw InputError(Where("rank"), Expected("'device'", i < t.size() ? std::string(t[i]) : ""));
    rank.device = need_int(i + 1, "device");
    i += 2;
    if (i < t.size() && StartsWith(t[i], "[")) ++i;  // PCI address
    for (; i < t.size(); ++i) {
      if (!rank.gpu_name.empty()) rank.gpu_name += ' ';
      rank.gpu_name += t[i];
    }
    r.ranks.push_back(std::move(rank));
  }

  void ParseHeaderLine(std::string_view raw_body, const std::vector<std::string_view>& t) {
    if (run && phase != Phase::kPreamble) StartRun();
    NcclRun& r = (run && run->columns.empty()) ? *run : StartRun();
    layout = ParseHeader(t, Where("header"));
    for (auto s : t) r.columns.emplace_back(s);
    if (layout.has_error_column) {
      r.generation = NcclGeneration::kG1Legacy;
    } else if (raw_body.find("busbw  #wrong") != std::string_view::npos ||
               !r.nccl_tests_version.empty()) {
      r.generation = NcclGeneration::kG3Current;
    }
    phase = Phase::kTable;
  }

  NcclHalf ParseHalf(const std::vector<std::string_view>& t, size_t at) {
    NcclHalf h;
    const char* names[] = {"time", "algbw", "busbw"};
    double* dst[] = {&h.time_us, &h.algbw_gbs, &h.busbw_gbs};
    for (size_t k = 0; k < 3; ++k) {
      auto v = ToDouble(t[at + k]);
      if (!v || *v < 0)
        throw InputError(Where(names[k]),
                         Expected("a non-negative number", std::string(t[at + k])));
      *dst[k] = *v;
    }
    std::string_view w = t[at + 3];
    if (w != "N/A") {
      auto v = ToDouble(w);
      if (!v || *v < 0)
        throw InputError(Where(layout.has_error_column ? "error" : "#wrong"),
                         Expected("a non-negative number or N/A", std::string(w)));
      h.wrong = *v;
    }
    for (size_t k = 4; k < layout.half.size(); ++k) {
      if (t[at + k] != "N/A" && !ToDouble(t[at + k]))
        throw InputError(Where("per-iteration"), Expected("a number", std::string(t[at + k])));
    }
    return h;
  }

  void ParseRow(std::string_view text) {
    auto t = Split(text);
    const size_t width = layout.Width();
    if (t.size() == width + 2 && IsDate(t[width]) && IsClock(t[width + 1])) t.resize(width);
    int redop_at = layout.Index(Col::kRedop);
    if (t.size() + 1 == width && redop_at >= 0 && static_cast<size_t>(redop_at) < t.size()) {
      // hypercube prints an empty redop (docs/model/nccl-tests.md#per-binary-columns).
      t.insert(t.begin() + redop_at, std::string_view());
    }
    if (t.size() != width)
      throw InputError(Where("row"),
                       fmt::format("expected {} columns as in the header, got {}: {}", width,
                                   t.size(), QuoteForMessage(std::string(text))));
    NcclRow row;
    row.line = line_no;
    for (size_t i = 0; i < layout.preamble.size(); ++i) {
      std::string_view v = t[i];
      switch (layout.preamble[i]) {
        case Col::kSize:
        case Col::kCount: {
          auto n = ToInt(v);
          const char* f = layout.preamble[i] == Col::kSize ? "size" : "count";
          if (!n || *n < 0)
            throw InputError(Where(f), Expected("a non-negative integer", std::string(v)));
          (layout.preamble[i] == Col::kSize ? row.size_bytes : row.count) = *n;
          break;
        }
        case Col::kType:
          row.type = std::string(v);
          break;
        case Col::kRedop:
          row.redop = std::string(v);
          break;
        case Col::kRoot: {
          auto n = ToInt(v);
          if (!n || *n < -1)
            throw InputError(Where("root"), Expected("a rank or -1", std::string(v)));
          row.root = *n;
          break;
        }
        default:
          break;
      }
    }
    size_t at = layout.preamble.size();
    row.out_of_place = ParseHalf(t, at);
    row.in_place = ParseHalf(t, at + layout.half.size());
    run->rows.push_back(std::move(row));
    run->last_line = line_no;
    ++rows_seen;
  }

  void ParseFooter(std::string_view body) {
    // "Out of bounds values : 0 OK" / "Avg bus bandwidth    : 54.3795 [OK|FAILED]"
    size_t colon = body.find(':');
    auto t = Split(body.substr(colon + 1));
    bool oob = StartsWith(body, "Out of bounds values");
    if (!run || (phase != Phase::kTable && phase != Phase::kFooter)) {
      throw InputError(Where(oob ? "out_of_bounds" : "avg_busbw"),
                       "footer line without a result table before it");
    }
    if (oob) {
      auto v = t.empty() ? std::nullopt : ToInt(t[0]);
      if (!v || *v < 0 || t.size() > 2 || (t.size() == 2 && t[1] != "OK" && t[1] != "FAILED"))
        throw InputError(
            Where("out_of_bounds"),
            Expected("'<count> OK|FAILED'", std::string(Trim(body.substr(colon + 1)))));
      run->out_of_bounds = *v;
      run->out_of_bounds_failed = t.size() == 2 && t[1] == "FAILED";
      phase = Phase::kFooter;
    } else {
      auto v = t.empty() ? std::nullopt : ToDouble(t[0]);
      if (!v || *v < 0 || t.size() > 2)
        throw InputError(Where("avg_busbw"), Expected("'<GB/s> [OK|FAILED]'",
                                                      std::string(Trim(body.substr(colon + 1)))));
      run->avg_busbw_gbs = *v;
      run->last_line = line_no;
      phase = Phase::kDone;
      // An unnamed G3 run (a paste cut above its "starting" line) may be named by the
      // "Collective test concluded" line that follows: hold it until that line or any
      // other content. Older layouts print no such line and are emitted here.
      if (run->generation == NcclGeneration::kG3Current &&
          run->collective == Collective::kUnknown && run->binary.empty())
        hold_for_name = true;
      else
        Emit();
    }
  }

  void Feed(std::string_view raw, bool complete) {
    ++line_no;
    if (raw.find('\0') != std::string_view::npos) {
      if (runs_emitted == 0 && !run && line_no <= 64) saw_nul_early = true;
      if (saw_nul_early) throw InputError(Where(), "binary data (NUL byte): not an nccl-tests log");
    }
    std::string clean;
    if (raw.find('\x1b') != std::string_view::npos) {
      clean = text::StripAnsi(raw);
      raw = clean;
    }
    std::string_view line = Trim(StripLauncherPrefix(raw));
    if (line.empty()) return;
    if (hold_for_name && line != "#" && !StartsWith(line, "# Collective test concluded:")) {
      hold_for_name = false;
      Emit();
    }
    if (bad_row && (line.front() == '#' || (line.front() >= '0' && line.front() <= '9')))
      throw *bad_row;
    if (line.front() == '#') {
      std::string_view body = Trim(line.substr(1));
      if (StartsWith(body, "nccl-tests version")) {
        NcclRun& r = StartRun();
        auto t = Split(body);
        if (t.size() >= 3) r.nccl_tests_version = std::string(t[2]);
        r.generation = NcclGeneration::kG3Current;
      } else if (StartsWith(body, "Collective test starting:")) {
        std::string bin(Trim(body.substr(body.find(':') + 1)));
        NcclRun& r = (run && phase == Phase::kPreamble && !has_params && run->columns.empty() &&
                      run->ranks.empty())
                         ? *run
                         : StartRun();
        r.binary = bin;
        r.collective = CollectiveFromText(bin);
      } else if (StartsWith(body, "Collective test concluded:")) {
        // Closes the run printed above; names it when the log was cut above the
        // "starting" line (a paste that begins inside the Rank list).
        if (run && run->collective == Collective::kUnknown && run->binary.empty()) {
          run->binary = std::string(Trim(body.substr(body.find(':') + 1)));
          run->collective = CollectiveFromText(run->binary);
        }
        if (hold_for_name) {
          hold_for_name = false;
          Emit();
        }
      } else if (StartsWith(body, "nThread ")) {
        ParseParams(body);
      } else if (StartsWith(body, "Rank ")) {
        ParseRank(body);
      } else if (StartsWith(body, "Out of bounds values") ||
                 StartsWith(body, "Avg bus bandwidth")) {
        ParseFooter(body);
      } else {
        auto t = Split(body);
        if (IsHeaderNamesLine(t)) ParseHeaderLine(body, t);
        // Other comment lines (units, "out-of-place", "Using devices", notes) carry nothing.
      }
      return;
    }
    bool row_like = line.front() >= '0' && line.front() <= '9';
    if (phase == Phase::kTable && row_like) {
      if (!complete) {
        run->truncated = true;  // half-written last line: the job died mid-row
        return;
      }
      if (raw.size() >= kMaxLineChars)
        throw InputError(Where("row"), "line longer than 64 KiB inside the result table");
      try {
        ParseRow(line);
      } catch (const InputError& e) {
        bad_row = e;
      }
      return;
    }
    // Noise: NCCL INFO/WARN, launcher messages, shell echo. Remember a command line.
    if (line.find("NCCL ") == std::string_view::npos &&
        line.find("_perf") != std::string_view::npos) {
      Collective c = CollectiveFromText(line);
      if (c != Collective::kUnknown) {
        std::string name = std::string(CollectiveName(c)) + "_perf";
        if (run && phase == Phase::kPreamble && run->binary.empty() && run->columns.empty()) {
          run->binary = name;
          run->collective = c;
        } else {
          pending_binary = name;
        }
      }
    }
    if (!saw_topo_matrix && StartsWith(line, "GPU0") && line.size() > 4 &&
        text::IsSpace(line[4], text::kLineBlanks)) {
      saw_topo_matrix = true;
      topo_line = line_no;
    }
  }

  void Finish() {
    if (bad_row && run) run->truncated = true;  // cut mid-row, then only noise
    Emit();
    if (line_no == 0)
      throw InputError(Location{file, 1, ""}, "expected an nccl-tests log, got an empty file");
    if (rows_seen == 0) {
      if (saw_topo_matrix)
        throw InputError(Location{file, topo_line, ""},
                         "this is an nvidia-smi topo -m matrix, not nccl-tests output "
                         "(use 'lossless audit topo')");
      throw InputError(Location{file, line_no, ""},
                       fmt::format("no nccl-tests result rows found in {} lines", line_no));
    }
  }
};

NcclLogParser::NcclLogParser(std::string file, RunSink on_run) : state_(std::make_unique<State>()) {
  state_->file = std::move(file);
  state_->sink = std::move(on_run);
}
NcclLogParser::~NcclLogParser() = default;
void NcclLogParser::FeedLine(std::string_view line, bool complete) {
  state_->Feed(line, complete);
}
void NcclLogParser::Finish() {
  state_->Finish();
}
int64_t NcclLogParser::lines() const {
  return state_->line_no;
}
int64_t NcclLogParser::runs() const {
  return state_->runs_emitted;
}

int64_t StreamNcclLog(std::istream& in, const std::string& file,
                      const NcclLogParser::RunSink& on_run) {
  NcclLogParser parser(file, on_run);
  std::string line;
  std::vector<char> buf(1 << 16);
  bool overlong = false;
  bool first = true;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    std::streamsize got = in.gcount();
    if (got <= 0) break;
    // Binary input (/dev/zero, a core file) is refused at its first block: its
    // first "line" may never end.
    if (first) CheckTextBlock({buf.data(), static_cast<size_t>(got)}, file, "an nccl-tests log");
    first = false;
    const char* p = buf.data();
    const char* end = p + got;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char* stop = nl ? nl : end;
      size_t room = kMaxLineChars - line.size();
      size_t take = std::min(room, static_cast<size_t>(stop - p));
      line.append(p, take);
      if (take < static_cast<size_t>(stop - p)) overlong = true;
      if (!nl) break;
      if (overlong) line.resize(kMaxLineChars);
      parser.FeedLine(line, true);
      line.clear();
      overlong = false;
      p = nl + 1;
    }
  }
  if (!line.empty()) parser.FeedLine(line, false);
  parser.Finish();
  return parser.runs();
}

NcclLog ParseNcclLog(std::istream& in, const std::string& file) {
  NcclLog log;
  log.file = file;
  StreamNcclLog(in, file, [&log](NcclRun&& r) { log.runs.push_back(std::move(r)); });
  return log;
}

}  // namespace lossless::audit::nccl
