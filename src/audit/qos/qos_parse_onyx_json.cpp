// NVIDIA Onyx / MLNX-OS JSON output (`show interfaces ethernet 1/1
// congestion-control | json-print`): an array whose first object names the
// interface ("Interface ethernet": "1/1") and whose other objects are one per
// traffic class ("header": "TC-3", "Mode": "ECN" | "RED" | "none",
// "Threshold mode": "absolute" | "relative", "Minimum threshold": "500 KB" or
// "9%", "Maximum threshold"). Absolute thresholds are kilobytes (x1000), as
// for the CLI's `minimum-absolute`. "RED" drops early without marking: not ECN.
// Also the per-interface PFC state (`show dcb priority-flow-control` JSON: an
// object of ports, each [{"PFC admin": "on" | "Auto", "PFC oper": "Enabled" |
// "Disabled"}]): a port with PFC oper Disabled has no lossless priority; an
// enabled port's priorities are the switch-wide list, not in this output.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"
#include "base/text.hpp"

namespace lossless::audit::qos::internal {

namespace {

using Json = nlohmann::json;

std::string Str(const Json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

namespace {

bool IsPfcPortTable(const Json& root) {
  if (!root.is_object() || root.empty()) return false;
  for (const auto& [name, v] : root.items())
    if (!v.is_array() || v.empty() || !v.front().is_object() || !v.front().contains("PFC oper"))
      return false;
  return true;
}

QosConfig ParsePfcPorts(const Json& root, std::string_view text, const std::string& file) {
  QosConfig cfg;
  cfg.formats.push_back(QosFormat::kOnyx);
  bool any_enabled = false;
  for (const auto& [name, v] : root.items()) {
    PortQos p;
    p.name = name;
    std::string quoted = "\"";
    quoted += name;
    quoted += '"';
    p.line = FindLine(text, quoted);
    const std::string oper = text::ToLower(Str(v.front(), "PFC oper"));
    if (oper != "enabled" && oper != "disabled")
      throw InputError({file, p.line, name + ".PFC oper"}, Expected("Enabled or Disabled", oper));
    if (oper == "disabled") {
      p.pfc_stated = true;  // no priority is lossless on this port
    } else {
      any_enabled = true;
    }
    cfg.ports.push_back(p);
  }
  cfg.notes.push_back(
      "Onyx JSON of per-interface PFC state: a port with PFC oper Disabled has no lossless "
      "priority" +
      std::string(any_enabled ? "; the priorities of enabled ports are the switch-wide list "
                                "('Priority Enabled List'), which this output does not state"
                              : ""));
  return cfg;
}

}  // namespace

bool LooksLikeOnyxJson(const Json& root) {
  if (IsPfcPortTable(root)) return true;
  if (!root.is_array() || root.empty() || !root.front().is_object()) return false;
  return root.front().contains("Interface ethernet");
}

QosConfig ParseOnyxJson(const Json& root, std::string_view text, const std::string& file) {
  if (IsPfcPortTable(root)) return ParsePfcPorts(root, text, file);
  QosConfig cfg;
  cfg.formats.push_back(QosFormat::kOnyx);
  PortQos port;
  // Appended piece by piece: GCC 12 warns (-Wrestrict) on the one-expression form.
  port.name = "Eth";
  port.name += Str(root.front(), "Interface ethernet");
  port.line = FindLine(text, "\"Interface ethernet\"");
  std::string red;
  for (const Json& o : root) {
    if (!o.is_object()) continue;
    const std::string header = Str(o, "header");
    if (header.rfind("TC-", 0) != 0) continue;
    std::string quoted = "\"";
    quoted += header;
    quoted += '"';
    const int64_t line = FindLine(text, quoted);
    const int tc = ParsePriority(header.substr(3), {file, line, "header"});
    const std::string mode = text::ToLower(Str(o, "Mode"));
    if (mode == "red") {
      if (!red.empty()) red += ',';
      red += std::to_string(tc);
    }
    if (mode != "ecn") continue;
    EcnQueue e;
    e.enabled = true;
    e.line = line;
    e.source = "congestion-control TC-" + std::to_string(tc);
    const bool relative = text::ToLower(Str(o, "Threshold mode")) == "relative";
    for (const char* key : {"Minimum threshold", "Maximum threshold"}) {
      const std::string v = Str(o, key);
      if (v.empty()) continue;
      const bool min = key[1] == 'i';
      const Location where{file, line, key};
      if (relative) {
        std::string p = v;
        if (!p.empty() && p.back() == '%') p.pop_back();
        (min ? e.kmin_percent : e.kmax_percent) = ParseDecimal(p, where, "a percentage");
      } else {
        std::vector<std::string> w = Words(v);
        (min ? e.kmin : e.kmax) = ParseAmount(w[0], w.size() > 1 ? w[1] : "kbytes", where);
      }
    }
    port.ecn[tc] = e;
  }
  cfg.ecn_stated = true;
  if (!red.empty())
    cfg.notes.push_back("RED (early drop without ECN marking) on traffic class " + red);
  cfg.notes.push_back(
      "Onyx JSON of 'show interfaces ethernet " + Str(root.front(), "Interface ethernet") +
      " congestion-control': ECN per traffic class; it states no PFC, buffer or scheduling");
  cfg.ports.push_back(port);
  return cfg;
}

}  // namespace lossless::audit::qos::internal
