#include "audit/qos/qos_parse.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_segment.hpp"
#include "audit/qos/qos_text.hpp"
#include "base/error.hpp"
#include "base/text.hpp"

namespace lossless::audit::qos {

namespace {

using internal::SplitLines;
using text::StartsWith;
using text::Trim;

constexpr size_t kMaxInputBytes = 64u << 20;

// Rejects empty and binary input with an error naming line 1 (or the line of
// the first NUL byte).
void CheckIsText(std::string_view text, const std::string& file) {
  if (Trim(text).empty())
    throw InputError({file, 1, ""}, "expected a switch QoS configuration, got an empty file");
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

constexpr const char* kExpectedFormats =
    "SONiC config_db.json or show output, NVUE 'nv show qos roce', Onyx, EOS, NX-OS, Dell "
    "Enterprise SONiC or Junos QoS configuration";

std::string FirstLine(std::string_view text) {
  for (const auto& l : SplitLines(text))
    if (!Trim(l.text).empty()) return std::string(l.text);
  return "";
}

QosConfig Dispatch(QosFormat f, std::string_view text, const std::string& file) {
  switch (f) {
    case QosFormat::kSonicJson:
      return internal::ParseSonicJson(text, file);
    case QosFormat::kSonicShow:
      return internal::ParseSonicShow(text, file);
    case QosFormat::kNvue:
      return internal::ParseNvue(text, file);
    case QosFormat::kOnyx: {
      // Onyx JSON output goes through the JSON reader, which recognises it.
      const size_t first = text.find_first_not_of(" \t\r\n");
      if (first != std::string_view::npos && (text[first] == '{' || text[first] == '['))
        return internal::ParseSonicJson(text, file);
      return internal::ParseOnyx(text, file);
    }
    case QosFormat::kEos:
      return internal::ParseEos(text, file);
    case QosFormat::kNxos:
      return internal::ParseNxos(text, file);
    case QosFormat::kDellSonic:
      return internal::ParseDellSonic(text, file);
    case QosFormat::kJunos:
      return internal::ParseJunos(text, file);
    case QosFormat::kTrafficConf:
      return internal::ParseTrafficConf(text, file);
    case QosFormat::kSwitchConfig:
      return internal::ParseSwitchConfig(text, file);
  }
  return {};
}

// Adds what `src` states to `dst`; what `dst` already states wins.
void MergePort(PortQos& dst, const PortQos& src) {
  if (src.pfc_stated) {
    dst.pfc_priorities.insert(src.pfc_priorities.begin(), src.pfc_priorities.end());
    dst.pfc_stated = true;
  }
  if (src.link_pause) dst.link_pause = dst.link_pause.value_or(false) || *src.link_pause;
  if (src.pfc_watchdog && !dst.pfc_watchdog) dst.pfc_watchdog = src.pfc_watchdog;
  dst.ecn.insert(src.ecn.begin(), src.ecn.end());
  dst.pgs.insert(src.pgs.begin(), src.pgs.end());
  dst.queue_limit.insert(src.queue_limit.begin(), src.queue_limit.end());
  if (!dst.speed_gbps) dst.speed_gbps = src.speed_gbps;
  if (!dst.cable_m) dst.cable_m = src.cable_m;
  for (const auto& [q, n] : src.queue_drops) dst.queue_drops[q] += n;
  for (const auto& [g, n] : src.pg_drops) dst.pg_drops[g] += n;
  for (const auto& [q, n] : src.pfc_rx_frames) dst.pfc_rx_frames[q] += n;
  for (const auto& [q, n] : src.pfc_tx_frames) dst.pfc_tx_frames[q] += n;
  dst.drops_are_roce = dst.drops_are_roce || src.drops_are_roce;
}

void Merge(QosConfig& dst, QosConfig&& src) {
  for (PortQos& p : src.ports) {
    auto it = std::find_if(dst.ports.begin(), dst.ports.end(),
                           [&](const PortQos& d) { return d.name == p.name; });
    if (it == dst.ports.end()) {
      dst.ports.push_back(std::move(p));
    } else {
      MergePort(*it, p);
    }
  }
  dst.dscp_to_queue.insert(src.dscp_to_queue.begin(), src.dscp_to_queue.end());
  dst.priority_to_queue.insert(src.priority_to_queue.begin(), src.priority_to_queue.end());
  dst.scheduling.insert(src.scheduling.begin(), src.scheduling.end());
  dst.ecn_stated = dst.ecn_stated || src.ecn_stated;
  if (!dst.lossless_pool && src.lossless_pool) {
    dst.lossless_pool = src.lossless_pool;
    dst.lossless_pool_name = src.lossless_pool_name;
  }
  for (std::string& n : src.notes) dst.notes.push_back(std::move(n));
  for (SkippedLine& s : src.skipped) dst.skipped.push_back(std::move(s));
}

// A port other than "*" inherits the switch-wide settings ("*") it does not
// state itself, so that a global show output and a per-interface one combine.
void ApplyGlobal(QosConfig& cfg) {
  auto star = std::find_if(cfg.ports.begin(), cfg.ports.end(),
                           [](const PortQos& p) { return p.name == "*"; });
  if (star == cfg.ports.end() || cfg.ports.size() == 1) return;
  PortQos global = *star;
  cfg.ports.erase(star);
  for (PortQos& p : cfg.ports) MergePort(p, global);
}

}  // namespace

namespace internal {

bool LooksLikeSwitchConfig(std::string_view text, bool* complete) {
  static const std::regex kInterface(
      R"(^interface\s+(ethernet|eth|et-|xe-|ge-|swp|port-channel|po\d|vlan|loopback|mgmt|management|nve|bond))",
      std::regex::icase);
  bool iface = false;
  bool header = false;
  for (const auto& l : SplitLines(text)) {
    std::string t(Trim(l.text));
    if (t.empty()) continue;
    if (t.find("show running-config") != std::string::npos &&
        (StartsWith(t, "!") || StartsWith(t, "#")))
      header = true;
    if (StartsWith(t, "## Last commit:") || StartsWith(t, "## Last changed:")) header = true;
    if (l.indent == 0 && std::regex_search(t, kInterface)) iface = true;
  }
  if (complete != nullptr) *complete = header;
  return iface || header;
}

QosConfig ParseSwitchConfig(std::string_view text, const std::string& /*file*/) {
  QosConfig cfg;
  bool complete = false;
  LooksLikeSwitchConfig(text, &complete);
  if (!complete) {
    // An excerpt: the QoS part may be elsewhere. ParseQosText notes that it
    // states none of the RoCE settings (indeterminate).
    cfg.notes.emplace_back(
        "a switch configuration with no QoS statement (no PFC, ECN, buffer or queue "
        "setting); if it is the whole running-config, RoCE runs lossy and unmarked: give the "
        "whole configuration (with its 'show running-config' header) or its QoS part");
    return cfg;
  }
  PortQos all;
  all.name = "*";
  all.line = 1;
  all.pfc_stated = true;
  cfg.ports.push_back(all);
  cfg.ecn_stated = true;
  cfg.notes.emplace_back(
      "a whole running-config with no QoS statement: no priority has PFC and no queue has ECN");
  return cfg;
}

}  // namespace internal

QosFormat DetectQosFormat(std::string_view text, const std::string& file) {
  CheckIsText(text, file);
  internal::SegmentedText seg = internal::SegmentQosText(text, std::nullopt);
  std::array<int, internal::kQosFormatCount> total{};
  for (const auto& s : seg.segments)
    if (s.format)
      total[static_cast<size_t>(*s.format)] +=
          std::max(1, s.points[static_cast<size_t>(*s.format)]);
  size_t best = 0;
  for (size_t f = 1; f < total.size(); ++f)
    if (total[f] > total[best]) best = f;
  if (total[best] == 0)
    throw InputError({file, 1, "format"}, "not a switch QoS configuration: " +
                                              Expected(kExpectedFormats, FirstLine(text)));
  return static_cast<QosFormat>(best);
}

QosConfig ParseQosText(std::string_view text, const std::string& file,
                       std::optional<QosFormat> format) {
  CheckIsText(text, file);
  internal::SegmentedText seg = internal::SegmentQosText(text, format);
  std::vector<QosFormat> order;
  std::map<QosFormat, std::vector<int64_t>> groups;
  std::map<QosFormat, int> weight;
  std::vector<SkippedLine> skipped = seg.skipped;
  for (const auto& s : seg.segments) {
    if (!s.format) {
      for (int64_t n : s.lines) {
        const std::string& c = seg.content[static_cast<size_t>(n - 1)];
        if (!Trim(c).empty())
          skipped.push_back({n, c,
                             "not recognised as switch QoS text (prose, or output of a "
                             "command this tool does not read)"});
      }
      continue;
    }
    if (!groups.count(*s.format)) order.push_back(*s.format);
    auto& g = groups[*s.format];
    g.insert(g.end(), s.lines.begin(), s.lines.end());
    weight[*s.format] += static_cast<int>(s.lines.size());
  }
  bool complete = false;
  if (order.empty() && (!format || *format == QosFormat::kSwitchConfig) &&
      internal::LooksLikeSwitchConfig(text, &complete)) {
    // Configuration, but no QoS statement in it: a finding, not bad input.
    order.push_back(QosFormat::kSwitchConfig);
    for (const auto& s : seg.segments)
      groups[QosFormat::kSwitchConfig].insert(groups[QosFormat::kSwitchConfig].end(),
                                              s.lines.begin(), s.lines.end());
    skipped.clear();
  }
  if (order.empty())
    throw InputError({file, 1, "format"}, "not a switch QoS configuration: " +
                                              Expected(kExpectedFormats, FirstLine(text)));

  QosConfig merged;
  std::optional<InputError> first_error;
  bool any_read = false;
  constexpr int kMaxSkippedErrors = 500;
  for (QosFormat f : order) {
    std::set<int64_t> live(groups[f].begin(), groups[f].end());
    internal::GroupText group(seg, {live.begin(), live.end()});
    std::optional<QosConfig> cfg;
    std::string name(QosFormatName(f));
    for (int attempt = 0; attempt <= kMaxSkippedErrors && !cfg; ++attempt) {
      try {
        cfg = Dispatch(f, group.text(), file);
      } catch (const InputError& e) {
        int64_t line = e.where().line;
        // Each retry re-parses the group: bound the total work (about 256 MB of
        // text) so a large file full of unreadable lines stays fast.
        bool within_budget = text.size() * static_cast<size_t>(attempt + 1) < (256u << 20);
        bool one_line = f != QosFormat::kSonicJson && line > 0 && live.count(line) &&
                        !Trim(seg.content[static_cast<size_t>(line - 1)]).empty() &&
                        attempt < kMaxSkippedErrors && within_budget;
        if (one_line) {
          std::string field = e.where().field.empty() ? "" : e.where().field + ": ";
          skipped.push_back({line, seg.content[static_cast<size_t>(line - 1)],
                             "not interpretable as " + name + ": " + field + e.message(),
                             /*unreadable=*/true});
          live.erase(line);
          group.Blank(line);
          continue;
        }
        if (!first_error) first_error = e;
        merged.notes.push_back("the " + name + " part could not be read: " + e.message());
        for (int64_t n : live) {
          const std::string& c = seg.content[static_cast<size_t>(n - 1)];
          if (!Trim(c).empty())
            skipped.push_back(
                {n, c, "part of " + name + " text that could not be read (" + e.message() + ")",
                 /*unreadable=*/true});
        }
        break;
      }
    }
    if (!cfg) continue;
    any_read = true;
    if (cfg->ports.empty() && f != QosFormat::kSwitchConfig) {
      merged.notes.push_back("the " + name + " part states none of the RoCE QoS settings");
    }
    // A reader may say what it read (the JSON reader reads Onyx JSON too).
    merged.formats.push_back(cfg->formats.empty() ? f : cfg->formats.front());
    cfg->formats.clear();
    Merge(merged, std::move(*cfg));
  }
  if (!any_read && first_error) throw *first_error;
  if (format && merged.ports.empty())
    throw InputError({file, 1, "format"}, "no " + std::string(QosFormatName(*format)) +
                                              " QoS statements in the input (--format " +
                                              std::string(QosFormatName(*format)) + ")");
  std::stable_sort(merged.formats.begin(), merged.formats.end(),
                   [&](QosFormat a, QosFormat b) { return weight[a] > weight[b]; });
  merged.format = merged.formats.empty() ? order.front() : merged.formats.front();
  merged.file = file;
  ApplyGlobal(merged);
  if (merged.ports.empty()) {
    PortQos all;
    all.name = "*";
    all.line = 1;
    merged.ports.push_back(all);
    if (merged.format != QosFormat::kSwitchConfig)
      merged.notes.emplace_back(
          "the input is switch QoS text but states none of the RoCE settings (PFC, ECN, "
          "buffers, counters): nothing to check it against");
  }
  std::stable_sort(skipped.begin(), skipped.end(),
                   [](const SkippedLine& a, const SkippedLine& b) { return a.line < b.line; });
  for (SkippedLine& s : skipped) merged.skipped.push_back(std::move(s));
  std::stable_sort(merged.skipped.begin(), merged.skipped.end(),
                   [](const SkippedLine& a, const SkippedLine& b) { return a.line < b.line; });
  return merged;
}

QosConfig ParseQosConfig(std::istream& in, const std::string& file,
                         std::optional<QosFormat> format) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError({file, 0, ""}, "read error");
  return ParseQosText(text, file, format);
}

}  // namespace lossless::audit::qos
