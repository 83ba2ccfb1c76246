// lossless what-if: what a degraded or quarantined link costs the all-reduce
// sweep and a training step (docs/what-if.md#what-if-quarantine-now-or-wait); links named on the
// command line or taken from the optics store through a port map.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "audit/optics/rules.hpp"
#include "audit/optics/store.hpp"
#include "base/error.hpp"
#include "base/file.hpp"
#include "base/input_file.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "perf/options.hpp"
#include "scenario/scenario.hpp"
#include "topology/topology.hpp"
#include "whatif/whatif.hpp"

namespace lossless::cli {
namespace {
namespace whatif_cmd {

struct WhatIfOptions {
  std::string fabric, scenario;
  int64_t nodes = 0;
  std::vector<std::string> sets, down, degrade;
  std::string optics_db, port_map;
  std::string sizes;
  int64_t iterations = 5;
  std::string train_model = "7b";
  uint64_t seed = 1;
  bool json = false;
  std::string output = "-";
};

std::vector<std::string> SplitWords(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

struct PortMapEntry {
  std::string link;
  int line = 0;
};

// The port map (docs/what-if.md#port-map): one "PORT LINK" pair a line, PORT
// the link name the optics store holds, LINK a link name of the topology;
// '#' starts a comment. Checked against `t`: a malformed line, a port given
// twice or a link of no topology link is InputError naming file and line.
std::map<std::string, PortMapEntry> ReadPortMap(const std::string& path, const topology::Topology& t) {
  const std::string text = ReadTextInput(path, "a port map (PORT LINK per line)");
  std::map<std::string, PortMapEntry> out;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> w = SplitWords(line);
    if (w.empty()) {
      if (nl == text.size()) break;
      continue;
    }
    if (w.size() != 2)
      throw InputError({path, line_no, "port map"},
                       Expected("two fields, the optics store's port name and a link name (PORT LINK)",
                                text::OneLine(line)));
    scenario::FindLink(w[1], t, {path, line_no, "link"});
    auto [it, fresh] = out.emplace(w[0], PortMapEntry{w[1], line_no});
    if (!fresh)
      throw InputError({path, line_no, "port"},
                       fmt::format("expected each port once, got {} again (first on line {})", w[0],
                                   it->second.line));
    if (nl == text.size()) break;
  }
  return out;
}

// "400G", "100G", "25G", "800Gbps": bit/s; nullopt when not a rate.
std::optional<double> SpeedBps(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) ++i;
  if (i == 0 || i >= s.size()) return std::nullopt;
  const double v = std::strtod(s.substr(0, i).c_str(), nullptr);
  const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
  if (u == 'G') return v * 1e9;
  if (u == 'M') return v * 1e6;
  return std::nullopt;
}

// A port's measured post-FEC BER: the device-reported effective BER of the
// latest reading that has one; else uncorrected errors between the last two
// readings of a format with counters and times, over the bits the port's
// speed carried in between. nullopt when neither was measured.
std::optional<double> MeasuredPostFecBer(const std::vector<audit::optics::Reading>& history, std::string* how) {
  // Newest first. The check's fix, std::ranges::reverse_view, does not parse under clang 14 with
  // libstdc++ 12 (make lint's toolchain).
  // NOLINTNEXTLINE(modernize-loop-convert)
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->effective_ber) {
      *how = fmt::format("effective (post-FEC) BER {:g} as the device reports it ({})", *it->effective_ber,
                         it->format);
      return *it->effective_ber;
    }
  }
  std::map<std::string, std::vector<const audit::optics::Reading*>> by_format;
  for (const auto& r : history)
    if (r.post_fec_errors && r.time_s) by_format[r.format].push_back(&r);
  for (const auto& [format, rs] : by_format) {
    if (rs.size() < 2) continue;
    const auto& a = *rs[rs.size() - 2];
    const auto& b = *rs[rs.size() - 1];
    const int64_t dt = *b.time_s - *a.time_s;
    const int64_t de = *b.post_fec_errors - *a.post_fec_errors;
    const std::optional<double> bps = SpeedBps(b.speed);
    if (dt <= 0 || de < 0 || !bps) continue;
    const double ber = static_cast<double>(de) / (*bps * static_cast<double>(dt));
    *how = fmt::format("{} uncorrected errors in {} s at {} ({})", de, dt, b.speed, format);
    return ber;
  }
  return std::nullopt;
}

