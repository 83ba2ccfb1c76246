// Text and JSON renderings of a TCO result.
#include <cmath>

#include <fmt/format.h>

#include "tco/tco.hpp"

namespace lossless::tco {
namespace {

// Digits in groups of three: "1234567" -> "1,234,567".
std::string Group(const std::string& digits) {
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Count(int64_t n) {
  std::string out = Group(std::to_string(n < 0 ? -n : n));
  if (n < 0) out.insert(out.begin(), '-');
  return out;
}

// 1234567.8 -> "1,234,568"; values under 100 keep two decimals ("0.21").
std::string Money(double x) {
  if (std::abs(x) < 100) return fmt::format("{:.2f}", x);
  std::string out = Group(fmt::format("{:.0f}", std::abs(x)));
  if (x < 0) out.insert(out.begin(), '-');
  return out;
}

}  // namespace

std::string ResultText(const Result& r) {
  std::string o;
  o += fmt::format("lossless tco: {} ({}), {} GPUs = {} nodes x {}, {}G per GPU, {}\n", r.fabric,
                   r.profile_file, Count(r.gpus), Count(r.gpus / r.gpus_per_node), r.gpus_per_node,
                   r.hw.rate_gbps, r.hw.infiniband ? "InfiniBand" : "Ethernet");
  if (r.cost_model == "cloud") {
    o += fmt::format("cost model: cloud, {} USD per GPU-hour, GPUs included: {}\n",
                     Money(r.cloud_per_gpu_hour), r.comparability);
    o +=
        fmt::format("cost per GPU per year: {} USD at utilization {:g}; {} GPUs: {} USD per year\n",
                    Money(r.per_gpu_year), r.utilization, Count(r.gpus), Money(r.annual_usd));
  } else {
    const topology::Sizing& s = r.sizing;
    std::string layers = fmt::format("{} leaves", Count(s.leaves));
    if (s.spines > 0) layers += fmt::format(", {} spines", Count(s.spines));
    if (s.cores > 0) layers += fmt::format(", {} cores", Count(s.cores));
    o += fmt::format("fabric: {} tier(s), {}{}: {} ({} switches of radix {})\n", s.tiers,
                     r.topology_kind,
                     r.oversubscription != 1 ? fmt::format(" {:g}:1", r.oversubscription) : "",
                     layers, Count(s.switches), r.hw.radix);
    o += fmt::format(
        "links: {} host{}, {} leaf-spine{}; {} switch ports used\n", Count(s.host_links),
        r.mgmt_links > 0 ? fmt::format(" + {} management", r.mgmt_links) : "",
        Count(s.leaf_spine_links),
        s.spine_core_links > 0 ? fmt::format(", {} spine-core", Count(s.spine_core_links)) : "",
        Count(s.switch_ports_used + r.mgmt_links));
    o += fmt::format("\n{:<36} {:>9} {:>10} {:>14} {:>10}\n", "bill of materials", "count",
                     "unit USD", "total USD", "power W");
    for (const auto& b : r.bom) {
      o += fmt::format("  {:<34} {:>9} {:>10} {:>14} {:>10}\n",
                       fmt::format("{} ({})", b.item, b.part), Count(b.count), Money(b.unit_usd),
                       Money(b.total_usd), Money(b.power_total_w));
    }
    o += fmt::format("  {:<34} {:>9} {:>10} {:>14} {:>10}\n", "capex, power", "", "",
                     Money(r.capex_usd), Money(r.power_w));
    o += fmt::format("\n{:<60} {:>14}\n", "annual cost", "USD / year");
    for (const auto& c : r.annual) {
      o += fmt::format("  {:<58} {:>14}\n", fmt::format("{} ({})", c.item, c.detail),
                       Money(c.usd_per_year));
    }
    o += fmt::format("  {:<58} {:>14}\n", "total", Money(r.annual_usd));
    o += fmt::format(
        "\ncost per GPU per year: {} USD; per GPU-hour: {} USD at utilization {:g} (fabric only)\n",
        Money(r.per_gpu_year), fmt::format("{:.3f}", r.per_gpu_hour), r.utilization);
    if (r.all_in_per_gpu_hour) {
      o += fmt::format(
          "all-in with servers: {:.3f} USD per GPU-hour (network {:.1f} % of capex); comparable "
          "with a cloud price per GPU-hour\n",
          *r.all_in_per_gpu_hour, *r.network_share * 100);
    } else {
      o += "all-in: no server capex given (--server-capex): not comparable with cloud prices, "
           "which include GPUs\n";
    }
    if (!r.sensitivity.empty()) {
      o += "\nsensitivity (cost per GPU per year with one input at its low .. high):\n";
      for (const auto& sv : r.sensitivity) {
        o += fmt::format("  {:<34} {:>10} .. {:<10} -> {} .. {} USD{}\n", sv.input,
                         fmt::format("{:g}", sv.low), fmt::format("{:g}", sv.high),
                         Money(sv.result_low), Money(sv.result_high),
                         sv.assumed_range ? "  (no range in the data: +-25 %)" : "");
      }
    }
  }
  if (!r.overridden.empty()) {
    o += "\noverridden:\n";
    for (const auto& p : r.overridden) {
      o += fmt::format("  {} = {:g} {} (default {:g}) from {}{}\n", p.name, p.value, p.unit,
                       p.default_value, p.where.file,
                       p.where.line > 0 ? fmt::format(":{}", p.where.line) : "");
    }
  }
  if (!r.notes.empty()) {
    o += "\nnotes:\n";
    for (const auto& n : r.notes) o += "  " + n + "\n";
  }
  return o;
}

nlohmann::json ResultJson(const Result& r) {
  using nlohmann::json;
  json j;
  j["schema"] = "lossless.tco/1";
  j["fabric"] = r.fabric;
  j["profile_file"] = r.profile_file;
  j["cost_model"] = r.cost_model;
  j["gpus"] = r.gpus;
  j["gpus_per_node"] = r.gpus_per_node;
  j["link"] = {{"infiniband", r.hw.infiniband},
               {"rate_gbps", r.hw.rate_gbps},
               {"switch", r.hw.switch_part},
               {"radix", r.hw.radix},
               {"ports_per_switch_module", r.hw.ports_per_cage}};
  j["per_gpu_year_usd"] = r.per_gpu_year;
  j["per_gpu_hour_usd"] = r.per_gpu_hour;
  j["annual_usd"] = r.annual_usd;
  j["utilization"] = r.utilization;
  if (r.cost_model == "cloud") {
    j["cloud"] = {{"price_per_gpu_hour_usd", r.cloud_per_gpu_hour},
                  {"comparability", r.comparability}};
  } else {
    const topology::Sizing& s = r.sizing;
    j["topology"] = {{"kind", r.topology_kind},
                     {"oversubscription", r.oversubscription},
                     {"tiers", s.tiers},
                     {"leaves", s.leaves},
                     {"spines", s.spines},
                     {"cores", s.cores},
                     {"switches", s.switches},
                     {"host_links", s.host_links},
                     {"management_links", r.mgmt_links},
                     {"leaf_spine_links", s.leaf_spine_links},
                     {"spine_core_links", s.spine_core_links},
                     {"switch_ports_used", s.switch_ports_used + r.mgmt_links}};
    json bom = json::array();
    for (const auto& b : r.bom) {
      bom.push_back({{"item", b.item},
                     {"part", b.part},
                     {"count", b.count},
                     {"unit_usd", b.unit_usd},
                     {"total_usd", b.total_usd},
                     {"power_each_w", b.power_each_w},
                     {"power_total_w", b.power_total_w},
                     {"annual_usd", b.annual_usd},
                     {"inputs", b.inputs}});
    }
    j["bom"] = bom;
    j["capex_usd"] = r.capex_usd;
    j["power_w"] = r.power_w;
    json annual = json::array();
    for (const auto& c : r.annual) {
      annual.push_back({{"item", c.item},
                        {"detail", c.detail},
                        {"usd_per_year", c.usd_per_year},
                        {"inputs", c.inputs}});
    }
    j["annual"] = annual;
    j["all_in_per_gpu_hour_usd"] =
        r.all_in_per_gpu_hour ? json(*r.all_in_per_gpu_hour) : json(nullptr);
    j["network_share_of_capex"] = r.network_share ? json(*r.network_share) : json(nullptr);
    json sens = json::array();
    for (const auto& sv : r.sensitivity) {
      sens.push_back({{"input", sv.input},
                      {"low", sv.low},
                      {"high", sv.high},
                      {"assumed_range", sv.assumed_range},
                      {"per_gpu_year_low_usd", sv.result_low},
                      {"per_gpu_year_high_usd", sv.result_high}});
    }
    j["sensitivity"] = sens;
  }
  json over = json::array();
  for (const auto& p : r.overridden) {
    over.push_back({{"name", p.name},
                    {"value", p.value},
                    {"default", p.default_value},
                    {"unit", p.unit},
                    {"file", p.where.file},
                    {"line", p.where.line}});
  }
  j["overridden"] = over;
  j["notes"] = r.notes;
  j["warnings"] = r.warnings;
  return j;
}

}  // namespace lossless::tco
