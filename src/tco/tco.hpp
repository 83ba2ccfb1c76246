#pragma once
// Total cost of ownership of a fabric (docs/tco.md): sizes it with the
// topology module's Clos sizing (one source of truth, docs/model/clos-sizing.md),
// lists the bill of materials (switches, NICs, optics, fibre runs), prices it
// from a PriceTable and gives capex, power, the annual cost (amortization,
// support, energy with PUE, operations) and the cost per GPU. Savings between
// fabrics come only from these lines: no ratio between fabrics is an input.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "tco/prices.hpp"
#include "topology/topology.hpp"

namespace lossless::tco {

// What `lossless tco` asks for.
struct Options {
  int64_t gpus = 0;
  std::string fabric;             // profile name or file
  std::string prices_file;        // "" = defaults only
  std::string rate;               // "" = the profile's; else 100g | 200g | 400g | 800g
  double server_capex = -1;       // USD per GPU; < 0 = not given on the command line
  std::vector<std::string> sets;  // profile overrides "a.b=v" (e.g. topology.kind=leaf-spine)
};

// The parts a fabric is built from, by link layer and per-GPU rate.
struct Hardware {
  bool infiniband = false;
  int64_t rate_gbps = 0;
  int radix = 0;           // switch ports at the host rate
  int ports_per_cage = 1;  // h: logical ports one switch-side module serves
  std::string switch_part, nic_part, host_optic_part,
      switch_optic_part;  // price names without prefix
};

// Hardware of a link layer at a rate (InputError at `where` for a rate that has
// no part: InfiniBand 200/400/800G (HDR/NDR/XDR), Ethernet 100-800G on 51.2T switches).
Hardware PartsFor(bool infiniband, int64_t rate_gbps, const Location& where);

struct BomLine {
  std::string item;  // "switches", "NICs", "host optics", "switch optics", "fibre runs"
  std::string part;  // "switch_ib_ndr", ...
  int64_t count = 0;
  double unit_usd = 0;
  double total_usd = 0;
  double power_each_w = 0;
  double power_total_w = 0;
  // This line's share of the annual cost: amortization and support of its
  // capex plus the energy of its power. The lines' shares plus operations
  // make the annual total, so two fabrics compare line by line (switches,
  // optics, power, operations apart), never by a fixed ratio.
  double annual_usd = 0;
  std::vector<std::string> inputs;  // price entries this line used
};

struct CostLine {
  std::string item;  // "amortization", "support", "energy", "operations"
  std::string detail;
  double usd_per_year = 0;
  std::vector<std::string> inputs;
};

struct Sensitivity {
  std::string input;
  double low = 0, high = 0;
  bool assumed_range = false;              // no range in the data: value -25 % .. +25 %
  double result_low = 0, result_high = 0;  // cost per GPU per year
};

struct Result {
  std::string fabric;        // profile name
  std::string profile_file;  // e.g. profiles/ib-ndr.yaml
  std::string cost_model;    // on-prem | cloud
  int64_t gpus = 0;
  int gpus_per_node = 8;
  Hardware hw;
  std::string topology_kind;
  double oversubscription = 1;
  topology::Sizing sizing;
  int64_t mgmt_links = 0;
  std::vector<BomLine> bom;
  double capex_usd = 0;
  double power_w = 0;
  std::vector<CostLine> annual;
  double annual_usd = 0;
  double per_gpu_year = 0;
  double per_gpu_hour = 0;
  double utilization = 1;
  // With a server capex: fabric plus servers per GPU-hour, and the network's share of capex.
  std::optional<double> all_in_per_gpu_hour;
  std::optional<double> network_share;
  // Cloud profiles: the provider's price (GPUs included).
  double cloud_per_gpu_hour = 0;
  std::string comparability;
  std::vector<Price> overridden;
  std::vector<Sensitivity> sensitivity;  // largest swing first, at most 5
  std::vector<std::string> notes;        // approximations stated with the result
  std::vector<std::string> warnings;     // grade-D placeholders still used, sanity bands
};

// Under which hardware prices a saving of `eth` against `ib` falls in [lo,
// hi] (fractions, e.g. 0.30 and 0.50 for "30-50 % cheaper"): the factor on
// every hardware price of one fabric (switches, NICs, optics, fibre: what
// amortization and support scale with), the other fabric, energy and
// operations unchanged. A bound below 0 is unreachable by prices alone; the
// factor range is then clipped at 0 (empty when the upper bound is < 0).
struct SavingWindow {
  double saving = 0;                  // 1 - eth / ib at the prices used
  double eth_low = 0, eth_high = 0;   // Ethernet hardware x [low, high]
  double ib_low = 0, ib_high = 0;     // InfiniBand hardware x [low, high]
};
SavingWindow SavingUnderPrices(const Result& ib, const Result& eth, double lo, double hi);

// The model for a loaded profile: `gpus` GPUs (a multiple of the profile's
// gpus_per_node), hardware from the profile's link layer and rate (or
// `rate_gbps` > 0), prices from `prices`. Throws InputError for a GPU count no
// topology of that radix can host (field --gpus) or a rate without parts.
Result Compute(const scenario::Scenario& profile, const std::string& profile_file, int64_t gpus,
               const PriceTable& prices, int64_t rate_gbps = 0);

// Loads the profile and the prices (defaults, then --prices, then
// --server-capex) and computes. All bad input is InputError.
Result Run(const Options& o);

std::string ResultText(const Result& r);
// {"schema": "lossless.tco/1", ...}; same input, same bytes.
nlohmann::json ResultJson(const Result& r);

}  // namespace lossless::tco
