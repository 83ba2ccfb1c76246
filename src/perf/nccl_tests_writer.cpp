#include "perf/nccl_tests_writer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace lossless::perf {
namespace {

// printf into a std::string: the writer reproduces C format strings byte for byte.
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
std::string
Printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, ap2);
  va_end(ap2);
  return out;
}

constexpr std::array<int, 8> kHgxBus = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

}  // namespace

std::vector<DeviceLine> ModelledDevices(int64_t nodes, int64_t gpus_per_node,
                                        const std::string& gpu_name) {
  std::vector<DeviceLine> out;
  for (int64_t node = 0; node < nodes; ++node) {
    for (int64_t g = 0; g < gpus_per_node; ++g) {
      DeviceLine d;
      d.rank = node * gpus_per_node + g;
      d.pid = 10000 + node;
      d.host = Printf("node-%lld", static_cast<long long>(node));
      d.device = g;
      d.pci_bus = kHgxBus[static_cast<size_t>(g) % kHgxBus.size()];
      d.gpu_name = gpu_name;
      out.push_back(std::move(d));
    }
  }
  return out;
}

RunHeader HeaderFromOptions(const PerfOptions& o) {
  RunHeader h;
  h.binary = collective::BinaryName(o.collective);
  h.n_threads = o.n_threads;
  h.n_gpus = o.n_gpus;
  h.min_bytes = o.min_bytes;
  h.max_bytes = o.max_bytes;
  h.step_factor = o.step_factor;
  h.step_bytes = o.step_bytes;
  h.warmup_iters = o.warmup_iters;
  h.iters = o.iters;
  h.agg_iters = o.agg_iters;
  h.check = o.check;
  h.graph = o.cudagraph;
  h.unalign = o.unalign;
  h.blocking = o.blocking;
  h.parallel_init = o.parallel_init;
  h.report_cputime = o.report_cputime != 0;
  h.per_iter_timing = o.per_iter_timing != 0;
  h.per_iter_skip = o.per_iter_skip;
  return h;
}

std::string GetFloatStr(double value, int width) {
  char buf[64];
  if (std::snprintf(buf, sizeof buf, "%*.2f", width, value) <= width) return buf;
  if (std::snprintf(buf, sizeof buf, "%*.1f", width, value) <= width) return buf;
  if (std::snprintf(buf, sizeof buf, "%*.0f", width, value) <= width) return buf;
  // nccl-tests truncates to `width` characters here (snprintf with size width + 1).
  std::snprintf(buf, sizeof buf, width >= 7 ? "%*.1e" : "%*.0e", width, value);
  return std::string(buf).substr(0, static_cast<size_t>(width));
}

IterStats ComputeIterStats(const std::vector<double>& iter_us) {
  IterStats st;
  if (iter_us.empty()) return st;
  std::vector<double> sorted = iter_us;
  std::sort(sorted.begin(), sorted.end());
  const int n = static_cast<int>(sorted.size());
  st.min_us = sorted.front();
  st.max_us = sorted.back();
  st.p99_us = sorted[static_cast<size_t>(std::min(n - 1, (n * 99 + 99) / 100 - 1))];
  double sum = 0;
  for (double t : sorted) sum += t;
  const double avg = sum / n;
  double var = 0;
  for (double t : sorted) var += (t - avg) * (t - avg);
  st.cv_pct = avg > 0 ? std::sqrt(var / n) / avg * 100.0 : 0.0;
  return st;
}

std::string G2TimeStr(double t) {
  if (t >= 10000.0) return Printf("%7.0f", t);
  if (t >= 100.0) return Printf("%7.1f", t);
  return Printf("%7.2f", t);
}

NcclTestsWriter::NcclTestsWriter(OutputFormat format, RunHeader header)
    : format_(format), header_(std::move(header)) {}

