// Build time of the topology builders (run build-*/topology_benchmarks).
#include <benchmark/benchmark.h>

#include "topology/topology.hpp"

namespace lossless::topology {
namespace {

const Location kWhere{"<benchmark>", 0, ""};

ClosParams Params(int64_t gpus, int radix) {
  ClosParams p;
  p.gpus = gpus;
  p.radix = radix;
  return p;
}

void BM_LeafSpine(benchmark::State& state) {
  const ClosParams p = Params(state.range(0), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    Topology t = BuildLeafSpine(p, kWhere);
    benchmark::DoNotOptimize(t.links.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
// 1,024 hosts on k = 64; 8,192 hosts on k = 128 (still two tiers).
BENCHMARK(BM_LeafSpine)->Args({1024, 64})->Args({8192, 128})->Unit(benchmark::kMicrosecond);

void BM_FatTree(benchmark::State& state) {
  const ClosParams p = Params(state.range(0), 64);
  for (auto _ : state) {
    Topology t = BuildFatTree(p, kWhere);
    benchmark::DoNotOptimize(t.links.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_FatTree)->Arg(8192)->Unit(benchmark::kMicrosecond);

void BM_RailOptimized(benchmark::State& state) {
  const ClosParams p = Params(state.range(0), 64);
  for (auto _ : state) {
    Topology t = BuildRailOptimized(p, kWhere);
    benchmark::DoNotOptimize(t.links.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RailOptimized)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_Unreachable(benchmark::State& state) {
  const Topology t = BuildFatTree(Params(state.range(0), 64), kWhere);
  for (auto _ : state) benchmark::DoNotOptimize(FindUnreachableHosts(t));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Unreachable)->Arg(8192)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace lossless::topology
