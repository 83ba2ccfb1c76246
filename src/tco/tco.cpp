#include "tco/tco.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "profile/profile.hpp"

namespace lossless::tco {
namespace {

constexpr double kHoursPerYear = 8760;
constexpr double kAssumedSpread = 0.25;  // sensitivity range when the data gives none
constexpr size_t kSensitivityRows = 5;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The priced part of the model: everything that depends on prices, so the
// sensitivity runs can repeat it with one input changed.
struct Priced {
  int64_t mgmt_links = 0;
  std::vector<BomLine> bom;
  double capex = 0;
  double power_w = 0;
  std::vector<CostLine> annual;
  double annual_total = 0;
  double per_gpu_year = 0;
  double per_gpu_hour = 0;
};

Priced PriceIt(const Hardware& hw, const topology::Sizing& s, int64_t gpus, const PriceTable& t) {
  Priced out;
  if (hw.infiniband) out.mgmt_links = std::llround(t.Value("mgmt_links_ib"));
  const int64_t host_modules = gpus + out.mgmt_links;
  const int64_t switch_ports = s.switch_ports_used + out.mgmt_links;
  const int64_t switch_modules = CeilDiv(switch_ports, hw.ports_per_cage);
  const int64_t fibre_runs = s.links + out.mgmt_links;
  const double discount = t.Value("optics_third_party_discount");

  auto line = [&](const char* item, const std::string& part, int64_t count, bool optic,
                  bool powered) {
    BomLine b;
    b.item = item;
    b.part = part;
    b.count = count;
    const std::string price = "price_" + part;
    b.unit_usd = t.Value(price) * (optic ? 1.0 - discount : 1.0);
    b.inputs.push_back(price);
    if (optic) b.inputs.emplace_back("optics_third_party_discount");
    if (powered) {
      b.power_each_w = t.Value("power_" + part);
      b.inputs.push_back("power_" + part);
    }
    if (hw.infiniband &&
        (std::string(item) == "host optics" || std::string(item) == "switch optics" ||
         std::string(item) == "fibre runs")) {
      b.inputs.emplace_back("mgmt_links_ib");
    }
    b.total_usd = b.unit_usd * static_cast<double>(count);
    b.power_total_w = b.power_each_w * static_cast<double>(count);
    out.capex += b.total_usd;
    out.power_w += b.power_total_w;
    out.bom.push_back(std::move(b));
  };
  line("switches", hw.switch_part, s.switches, false, true);
  line("NICs", hw.nic_part, gpus, false, true);
  line("host optics", hw.host_optic_part, host_modules, true, true);
  line("switch optics", hw.switch_optic_part, switch_modules, true, true);
  line("fibre runs", "fibre", fibre_runs, false, false);

  std::vector<std::string> capex_inputs;
  std::vector<std::string> power_inputs;
  for (const auto& b : out.bom) {
    for (const auto& in : b.inputs) {
      if (in.rfind("power_", 0) == 0) {
        power_inputs.push_back(in);
      } else {
        capex_inputs.push_back(in);
      }
    }
  }
  const double years = t.Value("amortization_years_network");
  const double support = t.Value("support_pct_capex_per_year");
  const double pue = t.Value("pue");
  const double kwh = t.Value("electricity_price");
  const double fte_per_1024 = t.Value("ops_fte_per_1024_gpus");
  const double premium = hw.infiniband ? t.Value("ops_fte_premium_ib") : 0.0;
  const double fte = fte_per_1024 * static_cast<double>(gpus) / 1024.0 * (1.0 + premium);
  const double fte_cost = t.Value("ops_cost_per_fte");

  auto with = [](std::vector<std::string> v, std::initializer_list<const char*> more) {
    for (const char* m : more) v.emplace_back(m);
    return v;
  };
  out.annual.push_back({"amortization", fmt::format("capex over {:g} years", years),
                        out.capex / years, with(capex_inputs, {"amortization_years_network"})});
  out.annual.push_back({"support", fmt::format("{:g} % of capex per year", support * 100),
                        out.capex * support, with(capex_inputs, {"support_pct_capex_per_year"})});
  out.annual.push_back(
      {"energy",
       fmt::format("{:.1f} kW x PUE {:g} x 8,760 h x {:g} USD/kWh", out.power_w / 1000, pue, kwh),
       out.power_w / 1000 * pue * kHoursPerYear * kwh,
       with(power_inputs, {"pue", "electricity_price"})});
  std::vector<std::string> ops_inputs = {"ops_fte_per_1024_gpus", "ops_cost_per_fte"};
  if (hw.infiniband) ops_inputs.emplace_back("ops_fte_premium_ib");
  out.annual.push_back({"operations", fmt::format("{:.2f} network FTE x {:.0f} USD", fte, fte_cost),
                        fte * fte_cost, ops_inputs});
  const double energy_per_w = pue * kHoursPerYear * kwh / 1000;
  for (auto& b : out.bom)
    b.annual_usd = b.total_usd * (1.0 / years + support) + b.power_total_w * energy_per_w;
  for (const auto& c : out.annual) out.annual_total += c.usd_per_year;
  out.per_gpu_year = out.annual_total / static_cast<double>(gpus);
  out.per_gpu_hour =
      out.annual_total / (static_cast<double>(gpus) * kHoursPerYear * t.Value("utilization"));
  return out;
}

}  // namespace

Hardware PartsFor(bool infiniband, int64_t rate_gbps, const Location& where) {
  Hardware hw;
  hw.infiniband = infiniband;
  hw.rate_gbps = rate_gbps;
  hw.nic_part = fmt::format("nic_{}g", rate_gbps);
  hw.host_optic_part = fmt::format("optic_{}g_host", rate_gbps);
  if (infiniband) {
    // QM8700 40 x 200G (one port per QSFP56 cage); QM9700 32 twin-port OSFP
    // cages = 64 x 400G; Quantum-X800 144 x 800G in twin-port cages.
    if (rate_gbps == 200) {
      hw.switch_part = "switch_ib_hdr", hw.radix = 40, hw.ports_per_cage = 1;
    } else if (rate_gbps == 400) {
      hw.switch_part = "switch_ib_ndr", hw.radix = 64, hw.ports_per_cage = 2;
    } else if (rate_gbps == 800) {
      hw.switch_part = "switch_ib_xdr", hw.radix = 144, hw.ports_per_cage = 2;
    } else {
      throw InputError(where, Expected("an InfiniBand rate with parts: 200G (HDR), 400G (NDR) "
                                       "or 800G (XDR)",
                                       fmt::format("{}G", rate_gbps)));
    }
    hw.switch_optic_part = fmt::format("optic_{}g_switch", rate_gbps * hw.ports_per_cage);
    return hw;
  }
  if (rate_gbps != 100 && rate_gbps != 200 && rate_gbps != 400 && rate_gbps != 800) {
    throw InputError(where, Expected("an Ethernet rate with parts: 100G, 200G, 400G or 800G",
                                     fmt::format("{}G", rate_gbps)));
  }
  // 51.2 Tb/s switch: 64 x 800G OSFP cages, each split into 800/rate ports.
  hw.switch_part = "switch_eth_51t";
  hw.radix = static_cast<int>(51200 / rate_gbps);
  hw.ports_per_cage = static_cast<int>(800 / rate_gbps);
  hw.switch_optic_part = "optic_800g_switch";
  return hw;
}

Result Compute(const scenario::Scenario& profile, const std::string& profile_file, int64_t gpus,
               const PriceTable& prices, int64_t rate_gbps) {
  Result r;
  r.fabric = profile.name;
  r.profile_file = profile_file;
  r.cost_model = profile.cost_model;
  r.gpus = gpus;
  r.gpus_per_node = profile.clos.gpus_per_node;
  r.topology_kind = profile.topology_kind;
  r.oversubscription = profile.clos.oversubscription;
  r.utilization = prices.Value("utilization");
  const Location gpus_at{"<cli>", 0, "--gpus"};
  if (gpus < 1) throw InputError(gpus_at, Expected("at least 1 GPU", std::to_string(gpus)));
  if (gpus % r.gpus_per_node != 0) {
    throw InputError(gpus_at, Expected(fmt::format("a multiple of the profile's gpus_per_node ({})",
                                                   r.gpus_per_node),
                                       std::to_string(gpus)));
  }
  const bool ib = profile.net.ib.enabled;
  if (profile.preset == "raw") {
    throw InputError({profile_file, 0, "fabric.preset"},
                     "expected infiniband or roce for a priced fabric, got \"raw\"");
  }
  const int64_t profile_rate = std::llround(profile.clos.link_rate.gbps());
  const Location rate_at = rate_gbps > 0 ? Location{"<cli>", 0, "--rate"}
                                         : Location{profile_file, 0, "fabric.link_rate"};
  r.hw = PartsFor(ib, rate_gbps > 0 ? rate_gbps : profile_rate, rate_at);
  if (rate_gbps > 0 && rate_gbps != profile_rate) {
    r.notes.push_back(
        fmt::format("--rate {}g: priced with {} parts (radix {}) instead of the profile's {}G",
                    rate_gbps, r.hw.switch_part, r.hw.radix, profile_rate));
  } else if (profile.cost_model != "cloud" && profile.clos.radix != r.hw.radix) {
    r.notes.push_back(fmt::format("sized with the profile's radix {}; the {} has {} ports at {}G",
                                  profile.clos.radix, r.hw.switch_part, r.hw.radix, profile_rate));
    r.hw.radix = profile.clos.radix;
  }

  if (profile.cost_model == "cloud") {
    r.cloud_per_gpu_hour = prices.Value("cloud_price_gpu_hour");
    r.per_gpu_hour = r.cloud_per_gpu_hour;
    r.per_gpu_year = r.cloud_per_gpu_hour * kHoursPerYear * r.utilization;
    r.annual_usd = r.per_gpu_year * static_cast<double>(gpus);
    const bool server = prices.Value("server_capex_per_gpu") > 0;
    r.comparability = server ? "comparable with on-prem all-in figures (server capex given)"
                             : "not comparable (includes GPUs)";
    r.notes.emplace_back(
        "provider fabric: not sized or priced; the price per GPU-hour includes GPUs, hosts and "
        "network");
    for (const char* in : {"cloud_price_gpu_hour", "utilization"}) {
      const Price& p = prices.Get(in);
      if (p.grade == 'D')
        r.warnings.push_back(
            fmt::format("placeholder {} = {:g} {} (grade D) feeds: cost per GPU; "
                        "override it with --prices",
                        p.name, p.value, p.unit));
    }
  } else {
    topology::ClosParams p;
    p.gpus = gpus;
    p.radix = r.hw.radix;
    p.oversubscription = profile.clos.oversubscription;
    p.gpus_per_node = r.gpus_per_node;
    p.tiers = profile.topology_kind == "fat-tree" ? 3 : 0;
    const Location where{"<cli>", 0, ""};
    try {
      if (profile.topology_kind == "rail-optimized") {
        try {
          r.sizing = topology::SizeRailOptimized(p, where);
          // Whole scalable units, as the reference design provisions them: at
          // a few nodes that is far more than these GPUs need, so say so and
          // name the smallest non-blocking Clos beside it.
          const int64_t slots = r.sizing.leaves * r.sizing.down_per_leaf;
          if (gpus < slots) {
            topology::ClosParams clos = p;
            clos.tiers = 0;
            const topology::Sizing small = topology::SizeClos(clos, where);
            r.notes.push_back(fmt::format(
                "rail-optimized provisions whole scalable units (leaves and leaf-spine cables "
                "for {} nodes; NVIDIA DGX SuperPOD reference architecture): {} of {} node "
                "positions used here; the smallest non-blocking leaf-spine for {} GPUs takes "
                "{} switch(es) (--set topology.kind=leaf-spine)",
                slots / r.gpus_per_node, gpus / r.gpus_per_node, slots / r.gpus_per_node, gpus,
                small.switches));
          }
        } catch (const InputError&) {
          // Beyond two rail-optimized tiers: the pod-based three-tier fat tree
          // (docs/model/clos-sizing.md#three-tiers), rails kept inside each pod.
          r.sizing = topology::SizeClos(p, where);
          r.notes.push_back(fmt::format(
              "{} GPUs exceed a 2-tier rail-optimized fabric of radix {}: sized as a {}-tier "
              "pod-based fat tree (rails wired inside each pod)",
              gpus, r.hw.radix, r.sizing.tiers));
        }
      } else if (profile.topology_kind == "leaf-spine" || profile.topology_kind == "fat-tree") {
        r.sizing = topology::SizeClos(p, where);
      } else {
        throw InputError({profile_file, 0, "topology.kind"},
                         Expected("rail-optimized, leaf-spine or fat-tree for a priced fabric",
                                  profile.topology_kind));
      }
    } catch (const InputError& e) {
      if (e.where().file != "<cli>") throw;
      throw InputError(gpus_at, e.message());
    }
    const Priced base = PriceIt(r.hw, r.sizing, gpus, prices);
    r.mgmt_links = base.mgmt_links;
    r.bom = base.bom;
    r.capex_usd = base.capex;
    r.power_w = base.power_w;
    r.annual = base.annual;
    r.annual_usd = base.annual_total;
    r.per_gpu_year = base.per_gpu_year;
    r.per_gpu_hour = base.per_gpu_hour;
    const int64_t free_ports = r.sizing.leaves * r.sizing.down_per_leaf - gpus;
    if (r.mgmt_links > 0) {
      r.notes.push_back(fmt::format(
          "{} management links (UFM appliances, mgmt_links_ib) counted on leaf ports, with their "
          "optics and fibre",
          r.mgmt_links));
      if (r.mgmt_links > free_ports) {
        r.warnings.push_back(fmt::format(
            "the {} management links need {} free leaf ports and the leaves have {}: NVIDIA's "
            "reference design gives up one node position (31 nodes per 32-node SU)",
            r.mgmt_links, r.mgmt_links, free_ports));
      }
    }
    r.notes.push_back(
        "all links optical: a single-port module at each NIC, the switch-side modules serve " +
        std::to_string(r.hw.ports_per_cage) +
        " port(s) each; fabric only (no GPUs, servers, "
        "racks or UFM appliances)");

    // Server capex: all-in figures and the sanity band of the network's share.
    const double server = prices.Value("server_capex_per_gpu");
    if (server > 0) {
      const double server_year =
          server * static_cast<double>(gpus) / prices.Value("amortization_years_server");
      r.all_in_per_gpu_hour = (r.annual_usd + server_year) /
                              (static_cast<double>(gpus) * kHoursPerYear * r.utilization);
      r.network_share = r.capex_usd / (r.capex_usd + server * static_cast<double>(gpus));
      const double lo = prices.Value("network_share_band_low");
      const double hi = prices.Value("network_share_band_high");
      if (*r.network_share < lo || *r.network_share > hi) {
        r.warnings.push_back(fmt::format(
            "the network is {:.1f} % of fabric + server capex, outside the {:g}-{:g} % seen in "
            "published builds: check the prices",
            *r.network_share * 100, lo * 100, hi * 100));
      }
    }

    // Sensitivity: each input the result used, over its range.
    std::set<std::string> used;
    for (const auto& c : r.annual) used.insert(c.inputs.begin(), c.inputs.end());
    used.insert("utilization");
    for (const auto& name : used) {
      const Price& pr = prices.Get(name);
      Sensitivity sv;
      sv.input = name;
      sv.assumed_range = !pr.low.has_value() && !pr.high.has_value();
      sv.low = pr.low.value_or(pr.value * (1 - kAssumedSpread));
      sv.high = pr.high.value_or(pr.value * (1 + kAssumedSpread));
      if (pr.overridden && sv.assumed_range) {
        sv.low = pr.value * (1 - kAssumedSpread);
        sv.high = pr.value * (1 + kAssumedSpread);
      }
      if (name == "utilization") sv.high = std::min(sv.high, 1.0);
      if (name == "mgmt_links_ib" || sv.low == sv.high) continue;
      PriceTable t = prices;
      t.Assume(name, sv.low);
      sv.result_low = PriceIt(r.hw, r.sizing, gpus, t).per_gpu_year;
      t.Assume(name, sv.high);
      sv.result_high = PriceIt(r.hw, r.sizing, gpus, t).per_gpu_year;
      if (sv.result_low == sv.result_high) continue;
      r.sensitivity.push_back(sv);
    }
    std::stable_sort(
        r.sensitivity.begin(), r.sensitivity.end(), [](const Sensitivity& a, const Sensitivity& b) {
          return std::abs(a.result_high - a.result_low) > std::abs(b.result_high - b.result_low);
        });
    if (r.sensitivity.size() > kSensitivityRows) r.sensitivity.resize(kSensitivityRows);

    // Every result still depending on a grade-D placeholder.
    std::map<std::string, std::vector<std::string>> feeds;
    for (const auto& b : r.bom)
      for (const auto& in : b.inputs) feeds[in].push_back(b.item);
    for (const auto& c : r.annual)
      for (const auto& in : c.inputs)
        if (std::find(feeds[in].begin(), feeds[in].end(), c.item) == feeds[in].end())
          feeds[in].push_back(c.item);
    feeds["utilization"].push_back("cost per GPU-hour");
    for (auto& [name, results] : feeds) {
      const Price& pr = prices.Get(name);
      if (pr.grade != 'D') continue;
      std::string list;
      for (const auto& x : results) list += (list.empty() ? "" : ", ") + x;
      r.warnings.push_back(fmt::format(
          "placeholder {} = {:g} {} (grade D) feeds: {}, cost per GPU; override it with --prices",
          name, pr.value, pr.unit, list));
    }
  }
  for (const auto& p : prices.entries())
    if (p.overridden) r.overridden.push_back(p);
  return r;
}

Result Run(const Options& o) {
  int64_t rate = 0;
  if (!o.rate.empty()) {
    static const std::regex kRate(R"(^(100|200|400|800)[gG]$)");
    std::smatch m;
    if (!std::regex_match(o.rate, m, kRate)) {
      throw InputError({"<cli>", 0, "--rate"}, Expected("400g or 800g (also 100g, 200g)", o.rate));
    }
    rate = std::stoll(m[1].str());
  }
  std::string path;
  profile::ProfileText(o.fabric, &path, {"<cli>", 0, "--fabric"});
  const scenario::Scenario s = profile::Load(o.fabric, 0, o.sets, {"<cli>", 0, "--fabric"});
  PriceTable prices = PriceTable::Defaults();
  if (!o.prices_file.empty()) prices.OverrideFile(o.prices_file);
  if (o.server_capex >= 0)
    prices.Set("server_capex_per_gpu", o.server_capex, {"<cli>", 0, "--server-capex"});
  return Compute(s, path, o.gpus, prices, rate);
}

namespace {

// The part of the annual cost that scales with hardware prices.
double HardwareShare(const Result& r) {
  double v = 0;
  for (const CostLine& c : r.annual)
    if (c.item == "amortization" || c.item == "support") v += c.usd_per_year;
  return v;
}

}  // namespace

SavingWindow SavingUnderPrices(const Result& ib, const Result& eth, double lo, double hi) {
  SavingWindow w;
  const double i = ib.annual_usd, e = eth.annual_usd;
  if (i <= 0 || e <= 0) return w;
  w.saving = 1 - e / i;
  // eth(m) = m x Eh + (e - Eh) in [(1 - hi) i, (1 - lo) i]
  const double eh = HardwareShare(eth), ih = HardwareShare(ib);
  if (eh > 0) {
    w.eth_low = std::max(0.0, ((1 - hi) * i - (e - eh)) / eh);
    w.eth_high = std::max(0.0, ((1 - lo) * i - (e - eh)) / eh);
  }
  // ib(k) = k x Ih + (i - Ih) in [e / (1 - lo), e / (1 - hi)]
  if (ih > 0) {
    w.ib_low = std::max(0.0, (e / (1 - lo) - (i - ih)) / ih);
    w.ib_high = std::max(0.0, (e / (1 - hi) - (i - ih)) / ih);
  }
  return w;
}

}  // namespace lossless::tco
