#pragma once
// The verdict every audit tool gives (nccl, topo, qos, optics), for one check,
// one finding or a whole input, and the process exit code that follows from it.
//
// Severity ascends in declaration order: pass < indeterminate < warn < fail,
// so Worst() of a set is the overall verdict of a tool that lets a warning
// outweigh missing evidence (qos, one optics link). Tools print their own
// words for a verdict (optics: healthy / watch / quarantine / invalid-data);
// VerdictName() is the common one.
#include <string_view>

namespace lossless::audit {

enum class Verdict { kPass, kIndeterminate, kWarn, kFail };

// "pass", "indeterminate", "warn", "fail".
std::string_view VerdictName(Verdict v);

// The more severe of the two (declaration order).
Verdict Worst(Verdict a, Verdict b);

// Exit code by the project rule (docs/errors.md): 0 pass, 0 warn (1 when
// `strict`), 1 fail, 3 indeterminate. Bad input (2) never reaches a verdict.
int ExitCode(Verdict v, bool strict);

}  // namespace lossless::audit