// The links the optics store's verdicts make (docs/what-if.md#from-the-optics-store):
// a port to quarantine -> the link down; a port on watch with a measured
// post-FEC BER -> the link degraded at that BER; on watch without one -> a
// note. A quarantined or degraded port missing from the port map is bad input.
void FromOptics(const WhatIfOptions& o, const topology::Topology& t, whatif::Options& w) {
  namespace optics = audit::optics;
  const std::map<std::string, PortMapEntry> map = ReadPortMap(o.port_map, t);
  optics::Store store(o.optics_db, optics::Store::Mode::kExisting);
  const optics::RuleParams params;
  for (const std::string& port : store.Links()) {
    const std::vector<optics::Reading> history = store.History(port);
    const optics::LinkStatus st = optics::EvaluateLink(port, history, params);
    if (st.state != audit::Verdict::kFail && st.state != audit::Verdict::kWarn) continue;
    std::string how;
    const std::optional<double> ber = MeasuredPostFecBer(history, &how);
    const bool quarantine = st.state == audit::Verdict::kFail;
    if (!quarantine && (!ber || *ber <= 0)) {
      w.notes.push_back(fmt::format("optics: {} is on watch with no post-FEC errors measured (none reported, or a "
                                    "post-FEC BER of 0): healthy in every case",
                                    port));
      continue;
    }
    auto it = map.find(port);
    if (it == map.end())
      throw InputError({o.port_map, 0, "port map"},
                       fmt::format("expected an entry for port {} ({} in {}), found none", port,
                                   quarantine ? "to quarantine" : "on watch with post-FEC errors",
                                   o.optics_db));
    whatif::LinkFault l;
    l.link = it->second.link;
    l.where = {o.port_map, it->second.line, "link"};
    if (quarantine) {
      l.down = true;
      l.source = fmt::format("optics: {} quarantined", port);
    } else {
      l.ber = *ber;
      l.source = fmt::format("optics: {} on watch, {}", port, how);
    }
    w.links.push_back(std::move(l));
  }
}

}  // namespace whatif_cmd
}  // namespace

