#include "audit/qos/qos_report.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace lossless::audit::qos {

namespace {
std::string PortsText(const std::vector<std::string>& ports, size_t total) {
  if (ports.empty()) return "switch";
  if (ports.size() == 1 && ports[0] == "*") return "all ports";
  if (ports.size() == total && total > 4) return fmt::format("all {} ports", total);
  std::string out;
  for (size_t i = 0; i < ports.size() && i < 4; ++i) {
    if (i) out += ", ";
    out += ports[i];
  }
  if (ports.size() > 4) out += fmt::format(" (+{} more)", ports.size() - 4);
  return out;
}
std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string FormatQosAuditText(const QosAudit& a) {
  std::string formats(QosFormatName(a.format));
  for (QosFormat f : a.formats)
    if (f != a.format) formats += std::string(" + ") + std::string(QosFormatName(f));
  std::string out = fmt::format("QoS audit of {} (format {}, {} port{})\n", a.file, formats,
                                a.port_count, a.port_count == 1 ? "" : "s");
  size_t id_width = 0;
  for (const QosCheck& c : a.checks) id_width = std::max(id_width, c.id.size());
  for (const QosCheck& c : a.checks) {
    out += fmt::format("  {:<13} {:<{}}  [{}] {}\n", Upper(VerdictName(c.verdict)), c.id, id_width,
                       PortsText(c.ports, a.port_count), c.message);
  }
  for (const std::string& n : a.notes) out += "  note: " + n + "\n";
  if (a.skipped_lines > 0)
    out += fmt::format(
        "  note: {} input line{} skipped (prompts, prose, unreadable lines); "
        "--verbose lists them\n",
        a.skipped_lines, a.skipped_lines == 1 ? "" : "s");
  out += fmt::format("verdict: {}\n", VerdictName(a.verdict));
  return out;
}

std::string FormatQosSkippedText(const std::vector<SkippedLine>& skipped) {
  std::string out;
  for (const SkippedLine& s : skipped)
    out += fmt::format("  skipped line {}: {}: {}\n", s.line, s.reason, s.text);
  return out;
}

nlohmann::json QosSkippedToJson(const std::vector<SkippedLine>& skipped) {
  nlohmann::json j = nlohmann::json::array();
  for (const SkippedLine& s : skipped)
    j.push_back({{"line", s.line}, {"reason", s.reason}, {"text", s.text}});
  return j;
}

nlohmann::json QosAuditToJson(const QosAudit& a) {
  nlohmann::json j;
  j["file"] = a.file;
  j["format"] = std::string(QosFormatName(a.format));
  j["formats"] = nlohmann::json::array();
  for (QosFormat f : a.formats) j["formats"].push_back(std::string(QosFormatName(f)));
  if (a.formats.empty()) j["formats"].push_back(std::string(QosFormatName(a.format)));
  j["ports"] = a.port_count;
  j["skipped_lines"] = a.skipped_lines;
  j["verdict"] = std::string(VerdictName(a.verdict));
  j["checks"] = nlohmann::json::array();
  for (const QosCheck& c : a.checks) {
    j["checks"].push_back({{"id", c.id},
                           {"verdict", std::string(VerdictName(c.verdict))},
                           {"message", c.message},
                           {"ports", c.ports}});
  }
  j["notes"] = a.notes;
  return j;
}

}  // namespace lossless::audit::qos
