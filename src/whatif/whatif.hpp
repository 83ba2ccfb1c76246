#pragma once
// `lossless what-if` (docs/what-if.md#what-if-quarantine-now-or-wait): what a degraded link costs
// left in service, and what it costs taken out (quarantined), beside the
// healthy fabric. Three cases on the same fabric, each through the
// comparison's all-reduce sweep (compare::RunAllReduceSweep) and, unless
// switched off, its training step (compare::RunTrainStep):
//   healthy      no fault;
//   in service   every degraded link loses frames at its post-FEC bit error
//                rate (faults.link_loss, both directions), every down link is
//                down;
//   quarantined  every degraded link is down too.
// A link down is down from t = 0 with the control plane's reroute already
// done (faults.reroute.* = 0): the steady state after the reroute, not the
// black-holed interval before it (docs/what-if.md#link-down).
//
// The healthy sweep runs the default sizes up to its plateau (or the sizes
// given); the other cases run exactly the healthy case's sizes, so every row
// compares the same size. "busbw lost" is 1 - case / healthy at the largest
// size (the plateau row), in percent.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "scenario/scenario.hpp"

namespace lossless::whatif {

// One link the question is about.
struct LinkFault {
  std::string link;  // a link name (scenario::FindLink accepts it)
  bool down = false;  // down in both faulted cases (else degraded: `ber` in service, down when quarantined)
  double ber = 0;     // post-FEC bit error rate in service (degraded links; 0 = no loss measured)
  std::string source; // where it came from: "--down", "--degrade", "optics: PORT (quarantine)"
  Location where;     // for errors
};

// Post-FEC BERs a degraded link may have: (0, 1e-2] (0 only from the optics
// store, for a port on watch without post-FEC errors measured).
inline constexpr double kMaxBer = 1e-2;

struct Options {
  std::vector<LinkFault> links;
  std::vector<int64_t> sizes;  // empty: compare's default sweep, stopping at the healthy plateau
  int64_t iterations = 5;      // measured iterations per size (nccl-tests -n), after 1 warm-up
  std::string train_model = "7b";  // train::FindModel name; "none": no training step
  std::vector<std::string> notes;  // said in the output (e.g. optics ports not modelled)
};

// Parses "LINK=BER" (the --degrade flag): InputError at ("<cli>", "--degrade")
// for a missing '=', a BER that is not a number or outside (0, kMaxBer].
LinkFault ParseDegrade(const std::string& text);

// Checks `o` against `s`'s topology: every link names a link (InputError at
// its `where`, naming the nearest link), none given twice, BERs in range,
// counts and the training model. Throws InputError.
void Check(const scenario::Scenario& s, const Options& o);

// Runs the three cases on `s` (`name`: the fabric's name in the output) on
// `nodes` nodes of s.clos.gpus_per_node GPUs and returns the
// lossless.whatif/1 document. Deterministic: the same inputs give the same
// document.
nlohmann::ordered_json Run(const scenario::Scenario& s, const std::string& name, int64_t nodes,
                           const Options& o);

// The document as a text table ending with the one-line answer.
std::string Text(const nlohmann::ordered_json& doc);

// The answer line from the busbw lost in the two faulted cases (percent; a
// case that could not complete its collectives is `failed`).
std::string Answer(double quarantined_lost_pct, bool quarantined_failed, double in_service_lost_pct,
                   bool in_service_failed, size_t degraded_links);

}  // namespace lossless::whatif
