// faults.*: the stalled NIC, injected PFC frames and CNPs, lossy links.
#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "base/text.hpp"
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {
namespace {

// The entries of list field `name` (faults.pause_inject / cnp_inject): a
// single mapping or a list of them, then --set "<name>.<index>.<field>"
// overrides (index == size appends an entry). A list value (`at: [1us, 2us]`)
// is kept as comma-separated text, as --set gives it.
struct ListEntries {
  std::vector<std::map<std::string, Value>> fields;
  std::vector<Location> where;
};

ListEntries CollectList(Loader& ld, const std::string& name, const std::vector<std::string>& keys) {
  ListEntries out;
  Loader::ListInput& in = ld.list(name);
  const YAML::Node& t = in.node;
  if (t.IsDefined() && !t.IsNull()) {
    if (!t.IsSequence() && !t.IsMap())
      throw InputError({ld.file(), LineOf(t), name}, "expected a mapping or a list of mappings");
    std::vector<YAML::Node> nodes;
    if (t.IsMap()) {
      nodes.push_back(t);
    } else {
      for (const auto& e : t) nodes.push_back(e);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const YAML::Node& e = nodes[i];
      const std::string path = fmt::format("{}.{}", name, i);
      if (!e.IsMap()) throw InputError({ld.file(), LineOf(e), path}, "expected a mapping");
      std::map<std::string, Value> fields;
      for (const auto& kv : e) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        const Location where{ld.file(), LineOf(kv.second), path + "." + key};
        std::string text;
        if (kv.second.IsSequence()) {
          for (const auto& item : kv.second) {
            if (!item.IsScalar()) throw InputError(where, "expected a list of single values");
            text += (text.empty() ? "" : ",") + item.Scalar();
          }
        } else if (kv.second.IsScalar()) {
          text = kv.second.Scalar();
        } else {
          throw InputError(where, "expected a single value or a list of values");
        }
        if (auto seen = fields.find(key); seen != fields.end()) {
          throw InputError(where, fmt::format("given twice in this entry (first on line {})",
                                              seen->second.where.line));
        }
        fields[key] = Value{text, where, true};
      }
      out.fields.push_back(std::move(fields));
      out.where.push_back({ld.file(), LineOf(e), path});
    }
  }
  for (const auto& [set, value] : in.sets) {
    const std::string rest = set.substr(name.size() + 1);
    const auto dot = rest.find('.');
    size_t idx = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + std::min(dot, rest.size()), idx);
    if (dot == std::string::npos || ec != std::errc() || p != rest.data() + dot ||
        idx > out.fields.size()) {
      throw InputError({kSetFile, 0, set},
                       Expected(fmt::format("{}.<0..{}>.<field>", name, out.fields.size()), set));
    }
    if (idx == out.fields.size()) {
      out.fields.emplace_back();
      out.where.push_back({kSetFile, 0, fmt::format("{}.{}", name, idx)});
    }
    out.fields[idx][rest.substr(dot + 1)] = Value{value, {kSetFile, 0, set}, true};
  }
  for (auto& f : out.fields) {
    for (const auto& [k, v] : f) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        throw InputError(v.where, fmt::format("unknown field; did you mean '{}'? (valid: {})",
                                              Nearest(k, keys), JoinOptions(keys)));
      }
    }
  }
  return out;
}

// A time of zero or more (ParseTime rejects negative ones).
units::Time ListTime(const std::string& text, const Location& where) {
  return units::ParseTime(text::Trim(text), where);
}

// "3", "3,4" (priorities) or "0x08" / "0b00001000" (bit vector) -> mask.
uint8_t ParseClassEnable(const Value& v) {
  const std::string what = "a list of priorities from 0 to 7, or a bit vector 0x01..0xff";
  const std::string t(text::Trim(v.text));
  auto whole = [](std::string_view x, int base, unsigned& out) {
    auto [p, ec] = std::from_chars(x.data(), x.data() + x.size(), out, base);
    return !x.empty() && ec == std::errc() && p == x.data() + x.size();
  };
  unsigned bits = 0;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X' || t[1] == 'b' || t[1] == 'B')) {
    const int base = (t[1] == 'x' || t[1] == 'X') ? 16 : 2;
    if (!whole(std::string_view(t).substr(2), base, bits) || bits == 0 || bits > 0xFF)
      throw InputError(v.where, Expected(what, v.text));
    return static_cast<uint8_t>(bits);
  }
  std::stringstream ss(t);
  for (std::string item; std::getline(ss, item, ',');) {
    unsigned prio = 0;
    if (!whole(text::Trim(item), 10, prio) || prio > 7)
      throw InputError(v.where, Expected(what, v.text));
    bits |= 1u << prio;
  }
  if (bits == 0) throw InputError(v.where, Expected(what, v.text));
  return static_cast<uint8_t>(bits);
}

