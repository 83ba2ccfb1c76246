#include "audit/verdict.hpp"

#include <gtest/gtest.h>

namespace lossless::audit {
namespace {

TEST(Verdict, NamesArePrinted) {
  EXPECT_EQ(VerdictName(Verdict::kPass), "pass");
  EXPECT_EQ(VerdictName(Verdict::kIndeterminate), "indeterminate");
  EXPECT_EQ(VerdictName(Verdict::kWarn), "warn");
  EXPECT_EQ(VerdictName(Verdict::kFail), "fail");
}

TEST(Verdict, WorstOrdersFailWarnIndeterminatePass) {
  EXPECT_EQ(Worst(Verdict::kPass, Verdict::kIndeterminate), Verdict::kIndeterminate);
  EXPECT_EQ(Worst(Verdict::kIndeterminate, Verdict::kWarn), Verdict::kWarn);
  EXPECT_EQ(Worst(Verdict::kFail, Verdict::kIndeterminate), Verdict::kFail);
  EXPECT_EQ(Worst(Verdict::kWarn, Verdict::kFail), Verdict::kFail);
  EXPECT_EQ(Worst(Verdict::kPass, Verdict::kPass), Verdict::kPass);
}

TEST(Verdict, ExitCodesFollowTheProjectRule) {
  EXPECT_EQ(ExitCode(Verdict::kPass, false), 0);
  EXPECT_EQ(ExitCode(Verdict::kPass, true), 0);
  EXPECT_EQ(ExitCode(Verdict::kWarn, false), 0);
  EXPECT_EQ(ExitCode(Verdict::kWarn, true), 1);
  EXPECT_EQ(ExitCode(Verdict::kFail, false), 1);
  EXPECT_EQ(ExitCode(Verdict::kIndeterminate, false), 3);
  EXPECT_EQ(ExitCode(Verdict::kIndeterminate, true), 3);
}

}  // namespace
}  // namespace lossless::audit
