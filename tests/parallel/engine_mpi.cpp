// The window engine over real MPI on the synthetic token model
// (src/parallel/token_model.hpp), for tests/cli/engine_mpi.sh and the
// per-window cost figures of docs/benchmarks.md.
//
//   engine_mpi [--serial] [--units U] [--per-unit P] [--tokens T]
//              [--until-us N] [--random SEED]
//
// Rank 0 (or the serial run, with --serial or without a launcher) prints
// one line per entity (state, events, digest) on stdout, and on stderr what
// the run cost: windows, cross-rank events, same-time ties, wall time and
// the time spent in Exchange and AllreduceMin. Exit 2 on a bad argument.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "parallel/comm.hpp"
#include "parallel/mpi_comm.hpp"
#include "parallel/token_model.hpp"

using namespace lossless;
using namespace lossless::parallel;

namespace {
long Number(const char* name, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "engine_mpi: %s: expected a positive integer, got '%s'\n", name, text);
    std::exit(2);
  }
  return v;
}
}  // namespace

int main(int argc, char** argv) {
  TokenModelConfig cfg;
  bool serial = false;
  uint64_t random_seed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "engine_mpi: %s: expected a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--serial") {
      serial = true;
    } else if (a == "--units") {
      cfg.units = static_cast<uint32_t>(Number("--units", value()));
    } else if (a == "--per-unit") {
      cfg.per_unit = static_cast<uint32_t>(Number("--per-unit", value()));
    } else if (a == "--tokens") {
      cfg.tokens = static_cast<uint32_t>(Number("--tokens", value()));
    } else if (a == "--until-us") {
      cfg.until = units::Time::Us(Number("--until-us", value()));
    } else if (a == "--random") {
      random_seed = static_cast<uint64_t>(Number("--random", value()));
    } else {
      std::fprintf(stderr, "engine_mpi: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  try {
    std::unique_ptr<Comm> world = serial ? nullptr : OpenMpiWorld();
    if (!world) {
      const TokenOutcome o = RunTokensSerial(cfg);
      std::fputs(o.text.c_str(), stdout);
      std::fprintf(stderr, "serial: %llu events, run %.3f s\n",
                   static_cast<unsigned long long>(o.events), o.stats.run_s);
      return 0;
    }
    const int k = world->Size();
    if (static_cast<uint32_t>(k) > cfg.units) {
      if (world->Rank() == 0)
        std::fprintf(stderr, "engine_mpi: expected at most %u ranks (one unit each), got %d\n",
                     cfg.units, k);
      return 2;
    }
    const std::vector<int> placement = random_seed != 0 ? RandomPlacement(cfg.units, k, random_seed)
                                                        : ContiguousPlacement(cfg.units, k);
    const TokenOutcome o = RunTokens(*world, cfg, placement);
    if (world->Rank() == 0) {
      std::fputs(o.text.c_str(), stdout);
      const double per_window =
          o.stats.windows > 0 ? o.stats.wait_s / static_cast<double>(o.stats.windows) : 0;
      std::fprintf(stderr,
                   "%d ranks: %llu events, %llu windows, %llu cross-rank events, %llu same-time "
                   "ties; rank 0: run %.3f s, in Exchange and AllreduceMin %.3f s (%.1f%%), "
                   "%.2f us per window\n",
                   k, static_cast<unsigned long long>(o.events),
                   static_cast<unsigned long long>(o.stats.windows),
                   static_cast<unsigned long long>(o.cross),
                   static_cast<unsigned long long>(o.ties), o.stats.run_s, o.stats.wait_s,
                   o.stats.run_s > 0 ? 100.0 * o.stats.wait_s / o.stats.run_s : 0.0,
                   per_window * 1e6);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_mpi: %s\n", e.what());
    return 1;
  }
}
