#include "whatif/whatif.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "compare/compare.hpp"
#include "lossless/version.hpp"
#include "perf/result.hpp"
#include "topology/topology.hpp"
#include "train/model.hpp"

namespace lossless::whatif {
namespace {

using nlohmann::ordered_json;

struct Case {
  const char* key;    // JSON
  const char* label;  // text column
  const char* what;
};
constexpr Case kCases[] = {
    {"healthy", "HEALTHY", "no fault"},
    {"in_service", "IN SERVICE", "degraded links left in service at their post-FEC BER; down links down"},
    {"quarantined", "QUARANTINED", "degraded links taken out (down, rerouted); down links down"},
};

ordered_json Num(double v, int digits) {
  if (!std::isfinite(v)) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

std::string SizeLabel(int64_t b) {
  if (b >= (int64_t{1} << 30) && b % (int64_t{1} << 30) == 0) return fmt::format("{} GiB", b >> 30);
  if (b >= (int64_t{1} << 20) && b % (int64_t{1} << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

// The case's scenario: `s` with the faults of case `k` (0 healthy, 1 in
// service, 2 quarantined) and the reroute already done.
scenario::Scenario CaseScenario(const scenario::Scenario& s, const Options& o, int k) {
  scenario::Scenario c = s;
  if (k == 0) return c;
  c.reroute_ib = units::Time::Zero();
  c.reroute_ethernet = units::Time::Zero();
  for (const LinkFault& l : o.links) {
    if (l.down || k == 2) {
      scenario::LinkDownFault d;
      d.link = l.link;
      d.at = units::Time::Zero();
      d.where = l.where;
      c.link_down.push_back(d);
    } else if (l.ber > 0) {
      scenario::LinkLossFault f;
      f.link = l.link;
      f.loss.ber = l.ber;
      f.ber_given = true;
      f.where = l.where;
      c.link_loss.push_back(f);
    }
  }
  return c;
}

double Ms(units::Time t) { return static_cast<double>(t.ps()) / 1e9; }

}  // namespace

LinkFault ParseDegrade(const std::string& text) {
  const Location where{"<cli>", 0, "--degrade"};
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InputError(where, Expected("LINK=BER, e.g. leaf0-spine0#1=1e-7", text));
  const std::string num = text.substr(eq + 1);
  char* end = nullptr;
  const double ber = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(ber))
    throw InputError(where, Expected("a post-FEC bit error rate after '=', e.g. 1e-7", num));
  if (!(ber > 0 && ber <= kMaxBer))
    throw InputError(where, fmt::format("expected a post-FEC BER in (0, {:g}] for {}, got {}", kMaxBer,
                                        text.substr(0, eq), num));
  LinkFault l;
  l.link = text.substr(0, eq);
  l.ber = ber;
  l.source = "--degrade";
  l.where = where;
  return l;
}

void Check(const scenario::Scenario& s, const Options& o) {
  const topology::Topology t = scenario::BuildTopology(s);
  std::map<uint32_t, std::string> seen;
  for (const LinkFault& l : o.links) {
    const uint32_t id = scenario::FindLink(l.link, t, l.where);
    if (!l.down && !(l.ber >= 0 && l.ber <= kMaxBer))
      throw InputError(l.where, fmt::format("expected a post-FEC BER in (0, {:g}] for {}, got {:g}",
                                            kMaxBer, l.link, l.ber));
    auto [it, fresh] = seen.emplace(id, l.link);
    if (!fresh)
      throw InputError(l.where, fmt::format("expected each link once, got {} and {} (the same link)",
                                            it->second, l.link));
  }
  if (o.iterations < 1) throw InputError({"<cli>", 0, "--iterations"}, "expected at least 1 iteration");
  for (int64_t b : o.sizes)
    if (b <= 0 || b > (int64_t{16} << 30))
      throw InputError({"<cli>", 0, "--sizes"}, fmt::format("expected sizes from 1 B to 16 GiB, got {} B", b));
  if (o.train_model != "none") train::FindModel(o.train_model, "--train-model");
}

std::string Answer(double quarantined_lost_pct, bool quarantined_failed, double in_service_lost_pct,
                   bool in_service_failed, size_t degraded_links) {
  if (degraded_links == 0) {
    if (quarantined_failed) return "the down links stop the all-reduce: it cannot complete without them";
    return fmt::format(
        "nothing to decide (no degraded link given): the down links cost {:.1f} % busbw",
        quarantined_lost_pct);
  }
  const std::string them = degraded_links == 1 ? "the link" : fmt::format("the {} links", degraded_links);
  if (quarantined_failed && in_service_failed)
    return fmt::format("neither works: the all-reduce fails with {} in service and with {} taken out", them,
                       them);
  if (quarantined_failed)
    return fmt::format(
        "wait for the maintenance window: taking {} out stops the all-reduce (no path left), left in "
        "service it loses {:.1f} % busbw",
        them, in_service_lost_pct);
  if (in_service_failed)
    return fmt::format(
        "quarantine now: {:.1f} % busbw lost vs the all-reduce failing with {} left in service",
        quarantined_lost_pct, them);
  const double q = std::round(quarantined_lost_pct * 10) / 10;
  const double k = std::round(in_service_lost_pct * 10) / 10;
  if (q < k)
    return fmt::format(
        "quarantine now: {:.1f} % busbw lost vs {:.1f} % left in service (taking {} out costs {:.1f} "
        "points less)",
        q, k, them, k - q);
  if (q > k)
    return fmt::format(
        "wait for the maintenance window: {:.1f} % busbw lost left in service vs {:.1f} % if quarantined "
        "now (leaving {} in costs {:.1f} points less)",
        k, q, them, q - k);
  return fmt::format(
      "either: {:.1f} % busbw lost quarantined vs {:.1f} % left in service, the same to 0.1 %", q, k);
}

ordered_json Run(const scenario::Scenario& s, const std::string& name, int64_t nodes, const Options& o) {
  Check(s, o);
  const int64_t g = s.clos.gpus_per_node;
  const int64_t ranks = nodes * g;
  const topology::Topology topo = scenario::BuildTopology(s);
  ordered_json doc;
  doc["schema"] = "lossless.whatif/1";
  doc["lossless_version"] = kVersion;
  doc["fabric"] = name;
  doc["topology"] = topo.description;
  doc["nodes"] = nodes;
  doc["gpus_per_node"] = g;
  doc["link_layer"] = s.net.ib.enabled ? "infiniband" : "ethernet";
  doc["seed"] = s.seed;
  doc["iterations"] = o.iterations;
  doc["transport_timeout_exp"] = s.net.rc.timeout_exp;
  doc["reroute"] =
      "done before the first packet (faults.reroute.* = 0): the steady state after the control plane "
      "routed around the down links";
  ordered_json links = ordered_json::array();
  size_t degraded = 0;
  for (const LinkFault& l : o.links) {
    ordered_json e;
    e["link"] = l.link;
    e["kind"] = l.down ? "down" : "degraded";
    e["ber"] = l.down ? ordered_json(nullptr) : ordered_json(l.ber);
    e["in_service"] = l.down ? "down" : (l.ber > 0 ? fmt::format("post-FEC BER {:g}", l.ber)
                                                   : std::string("no post-FEC errors measured: healthy"));
    e["quarantined"] = "down";
    e["source"] = l.source;
    links.push_back(std::move(e));
    if (!l.down) ++degraded;
  }
  doc["links"] = std::move(links);

  // The healthy sweep decides the sizes; the faulted cases run the same ones.
  const bool plateau = o.sizes.empty();
  const std::vector<int64_t> default_sizes = plateau ? compare::DefaultSweepSizes(false) : o.sizes;
  std::vector<compare::SweepOutcome> sweeps;
  std::vector<compare::TrainOutcome> trains;
  std::vector<int64_t> sizes;
  for (int k = 0; k < 3; ++k) {
    const scenario::Scenario c = CaseScenario(s, o, k);
    sweeps.push_back(compare::RunAllReduceSweep(c, name, nodes, k == 0 ? default_sizes : sizes, o.iterations,
                                                k == 0 && plateau));
    if (k == 0)
      for (const perf::SizeResult& r : sweeps[0].sweep.sizes) sizes.push_back(r.counts.size_bytes);
    if (o.train_model != "none") trains.push_back(compare::RunTrainStep(c, name, o.train_model, nodes));
  }
  doc["sizes"] = sizes;
  doc["sweep_stopped_at_plateau"] = plateau;
  const int64_t largest = sizes.empty() ? 0 : sizes.back();
  // -1: no row (the size failed or did not run).
  auto busbw_at = [&](int k, int64_t b) {
    return compare::BusbwAt(sweeps[static_cast<size_t>(k)].sweep, b, ranks).value_or(-1.0);
  };
  const double healthy_busbw = largest ? busbw_at(0, largest) : -1.0;
  ordered_json cases = ordered_json::array();
  double lost[3] = {0, 0, 0};
  bool failed[3] = {false, false, false};
  for (int k = 0; k < 3; ++k) {
    ordered_json c;
    c["case"] = kCases[k].key;
    c["what"] = kCases[k].what;
    ordered_json rows = ordered_json::array();
    for (int64_t b : sizes) {
      const double v = busbw_at(k, b);
      rows.push_back({{"bytes", b}, {"busbw_gbs", v >= 0 ? Num(v, 2) : ordered_json(nullptr)}});
    }
    c["sweep"] = std::move(rows);
    const double v = largest ? busbw_at(k, largest) : -1.0;
    failed[k] = !sweeps[static_cast<size_t>(k)].failure.empty() || v < 0;
    const std::string& failure = sweeps[static_cast<size_t>(k)].failure;
    c["failure"] = failure.empty() ? ordered_json(nullptr) : ordered_json(failure);
    c["busbw_gbs"] = v >= 0 ? Num(v, 2) : ordered_json(nullptr);
    c["frames_dropped"] = sweeps[static_cast<size_t>(k)].drops;
    c["packets_resent"] = sweeps[static_cast<size_t>(k)].retransmissions;
    if (v >= 0 && healthy_busbw > 0) {
      lost[k] = 100 * (1 - v / healthy_busbw);
      c["busbw_lost_pct"] = Num(lost[k], 2);
    } else {
      c["busbw_lost_pct"] = nullptr;
    }
    if (o.train_model != "none") {
      const compare::TrainOutcome& t = trains[static_cast<size_t>(k)];
      if (!t.failure.empty() || t.result.steps.empty()) {
        c["train"] = {{"failure", t.failure.empty() ? "no step completed" : t.failure}};
      } else {
        const train::StepTimes& st = t.result.steps[0].times;
        ordered_json tj;
        tj["step_ms"] = Num(Ms(st.step), 3);
        tj["exposed_comm_ms"] = Num(Ms(st.exposed), 3);
        tj["mfu_pct"] = Num(100 * t.result.steps[0].mfu, 2);
        if (!trains[0].result.steps.empty() && trains[0].failure.empty()) {
          const double h = Ms(trains[0].result.steps[0].times.step);
          tj["step_increase_pct"] = h > 0 ? Num(100 * (Ms(st.step) / h - 1), 2) : ordered_json(nullptr);
        }
        c["train"] = std::move(tj);
      }
    }
    cases.push_back(std::move(c));
  }
  doc["cases"] = std::move(cases);
  if (o.train_model != "none") {
    const train::ModelSpec m = train::FindModel(o.train_model, "--train-model");
    doc["train_step"] = fmt::format("one FSDP step of {} on {} H100 GPUs (compare's training case)",
                                    m.source.substr(0, m.source.find(" (")), ranks);
  } else {
    doc["train_step"] = nullptr;
  }
  ordered_json answer;
  answer["degraded_links"] = degraded;
  answer["in_service_lost_pct"] = failed[1] ? ordered_json(nullptr) : Num(lost[1], 2);
  answer["quarantined_lost_pct"] = failed[2] ? ordered_json(nullptr) : Num(lost[2], 2);
  std::string better = "same";
  if (degraded > 0) {
    if (failed[1] != failed[2]) better = failed[1] ? "quarantine" : "in_service";
    else if (!failed[1]) {
      const double q = std::round(lost[2] * 10) / 10, k = std::round(lost[1] * 10) / 10;
      better = q < k ? "quarantine" : (q > k ? "in_service" : "same");
    }
  }
  answer["better"] = better;
  std::string text = failed[0] ? "the healthy fabric could not complete the all-reduce: no answer"
                               : Answer(lost[2], failed[2], lost[1], failed[1], degraded);
  if (!failed[0] && o.train_model != "none") {
    const auto& cs = doc["cases"];
    if (cs[1]["train"].contains("step_increase_pct") && cs[2]["train"].contains("step_increase_pct") &&
        !cs[1]["train"]["step_increase_pct"].is_null() && !cs[2]["train"]["step_increase_pct"].is_null())
      text += fmt::format("; training step +{:.1f} % left in service, +{:.1f} % quarantined",
                          cs[1]["train"]["step_increase_pct"].get<double>(),
                          cs[2]["train"]["step_increase_pct"].get<double>());
  }
  answer["text"] = text;
  doc["answer"] = std::move(answer);
  std::vector<std::string> notes = o.notes;
  bool lossy = false;
  for (const LinkFault& l : o.links) lossy = lossy || (!l.down && l.ber > 0);
  if (lossy && sweeps[1].drops == 0)
    notes.emplace_back(
        "the degraded links lost no frame in service: at their BER the bits the sweep sent over them "
        "drew no error, or its traffic did not cross them (a rail-optimized fabric keeps one scalable "
        "unit's traffic on its rail leaves; lossless links lists the links)");
  doc["notes"] = notes;
  return doc;
}

std::string Text(const ordered_json& doc) {
  std::string out;
  out += fmt::format("# what-if: {}, {} nodes x {} GPUs, {}\n", doc["fabric"].get<std::string>(),
                     doc["nodes"].get<int64_t>(), doc["gpus_per_node"].get<int64_t>(),
                     doc["topology"].get<std::string>());
  out += fmt::format("# links down are down from t = 0, rerouted at once (the steady state after the {} "
                     "reroute); transport.timeout {}\n",
                     doc["link_layer"].get<std::string>() == "infiniband" ? "subnet manager's" : "routing's",
                     doc["transport_timeout_exp"].get<int>());
  for (const auto& l : doc["links"]) {
    out += fmt::format("# {:<18} in service: {}; quarantined: down   ({})\n", l["link"].get<std::string>(),
                       l["in_service"].get<std::string>(), l["source"].get<std::string>());
  }
  for (const auto& n : doc["notes"]) out += "# note: " + n.get<std::string>() + "\n";
  const auto& cases = doc["cases"];
  out += fmt::format("{:<34}{:>14}{:>14}{:>14}\n", "all_reduce busbw (GB/s)", kCases[0].label, kCases[1].label,
                     kCases[2].label);
  auto cell = [](const ordered_json& v, const char* fmtstr) {
    return v.is_null() ? std::string("-") : fmt::format(fmt::runtime(fmtstr), v.get<double>());
  };
  const auto& sizes = doc["sizes"];
  for (size_t i = 0; i < sizes.size(); ++i) {
    out += fmt::format("{:<34}", "  " + SizeLabel(sizes[i].get<int64_t>()));
    for (const auto& c : cases) out += fmt::format("{:>14}", cell(c["sweep"][i]["busbw_gbs"], "{:.2f}"));
    out += "\n";
  }
  if (!sizes.empty()) {
    out += fmt::format("{:<34}", "busbw lost at " + SizeLabel(sizes.back().get<int64_t>()) + " (%)");
    for (const auto& c : cases) out += fmt::format("{:>14}", cell(c["busbw_lost_pct"], "{:.1f}"));
    out += "\n";
  }
  out += fmt::format("{:<34}", "frames dropped (all sizes)");
  for (const auto& c : cases) out += fmt::format("{:>14}", c["frames_dropped"].get<int64_t>());
  out += "\n";
  out += fmt::format("{:<34}", "packets resent (all sizes)");
  for (const auto& c : cases) out += fmt::format("{:>14}", c["packets_resent"].get<int64_t>());
  out += "\n";
  if (!doc["train_step"].is_null()) {
    auto row = [&](const char* label, const char* key, const char* f) {
      out += fmt::format("{:<34}", label);
      for (const auto& c : cases) {
        const auto& t = c["train"];
        out += fmt::format("{:>14}", t.contains(key) ? cell(t[key], f) : std::string("failed"));
      }
      out += "\n";
    };
    out += "# training step: " + doc["train_step"].get<std::string>() + "\n";
    row("training step (ms)", "step_ms", "{:.2f}");
    row("exposed communication (ms)", "exposed_comm_ms", "{:.2f}");
    row("MFU (%)", "mfu_pct", "{:.1f}");
  }
  for (const auto& c : cases)
    if (!c["failure"].is_null())
      out += fmt::format("# {}: {}\n", c["case"].get<std::string>(), c["failure"].get<std::string>());
  out += "answer: " + doc["answer"]["text"].get<std::string>() + "\n";
  return out;
}

}  // namespace lossless::whatif
