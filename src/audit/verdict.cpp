#include "audit/verdict.hpp"

namespace lossless::audit {

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kIndeterminate:
      return "indeterminate";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kFail:
      return "fail";
  }
  return "?";
}

Verdict Worst(Verdict a, Verdict b) {
  return a < b ? b : a;
}

int ExitCode(Verdict v, bool strict) {
  switch (v) {
    case Verdict::kPass:
      return 0;
    case Verdict::kWarn:
      return strict ? 1 : 0;
    case Verdict::kFail:
      return 1;
    case Verdict::kIndeterminate:
      return 3;
  }
  return 1;
}

}  // namespace lossless::audit
