#pragma once
// A `perf` sweep filled from the analytic models instead of the engine: for each
// row NCCL's tuning model picks algorithm, protocol and channels, and the
// alpha-beta model gives the time (docs/model/collectives.md#alpha-beta-model).
// Every iteration sample is that time (the model has no jitter); #wrong is 0
// where nccl-tests checks, N/A where it does not. Header notes say the rows are
// the model, not a simulation.
#include <string>
#include <vector>

#include "collective/model/alpha_beta.hpp"
#include "collective/model/tuning.hpp"
#include "perf/result.hpp"

namespace lossless::perf {

// The rows of a sweep in nccl-tests' order: cycles (-N), then data types (-d),
// ops (-o; one pass for the collectives that print `none`), roots (-r), sizes.
// `params` must describe the same nodes and GPUs per node as `o`.
PerfResult ModelRun(const PerfOptions& o, const collective::AlphaBetaParams& params,
                    const collective::TuningModel& tuning);

// The header notes of a model run: what produced it, the modelled NCCL version,
// that hosts/PIDs/PCI addresses are modelled, and NCCL's NVLS/CollNet verdict when
// `offload_note` is not empty.
std::vector<std::string> ModelNotes(const std::string& nccl_version,
                                    const std::string& offload_note);
// The same for a packet-level simulation on `fabric` (a profile or scenario name).
std::vector<std::string> SimulationNotes(const std::string& nccl_version, const std::string& fabric,
                                         const std::string& offload_note);

}  // namespace lossless::perf
