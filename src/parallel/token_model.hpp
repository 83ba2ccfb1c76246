#pragma once
// A synthetic model for checking and measuring the window engine
// (engine.hpp) without the fabric: tokens hop between entities grouped in
// units. Within a unit a hop takes 0, 1 or 2 steps of `step`; between units
// the lookahead plus 0, 5 or 10 steps. All delays are multiples of the step,
// so many events share a time and only their keys order them. Each event
// folds (time, kind, value) into its entity's state, and the next hop, its
// delay and kind depend on that state: one event out of order changes
// everything after it. Units are placed on ranks whole (the partition unit).
//
// Used by parallel_tests (loopback) and by tests/parallel/engine_mpi.cpp
// (real MPI: the same bytes for every rank count, and per-window costs).
#include <cstdint>
#include <string>
#include <vector>

#include "parallel/comm.hpp"
#include "parallel/engine.hpp"
#include "units/units.hpp"

namespace lossless::parallel {

struct TokenModelConfig {
  uint32_t units = 7;
  uint32_t per_unit = 4;  // entities per unit
  uint32_t tokens = 40;   // events alive at any time
  units::Time step = units::Time::Ns(10);
  units::Time lookahead = units::Time::Ns(100);
  units::Time until = units::Time::Us(15);
  uint64_t seed = 1;
  // Boundaries (WindowEngine::set_boundaries): every `snapshot_every` (0 =
  // none) the states of all entities are hashed into a line of the output,
  // and at `stop_at` the run stops (Time::Max() = never), as the serial run
  // does with sim.Run(t) at those times.
  units::Time snapshot_every = units::Time::Zero();
  units::Time stop_at = units::Time::Max();
  // WindowEngine::set_reduce_in_exchange (where every other rank is a neighbour).
  bool reduce_in_exchange = true;
};

struct TokenOutcome {
  // Rank 0: "snapshot <ps> <hash of every entity's state>" per snapshot, then
  // one line per entity, "<entity> <state> <events> <digest>" (hex state and
  // digest); empty on other ranks. Equal to the serial run's.
  std::string text;
  // Summed over ranks (rank 0): events that crossed ranks, and same-time
  // consecutive events on one rank of which one came from another rank.
  uint64_t cross = 0;
  uint64_t ties = 0;
  uint64_t events = 0;
  WindowStats stats;  // this rank's
};

// The serial run (no engine).
TokenOutcome RunTokensSerial(const TokenModelConfig& cfg);
// The distributed run on `comm`, unit u on rank rank_of_unit[u]
// (collective; every rank must hold at least one unit).
TokenOutcome RunTokens(Comm& comm, const TokenModelConfig& cfg,
                       const std::vector<int>& rank_of_unit);

// Units in order, split into `ranks` contiguous blocks.
std::vector<int> ContiguousPlacement(uint32_t units, int ranks);
// Every rank gets one unit, the rest go at random (from `seed`).
std::vector<int> RandomPlacement(uint32_t units, int ranks, uint64_t seed);

}  // namespace lossless::parallel
