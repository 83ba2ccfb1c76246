// The traffic list: each entry's fields, and the checks of the traffic
// against the fabric (classes, PFC priority, pacing under DCQCN).
#include <algorithm>
#include <bit>
#include <charconv>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "scenario/internal/reader.hpp"

namespace lossless::scenario {
namespace {

Pattern ParsePattern(const std::string& s, const Location& where) {
  static const std::vector<std::pair<std::string, Pattern>> kPatterns = {
      {"ring", Pattern::kRing},
      {"permutation", Pattern::kPermutation},
      {"incast", Pattern::kIncast},
      {"all-to-all", Pattern::kAllToAll},
      {"flow", Pattern::kFlow}};
  std::vector<std::string> names;
  for (const auto& [n, p] : kPatterns) {
    if (n == s) return p;
    names.push_back(n);
  }
  throw InputError(where, fmt::format("expected one of {}, got {} (did you mean '{}'?)",
                                      JoinOptions(names), QuoteForMessage(s), Nearest(s, names)));
}

const char* PatternName(Pattern p) {
  switch (p) {
    case Pattern::kRing:
      return "ring";
    case Pattern::kPermutation:
      return "permutation";
    case Pattern::kIncast:
      return "incast";
    case Pattern::kAllToAll:
      return "all-to-all";
    case Pattern::kFlow:
      return "flow";
  }
  return "?";
}

// The entries of `traffic` and their --set overrides, parsed and checked on
// their own.
std::vector<TrafficSpec> ParseTraffic(Loader& ld) {
  // Collect each entry's fields as text with their locations.
  std::vector<std::map<std::string, Value>> entries;
  std::vector<Location> entry_where;
  Loader::ListInput& in = ld.list("traffic");
  const YAML::Node& t = in.node;
  if (t.IsDefined() && !t.IsNull()) {
    if (!t.IsSequence())
      throw InputError({ld.file(), LineOf(t), "traffic"}, "expected a list of traffic entries");
    size_t i = 0;
    for (const auto& e : t) {
      std::string path = fmt::format("traffic.{}", i++);
      if (!e.IsMap())
        throw InputError({ld.file(), LineOf(e), path}, "expected a mapping with a 'pattern'");
      std::map<std::string, Value> fields;
      for (const auto& kv : e) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        if (auto seen = fields.find(key); seen != fields.end()) {
          throw InputError(
              {ld.file(), LineOf(kv.first), path + "." + key},
              fmt::format("given twice in this entry (first on line {})", seen->second.where.line));
        }
        if (key == "path" && kv.second.IsSequence()) {
          // A list of switch names: kept as comma-separated text, like --set gives it.
          std::string joined;
          for (const auto& hop : kv.second) {
            if (!hop.IsScalar())
              throw InputError({ld.file(), LineOf(hop), path + ".path"},
                               "expected a switch name (optionally name/class)");
            joined += (joined.empty() ? "" : ",") + hop.Scalar();
          }
          fields[key] = Value{joined, {ld.file(), LineOf(kv.second), path + ".path"}, true};
          continue;
        }
        if (!kv.second.IsScalar())
          throw InputError({ld.file(), LineOf(kv.second), path + "." + key},
                           "expected a single value");
        fields[key] =
            Value{kv.second.Scalar(), {ld.file(), LineOf(kv.second), path + "." + key}, true};
      }
      entries.push_back(std::move(fields));
      entry_where.push_back({ld.file(), LineOf(e), path});
    }
  }
  for (const auto& [name, value] : in.sets) {
    // traffic.<index>.<field>=value; index == size appends a new entry.
    auto dot1 = name.find('.'), dot2 = name.find('.', dot1 + 1);
    size_t idx = 0;
    std::string idx_text =
        name.substr(dot1 + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot1 - 1);
    auto [p, ec] = std::from_chars(idx_text.data(), idx_text.data() + idx_text.size(), idx);
    if (dot2 == std::string::npos || ec != std::errc() || p != idx_text.data() + idx_text.size() ||
        idx > entries.size()) {
      throw InputError({kSetFile, 0, name},
                       Expected(fmt::format("traffic.<0..{}>.<field>", entries.size()), name));
    }
    if (idx == entries.size()) {
      entries.emplace_back();
      entry_where.push_back({kSetFile, 0, fmt::format("traffic.{}", idx)});
    }
    entries[idx][name.substr(dot2 + 1)] = Value{value, {kSetFile, 0, name}, true};
  }
  static const std::vector<std::string> kKeys = {"pattern", "bytes", "start", "stride", "target",
                                                 "senders", "hosts", "src",   "dst",    "class",
                                                 "repeat",  "every", "path",  "rate",   "name"};
  std::vector<TrafficSpec> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto& f = entries[i];
    for (const auto& [k, v] : f) {
      if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
        throw InputError(v.where,
                         fmt::format("unknown traffic field; did you mean '{}'? (valid: {})",
                                     Nearest(k, kKeys), JoinOptions(kKeys)));
      }
    }
    TrafficSpec ts;
    ts.where = entry_where[i];
    if (!f.count("pattern"))
      throw InputError(ts.where,
                       "expected a 'pattern' (ring, permutation, incast, all-to-all, flow)");
    ts.pattern = ParsePattern(f["pattern"].text, f["pattern"].where);
    if (f.count("name")) {
      ts.name = f["name"].text;
      if (ts.name.empty() || ts.name.find_first_of("\n\r\t") != std::string::npos)
        throw InputError(f["name"].where, Expected("a one-line name", ts.name));
    }
    if (!f.count("bytes"))
      throw InputError(ts.where, "expected 'bytes' (size of each flow, e.g. 16MiB)");
    RequireUnit(f["bytes"], ParamType::kBytes);
    ts.bytes = units::ParseBytes(f["bytes"].text, f["bytes"].where).count();
    if (ts.bytes <= 0)
      throw InputError(f["bytes"].where, Expected("a size above zero", f["bytes"].text));
    if (f.count("start")) ts.start = units::ParseTime(f["start"].text, f["start"].where);
    auto get_int = [&](const char* key, int64_t lo, int64_t def) {
      return f.count(key) ? ToInt(f[key], key, static_cast<double>(lo), 1e9) : def;
    };
    ts.stride = get_int("stride", 1, 1);
    ts.target = get_int("target", 0, 0);
    ts.senders = get_int("senders", 1, -1);
    ts.hosts = get_int("hosts", 2, -1);
    ts.src = get_int("src", 0, -1);
    ts.dst = get_int("dst", 0, -1);
    ts.tclass = static_cast<int>(get_int("class", 0, -1));
    if (ts.tclass > 7)
      throw InputError(f["class"].where, Expected("a class from 0 to 7", f["class"].text));
    ts.repeat = get_int("repeat", 1, 1);
    if (ts.repeat > 1'000'000)
      throw InputError(f["repeat"].where, Expected("at most 1000000 repeats", f["repeat"].text));
    if (f.count("every")) {
      ts.every = units::ParseTime(f["every"].text, f["every"].where);
      if (ts.every.ps() <= 0)
        throw InputError(f["every"].where, Expected("a time above zero", f["every"].text));
    } else if (ts.repeat > 1) {
      throw InputError(f["repeat"].where, "expected 'every' (time between repeats) with repeat");
    }
    if (ts.every.ps() > (units::Time::Max().ps() - ts.start.ps()) / ts.repeat)
      throw InputError(
          f["every"].where,
          Expected("repeats that end within the clock's range (about 106 days)", f["every"].text));
    if (f.count("rate")) {
      RequireUnit(f["rate"], ParamType::kRate);
      ts.rate = units::ParseRate(f["rate"].text, f["rate"].where);
      ts.rate_where = f["rate"].where;
    }
    if (ts.pattern == Pattern::kPermutation && !f.count("stride"))
      throw InputError(ts.where, "expected 'stride' for a permutation");
    if (ts.pattern == Pattern::kFlow && (ts.src < 0 || ts.dst < 0))
      throw InputError(ts.where, "expected 'src' and 'dst' for a flow");
    if (f.count("path")) {
      const Value& pv = f["path"];
      if (ts.pattern != Pattern::kFlow)
        throw InputError(pv.where, "expected 'path' only on a pattern: flow entry");
      ts.path_where = pv.where;
      std::stringstream ss(pv.text);
      for (std::string hop; std::getline(ss, hop, ',');) {
        hop.erase(0, hop.find_first_not_of(" \t"));
        hop.erase(hop.find_last_not_of(" \t") + 1);
        int cls = -1;
        if (auto slash = hop.find('/'); slash != std::string::npos) {
          const std::string c = hop.substr(slash + 1);
          auto [ptr, ec] = std::from_chars(c.data(), c.data() + c.size(), cls);
          if (ec != std::errc() || ptr != c.data() + c.size() || cls < 0 || cls > 7)
            throw InputError(pv.where,
                             Expected("switch or switch/class with a class from 0 to 7", hop));
          hop.resize(slash);
        }
        if (hop.empty()) throw InputError(pv.where, Expected("a list of switch names", pv.text));
        ts.path.emplace_back(hop, cls);
      }
      if (ts.path.empty()) throw InputError(pv.where, Expected("a list of switch names", pv.text));
    }
    out.push_back(ts);
  }
  return out;
}

}  // namespace

