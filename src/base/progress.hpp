#pragma once
// Progress and interrupt for long runs (docs/architecture.md): one redrawn status line
// on a terminal, and Ctrl-C that ends the work at its next safe point so the
// caller can still write a partial result. One facility for every long
// command (`run` today; `perf`, `compare`, `sweep` can adopt it as they are):
//
//   InterruptScope interrupts;                 // Ctrl-C now sets a flag
//   ProgressLine progress(!quiet && ProgressLine::StderrIsTerminal());
//   while (work left) {
//     DoSomeWork();                            // a slice: e.g. 65,536 events
//     if (InterruptRequested()) break;         // at a safe point only
//     if (progress.Due()) progress.Draw(fmt::format("simulated {} ...", ...));
//   }
//   progress.Clear();
//   ... write the (partial) result, marked "interrupted": true ...
//   return InterruptRequested() ? kExitInterrupted : 0;
//
// Nothing here allocates or prints unless a line is drawn; a caller polls
// between slices of work, never per event, so the hot loop is unchanged.
#include <chrono>
#include <cstdio>
#include <string>

namespace lossless {

// Exit status of a command that Ctrl-C ended (128 + SIGINT, as a shell reports it).
inline constexpr int kExitInterrupted = 130;

// While one lives, the first SIGINT (Ctrl-C) sets the interrupt flag instead
// of ending the process; a second SIGINT ends it as the default action would
// (for a run that does not reach a safe point soon enough). The destructor
// puts the previous handler back. The flag is process-wide and starts clear
// in each scope. Not nestable.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// Whether Ctrl-C (or RequestInterrupt) asked the work to stop. Async-signal
// safe to set, cheap to read (one relaxed atomic load).
bool InterruptRequested();
// Sets the flag as Ctrl-C would (tests; a watchdog of the caller's own).
void RequestInterrupt();

// One status line on stderr, redrawn in place ("\r" and an erase), at most
// every `min_interval`. Disabled (every call a no-op) unless `enabled`:
// callers pass !quiet && StderrIsTerminal(), so a pipe or a log file gets
// nothing and output stays byte-identical.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled,
                        std::chrono::milliseconds min_interval = std::chrono::milliseconds(250),
                        std::FILE* out = stderr);
  ~ProgressLine();  // Clear()
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  static bool StderrIsTerminal();
  bool enabled() const { return enabled_; }
  // True when a line should be drawn now (enabled and min_interval since the
  // last draw, or since construction: a short run draws nothing); one clock
  // read. Build the text only when it is.
  bool Due();
  // Draws `text` (control characters escaped; cut to 200 bytes) over the
  // previous line.
  void Draw(const std::string& text);
  // Erases the line, so what follows starts on a clean line.
  void Clear();

 private:
  bool enabled_;
  std::chrono::milliseconds min_interval_;
  std::FILE* out_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace lossless
