// The progress line draws only when enabled and due, and erases itself; the
// interrupt flag is set by Ctrl-C (SIGINT) inside a scope, not outside.
#include "base/progress.hpp"

#include <csignal>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace lossless {
namespace {

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

TEST(ProgressLine, DrawsWhenDueAndErasesItself) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine line(true, std::chrono::milliseconds(0), f);
    ASSERT_TRUE(line.Due());
    line.Draw("simulated 1us\x1b[31m");
    line.Clear();
    line.Clear();  // nothing drawn since: nothing to erase
  }
  EXPECT_EQ(Contents(f), "\rsimulated 1us\\x1b[31m\x1b[K\r\x1b[K");
  std::fclose(f);
}

TEST(ProgressLine, DisabledOrNotDueDrawsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine off(false, std::chrono::milliseconds(0), f);
    EXPECT_FALSE(off.Due());
    off.Draw("x");
    ProgressLine slow(true, std::chrono::hours(1), f);
    EXPECT_FALSE(slow.Due());  // a short run draws nothing
  }
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(Interrupt, SigintInsideAScopeSetsTheFlag) {
  {
    InterruptScope scope;
    EXPECT_FALSE(InterruptRequested());
    std::raise(SIGINT);  // the process lives on
    EXPECT_TRUE(InterruptRequested());
  }
  InterruptScope again;  // a new scope starts clear
  EXPECT_FALSE(InterruptRequested());
  RequestInterrupt();
  EXPECT_TRUE(InterruptRequested());
}

}  // namespace
}  // namespace lossless
