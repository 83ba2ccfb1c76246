#include "base/progress.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include "base/text.hpp"

namespace lossless {
namespace {

std::atomic<bool> interrupted{false};
struct sigaction previous {};

extern "C" void OnSigint(int) {
  if (interrupted.load(std::memory_order_relaxed)) {
    // Second Ctrl-C: end now, as without the scope.
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  interrupted.store(true, std::memory_order_relaxed);
}

}  // namespace

InterruptScope::InterruptScope() {
  interrupted.store(false, std::memory_order_relaxed);
  struct sigaction sa {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &previous);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &previous, nullptr);
}

bool InterruptRequested() {
  return interrupted.load(std::memory_order_relaxed);
}

void RequestInterrupt() {
  interrupted.store(true, std::memory_order_relaxed);
}

ProgressLine::ProgressLine(bool enabled, std::chrono::milliseconds min_interval, std::FILE* out)
    : enabled_(enabled),
      min_interval_(min_interval),
      out_(out),
      last_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  Clear();
}

bool ProgressLine::StderrIsTerminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

bool ProgressLine::Due() {
  if (!enabled_) return false;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < min_interval_) return false;  // a short run draws nothing
  last_ = now;
  return true;
}

void ProgressLine::Draw(const std::string& text) {
  if (!enabled_) return;
  std::string line = text::OneLine(text);
  if (line.size() > 200) line.resize(200);
  // "\r" to the line's start, the text, then erase what a longer previous
  // line left (ANSI EL, which every terminal emulator in use understands).
  std::fprintf(out_, "\r%s\x1b[K", line.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::Clear() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace lossless