std::string TrafficText(const TrafficSpec& t) {
  std::string o =
      fmt::format("pattern={} bytes={} start={}", PatternName(t.pattern),
                  units::FormatBytes(units::Bytes(t.bytes)), units::FormatTime(t.start));
  if (t.pattern == Pattern::kRing || t.pattern == Pattern::kPermutation)
    o += fmt::format(" stride={}", t.stride);
  if (t.pattern == Pattern::kIncast) {
    o += fmt::format(" target={} senders={}", t.target,
                     t.senders < 0 ? std::string("all") : std::to_string(t.senders));
  }
  if (t.hosts >= 0) o += fmt::format(" hosts={}", t.hosts);
  if (t.pattern == Pattern::kFlow) o += fmt::format(" src={} dst={}", t.src, t.dst);
  o += t.tclass < 0 ? std::string(" class=fabric.data_class") : fmt::format(" class={}", t.tclass);
  o += fmt::format(" repeat={}", t.repeat);
  if (t.repeat > 1) o += fmt::format(" every={}", units::FormatTime(t.every));
  o += t.rate.bps() > 0 ? " rate=" + units::FormatRate(t.rate) : std::string(" rate=line");
  if (!t.path.empty()) {
    o += " path=";
    for (size_t i = 0; i < t.path.size(); ++i) {
      o += (i ? "," : "") + t.path[i].first;
      if (t.path[i].second >= 0) o += fmt::format(":{}", t.path[i].second);
    }
  }
  if (!t.name.empty()) o += " name=" + t.name;
  return o;
}