void AddWhatIfCommand(CLI::App& app, Context& ctx) {
  using whatif_cmd::WhatIfOptions;
  auto* cmd = app.add_subcommand(
      "what-if",
      "What degraded links cost left in service and taken out (quarantined), beside the healthy "
      "fabric: all-reduce sweep and a training step (docs/what-if.md)");
  auto o = std::make_shared<WhatIfOptions>();
  cmd->add_option("--fabric", o->fabric, "Profile name or file (lossless profiles)");
  cmd->add_option("--nodes", o->nodes, "Nodes of the profile's default topology (default: the profile's own)");
  cmd->add_option("--scenario", o->scenario, "A scenario file instead of a profile (its topology and fabric)");
  cmd->add_option("--set", o->sets, "Override a field: --set topology.radix=16 (repeatable)");
  cmd->add_option("--down", o->down, "A link down in both faulted cases (lossless links names it; repeatable)");
  cmd->add_option("--degrade", o->degrade,
                  "LINK=BER: a link with post-FEC bit error rate BER, left in service or taken out (repeatable)");
  cmd->add_option("--from-optics", o->optics_db,
                  "An optics store (lossless optics ingest): quarantined ports down, ports on watch at their "
                  "measured post-FEC BER");
  cmd->add_option("--port-map", o->port_map, "With --from-optics: PORT LINK per line (docs/what-if.md#port-map)");
  cmd->add_option("--sizes", o->sizes,
                  "Comma-separated all-reduce sizes, e.g. 32M,256M (default: compare's sweep up to the "
                  "healthy plateau)");
  cmd->add_option("-n,--iterations", o->iterations, "Measured iterations per size (default 5)");
  cmd->add_option("--train-model", o->train_model, "Training step's model (train presets), none: no step (default 7b)");
  cmd->add_option("--seed", o->seed, "Random seed (default 1)");
  cmd->add_flag("--json", o->json, "Print JSON (schema lossless.whatif/1) instead of text");
  cmd->add_option("-o,--output", o->output, "Write the output to FILE (default: standard output)");
  cmd->footer("Exit status: 0 answered; 2 bad input (unknown link, BER out of range, port missing from the "
              "port map).");
  cmd->callback([o, &ctx] {
    if (o->nodes < 0)
      throw InputError({"<cli>", 0, "--nodes"}, Expected("a node count of 1 or more", std::to_string(o->nodes)));
    if (o->optics_db.empty() != o->port_map.empty())
      throw InputError({"<cli>", 0, o->port_map.empty() ? "--port-map" : "--from-optics"},
                       "expected --from-optics DB and --port-map FILE together");
    if (o->down.empty() && o->degrade.empty() && o->optics_db.empty())
      throw InputError({"<cli>", 0, "--down"},
                       "expected at least one link: --down LINK, --degrade LINK=BER or --from-optics DB");
    CheckOutputPath(o->output, {"<cli>", 0, "--output"});
    scenario::Scenario s = LoadFabricOrScenario(o->fabric, o->scenario, o->nodes, o->sets);
    s.seed = o->seed;
    if (!s.traffic.empty())
      fmt::print(stderr, "what-if: the scenario's traffic section is ignored (the cases bring their own)\n");
    const topology::Topology t = scenario::BuildTopology(s);
    const int64_t g = s.clos.gpus_per_node;
    const int64_t hosts = static_cast<int64_t>(t.hosts.size());
    if (g <= 0 || hosts % g != 0 || hosts / g < 2)
      throw InputError({o->scenario.empty() ? "<cli>" : o->scenario, 0, "topology"},
                       fmt::format("expected a topology of whole nodes of {} GPUs (2 or more), got {} hosts", g,
                                   hosts));
    whatif::Options w;
    w.iterations = o->iterations;
    w.train_model = o->train_model;
    for (const std::string& d : o->down) {
      whatif::LinkFault l;
      l.link = d;
      l.down = true;
      l.source = "--down";
      l.where = {"<cli>", 0, "--down"};
      w.links.push_back(l);
    }
    for (const std::string& d : o->degrade) w.links.push_back(whatif::ParseDegrade(d));
    if (!o->optics_db.empty()) whatif_cmd::FromOptics(*o, t, w);
    if (!o->sizes.empty()) {
      size_t start = 0;
      while (start <= o->sizes.size()) {
        size_t comma = o->sizes.find(',', start);
        if (comma == std::string::npos) comma = o->sizes.size();
        const std::string item = o->sizes.substr(start, comma - start);
        const std::optional<int64_t> b = perf::ParseSize(item);
        if (!b) throw InputError({"<cli>", 0, "--sizes"}, Expected("a size such as 8M or 1G", item));
        w.sizes.push_back(*b);
        start = comma + 1;
      }
    }
    if (w.links.empty())
      w.notes.emplace_back("no link to quarantine or degraded in the optics store: the three cases are the same");
    const std::string name = o->scenario.empty() ? o->fabric : s.name;
    const nlohmann::ordered_json doc = whatif::Run(s, name, hosts / g, w);
    WriteOutput(o->output, o->json ? doc.dump(2) + "\n" : whatif::Text(doc), {"<cli>", 0, "--output"});
    ctx.exit_code = 0;
  });
}

}  // namespace lossless::cli
