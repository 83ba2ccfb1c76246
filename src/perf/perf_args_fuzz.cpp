// libFuzzer target: any bytes, split at NUL and newline into arguments, through
// the perf option parser, the size loop and, for accepted options with a small
// sweep, the counts and the writer. InputError is the only allowed failure.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "perf/nccl_tests_writer.hpp"
#include "perf/options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\0' || c == '\n') {
      args.emplace_back();
    } else {
      args.back() += c;
    }
  }
  try {
    lossless::perf::PerfOptions o = lossless::perf::ParsePerfArgs(args);
    if (o.help || o.Ranks() > 4096) return 0;
    const std::vector<int64_t> sizes = lossless::perf::SizeSequence(o);
    lossless::perf::NcclTestsWriter w(o.format, lossless::perf::HeaderFromOptions(o));
    size_t rows = 0;
    for (int64_t s : sizes) {
      if (++rows > 64) break;
      const auto counts =
          lossless::collective::CountsFor(o.collective, s, o.types.front(), o.Ranks());
      lossless::perf::Row row;
      row.size_bytes = counts.size_bytes;
      row.count = counts.count;
      row.out_of_place.time_us = static_cast<double>(s);
      row.in_place.time_us = static_cast<double>(s) * 1e9;
      w.AddRow(row);
    }
    w.Footer();
  } catch (const lossless::InputError&) {
  }
  return 0;
}