void ReadTraffic(Fields& f, Scenario& sc) {
  Loader& ld = f.loader();
  sc.traffic = ParseTraffic(ld);
  sc.max_flows = f.Int("limits.max_flows");
  sc.max_flows_where = f.Find("limits.max_flows").where;
  if (sc.traffic.empty() && !ld.traffic_optional()) {
    throw InputError({ld.file(), ld.list("traffic").line, "traffic"},
                     "expected at least one traffic entry");
  }
  for (size_t i = 0; i < sc.traffic.size(); ++i) {
    const TrafficSpec& t = sc.traffic[i];
    if (t.start >= sc.stop_time) {
      sc.warnings.push_back(fmt::format(
          "traffic.{}.start: {} is at or after stop_time ({}): the entry's flows never start", i,
          units::FormatTime(t.start), units::FormatTime(sc.stop_time)));
    } else if (t.repeat > 1 && t.start.ps() + (t.repeat - 1) * t.every.ps() >= sc.stop_time.ps()) {
      sc.warnings.push_back(fmt::format(
          "traffic.{}.repeat: only {} of the {} repeats start before stop_time ({}); the rest "
          "are not run",
          i, (sc.stop_time.ps() - t.start.ps() - 1) / t.every.ps() + 1, t.repeat,
          units::FormatTime(sc.stop_time)));
    }
    if (t.rate.bps() > sc.clos.link_rate.bps()) {
      sc.warnings.push_back(
          fmt::format("traffic.{}.rate: {} is above the link rate ({}): the flow runs at line rate",
                      i, units::FormatRate(t.rate), units::FormatRate(sc.clos.link_rate)));
    }
  }
  const fabric::NetworkConfig& net = sc.net;
  const fabric::IbLinkConfig& ib = net.ib;
  if (ib.enabled) {
    if (net.pfc.enabled) {
      f.Fail("fabric.pfc.enabled",
             "false with fabric.ib.enabled (credits are the lossless mechanism of InfiniBand; "
             "PFC is Ethernet's)");
    }
    for (const auto& t : sc.traffic) {
      if (t.tclass >= ib.num_vls) {
        throw InputError(t.where, fmt::format("traffic class (SL) {}: expected an SL below "
                                              "fabric.ib.vls ({})",
                                              t.tclass, ib.num_vls));
      }
    }
  }
  if (net.pfc.enabled) {
    const int prio = std::countr_zero(net.pfc.priorities);
    // Without traffic (a profile) the traffic that will come uses the data class.
    bool carried = sc.traffic.empty() && net.nic.data_class == prio;
    for (const auto& t : sc.traffic)
      carried |= (t.tclass < 0 ? net.nic.data_class : t.tclass) == prio;
    if (!carried) {
      throw InputError(
          f.Find("fabric.pfc.priority").where,
          fmt::format("PFC on priority {}, which no traffic uses (data class {}): expected "
                      "the priority of a traffic class",
                      prio, static_cast<int>(net.nic.data_class)));
    }
  }
  if (net.dcqcn) {
    for (const auto& t : sc.traffic) {
      if (t.rate.bps() > 0) {
        throw InputError(t.rate_where,
                         "expected no 'rate' with DCQCN (fabric.cc): the reaction "
                         "point sets each flow's rate");
      }
    }
  }
}

}  // namespace lossless::scenario
