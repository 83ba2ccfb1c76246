// The explicit topology line format (docs/topology-file.md).
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "base/input_file.hpp"
#include "base/text.hpp"
#include "topology/topology.hpp"

namespace lossless::topology {
namespace {

constexpr int64_t kMaxCount = 65536;
constexpr int64_t kMaxGroup = INT32_MAX;

struct KeyValue {
  std::string key;
  std::string value;
};

// One `link` line, resolved once every node is known.
struct PendingLink {
  std::string a;
  std::string b;
  units::Rate rate;
  units::Time delay;
  int64_t count = 1;
  int64_t line = 0;
};

// " (did you mean "x"?)" for the nearest option, or "" if none is close.
std::string Suggest(const std::string& got, const std::vector<std::string_view>& options) {
  const NearestName best =
      FindNearestName(got, std::vector<std::string>(options.begin(), options.end()));
  if (!best.Close(std::max<size_t>(2, got.size() / 2))) return "";
  return fmt::format(" (did you mean {}?)", QuoteForMessage(best.name));
}

std::string Join(const std::vector<std::string_view>& options) {
  std::string out;
  for (size_t i = 0; i < options.size(); ++i) {
    if (i > 0) out += i + 1 == options.size() ? " or " : ", ";
    out += options[i];
  }
  return out;
}

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || c == ':' || c == '/';
    if (!ok) return false;
  }
  return true;
}

// Words of a line split on spaces and tabs only.
std::vector<std::string> Tokens(std::string_view line) {
  std::vector<std::string_view> words = text::SplitWhitespace(line, " \t");
  return std::vector<std::string>(words.begin(), words.end());
}

// Whole decimal integer in [lo, hi].
int64_t ParseInt(const std::string& text, int64_t lo, int64_t hi, const Location& where,
                 const std::string& what) {
  int64_t v = 0;
  bool ok = !text.empty() && text.size() <= 18;
  for (char c : text) {
    if (!ok || c < '0' || c > '9') {
      ok = false;
      break;
    }
    v = v * 10 + (c - '0');
  }
  if (!ok || v < lo || v > hi) {
    throw InputError(where, Expected(fmt::format("{} from {} to {}", what, lo, hi), text));
  }
  return v;
}