std::string NcclTestsWriter::Preamble(const std::vector<DeviceLine>& devices) const {
  const RunHeader& h = header_;
  const bool g3 = format_ == OutputFormat::kG3;
  std::string out;
  if (g3) {
    out += Printf("# nccl-tests version %s nccl-headers=%lld nccl-library=%lld\n",
                  h.nccl_tests_version.c_str(), static_cast<long long>(h.nccl_version_code),
                  static_cast<long long>(h.nccl_version_code));
  }
  out += Printf("# Collective test starting: %s\n", h.binary.c_str());
  const long long step = h.step_factor > 1 ? h.step_factor : h.step_bytes;
  const char* step_kind = h.step_factor > 1 ? "factor" : "bytes";
  out += Printf(
      "# nThread %lld nGpus %lld minBytes %lld maxBytes %lld step: %lld(%s) warmup iters: %lld "
      "iters: %lld "
      "agg iters: %lld validation: %lld graph: %lld",
      static_cast<long long>(h.n_threads), static_cast<long long>(h.n_gpus),
      static_cast<long long>(h.min_bytes), static_cast<long long>(h.max_bytes), step, step_kind,
      static_cast<long long>(h.warmup_iters), static_cast<long long>(h.iters),
      static_cast<long long>(h.agg_iters), static_cast<long long>(h.check),
      static_cast<long long>(h.graph));
  if (g3) out += Printf(" unalign: %lld", static_cast<long long>(h.unalign));
  out += "\n";
  if (g3) {
    if (h.blocking == 1)
      out += "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n";
    if (h.blocking == 2)
      out += "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n";
    if (h.blocking == 3) {
      out +=
          "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes "
          "barrier \n";
    }
  } else if (h.blocking != 0) {
    out += "# Blocking Enabled: wait for completion and barrier after each collective \n";
  }
  if (g3 && h.per_iter_timing) {
    out += "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows";
    if (h.per_iter_skip)
      out +=
          Printf("; summary skips first %lld iterations", static_cast<long long>(h.per_iter_skip));
    out += " \n";
  }
  if (h.parallel_init)
    out += "# Parallel Init Enabled: threads call into NcclInitRank concurrently \n";
  for (const std::string& note : h.notes) out += "# " + note + "\n";
  out += "#\n";
  out += "# Using devices\n";
  for (const DeviceLine& d : devices) {
    out += Printf("#  Rank %2lld Group %2lld Pid %6lld on %10s device %2lld [%04x:%02x:%02x] %s\n",
                  static_cast<long long>(d.rank), static_cast<long long>(d.group),
                  static_cast<long long>(d.pid), d.host.c_str(), static_cast<long long>(d.device),
                  d.pci_domain, d.pci_bus, d.pci_device, d.gpu_name.c_str());
  }
  out += "#\n";
  const char* time = h.report_cputime ? "cputime" : "time";
  if (g3 && h.per_iter_timing) {
    out += Printf(
        "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)                   "
        "    "
        "         in-place (+ per-iteration)\n",
        "", "", "", "", "");
    out += Printf(
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  "
        "%7s  %7s  %7s  %7s "
        "%*s\n",
        "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", "i_min",
        "i_max", "i_p99", "i_cv%", time, "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99",
        "i_cv%", 0, "");
    out += Printf(
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  "
        "%7s  %7s  %7s  %7s "
        "%*s\n",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)",
        "(%)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)", 0, "");
    return out;
  }
  out += Printf(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
      "\n",
      "", "", "", "", "");
  if (g3) {
    out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                  "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time,
                  "algbw", "busbw", "#wrong", 0, "");
    out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                  "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                  "(GB/s)", "", 0, "");
  } else {
    out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
                  "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw",
                  "busbw", "#wrong");
    out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
                  "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                  "(GB/s)", "");
  }
  return out;
}

std::string NcclTestsWriter::AddRow(const perf::Row& row) {
  const std::string root = Printf("%6i", static_cast<int>(row.root));
  std::string out =
      Printf("%12lld  %12lld  %8s  %6s  %6s", static_cast<long long>(row.size_bytes),
             static_cast<long long>(row.count), row.type.c_str(), row.redop.c_str(), root.c_str());
  for (const HalfRow* h : {&row.out_of_place, &row.in_place}) {
    if (format_ == OutputFormat::kG3) {
      const std::string t = GetFloatStr(h->time_us, 7);
      const std::string a = GetFloatStr(h->algbw_gbs, 6);
      const std::string b = GetFloatStr(h->busbw_gbs, 6);
      if (h->wrong) {
        out += Printf("  %7s  %6s  %6s  %6g", t.c_str(), a.c_str(), b.c_str(),
                      static_cast<double>(*h->wrong));
      } else {
        out += Printf("  %7s  %6s  %6s    N/A", t.c_str(), a.c_str(), b.c_str());
      }
      if (header_.per_iter_timing) {
        const IterStats st = ComputeIterStats(h->iter_us);
        out += Printf("  %7s  %7s  %7s  %7s", GetFloatStr(st.min_us, 7).c_str(),
                      GetFloatStr(st.max_us, 7).c_str(), GetFloatStr(st.p99_us, 7).c_str(),
                      GetFloatStr(st.cv_pct, 7).c_str());
      }
    } else {
      const std::string t = G2TimeStr(h->time_us);
      if (h->wrong) {
        out += Printf("  %7s  %6.2f  %6.2f  %5g", t.c_str(), h->algbw_gbs, h->busbw_gbs,
                      static_cast<double>(*h->wrong));
      } else {
        out += Printf("  %7s  %6.2f  %6.2f  %5s", t.c_str(), h->algbw_gbs, h->busbw_gbs, "N/A");
      }
    }
    bw_sum_ += h->busbw_gbs;
    ++n_bw_;
    if (h->wrong && *h->wrong > 0) ++errors_;
  }
  out += "\n";
  return out;
}

std::string NcclTestsWriter::Footer(std::optional<double> min_bw_gbs) const {
  const double avg = AvgBusBw();
  const char* bw_verdict = !min_bw_gbs ? "" : (avg < *min_bw_gbs * 0.9 ? "FAILED" : "OK");
  std::string out;
  out += Printf("# %-20s : %d %s\n", "Out of bounds values", static_cast<int>(errors_),
                errors_ ? "FAILED" : "OK");
  out += Printf("# %-20s : %g %s\n", "Avg bus bandwidth", avg, bw_verdict);
  out += "#\n";
  out += Printf("# Collective test concluded: %s\n", header_.binary.c_str());
  if (format_ == OutputFormat::kG3) out += "#\n";
  out += "\n";  // ncclGetLastError(): empty
  return out;
}

}  // namespace lossless::perf
