#include "audit/qos/qos_parse.hpp"

#include <array>
#include <iterator>
#include <regex>
#include <sstream>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"
#include "base/text.hpp"

namespace lossless::audit {

namespace {

using qos_internal::SplitLines;
using text::StartsWith;
using text::Trim;

constexpr size_t kMaxInputBytes = 64u << 20;

// Rejects empty and binary input with an error naming line 1 (or the line of
// the first NUL byte).
void CheckIsText(std::string_view text, const std::string& file) {
  if (Trim(text).empty())
    throw InputError({file, 1, ""}, "empty file: expected a switch QoS configuration");
  if (text.size() > kMaxInputBytes)
    throw InputError({file, 1, ""}, "file larger than 64 MiB: expected a switch QoS configuration");
  size_t control = 0;
  int64_t line = 1;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\n') ++line;
    if (c == 0)
      throw InputError({file, line, ""},
                       "binary data (NUL byte): expected a text QoS configuration");
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') ++control;
  }
  if (control * 20 > text.size())
    throw InputError({file, 1, ""}, "binary data: expected a text QoS configuration");
}

struct Score {
  QosFormat format;
  int points = 0;
};

}  // namespace

QosFormat DetectQosFormat(std::string_view text, const std::string& file) {
  CheckIsText(text, file);
  std::string_view body = Trim(text);
  if (StartsWith(body, "\xEF\xBB\xBF")) body.remove_prefix(3);
  if (!body.empty() && (body.front() == '{' || body.front() == '[')) return QosFormat::kSonicJson;

  std::array<Score, 5> scores{{{QosFormat::kSonicShow},
                               {QosFormat::kNvue},
                               {QosFormat::kOnyx},
                               {QosFormat::kEos},
                               {QosFormat::kNxos}}};
  auto add = [&](QosFormat f, int p) {
    for (Score& s : scores)
      if (s.format == f) s.points += p;
  };
  static const std::regex kOnyxIf(R"(^interface ethernet \d+/\d+)");
  static const std::regex kEosPfc(R"(^priority-flow-control priority \d no-drop)");
  static const std::regex kOnyxEcn(R"(traffic-class \d congestion-control)");
  static const std::regex kOnyxPfcPrio(R"(^dcb priority-flow-control priority \d)");
  int64_t seen = 0;
  for (const auto& l : SplitLines(text)) {
    if (++seen > 20000) break;
    std::string t(Trim(l.text));
    if (t.empty()) continue;
    if (StartsWith(t, "Pool: ") || StartsWith(t, "Profile: ")) add(QosFormat::kSonicShow, 2);
    if (t.find("Lossless priorities") != std::string::npos) add(QosFormat::kSonicShow, 3);
    if (t.find("Lossless traffic pattern") != std::string::npos) add(QosFormat::kSonicShow, 3);
    if (t.find("TxQ") != std::string::npos && t.find("Drop/pkts") != std::string::npos)
      add(QosFormat::kSonicShow, 3);
    if (t.find("green_min_threshold") != std::string::npos && t.find('"') == std::string::npos)
      add(QosFormat::kSonicShow, 1);

    if (StartsWith(t, "pfc-priority") || StartsWith(t, "enabled-tc") ||
        StartsWith(t, "congestion-mode") || StartsWith(t, "congestion-control") ||
        t.find("RoCE PCP/DSCP->SP") != std::string::npos ||
        t.find("RoCE SP->TC") != std::string::npos || StartsWith(t, "trust-mode"))
      add(QosFormat::kNvue, 2);
    if (t.find("operational") != std::string::npos && t.find("applied") != std::string::npos)
      add(QosFormat::kNvue, 2);

    if (t == "roce" || StartsWith(t, "roce lossless") || StartsWith(t, "roce lossy"))
      add(QosFormat::kOnyx, 3);
    if (std::regex_search(t, kOnyxPfcPrio) || StartsWith(t, "dcb priority-flow-control enable"))
      add(QosFormat::kOnyx, 3);
    if (std::regex_search(t, kOnyxIf)) add(QosFormat::kOnyx, 1);
    if (std::regex_search(t, kOnyxEcn)) add(QosFormat::kOnyx, 3);
    if (t.find("ingress-buffer") != std::string::npos) add(QosFormat::kOnyx, 2);

    if (std::regex_search(t, kEosPfc)) add(QosFormat::kEos, 3);
    if (StartsWith(t, "tx-queue ")) add(QosFormat::kEos, 2);
    if (StartsWith(t, "random-detect ecn")) add(QosFormat::kEos, 2);
    if (StartsWith(t, "qos map dscp")) add(QosFormat::kEos, 2);
    if (t == "priority-flow-control on") add(QosFormat::kEos, 1);

    if (StartsWith(t, "policy-map type") || StartsWith(t, "class type queuing") ||
        StartsWith(t, "class type network-qos") || StartsWith(t, "class-map type"))
      add(QosFormat::kNxos, 3);
    if (StartsWith(t, "pause pfc-cos") || t == "pause no-drop" || t == "system qos")
      add(QosFormat::kNxos, 3);
    if (StartsWith(t, "priority-flow-control mode")) add(QosFormat::kNxos, 1);
  }
  Score best = scores[0];
  for (const Score& s : scores)
    if (s.points > best.points) best = s;
  if (best.points < 2) {
    std::string first;
    for (const auto& l : SplitLines(text)) {
      if (!Trim(l.text).empty()) {
        first = l.text;
        break;
      }
    }
    throw InputError({file, 1, "format"},
                     "not a switch QoS configuration: " +
                         Expected("SONiC config_db.json or show output, NVUE 'nv show qos roce', "
                                  "Onyx, EOS or NX-OS QoS configuration",
                                  first));
  }
  return best.format;
}

QosConfig ParseQosText(std::string_view text, const std::string& file,
                       std::optional<QosFormat> format) {
  CheckIsText(text, file);
  QosFormat f = format ? *format : DetectQosFormat(text, file);
  QosConfig cfg;
  switch (f) {
    case QosFormat::kSonicJson:
      cfg = qos_internal::ParseSonicJson(text, file);
      break;
    case QosFormat::kSonicShow:
      cfg = qos_internal::ParseSonicShow(text, file);
      break;
    case QosFormat::kNvue:
      cfg = qos_internal::ParseNvue(text, file);
      break;
    case QosFormat::kOnyx:
      cfg = qos_internal::ParseOnyx(text, file);
      break;
    case QosFormat::kEos:
      cfg = qos_internal::ParseEos(text, file);
      break;
    case QosFormat::kNxos:
      cfg = qos_internal::ParseNxos(text, file);
      break;
  }
  cfg.format = f;
  cfg.file = file;
  if (cfg.ports.empty())
    throw InputError({file, 1, "format"}, std::string("no RoCE QoS settings found in this ") +
                                              std::string(QosFormatName(f)) + " input");
  return cfg;
}

QosConfig ParseQosConfig(std::istream& in, const std::string& file,
                         std::optional<QosFormat> format) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError({file, 0, ""}, "read error");
  return ParseQosText(text, file, format);
}

}  // namespace lossless::audit
