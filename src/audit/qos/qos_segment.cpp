#include "audit/qos/qos_segment.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "audit/qos/qos_parsers.hpp"
#include "audit/qos/qos_text.hpp"

namespace lossless::audit::qos::internal {

namespace {

size_t Index(QosFormat f) {
  return static_cast<size_t>(f);
}

bool Contains(std::string_view t, std::string_view needle) {
  return t.find(needle) != std::string_view::npos;
}

// A command typed at a prompt that is itself configuration (Onyx and EOS
// one-line config, NVUE `nv set`, Junos `set`), as opposed to a show command
// whose output follows.
bool IsConfigCommand(std::string_view cmd, bool config_mode) {
  cmd = Trim(cmd);
  if (cmd.empty()) return false;
  static constexpr std::array<std::string_view, 9> kShow = {
      "show ", "do ", "sh ", "configuration write", "write", "copy ", "end", "enable", "configure"};
  for (std::string_view s : kShow)
    if (StartsWith(cmd, s) || cmd == Trim(s)) return false;
  if (config_mode) return true;
  static constexpr std::array<std::string_view, 16> kConfig = {"interface ",
                                                               "dcb ",
                                                               "roce",
                                                               "traffic ",
                                                               "pool ",
                                                               "advanced buffer",
                                                               "nv set ",
                                                               "nv unset ",
                                                               "priority-flow-control",
                                                               "qos ",
                                                               "policy-map ",
                                                               "class-map ",
                                                               "system qos",
                                                               "set class-of-service",
                                                               "flowcontrol ",
                                                               "buffer "};
  for (std::string_view s : kConfig)
    if (StartsWith(cmd, s)) return true;
  return false;
}

struct Prompt {
  std::string command;
  bool config = false;
};

// Shell and CLI prompts: `admin@sonic:~$ cmd`, `cumulus@leaf01:mgmt:~$ cmd`,
// `switch# cmd`, `switch (config) # cmd`, `OS10(conf-if-eth1/1/5)# cmd`,
// `user@qfx> cmd`, `$ cmd`, and `# text` (a root prompt or a comment).
// Matched by hand, each step deterministic (no character class of a step
// holds the character that ends it), as these patterns would match:
//   user@host  ^\s*[\w.-]+@[\w.:~/-]*[$#>%]\s?(.*)$
//   device     ^\s*[\w.-]+\s?(\(([\w./ -]*)\))?\s?[#>]\s?(.*)$
//   bare       ^\s*[$#]\s?(.*)$
// ('.' excludes CR and LF; \s is C-locale white space).
bool WordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One optional white-space character, then the rest of the line as the
// command (nullopt when the rest holds a CR or LF).
std::optional<std::string> PromptRest(std::string_view line, size_t i) {
  if (i < line.size() && text::IsSpace(line[i])) ++i;
  std::string_view rest = line.substr(std::min(i, line.size()));
  if (rest.find_first_of("\r\n") != std::string_view::npos) return std::nullopt;
  return std::string(rest);
}

std::optional<Prompt> MatchPrompt(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && text::IsSpace(line[i])) ++i;
  const size_t name = i;
  auto in = [&](size_t k, std::string_view extra) {
    return k < line.size() && (WordChar(line[k]) || extra.find(line[k]) != std::string_view::npos);
  };
  while (in(i, ".-")) ++i;
  if (i > name) {
    if (i < line.size() && line[i] == '@') {
      size_t k = i + 1;
      while (in(k, ".:~/-")) ++k;
      if (k < line.size() && std::string_view("$#>%").find(line[k]) != std::string_view::npos) {
        if (auto cmd = PromptRest(line, k + 1)) return Prompt{*cmd, IsConfigCommand(*cmd, false)};
      }
    }
    size_t k = i;
    if (k < line.size() && text::IsSpace(line[k])) ++k;
    std::string_view mode;
    if (k < line.size() && line[k] == '(') {
      size_t e = k + 1;
      while (in(e, "./ -")) ++e;
      if (e < line.size() && line[e] == ')') {
        mode = line.substr(k + 1, e - k - 1);
        k = e + 1;
      }
    }
    if (k < line.size() && text::IsSpace(line[k])) ++k;
    if (k < line.size() && (line[k] == '#' || line[k] == '>')) {
      if (auto cmd = PromptRest(line, k + 1))
        return Prompt{*cmd, IsConfigCommand(*cmd, StartsWith(mode, "conf"))};
    }
    return std::nullopt;  // a bare prompt starts with $ or #, never a name character
  }
  if (i < line.size() && (line[i] == '$' || line[i] == '#')) {
    if (auto cmd = PromptRest(line, i + 1)) return Prompt{*cmd, IsConfigCommand(*cmd, false)};
  }
  return std::nullopt;
}

bool IsElision(std::string_view t) {
  if (t.empty()) return false;
  if (t == "\xE2\x80\xA6" || t == "<snip>" || t == "[...]" || t == "(...)") return true;
  return t.size() >= 2 && t.find_first_not_of('.') == std::string_view::npos;
}

bool IsFence(std::string_view t) {
  return StartsWith(t, "```") || StartsWith(t, "~~~");
}

// Last line (index into `lines`) of the JSON document starting at `begin`:
// where the bracket depth returns to zero, or the last line when it never does.
size_t JsonEnd(const std::vector<std::string>& content, const std::vector<int64_t>& lines,
               size_t begin) {
  int depth = 0;
  bool in_string = false;
  bool escape = false;
  for (size_t i = begin; i < lines.size(); ++i) {
    for (char c : content[static_cast<size_t>(lines[i] - 1)]) {
      if (in_string) {
        if (escape) {
          escape = false;
        } else if (c == '\\') {
          escape = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') in_string = true;
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i;
      }
    }
  }
  return lines.size() - 1;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// `t` starts with `prefix`, then one decimal digit, then `suffix`.
bool PrefixDigit(std::string_view t, std::string_view prefix, std::string_view suffix) {
  return StartsWith(t, prefix) && t.size() > prefix.size() && IsDigit(t[prefix.size()]) &&
         StartsWith(t.substr(prefix.size() + 1), suffix);
}

// `before`, one decimal digit and `after`, anywhere in `t`.
bool ContainsDigitBetween(std::string_view t, std::string_view before, std::string_view after) {
  for (size_t at = t.find(before); at != std::string_view::npos; at = t.find(before, at + 1)) {
    const size_t d = at + before.size();
    if (d < t.size() && IsDigit(t[d]) && StartsWith(t.substr(d + 1), after)) return true;
  }
  return false;
}

// "interface ethernet 1/1" and the like: the prefix, digits, '/', digits.
bool OnyxInterfaceLine(std::string_view t) {
  constexpr std::string_view kPrefix = "interface ethernet ";
  if (!StartsWith(t, kPrefix)) return false;
  size_t i = kPrefix.size();
  const size_t first = i;
  while (i < t.size() && IsDigit(t[i])) ++i;
  if (i == first || i >= t.size() || t[i] != '/') return false;
  return i + 1 < t.size() && IsDigit(t[i + 1]);
}

}  // namespace

void ScoreQosLine(std::string_view t, std::array<int, kQosFormatCount>& points) {
  auto add = [&](QosFormat f, int p) { points[Index(f)] += p; };
  if (t.empty()) return;
  // Hand-written matchers rather than std::regex: this runs on every line of
  // every segment, and libstdc++'s regex_search tries each start position
  // even for an anchored pattern (a 23 KB configuration took seconds under
  // the sanitizers).
  const bool onyx_if = OnyxInterfaceLine(t);  // ^interface ethernet \d+/\d+

  if (IsBlockTitle(t)) add(QosFormat::kSonicShow, 2);
  if (Contains(t, "Lossless priorities")) add(QosFormat::kSonicShow, 3);
  if (Contains(t, "Lossless traffic pattern")) add(QosFormat::kSonicShow, 3);
  if ((Contains(t, "TxQ") || Contains(t, "Voq")) && Contains(t, "Drop/pkts"))
    add(QosFormat::kSonicShow, 3);
  if (Contains(t, "PFC0") && Contains(t, "PFC7") && Contains(t, "Port"))
    add(QosFormat::kSonicShow, 3);
  if (StartsWith(t, "Ingress PG dropped packets") || StartsWith(t, "Ingress headroom per PG") ||
      StartsWith(t, "Ingress shared pool occupancy per PG"))
    add(QosFormat::kSonicShow, 3);
  if (StartsWith(t, "PORT") && Contains(t, "ACTION") && Contains(t, "DETECTION"))
    add(QosFormat::kSonicShow, 3);
  if (Contains(t, "green_min_threshold") && !Contains(t, "\"")) add(QosFormat::kSonicShow, 1);

  if (StartsWith(t, "pfc-priority") || StartsWith(t, "enabled-tc") ||
      StartsWith(t, "congestion-mode") || StartsWith(t, "congestion-control") ||
      Contains(t, "RoCE PCP/DSCP->SP") || Contains(t, "RoCE SP->TC") ||
      StartsWith(t, "trust-mode") || StartsWith(t, "tx-roce-stats") ||
      StartsWith(t, "rx-roce-stats") || StartsWith(t, "unicast-no-buffer-discard"))
    add(QosFormat::kNvue, 2);
  if (Contains(t, "operational") && Contains(t, "applied")) add(QosFormat::kNvue, 2);
  if (StartsWith(t, "nv set qos ") || StartsWith(t, "nv unset qos ") ||
      (StartsWith(t, "nv set interface ") && Contains(t, " qos ")))
    add(QosFormat::kNvue, 3);

  if (StartsWith(t, "Priority Enabled List:") || StartsWith(t, "Priority Disabled List:"))
    add(QosFormat::kOnyx, 3);
  if (t == "PFC: enabled" || t == "PFC: disabled") add(QosFormat::kOnyx, 2);
  if (StartsWith(t, "Flow-control") && Contains(t, ":") &&
      (Contains(t, "receive") || Contains(t, "send")))
    add(QosFormat::kOnyx, 2);
  if (t == "roce" || StartsWith(t, "roce lossless") || StartsWith(t, "roce lossy"))
    add(QosFormat::kOnyx, 3);
  if (PrefixDigit(t, "dcb priority-flow-control priority ", "") ||
      StartsWith(t, "dcb priority-flow-control enable"))
    add(QosFormat::kOnyx, 3);
  if (onyx_if) add(QosFormat::kOnyx, 1);
  if (onyx_if && Contains(t, " flowcontrol ")) add(QosFormat::kOnyx, 2);
  if (ContainsDigitBetween(t, "traffic-class ", " congestion-control")) add(QosFormat::kOnyx, 3);
  if (Contains(t, "ingress-buffer")) add(QosFormat::kOnyx, 2);
  if (StartsWith(t, "advanced buffer management") || StartsWith(t, "traffic pool ") ||
      (StartsWith(t, "pool ") && Contains(t, " size ")))
    add(QosFormat::kOnyx, 2);

  if (PrefixDigit(t, "priority-flow-control priority ", " no-drop")) add(QosFormat::kEos, 3);
  if (StartsWith(t, "tx-queue ") || StartsWith(t, "uc-tx-queue ")) add(QosFormat::kEos, 2);
  if (StartsWith(t, "random-detect ecn")) add(QosFormat::kEos, 2);
  if (PrefixDigit(t, "qos map dscp ", "") || PrefixDigit(t, "qos map traffic-class ", "") ||
      StartsWith(t, "qos profile "))
    add(QosFormat::kEos, 2);

  if (StartsWith(t, "qos wred-policy ") || StartsWith(t, "qos scheduler-policy ") ||
      StartsWith(t, "qos map dscp-tc ") || StartsWith(t, "qos map pfc-priority-queue "))
    add(QosFormat::kDellSonic, 3);
  if (t == "ecn green" || StartsWith(t, "green minimum-threshold") || StartsWith(t, "qos-map ") ||
      (StartsWith(t, "queue ") && Contains(t, " wred-policy ")))
    add(QosFormat::kDellSonic, 2);
  if (t == "priority-flow-control on") add(QosFormat::kEos, 1);

  if (StartsWith(t, "policy-map type") || StartsWith(t, "class type queuing") ||
      StartsWith(t, "class type network-qos") || StartsWith(t, "class-map type"))
    add(QosFormat::kNxos, 3);
  if (StartsWith(t, "pause pfc-cos") || t == "pause no-drop" || t == "system qos")
    add(QosFormat::kNxos, 3);
  if (StartsWith(t, "random-detect minimum-threshold")) add(QosFormat::kNxos, 2);

  if (StartsWith(t, "class-of-service") || StartsWith(t, "set class-of-service") ||
      StartsWith(t, "congestion-notification-profile ") || t == "explicit-congestion-notification;")
    add(QosFormat::kJunos, 3);
  if ((StartsWith(t, "pfc.") || StartsWith(t, "ecn_red.") || StartsWith(t, "link_pause.")) &&
      Contains(t, " = "))
    add(QosFormat::kTrafficConf, 3);

  if (StartsWith(t, "forwarding-classes") || StartsWith(t, "scheduler-maps") ||
      (StartsWith(t, "class ") && Contains(t, "queue-num")))
    add(QosFormat::kJunos, 2);
  if (StartsWith(t, "priority-flow-control mode")) add(QosFormat::kNxos, 1);
}

SegmentedText SegmentQosText(std::string_view text, std::optional<QosFormat> forced) {
  SegmentedText out;
  std::vector<TextLine> lines = SplitLines(text);
  out.content.resize(lines.size());
  std::vector<std::vector<int64_t>> raw;
  std::vector<int64_t> cur;
  auto flush = [&]() {
    if (!cur.empty()) raw.push_back(cur);
    cur.clear();
  };
  auto skip = [&](const TextLine& l, const std::string& reason) {
    out.skipped.push_back({l.number, std::string(l.text), reason});
  };
  for (const TextLine& l : lines) {
    std::string_view t = Trim(l.text);
    size_t idx = static_cast<size_t>(l.number - 1);
    if (IsFence(t)) {
      skip(l, "Markdown code fence");
      flush();
      continue;
    }
    if (IsElision(t)) {
      skip(l, "elision");
      continue;
    }
    if (!t.empty() && t.front() != '{' && t.front() != '"' && t.front() != '}') {
      if (auto p = MatchPrompt(l.text)) {
        if (p->config) {
          out.content[idx] = p->command;
          cur.push_back(l.number);
        } else if (StartsWith(t, "#")) {
          skip(l, "comment");
        } else {
          skip(l, "shell prompt or command echo");
          flush();
        }
        continue;
      }
    }
    out.content[idx] = l.text;
    cur.push_back(l.number);
  }
  flush();

  // Split JSON documents out of mixed segments, then de-indent.
  std::vector<std::vector<int64_t>> parts;
  for (const std::vector<int64_t>& seg : raw) {
    size_t start = 0;
    for (size_t i = 0; i < seg.size(); ++i) {
      std::string_view t = Trim(out.content[static_cast<size_t>(seg[i] - 1)]);
      if (t.empty() || (t.front() != '{' && t.front() != '[')) continue;
      // "[" also opens NVUE/EOS-free lines rarely; require JSON-looking content.
      if (t.front() == '[' && t.size() > 1 && t[1] != '{' && t[1] != '"' && t != "[") continue;
      size_t end = JsonEnd(out.content, seg, i);
      if (i > start)
        parts.emplace_back(seg.begin() + static_cast<std::ptrdiff_t>(start),
                           seg.begin() + static_cast<std::ptrdiff_t>(i));
      parts.emplace_back(seg.begin() + static_cast<std::ptrdiff_t>(i),
                         seg.begin() + static_cast<std::ptrdiff_t>(end + 1));
      start = end + 1;
      i = end;
    }
    if (start < seg.size())
      parts.emplace_back(seg.begin() + static_cast<std::ptrdiff_t>(start), seg.end());
  }
  for (std::vector<int64_t>& part : parts) {
    size_t indent = std::string::npos;
    for (int64_t n : part) {
      const std::string& c = out.content[static_cast<size_t>(n - 1)];
      size_t i = c.find_first_not_of(" \t");
      if (i != std::string::npos) indent = std::min(indent, i);
    }
    if (indent == std::string::npos) continue;  // blank only
    Segment s;
    s.lines = part;
    bool json = false;
    for (int64_t n : part) {
      std::string& c = out.content[static_cast<size_t>(n - 1)];
      if (c.size() >= indent) c.erase(0, indent);
      std::string_view t = Trim(c);
      if (!json && !t.empty() && (t.front() == '{' || t.front() == '[') && n == part.front())
        json = true;
      ScoreQosLine(t, s.points);
    }
    if (!Trim(out.content[static_cast<size_t>(part.front() - 1)]).empty()) {
      std::string_view first = Trim(out.content[static_cast<size_t>(part.front() - 1)]);
      json = first.front() == '{' || first.front() == '[';
    }
    if (json) s.points[Index(QosFormat::kSonicJson)] += 10;
    out.segments.push_back(std::move(s));
  }

  // Formats: a segment's own evidence when strong enough, else the file's
  // dominant format when the segment carries some evidence for it.
  std::array<int, kQosFormatCount> total{};
  for (const Segment& s : out.segments)
    for (size_t f = 0; f < kQosFormatCount; ++f) total[f] += s.points[f];
  size_t dominant = 0;
  for (size_t f = 1; f < kQosFormatCount; ++f)
    if (total[f] > total[dominant]) dominant = f;
  for (Segment& s : out.segments) {
    if (forced) {
      s.format = forced;
      continue;
    }
    size_t best = 0;
    for (size_t f = 1; f < kQosFormatCount; ++f)
      if (s.points[f] > s.points[best]) best = f;
    if (s.points[best] >= 2) {
      s.format = static_cast<QosFormat>(best);
    } else if (total[dominant] >= 2 && s.points[dominant] > 0) {
      s.format = static_cast<QosFormat>(dominant);
    }
  }
  // Unrecognised segments that sit between two parts of the same text format
  // with no separator of their own (e.g. an interface block of an NX-OS
  // config in a document) still belong to it when the file has one format.
  std::set<size_t> formats;
  for (const Segment& s : out.segments)
    if (s.format && *s.format != QosFormat::kSonicJson) formats.insert(Index(*s.format));
  if (formats.size() == 1 && !forced) {
    QosFormat only = static_cast<QosFormat>(*formats.begin());
    if (only == QosFormat::kNxos || only == QosFormat::kEos || only == QosFormat::kOnyx ||
        only == QosFormat::kDellSonic || only == QosFormat::kJunos) {
      static const std::regex kIf(R"(^interface\s+\S)", std::regex::icase);
      for (Segment& s : out.segments) {
        if (s.format) continue;
        std::string first(Trim(out.content[static_cast<size_t>(s.lines.front() - 1)]));
        if (std::regex_search(first, kIf)) s.format = only;
      }
    }
  }
  return out;
}

std::string SegmentText(const SegmentedText& s, const std::vector<int64_t>& lines) {
  std::vector<bool> keep(s.content.size(), false);
  for (int64_t n : lines)
    if (n >= 1 && static_cast<size_t>(n) <= keep.size()) keep[static_cast<size_t>(n - 1)] = true;
  std::string out;
  for (size_t i = 0; i < s.content.size(); ++i) {
    if (i) out += '\n';
    if (keep[i]) out += s.content[i];
  }
  return out;
}

GroupText::GroupText(const SegmentedText& s, const std::vector<int64_t>& lines)
    : text_(SegmentText(s, lines)) {
  starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') starts_.push_back(i + 1);
}

void GroupText::Blank(int64_t line) {
  if (line < 1 || static_cast<size_t>(line) > starts_.size()) return;
  const size_t i = static_cast<size_t>(line - 1);
  const size_t begin = starts_[i];
  const size_t end = i + 1 < starts_.size() ? starts_[i + 1] - 1 : text_.size();
  text_.erase(begin, end - begin);
  for (size_t j = i + 1; j < starts_.size(); ++j) starts_[j] -= end - begin;
}

}  // namespace lossless::audit::qos::internal