std::vector<PauseInjection> LoadPauseInjections(Loader& ld, const fabric::PfcConfig& pfc,
                                                units::Time stop,
                                                std::vector<std::string>& warnings) {
  static const std::vector<std::string> kKeys = {"host", "port", "at", "class_enable", "quanta"};
  ListEntries in = CollectList(ld, "faults.pause_inject", kKeys);
  std::vector<PauseInjection> out;
  for (size_t i = 0; i < in.fields.size(); ++i) {
    auto& f = in.fields[i];
    const Location& where = in.where[i];
    if (!pfc.enabled) {
      throw InputError(where,
                       "expected fabric.pfc.enabled true along with an injected PFC frame "
                       "(ports with PFC off ignore PFC frames), got false");
    }
    PauseInjection pi;
    if (f.count("host") == f.count("port"))
      throw InputError(where,
                       "expected exactly one of 'host' (a host rank: its NIC sends) or "
                       "'port' (a link direction such as leaf0->host0: its sender sends)");
    if (f.count("host")) {
      pi.host = ToInt(f["host"], "host", 0, 1e7);
      pi.where = f["host"].where;
    } else {
      pi.port = std::string(text::Trim(f["port"].text));
      pi.where = f["port"].where;
    }
    for (const char* k : {"at", "class_enable", "quanta"})
      if (!f.count(k)) throw InputError(where, fmt::format("expected '{}'", k));
    pi.at = ListTime(f["at"].text, f["at"].where);
    pi.class_enable = ParseClassEnable(f["class_enable"]);
    const Value& q = f["quanta"];
    const std::string qt(text::Trim(q.text));
    unsigned quanta = 0;
    const bool hex = qt.size() > 2 && qt[0] == '0' && (qt[1] == 'x' || qt[1] == 'X');
    const std::string_view digits = hex ? std::string_view(qt).substr(2) : std::string_view(qt);
    auto [p, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), quanta, hex ? 16 : 10);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() ||
        quanta > 0xFFFF) {
      throw InputError(q.where, Expected("pause quanta from 0 (XON) to 65535 (0xffff)", q.text));
    }
    pi.quanta = static_cast<uint16_t>(quanta);
    if (pi.at > stop) {
      warnings.push_back(fmt::format("{}.at: {} is after stop_time ({}): the frame is never sent",
                                     where.field, units::FormatTime(pi.at),
                                     units::FormatTime(stop)));
    }
    out.push_back(pi);
  }
  return out;
}

std::vector<CnpInjection> LoadCnpInjections(Loader& ld, const std::string& cc, units::Time stop,
                                            std::vector<std::string>& warnings) {
  static const std::vector<std::string> kKeys = {"flow", "at", "count", "every"};
  ListEntries in = CollectList(ld, "faults.cnp_inject", kKeys);
  std::vector<CnpInjection> out;
  for (size_t i = 0; i < in.fields.size(); ++i) {
    auto& f = in.fields[i];
    const Location& where = in.where[i];
    if (cc != "dcqcn-paper" && cc != "dcqcn-firmware") {
      throw InputError(where, Expected("fabric.cc dcqcn-paper or dcqcn-firmware along with an "
                                       "injected CNP",
                                       cc));
    }
    CnpInjection ci;
    if (!f.count("flow")) throw InputError(where, "expected 'flow' (index of a traffic flow)");
    if (!f.count("at")) throw InputError(where, "expected 'at' (a time or a list of times)");
    ci.flow = ToInt(f["flow"], "flow", 0, 1e9);
    ci.where = f["flow"].where;
    const Value& at = f["at"];
    std::stringstream ss(at.text);
    for (std::string item; std::getline(ss, item, ',');) ci.at.push_back(ListTime(item, at.where));
    if (ci.at.empty()) throw InputError(at.where, Expected("a time or a list of times", at.text));
    int64_t count = 1;
    if (f.count("count")) {
      count = ToInt(f["count"], "count", 1, 1e6);
      if (ci.at.size() > 1)
        throw InputError(f["count"].where, "expected 'count' only with a single 'at' time");
    }
    if (f.count("every")) {
      const Value& ev = f["every"];
      const units::Time every = units::ParseTime(text::Trim(ev.text), ev.where);
      if (every.ps() <= 0) throw InputError(ev.where, Expected("a time above zero", ev.text));
      if (!f.count("count")) throw InputError(ev.where, "expected 'count' with 'every'");
      if (every.ps() > (units::Time::Max().ps() - ci.at[0].ps()) / count)
        throw InputError(ev.where, Expected("CNPs that end within the clock's range (about 106 "
                                            "days)",
                                            ev.text));
      for (int64_t k = 1; k < count; ++k)
        ci.at.push_back(ci.at[0] + units::Time::Ps(k * every.ps()));
    } else if (count > 1) {
      throw InputError(f["count"].where, "expected 'every' (time between CNPs) with count");
    }
    std::sort(ci.at.begin(), ci.at.end());
    if (ci.at.back() > stop) {
      warnings.push_back(
          fmt::format("{}.at: {} is after stop_time ({}): that CNP is never "
                      "delivered",
                      where.field, units::FormatTime(ci.at.back()), units::FormatTime(stop)));
    }
    out.push_back(std::move(ci));
  }
  return out;
}

