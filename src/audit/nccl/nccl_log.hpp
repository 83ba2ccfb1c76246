#pragma once
// Parser for nccl-tests `*_perf` output (docs/model/nccl-tests.md).
//
// Reads every format generation (G1 legacy <= v2.11, G2 classic v2.13-v2.17.2,
// G3 current v2.17.3+) line by line from a std::istream and returns a typed
// model; it never loads the whole input into memory. Memory is bounded by the
// largest single run's table (one Row per printed size), not by file size:
// `NcclLogParser` hands each run to a callback as soon as it is complete.
//
// Tolerated: NCCL INFO/WARN lines and launcher noise anywhere (also inside the
// table), launcher prefixes (`srun -l` "0: ", OpenMPI "[1,0]<stdout>:"), CRLF,
// trailing spaces, ANSI colour codes, several runs in one file, a table cut off
// at the end of the input (the run is marked `truncated`; a half-written last
// line without a newline is dropped).
//
// Rejected with InputError{file, line, field}: empty input, binary data, a line
// inside a table that starts like a row but does not parse (wrong column count,
// non-numeric or negative values, NaN/inf), malformed Rank/footer lines, a
// header with unknown columns, an input without any result table (for example
// an `nvidia-smi topo -m` matrix). No rule judgement happens here.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lossless::audit::nccl {

enum class NcclGeneration { kG1Legacy, kG2Classic, kG3Current };
std::string_view GenerationName(NcclGeneration g);  // "G1 legacy", ...

enum class Collective {
  kUnknown,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kAllToAllV,
  kSendRecv,
  kGather,
  kScatter,
  kHypercube,
};
// "all_reduce", ..., "unknown".
std::string_view CollectiveName(Collective c);
// From a binary name or any text containing "<coll>_perf"; kUnknown if none.
Collective CollectiveFromText(std::string_view text);
// busbw / algbw for n ranks (docs/model/nccl-tests.md#bus-bandwidth-factors); 0 for kUnknown or n
// < 1.
double BusBwFactor(Collective c, int64_t n_ranks);

struct NcclRank {
  int64_t rank = 0;
  std::string host;
  int64_t device = 0;
  std::string gpu_name;
};

// One half of a row (out-of-place or in-place).
struct NcclHalf {
  double time_us = 0;
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  // G2/G3: count of wrong elements; G1: largest absolute error.
  // nullopt when the column reads N/A (check disabled).
  std::optional<double> wrong;
};

struct NcclRow {
  int64_t line = 0;  // 1-based line in the input
  int64_t size_bytes = 0;
  int64_t count = 0;
  std::string type;
  std::string redop;  // "" when the layout has no redop column or it is blank
  int64_t root = -1;  // -1 when the layout has no root column
  NcclHalf out_of_place;
  NcclHalf in_place;
};

struct NcclRun {
  std::string file;
  int64_t first_line = 0;  // line of the first line that belongs to this run
  NcclGeneration generation = NcclGeneration::kG2Classic;
  std::string binary;  // from "# Collective test starting:" or a command line; may be empty
  Collective collective = Collective::kUnknown;
  bool collective_inferred = false;  // true when guessed from the table, not named in the log
  std::string nccl_tests_version;    // G3 first line; may be empty
  int64_t n_threads = 0;             // 0 = parameter line absent
  int64_t n_gpus = 0;
  std::vector<NcclRank> ranks;
  std::vector<std::string> columns;  // header column names, e.g. size count type redop root ...
  std::vector<NcclRow> rows;
  std::optional<int64_t> out_of_bounds;  // "# Out of bounds values : N OK|FAILED"
  bool out_of_bounds_failed = false;
  std::optional<double> avg_busbw_gbs;  // footer value
  bool truncated = false;               // table ended without its footer
  int64_t last_line = 0;

  // Distinct host names of the Rank lines, in order of first appearance.
  std::vector<std::string> Hosts() const;
  // Ranks in the run: the highest rank index listed plus one. A pasted log often
  // lists only some Rank lines (the first and last of each host, or the tail of a
  // long list cut at the top), so this can exceed ranks.size(); 0 without Rank lines.
  int64_t RankCount() const;
  bool RankListIncomplete() const { return RankCount() > static_cast<int64_t>(ranks.size()); }
};

struct NcclLog {
  std::string file;
  std::vector<NcclRun> runs;
};

// Streaming parser. Feed lines (without the newline) in order, then Finish().
// Completed runs go to `on_run` immediately; the parser keeps only the run
// in progress.
class NcclLogParser {
 public:
  using RunSink = std::function<void(NcclRun&&)>;
  NcclLogParser(std::string file, RunSink on_run);
  ~NcclLogParser();
  NcclLogParser(const NcclLogParser&) = delete;
  NcclLogParser& operator=(const NcclLogParser&) = delete;

  // `complete` is false only for a last line that had no newline.
  void FeedLine(std::string_view line, bool complete = true);
  // Ends the input; throws InputError when no run was found at all.
  void Finish();
  int64_t lines() const;
  int64_t runs() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads `in` line by line (lines longer than 64 KiB are cut; such a line in a
// table is an error) and returns every run.
NcclLog ParseNcclLog(std::istream& in, const std::string& file);
// Same, streaming each completed run to `on_run`; returns the number of runs.
int64_t StreamNcclLog(std::istream& in, const std::string& file,
                      const NcclLogParser::RunSink& on_run);

}  // namespace lossless::audit::nccl
