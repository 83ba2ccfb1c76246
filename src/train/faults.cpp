#include "train/faults.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/error.hpp"

namespace lossless::train {
namespace {

bool ToInt(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ToDouble(std::string_view s, double& out) {
  if (s.empty()) return false;
  // from_chars for double: GCC 11+.
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(out);
}

// "STEP" or "STEP-LAST" within [0, steps): first, last (LAST defaults to the
// last step).
void ParseSteps(std::string_view s, const TrainConfig& c, const Location& where,
                const std::string& whole, int& first, int& last) {
  const size_t dash = s.find('-');
  int64_t a = 0, b = c.steps - 1;
  if (!ToInt(s.substr(0, dash), a) ||
      (dash != std::string_view::npos && !ToInt(s.substr(dash + 1), b)))
    throw InputError(where, Expected("a step STEP or a range STEP-LAST after '@'", whole));
  if (a < 0 || a >= c.steps || b < a || b >= c.steps)
    throw InputError(where, fmt::format("expected steps within 0 to {} (--steps {}), first <= "
                                        "last, got '{}'",
                                        c.steps - 1, c.steps, std::string(s)));
  first = static_cast<int>(a);
  last = static_cast<int>(b);
}

int64_t Rank(std::string_view s, const TrainConfig& c, const Location& where,
             const std::string& whole, const char* what) {
  int64_t r = 0;
  const int64_t n = static_cast<int64_t>(c.nodes) * c.gpus_per_node;
  if (!ToInt(s, r)) throw InputError(where, Expected(fmt::format("a {} number", what), whole));
  if (r < 0 || r >= n)
    throw InputError(where, fmt::format("expected a {} from 0 to {} ({} nodes x {} GPUs), got {}",
                                        what, n - 1, c.nodes, c.gpus_per_node, r));
  return r;
}

std::string StepsText(int first, int last) {
  return first == last ? fmt::format("step {}", first) : fmt::format("steps {}-{}", first, last);
}

}  // namespace

bool Faults::ActiveAt(int k) const {
  for (const SlowGpu& f : slow_gpus)
    if (k >= f.first && k <= f.last) return true;
  for (const LinkDegrade& f : degraded)
    if (k >= f.first && k <= f.last) return true;
  for (const NicStall& f : stalls)
    if (k == f.step) return true;
  return false;
}

double Faults::ComputeFactor(int k) const {
  double f = 1;
  for (const SlowGpu& s : slow_gpus)
    if (k >= s.first && k <= s.last) f = std::max(f, s.factor);
  return f;
}

double Faults::StageFactor(int k, int64_t stage_gpus, int stage) const {
  double f = 1;
  for (const SlowGpu& s : slow_gpus)
    if (k >= s.first && k <= s.last && s.rank / stage_gpus == stage) f = std::max(f, s.factor);
  return f;
}

int Faults::FirstStep() const {
  int first = std::numeric_limits<int>::max();
  for (const SlowGpu& f : slow_gpus) first = std::min(first, f.first);
  for (const LinkDegrade& f : degraded) first = std::min(first, f.first);
  for (const NicStall& f : stalls) first = std::min(first, f.step);
  return first == std::numeric_limits<int>::max() ? -1 : first;
}

std::vector<std::string> Faults::Describe() const {
  std::vector<std::string> out;
  for (const SlowGpu& f : slow_gpus)
    out.push_back(fmt::format(
        "fault: GPU {} computes {:g}x slower in {}; every rank waits for it at each collective "
        "and TP all-reduce, so its pipeline stage's compute (all compute without pipeline "
        "stages) runs at its pace",
        f.rank, f.factor, StepsText(f.first, f.last)));
  for (const LinkDegrade& f : degraded)
    out.push_back(
        fmt::format("fault: link {} loses frames at a post-FEC BER of {:g} in {} (CRC drops, RC "
                    "retransmissions)",
                    f.link, f.ber, StepsText(f.first, f.last)));
  for (const NicStall& f : stalls)
    out.push_back(fmt::format(
        "fault: the NIC of GPU {} stops receiving for {} from the first collective of step {}",
        f.host, units::FormatTime(f.duration), f.step));
  return out;
}

SlowGpu ParseSlowGpu(const std::string& text, const TrainConfig& c) {
  const Location where{"<cli>", 0, "--slow-gpu"};
  const size_t colon = text.find(':'), at = text.find('@');
  if (colon == std::string::npos || at == std::string::npos || at < colon)
    throw InputError(where, Expected("RANK:FACTOR@STEP or RANK:FACTOR@STEP-LAST", text));
  SlowGpu f;
  const std::string_view v(text);
  f.rank = Rank(v.substr(0, colon), c, where, text, "GPU rank");
  if (!ToDouble(v.substr(colon + 1, at - colon - 1), f.factor) || !(f.factor > 1) || f.factor > 100)
    throw InputError(where, Expected("a slowdown factor above 1 and at most 100 after ':'", text));
  ParseSteps(v.substr(at + 1), c, where, text, f.first, f.last);
  return f;
}

LinkDegrade ParseDegrade(const std::string& text, const TrainConfig& c) {
  const Location where{"<cli>", 0, "--degrade"};
  const size_t eq = text.rfind('='), at = text.rfind('@');
  if (eq == std::string::npos || at == std::string::npos || at < eq || eq == 0)
    throw InputError(where, Expected("LINK=BER@STEP or LINK=BER@STEP-LAST", text));
  LinkDegrade f;
  const std::string_view v(text);
  f.link = text.substr(0, eq);
  if (!ToDouble(v.substr(eq + 1, at - eq - 1), f.ber) || !(f.ber > 0) || !(f.ber < 1))
    throw InputError(where, Expected("a bit error rate above 0 and below 1 after '='", text));
  ParseSteps(v.substr(at + 1), c, where, text, f.first, f.last);
  return f;
}

NicStall ParseStallNic(const std::string& text, const TrainConfig& c) {
  const Location where{"<cli>", 0, "--stall-nic"};
  const size_t at = text.find('@'), colon = text.find(':');
  if (at == std::string::npos || colon == std::string::npos || colon < at)
    throw InputError(where, Expected("HOST@STEP:US", text));
  NicStall f;
  const std::string_view v(text);
  f.host = Rank(v.substr(0, at), c, where, text, "NIC (GPU rank)");
  int64_t step = 0;
  if (!ToInt(v.substr(at + 1, colon - at - 1), step))
    throw InputError(where, Expected("a step after '@'", text));
  if (step < 0 || step >= c.steps)
    throw InputError(where, fmt::format("expected a step from 0 to {} (--steps {}), got {}",
                                        c.steps - 1, c.steps, step));
  f.step = static_cast<int>(step);
  double us = 0;
  if (!ToDouble(v.substr(colon + 1), us) || !(us > 0) || us > 1e6)
    throw InputError(where, Expected("a stall of 0 < US <= 1e6 microseconds after ':'", text));
  f.duration = units::Time::Ps(static_cast<int64_t>(std::llround(us * 1e6)));
  return f;
}

double StepPercentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = p / 100 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace lossless::train
