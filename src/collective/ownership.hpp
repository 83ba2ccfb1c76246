#pragma once
// A collective engine in a distributed run (`mpirun -np K lossless perf`,
// src/distrun, docs/parallel.md): every process builds the whole engine
// alike (its records, connections, queue pairs and GPU entities, in the
// serial order) and runs only the GPUs of the nodes it owns. A node is never
// split, so everything a GPU's record touches (its NVLink, its NICs, the
// connections it sends or receives on) is on its own process; the records of
// other processes' GPUs stay as Begin left them.
//
// The kernel launch is the one event that touches every GPU: the serial run
// queues it under the next key of one GPU's entity and it progresses every
// record. Distributed, the owner of that GPU draws the key and every process
// queues the launch under it (the key is agreed: `launch_key` is
// collective), so each runs its own GPUs' part at the serial point.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/simulator.hpp"

namespace lossless::collective {

struct GpuOwnership {
  // owned[gpu] != 0: this process runs the GPU; empty: every GPU (serial).
  std::vector<uint8_t> owned;
  // Called on every process by Begin with whether it owns the launching GPU
  // and that GPU's entity; returns the key the owner drew with
  // Simulator::DrawKey, the same on every process. Empty: serial.
  std::function<uint64_t(bool mine, uint32_t entity)> launch_key;

  bool Owns(uint32_t gpu) const { return owned.empty() || owned[gpu] != 0; }
  // Queues the launch (kind `kind`, arg 0) at `at`: serially under the
  // launching GPU's next key, as Simulator::Schedule draws it; distributed
  // under the agreed key.
  void ScheduleLaunch(sim::Simulator& sim, units::Time at, uint32_t gpu, uint32_t entity,
                      sim::EventHandler* h, uint32_t kind) const {
    if (!launch_key) {
      sim.Schedule(at, entity, h, kind, 0);
      return;
    }
    sim.ScheduleKeyed(at, launch_key(Owns(gpu), entity), h, kind, 0);
  }
};

}  // namespace lossless::collective
