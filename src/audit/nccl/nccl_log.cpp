#include "audit/nccl/nccl_log.hpp"

#include <algorithm>
#include <cstring>
#include <istream>

#include <fmt/format.h>

#include "audit/nccl/nccl_log_internal.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/text.hpp"

namespace lossless::audit::nccl {
namespace {

constexpr size_t kMaxLineChars = size_t{64} * 1024;

using internal::Col;
using internal::InferCollective;
using internal::IsClock;
using internal::IsDate;
using internal::IsHeaderNamesLine;
using internal::Layout;
using internal::ParseHeader;
using internal::Split;
using internal::StripLauncherPrefix;
using internal::ToDouble;
using internal::ToInt;
using internal::Trim;
using text::StartsWith;

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
