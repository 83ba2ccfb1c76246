#include "perf/model_run.hpp"

#include <fmt/format.h>

#include "lossless/version.hpp"

namespace lossless::perf {

PerfResult ModelRun(const PerfOptions& o, const collective::AlphaBetaParams& params,
                    const collective::TuningModel& tuning) {
  using collective::Collective;
  PerfResult r;
  r.options = o;
  r.simulated = false;
  r.nccl_version = tuning.constants().nccl_version;
  const std::vector<int64_t> sizes = SizeSequence(o);
  std::vector<collective::RedOp> ops = o.ops;
  if (!collective::PrintsRedOp(o.collective)) ops = {collective::RedOp::kSum};
  for (int64_t cycle = 0; cycle < o.run_cycles; ++cycle) {
    for (collective::DataType type : o.types) {
      for (collective::RedOp op : ops) {
        for (int64_t root : o.Roots()) {
          for (int64_t requested : sizes) {
            SizeResult s;
            s.requested_bytes = requested;
            s.counts = collective::CountsFor(o.collective, requested, type, o.Ranks());
            s.type = type;
            s.op = op;
            s.root = root;
            s.choice = tuning.Choose(o.collective, s.counts.size_bytes);
            collective::AlphaBetaParams row = params;
            row.gpu_write_gbs = tuning.ProtocolCapGbs(s.choice.algorithm, s.choice.protocol);
            const double t = collective::AlphaBeta(o.collective, s.choice.algorithm,
                                                   s.choice.protocol, s.counts.size_bytes, row)
                                 .TotalUs();
            s.model_us = t;
            s.out_of_place.samples_us.assign(static_cast<size_t>(o.iters), t);
            s.in_place.samples_us.assign(static_cast<size_t>(o.iters), t);
            s.out_of_place.wrong = o.check ? std::optional<int64_t>(0) : std::nullopt;
            s.in_place.wrong = o.check && collective::ChecksInPlace(o.collective)
                                   ? std::optional<int64_t>(0)
                                   : std::nullopt;
            r.sizes.push_back(std::move(s));
          }
        }
      }
    }
  }
  return r;
}

std::vector<std::string> ModelNotes(const std::string& nccl_version,
                                    const std::string& offload_note) {
  std::vector<std::string> notes;
  notes.push_back(fmt::format(
      "lossless {}: ANALYTIC MODEL, NOT A SIMULATION: times are the alpha-beta model of "
      "the algorithm NCCL {}'s tuning model picks",
      kVersion, nccl_version));
  notes.emplace_back("lossless: host names, PIDs and PCI addresses below are modelled");
  if (!offload_note.empty()) notes.push_back("lossless: " + offload_note);
  return notes;
}

std::vector<std::string> SimulationNotes(const std::string& nccl_version, const std::string& fabric,
                                         const std::string& offload_note) {
  std::vector<std::string> notes;
  notes.push_back(fmt::format("lossless {}: packet-level simulation of NCCL {}'s algorithms on {}",
                              kVersion, nccl_version,
                              fabric.empty() ? "the default fabric" : fabric));
  notes.emplace_back("lossless: host names, PIDs and PCI addresses below are modelled");
  if (!offload_note.empty()) notes.push_back("lossless: " + offload_note);
  return notes;
}

}  // namespace lossless::perf
