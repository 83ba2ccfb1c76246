#pragma once
// Line-level pieces of the nccl-tests log parser (nccl_log.cpp) and the
// collective inference it runs on a finished table (nccl_collective.cpp).
// Not part of the module's interface.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "audit/nccl/nccl_log.hpp"
#include "base/error.hpp"

namespace lossless::audit::nccl::internal {

// Blanks are text::kLineBlanks (white space but '\n').
std::string_view Trim(std::string_view s);
std::vector<std::string_view> Split(std::string_view s);
bool AllDigits(std::string_view s);

// Removes a launcher prefix: `srun -l` ("12: "), OpenMPI --tag-output
// ("[1,0]<stdout>:"); other lines come back unchanged.
std::string_view StripLauncherPrefix(std::string_view s);

// Decimal integer (optional '-'); nullopt for anything else or over 18 digits.
std::optional<int64_t> ToInt(std::string_view s);
// Finite decimal number as nccl-tests prints it (no hex, no inf/nan).
std::optional<double> ToDouble(std::string_view s);
// "2024-05-01" and "12:34:56": the two tokens of the -S timestamp column.
bool IsDate(std::string_view s);
bool IsClock(std::string_view s);

enum class Col { kSize, kCount, kType, kRedop, kRoot, kTime, kAlgbw, kBusbw, kWrong, kExtra };

// The columns of a result table as its header names them.
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
bool IsHeaderNamesLine(const std::vector<std::string_view>& t);
// The layout of a header line's tokens; throws InputError at `where` for an
// unknown column or halves that do not match.
Layout ParseHeader(const std::vector<std::string_view>& t, const Location& where);

// Guesses the collective of a run that does not name it (sets `collective` and
// `collective_inferred` when exactly one collective fits the table).
void InferCollective(NcclRun& run, const Layout& layout);

}  // namespace lossless::audit::nccl::internal