std::vector<LinkLossFault> LoadLinkLoss(Loader& ld, double fabric_ber) {
  static const std::vector<std::string> kKeys = {"link", "ber", "every", "probability"};
  ListEntries in = CollectList(ld, "faults.link_loss", kKeys);
  std::vector<LinkLossFault> out;
  for (size_t i = 0; i < in.fields.size(); ++i) {
    auto& f = in.fields[i];
    const Location& where = in.where[i];
    if (!f.count("link"))
      throw InputError(where,
                       "expected 'link' (a link such as leaf0-spine1 for both "
                       "directions, or a direction such as leaf0->spine1)");
    LinkLossFault l;
    l.link = std::string(text::Trim(f["link"].text));
    l.where = f["link"].where;
    l.loss.ber = fabric_ber;
    if (f.count("ber")) {
      l.loss.ber = ToDouble(f["ber"], ParamInfo{"ber", ParamType::kDouble, "", "", "", 0, 0.01});
      l.ber_given = true;
    }
    if (f.count("every")) l.loss.drop_every = ToInt(f["every"], "every", 1, 1e12);
    if (f.count("probability")) {
      l.loss.drop_prob =
          ToDouble(f["probability"], ParamInfo{"probability", ParamType::kDouble, "", "", "", 0, 1});
    }
    if (!f.count("ber") && !f.count("every") && !f.count("probability"))
      throw InputError(where, "expected at least one of 'ber', 'every' or 'probability'");
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<LinkDownFault> LoadLinkDown(Loader& ld, units::Time stop,
                                        std::vector<std::string>& warnings) {
  static const std::vector<std::string> kKeys = {"link", "at", "up_at"};
  ListEntries in = CollectList(ld, "faults.link_down", kKeys);
  std::vector<LinkDownFault> out;
  for (size_t i = 0; i < in.fields.size(); ++i) {
    auto& f = in.fields[i];
    const Location& where = in.where[i];
    if (!f.count("link"))
      throw InputError(where,
                       "expected 'link' (a link as `lossless links` names it, such as "
                       "leaf0-spine0)");
    if (!f.count("at")) throw InputError(where, "expected 'at' (when the link goes down)");
    LinkDownFault l;
    l.link = std::string(text::Trim(f["link"].text));
    l.where = f["link"].where;
    l.at = ListTime(f["at"].text, f["at"].where);
    if (f.count("up_at")) {
      l.up_at = ListTime(f["up_at"].text, f["up_at"].where);
      if (l.up_at <= l.at) {
        throw InputError(f["up_at"].where,
                         Expected(fmt::format("a time after at ({})", units::FormatTime(l.at)),
                                  f["up_at"].text));
      }
    }
    if (l.at > stop) {
      warnings.push_back(fmt::format("{}.at: {} is after stop_time ({}): the link never goes down",
                                     where.field, units::FormatTime(l.at),
                                     units::FormatTime(stop)));
    }
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

void ReadNicStall(Fields& f, Scenario& sc) {
  if (f.Given("faults.nic_stall.host")) {
    sc.nic_stall.host = f.Int("faults.nic_stall.host");
    sc.nic_stall.where = f.Find("faults.nic_stall.host").where;
    sc.nic_stall.at = f.Time("faults.nic_stall.at");
    if (sc.nic_stall.at.ps() < 0) f.Fail("faults.nic_stall.at", "a time of zero or more");
    if (f.Given("faults.nic_stall.until")) {
      sc.nic_stall.until = f.Time("faults.nic_stall.until");
      if (sc.nic_stall.until <= sc.nic_stall.at) {
        f.Fail("faults.nic_stall.until", fmt::format("a time after faults.nic_stall.at ({})",
                                                     units::FormatTime(sc.nic_stall.at)));
      }
    }
  } else {
    for (const char* field : {"faults.nic_stall.at", "faults.nic_stall.until"}) {
      if (f.Given(field)) {
        throw InputError(f.Find(field).where, "expected faults.nic_stall.host with this field");
      }
    }
  }
}

void ReadInjections(Fields& f, Scenario& sc) {
  const std::string cc = f.Find("fabric.cc").text;
  sc.pause_inject = LoadPauseInjections(f.loader(), sc.net.pfc, sc.stop_time, sc.warnings);
  sc.cnp_inject = LoadCnpInjections(f.loader(), cc, sc.stop_time, sc.warnings);
  sc.link_loss = LoadLinkLoss(f.loader(), sc.ber);
  sc.link_down = LoadLinkDown(f.loader(), sc.stop_time, sc.warnings);
  sc.reroute_ib = f.Time("faults.reroute.ib");
  sc.reroute_ethernet = f.Time("faults.reroute.ethernet");
}

}  // namespace lossless::scenario