// "<decimal>m", > 0, at most 100 km; converted with CableDelay (5 ns/m).
units::Time ParseLength(const std::string& text, const Location& where) {
  const std::string what = "a cable length above zero such as 30m or 2.5m";
  bool ok = text.size() >= 2 && text.size() <= 20 && text.back() == 'm';
  int dots = 0;
  int digits = 0;
  for (size_t i = 0; ok && i + 1 < text.size(); ++i) {
    if (text[i] == '.') {
      ++dots;
    } else if (text[i] >= '0' && text[i] <= '9') {
      ++digits;
    } else {
      ok = false;
    }
  }
  ok = ok && dots <= 1 && digits > 0;
  const double metres = ok ? std::stod(text.substr(0, text.size() - 1)) : 0.0;
  if (!ok || metres > 100'000.0) throw InputError(where, Expected(what, text));
  const units::Time delay = units::CableDelay(metres);
  if (delay.ps() <= 0) throw InputError(where, Expected(what, text));
  return delay;
}

units::Time CheckDelay(units::Time delay, const std::string& text, const Location& where) {
  if (delay.ps() <= 0) {
    throw InputError(
        where, Expected("a delay above zero (components talk over links with latency > 0)", text));
  }
  return delay;
}

class Parser {
 public:
  Parser(std::string file, const TopologyFileLimits& limits)
      : file_(std::move(file)), limits_(limits) {}

  void Line(std::string_view raw, int64_t line) {
    line_ = line;
    if (const size_t hash = raw.find('#'); hash != std::string_view::npos)
      raw = raw.substr(0, hash);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::vector<std::string> tokens = Tokens(raw);
    if (tokens.empty()) return;
    const std::string& keyword = tokens[0];
    if (keyword == "defaults") {
      Defaults(tokens);
    } else if (keyword == "switch" || keyword == "host") {
      NodeLine(tokens);
    } else if (keyword == "link") {
      LinkLine(tokens);
    } else {
      static const std::vector<std::string_view> kKeywords = {"defaults", "switch", "host", "link"};
      throw InputError(At("keyword"), Expected("one of " + Join(kKeywords), keyword) +
                                          Suggest(keyword, kKeywords));
    }
  }

  Topology Finish() {
    if (t_.hosts.empty()) {
      throw InputError(Location{file_, 0, "host"}, "expected at least one host line, got none");
    }
    std::vector<int64_t> host_link_line(t_.nodes.size(), 0);
    for (const PendingLink& pl : links_) {
      line_ = pl.line;
      const uint32_t a = Resolve(pl.a);
      const uint32_t b = Resolve(pl.b);
      if (a == b) {
        throw InputError(At("link"), fmt::format("expected two different nodes, got {} twice",
                                                 QuoteForMessage(pl.a)));
      }
      for (uint32_t v : {a, b}) {
        if (t_.nodes[v].kind != NodeKind::kHost) continue;
        if (pl.count > 1) {
          throw InputError(At("link.count"),
                           fmt::format("a link to host {} cannot have count={}; a host is one NIC "
                                       "port and takes exactly one link",
                                       QuoteForMessage(t_.nodes[v].name), pl.count));
        }
        if (host_link_line[v] != 0) {
          throw InputError(At("link"),
                           fmt::format("host {} already has a link (line {}); a host is one NIC "
                                       "port and takes exactly one link",
                                       QuoteForMessage(t_.nodes[v].name), host_link_line[v]));
        }
        host_link_line[v] = pl.line;
      }
      for (int64_t i = 0; i < pl.count; ++i) t_.links.push_back({a, b, pl.rate, pl.delay});
    }
    for (uint32_t h : t_.hosts) {
      if (host_link_line[h] == 0) {
        throw InputError(Location{file_, decl_line_[h], "host"},
                         fmt::format("host {} has no link; every host needs exactly one",
                                     QuoteForMessage(t_.nodes[h].name)));
      }
    }
    if (auto pair = FindUnreachableHosts(t_)) {
      const uint32_t a = t_.hosts[pair->first];
      const uint32_t b = t_.hosts[pair->second];
      throw InputError(
          Location{file_, decl_line_[b], "link"},
          fmt::format("hosts {} and {} are not connected: the topology has no path "
                      "between them",
                      QuoteForMessage(t_.nodes[a].name), QuoteForMessage(t_.nodes[b].name)));
    }
    t_.description =
        fmt::format("explicit topology from {}: {} hosts, {} switches, {} links", file_,
                    t_.hosts.size(), t_.nodes.size() - t_.hosts.size(), t_.links.size());
    return std::move(t_);
  }

 private:
  Location At(const std::string& field) const { return Location{file_, line_, field}; }

  // key=value tokens after `skip` positional ones; keys checked against `allowed`.
  std::vector<KeyValue> Keys(const std::vector<std::string>& tokens, size_t skip,
                             const std::string& statement,
                             const std::vector<std::string_view>& allowed) {
    std::vector<KeyValue> out;
    for (size_t i = skip; i < tokens.size(); ++i) {
      const std::string& tok = tokens[i];
      const size_t eq = tok.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == tok.size()) {
        throw InputError(At(statement),
                         Expected(fmt::format("key=value with a key of {}", Join(allowed)), tok));
      }
      KeyValue kv{tok.substr(0, eq), tok.substr(eq + 1)};
      bool known = false;
      for (std::string_view a : allowed) known = known || a == kv.key;
      if (!known) {
        throw InputError(
            At(statement),
            Expected(fmt::format("a key of {}", Join(allowed)), kv.key) + Suggest(kv.key, allowed));
      }
      for (const KeyValue& seen : out) {
        if (seen.key == kv.key) {
          throw InputError(At(statement + "." + kv.key),
                           fmt::format("key {} given twice", QuoteForMessage(kv.key)));
        }
      }
      out.push_back(std::move(kv));
    }
    return out;
  }

  // rate / delay / length keys shared by `defaults` and `link`.
  void RateDelay(const std::vector<KeyValue>& keys, const std::string& statement, units::Rate& rate,
                 units::Time& delay, bool& has_rate, bool& has_delay) {
    bool delay_here = false;
    for (const KeyValue& kv : keys) {
      const Location where = At(statement + "." + kv.key);
      if (kv.key == "rate") {
        // A bare number is refused, as in scenarios (docs/units.md): "400"
        // would be 400 bit/s.
        if (!kv.value.empty() && kv.value.find_first_not_of("0123456789.") == std::string::npos)
          throw InputError(where, Expected("a rate with a unit such as 400Gbps", kv.value));
        rate = units::ParseRate(kv.value, where);
        has_rate = true;
      } else if (kv.key == "delay" || kv.key == "length") {
        if (delay_here) {
          throw InputError(where, "give either delay= or length=, not both");
        }
        delay_here = true;
        delay = kv.key == "delay" ? CheckDelay(units::ParseTime(kv.value, where), kv.value, where)
                                  : ParseLength(kv.value, where);
        has_delay = true;
      }
    }
  }

  void Defaults(const std::vector<std::string>& tokens) {
    const auto keys = Keys(tokens, 1, "defaults", {"rate", "delay", "length"});
    RateDelay(keys, "defaults", rate_, delay_, has_rate_, has_delay_);
  }

  void NodeLine(const std::vector<std::string>& tokens) {
    const std::string& keyword = tokens[0];
    const bool host = keyword == "host";
    if (tokens.size() < 2 || tokens[1].find('=') != std::string::npos) {
      throw InputError(At(keyword + ".name"),
                       Expected(fmt::format("\"{} NAME [key=value...]\"", keyword),
                                tokens.size() < 2 ? keyword : keyword + " " + tokens[1]));
    }
    const std::string& name = tokens[1];
    if (!ValidName(name)) {
      throw InputError(At(keyword + ".name"),
                       Expected("a name of letters, digits and _ . - : /", name));
    }
    if (auto it = index_.find(name); it != index_.end()) {
      throw InputError(At(keyword + ".name"),
                       fmt::format("duplicate node name {} (first declared on line {})",
                                   QuoteForMessage(name), decl_line_[it->second]));
    }
    Node node;
    node.name = name;
    node.kind = host ? NodeKind::kHost : NodeKind::kSwitch;
    node.tier = host ? Tier::kHost : Tier::kOther;
    const std::vector<std::string_view> allowed =
        host ? std::vector<std::string_view>{"group"}
             : std::vector<std::string_view>{"tier", "group"};
    for (const KeyValue& kv : Keys(tokens, 2, keyword, allowed)) {
      const Location where = At(keyword + "." + kv.key);
      if (kv.key == "group") {
        node.group = static_cast<int32_t>(ParseInt(kv.value, 0, kMaxGroup, where, "a group"));
      } else {
        static const std::vector<std::string_view> kTiers = {"leaf", "spine", "core", "other"};
        const std::string& v = kv.value;
        if (v == "leaf") {
          node.tier = Tier::kLeaf;
        } else if (v == "spine") {
          node.tier = Tier::kSpine;
        } else if (v == "core") {
          node.tier = Tier::kCore;
        } else if (v == "other") {
          node.tier = Tier::kOther;
        } else {
          throw InputError(where, Expected("a tier of " + Join(kTiers), v) + Suggest(v, kTiers));
        }
      }
    }
    if (static_cast<int64_t>(t_.nodes.size()) >= limits_.max_nodes) {
      throw InputError(At(keyword), fmt::format("more than {} hosts and switches: expected at "
                                                "most {} nodes in a topology file",
                                                limits_.max_nodes, limits_.max_nodes));
    }
    const auto idx = static_cast<uint32_t>(t_.nodes.size());
    index_.emplace(name, idx);
    decl_line_.push_back(line_);
    t_.nodes.push_back(std::move(node));
    if (host) t_.hosts.push_back(idx);
  }

  void LinkLine(const std::vector<std::string>& tokens) {
    if (tokens.size() < 3 || tokens[1].find('=') != std::string::npos ||
        tokens[2].find('=') != std::string::npos) {
      std::string got;
      for (size_t i = 0; i < tokens.size() && i < 3; ++i) got += (i ? " " : "") + tokens[i];
      throw InputError(At("link"), Expected("\"link A B [key=value...]\"", got));
    }
    PendingLink pl;
    pl.a = tokens[1];
    pl.b = tokens[2];
    pl.line = line_;
    pl.rate = rate_;
    pl.delay = delay_;
    bool has_rate = has_rate_;
    bool has_delay = has_delay_;
    const auto keys = Keys(tokens, 3, "link", {"rate", "delay", "length", "count"});
    RateDelay(keys, "link", pl.rate, pl.delay, has_rate, has_delay);
    for (const KeyValue& kv : keys) {
      if (kv.key == "count") {
        pl.count = ParseInt(kv.value, 1, kMaxCount, At("link.count"), "a link count");
      }
    }
    if (!has_rate) {
      throw InputError(At("link.rate"),
                       "no rate: give rate= on the link or in a defaults line above it");
    }
    if (!has_delay) {
      throw InputError(At("link.delay"),
                       "no delay: give delay= or length= on the link or in a defaults line above "
                       "it");
    }
    // Counted here, before any link is built: count= multiplies a short line.
    total_links_ += pl.count;
    if (total_links_ > limits_.max_links) {
      throw InputError(At("link.count"),
                       fmt::format("{} links so far: expected at most {} links in a topology file",
                                   total_links_, limits_.max_links));
    }
    for (const std::string& end : {pl.a, pl.b}) {
      int64_t& ports = ports_[end];
      ports += pl.count;
      if (ports > limits_.max_ports) {
        throw InputError(At("link.count"),
                         fmt::format("{} has {} links so far: expected at most {} ports at one "
                                     "node",
                                     QuoteForMessage(end), ports, limits_.max_ports));
      }
    }
    links_.push_back(std::move(pl));
  }

  uint32_t Resolve(const std::string& name) {
    if (auto it = index_.find(name); it != index_.end()) return it->second;
    std::vector<std::string_view> names;
    names.reserve(t_.nodes.size());
    for (const Node& n : t_.nodes) names.emplace_back(n.name);
    throw InputError(At("link"), Expected("a node declared by a host or switch line", name) +
                                     Suggest(name, names));
  }

  std::string file_;
  TopologyFileLimits limits_;
  int64_t line_ = 0;
  int64_t total_links_ = 0;
  std::unordered_map<std::string, int64_t> ports_;  // links per node name
  Topology t_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<int64_t> decl_line_;  // per node
  std::vector<PendingLink> links_;
  units::Rate rate_;
  units::Time delay_;
  bool has_rate_ = false;
  bool has_delay_ = false;
};

}  // namespace

Topology ParseTopologyText(const std::string& text, const std::string& file_name,
                           const TopologyFileLimits& limits) {
  Parser parser(file_name, limits);
  int64_t line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    parser.Line(std::string_view(text).substr(pos, end - pos), ++line);
    pos = end + 1;
  }
  return parser.Finish();
}

Topology ParseTopologyFile(const std::string& path, const TopologyFileLimits& limits) {
  return ParseTopologyText(ReadTextInput(path, "a topology file"), path, limits);
}

}  // namespace lossless::topology
