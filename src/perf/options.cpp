#include "perf/options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"

namespace lossless::perf {
namespace {

enum class Kind { kInt, kSize, kText, kFlag };

struct Flag {
  char short_name;  // 0: long only
  std::string_view long_name;
  Kind kind;
  std::function<void(PerfOptions&, const std::string& value, int64_t number, const Location& where)>
      set;
};

Location Cli(std::string field) {
  return Location{"<cli>", 0, std::move(field)};
}

int64_t InRange(int64_t v, int64_t lo, int64_t hi, const Location& where) {
  if (v < lo || v > hi) {
    throw InputError(where,
                     Expected(hi == INT64_MAX ? fmt::format("an integer >= {}", lo)
                                              : fmt::format("an integer from {} to {}", lo, hi),
                              std::to_string(v)));
  }
  return v;
}

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> kFlags = [] {
    std::vector<Flag> f;
    auto integer = [&f](char s, std::string_view l, int64_t lo, int64_t hi,
                        int64_t PerfOptions::*field) {
      f.push_back({s, l, Kind::kInt,
                   [lo, hi, field](PerfOptions& o, const std::string&, int64_t v,
                                   const Location& w) { o.*field = InRange(v, lo, hi, w); }});
    };
    auto size = [&f](char s, std::string_view l, int64_t PerfOptions::*field) {
      f.push_back({s, l, Kind::kSize,
                   [field](PerfOptions& o, const std::string&, int64_t v, const Location&) {
                     o.*field = v;
                   }});
    };
    constexpr int64_t kMax = INT64_MAX;
    integer('t', "nthreads", 1, 1024, &PerfOptions::n_threads);
    integer('g', "ngpus", 1, 1024, &PerfOptions::n_gpus);
    size('b', "minbytes", &PerfOptions::min_bytes);
    size('e', "maxbytes", &PerfOptions::max_bytes);
    size('i', "stepbytes", &PerfOptions::step_bytes);
    integer('f', "stepfactor", 0, kMax, &PerfOptions::step_factor);
    integer('n', "iters", 1, kMax, &PerfOptions::iters);
    integer('m', "agg_iters", 1, kMax, &PerfOptions::agg_iters);
    integer('w', "warmup_iters", 0, kMax, &PerfOptions::warmup_iters);
    integer('N', "run_cycles", 1, kMax, &PerfOptions::run_cycles);
    integer('p', "parallel_init", 0, 1, &PerfOptions::parallel_init);
    integer('c', "check", 0, kMax, &PerfOptions::check);
    f.push_back({'o', "op", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v == "all") {
                     auto all = collective::AllRedOps();
                     o.ops.assign(all.begin(), all.end());
                   } else {
                     o.ops = {collective::ParseRedOp(v, w)};
                   }
                 }});
    f.push_back({'d', "datatype", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v == "all") {
                     auto all = collective::AllDataTypes();
                     o.types.assign(all.begin(), all.end());
                   } else {
                     o.types = {collective::ParseDataType(v, w)};
                   }
                 }});
    integer('r', "root", -1, kMax, &PerfOptions::root);
    integer('z', "blocking", 0, 3, &PerfOptions::blocking);
    integer('y', "stream_null", 0, 1, &PerfOptions::stream_null);
    integer('T', "timeout", 0, kMax, &PerfOptions::timeout);
    integer('G', "cudagraph", 0, kMax, &PerfOptions::cudagraph);
    integer('C', "report_cputime", 0, 1, &PerfOptions::report_cputime);
    integer('a', "average", 0, 3, &PerfOptions::average);
    integer('R', "local_register", 0, 2, &PerfOptions::local_register);
    integer('x', "cta_policy", 0, 2, &PerfOptions::cta_policy);
    integer('D', "device_implementation", 0, kMax, &PerfOptions::device_impl);
    integer('V', "device_cta_count", 1, kMax, &PerfOptions::device_cta_count);
    f.push_back({'J', "output_file", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v.size() < 6 || !v.ends_with(".json")) {
                     throw InputError(w, Expected("a file name ending in .json", v));
                   }
                   o.output_file = v;
                 }});
    integer('S', "report_timestamps", 0, 1, &PerfOptions::report_timestamps);
    integer('M', "memory", 0, 1, &PerfOptions::memory_report);
    integer('u', "unalign", 0, kMax, &PerfOptions::unalign);
    integer('I', "per_iter_timing", 0, 1, &PerfOptions::per_iter_timing);
    integer('K', "per_iter_skip", 0, kMax, &PerfOptions::per_iter_skip);
    f.push_back(
        {'h', "help", Kind::kFlag,
         [](PerfOptions& o, const std::string&, int64_t, const Location&) { o.help = true; }});
    integer(0, "nodes", 1, 1 << 20, &PerfOptions::nodes);
    f.push_back({0, "fabric", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v.empty())
                     throw InputError(w, "expected a fabric name, got an empty string");
                   o.fabric = v;
                 }});
    f.push_back({0, "scenario", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v.empty())
                     throw InputError(w, "expected a scenario file, got an empty string");
                   o.scenario = v;
                 }});
    f.push_back({0, "format", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v == "g3") {
                     o.format = OutputFormat::kG3;
                   } else if (v == "g2") {
                     o.format = OutputFormat::kG2;
                   } else {
                     throw InputError(w, Expected("g3 or g2", v));
                   }
                 }});
    f.push_back({0, "json", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v.empty()) throw InputError(w, "expected a file name, got an empty string");
                   o.json = v;
                 }});
    f.push_back({0, "trace", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v.empty()) throw InputError(w, "expected a file name, got an empty string");
                   o.trace = v;
                 }});
    f.push_back({0, "pcap", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   if (v.empty()) throw InputError(w, "expected a file name, got an empty string");
                   o.pcap = v;
                 }});
    f.push_back(
        {0, "timing", Kind::kFlag,
         [](PerfOptions& o, const std::string&, int64_t, const Location&) { o.timing = true; }});
    f.push_back(
        {0, "model", Kind::kFlag,
         [](PerfOptions& o, const std::string&, int64_t, const Location&) { o.model = true; }});
    auto text = [&f](std::string_view l, std::string PerfOptions::*field, const char* what) {
      f.push_back({0, l, Kind::kText,
                   [field, what](PerfOptions& o, const std::string& v, int64_t,
                                 const Location& w) {
                     if (v.empty())
                       throw InputError(w, fmt::format("expected {}, got an empty string", what));
                     o.*field = v;
                   }});
    };
    text("gpu", &PerfOptions::gpu, "a node preset (a100, h100, h200, b200)");
    text("topo", &PerfOptions::topo, "an nvidia-smi topo -m file");
    text("nic-map", &PerfOptions::nic_map, "a NIC index per GPU (0,1,2,...)");
    integer(0, "pcie-gen", 1, 6, &PerfOptions::pcie_gen);
    integer(0, "qps", 1, 128, &PerfOptions::qps_per_connection);
    f.push_back({0, "gdr", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   const std::string t = text::ToLower(v);
                   if (t == "on" || t == "1") {
                     o.gdr = 1;
                   } else if (t == "off" || t == "0") {
                     o.gdr = 0;
                   } else {
                     throw InputError(w, Expected("on or off", v));
                   }
                 }});
    f.push_back({0, "algo", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   SetAlgo(o, v, w);  // checked against the collective after parsing
                 }});
    f.push_back({0, "proto", Kind::kText,
                 [](PerfOptions& o, const std::string& v, int64_t, const Location& w) {
                   SetProto(o, v, w);
                 }});
    return f;
  }();
  return kFlags;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  // strtol(value, NULL, 0) as nccl-tests, but the whole text must be the number.
  std::string t(s);
  if (t.empty() || text::IsSpace(t.front())) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(t.c_str(), &end, 0);
  if (errno != 0 || end != t.c_str() + t.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

}  // namespace

void SetAlgo(PerfOptions& o, std::string_view value, const Location& where) {
  const std::string v = text::ToLower(value);
  if (v != "ring" && v != "tree") {
    throw InputError(where, Expected("Ring or Tree (the algorithms lossless simulates)",
                                     std::string(value)));
  }
  if (v == "tree" && o.collective != collective::Collective::kAllReduce) {
    throw InputError(where, fmt::format("Tree is an all_reduce algorithm in NCCL; {} runs Ring",
                                        collective::CollectiveName(o.collective)));
  }
  o.algo = v;
}

void SetProto(PerfOptions& o, std::string_view value, const Location& where) {
  std::string_view v = text::Trim(value);
  std::string out;
  if (!v.empty() && v.front() == '^') {
    out = "^";
    v.remove_prefix(1);
  }
  bool any = false;
  while (true) {
    const size_t comma = v.find(',');
    const std::string name = text::ToLower(text::Trim(v.substr(0, comma)));
    const char* canonical = name == "ll"       ? "LL"
                            : name == "ll128"  ? "LL128"
                            : name == "simple" ? "Simple"
                                               : nullptr;
    if (canonical == nullptr) {
      throw InputError(where, Expected("LL, LL128 or Simple (a comma-separated list, '^' to "
                                       "exclude)",
                                       std::string(value)));
    }
    if (any) out.push_back(',');
    out.append(canonical);
    any = true;
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  o.proto = out;
}

void ApplyNcclEnv(PerfOptions& o, const std::function<const char*(const char*)>& get) {
  if (const char* v = get("NCCL_ALGO"); v != nullptr && o.algo.empty())
    SetAlgo(o, v, {"<env>", 0, "NCCL_ALGO"});
  if (const char* v = get("NCCL_PROTO"); v != nullptr && o.proto.empty())
    SetProto(o, v, {"<env>", 0, "NCCL_PROTO"});
  auto integer = [&](const char* name, int64_t lo, int64_t hi, int64_t multiple,
                     int64_t& field) {
    const char* v = get(name);
    if (v == nullptr) return;
    const std::optional<int64_t> n = ParseInt(v);
    if (!n || *n < lo || *n > hi || *n % multiple != 0) {
      throw InputError({"<env>", 0, name},
                       Expected(multiple > 1 ? fmt::format("an integer from {} to {}, a multiple "
                                                           "of {}",
                                                           lo, hi, multiple)
                                             : fmt::format("an integer from {} to {}", lo, hi),
                                std::string(v)));
    }
    field = *n;
  };
  integer("NCCL_MIN_NCHANNELS", 1, 64, 1, o.min_channels);
  integer("NCCL_MAX_NCHANNELS", 1, 64, 1, o.max_channels);
  integer("NCCL_BUFFSIZE", int64_t{64} << 10, int64_t{1} << 30, 4096, o.buffsize);
  if (o.qps_per_connection < 1)  // --qps wins, as --algo and --proto do
    integer("NCCL_IB_QPS_PER_CONNECTION", 1, 128, 1, o.qps_per_connection);
  integer("NCCL_IB_SPLIT_DATA_ON_QPS", 0, 1, 1, o.split_data_on_qps);
}

std::optional<int64_t> ParseSize(std::string_view text_in) {
  std::string_view t = text::Trim(text_in);
  if (t.empty()) return std::nullopt;
  int64_t unit = 1;
  const char last = t.back();
  if (last == 'K' || last == 'k') unit = 1024;
  if (last == 'M' || last == 'm') unit = int64_t{1} << 20;
  if (last == 'G' || last == 'g') unit = int64_t{1} << 30;
  if (unit != 1) t = text::Trim(t.substr(0, t.size() - 1));
  if (t.empty()) return std::nullopt;
  std::string num(t);
  // A decimal number only (nccl-tests' %lf also reads hex floats and "inf"; not here).
  for (char c : num) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return std::nullopt;
    }
  }
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(num.c_str(), &end);
  if (errno != 0 || end != num.c_str() + num.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  const double bytes = v * static_cast<double>(unit);
  if (bytes > 4.6e18) return std::nullopt;
  return static_cast<int64_t>(bytes);  // rounded down, as the size_t cast of nccl-tests
}

std::vector<int64_t> PerfOptions::Roots() const {
  if (!collective::HasRoot(collective)) return {-1};
  if (root >= 0) return {root};
  std::vector<int64_t> all;
  for (int64_t r = 0; r < Ranks(); ++r) all.push_back(r);
  return all;
}

PerfOptions ParsePerfArgs(std::span<const std::string> args) {
  PerfOptions o;
  bool have_collective = false;
  std::vector<std::string> names;
  for (const Flag& f : Flags()) {
    names.push_back("--" + std::string(f.long_name));
    if (f.short_name) names.push_back(std::string("-") + f.short_name);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) {
      if (have_collective) {
        throw InputError(Cli("collective"),
                         fmt::format("one collective only, got {} after {}", QuoteForMessage(a),
                                     collective::CollectiveName(o.collective)));
      }
      o.collective = collective::ParseCollective(a, Cli("collective"));
      have_collective = true;
      continue;
    }
    const Flag* flag = nullptr;
    std::string field;
    std::optional<std::string> value;
    if (a.starts_with("--")) {
      std::string name = a.substr(2);
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
      }
      for (const Flag& f : Flags()) {
        if (f.long_name == name) flag = &f;
      }
      field = "--" + name;
    } else {
      for (const Flag& f : Flags()) {
        if (f.short_name == a[1]) flag = &f;
      }
      field = a.substr(0, 2);
      if (a.size() > 2) value = a.substr(2);
    }
    if (!flag) {
      NearestName near = FindNearestName(field, names);
      std::string msg = fmt::format("unknown option {}", QuoteForMessage(a));
      if (near.Close(2)) msg += fmt::format("; did you mean '{}'?", near.name);
      throw InputError(Cli(field), msg);
    }
    const Location where = Cli(field);
    if (flag->kind == Kind::kFlag) {
      if (value) throw InputError(where, fmt::format("{} takes no value", field));
      flag->set(o, "", 0, where);
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) throw InputError(where, fmt::format("{} needs a value", field));
      value = args[++i];
    }
    int64_t number = 0;
    if (flag->kind == Kind::kInt) {
      auto v = ParseInt(*value);
      if (!v) throw InputError(where, Expected("an integer", *value));
      number = *v;
    } else if (flag->kind == Kind::kSize) {
      auto v = ParseSize(*value);
      if (!v)
        throw InputError(where,
                         Expected("a size in bytes with an optional K, M or G suffix", *value));
      number = *v;
    }
    flag->set(o, *value, number, where);
  }
  if (o.help) return o;

  if (o.min_bytes > o.max_bytes) {
    throw InputError(
        Cli("-b"), fmt::format("minbytes {} is above maxbytes {} (-e)", o.min_bytes, o.max_bytes));
  }
  if (o.step_factor <= 1 && o.step_bytes <= 0) {
    throw InputError(Cli("-f"),
                     "a step factor below 2 needs a step increment above 0 (-i); the sizes "
                     "would never grow");
  }
  if (o.step_factor > 1 && o.min_bytes == 0) {
    throw InputError(Cli("-b"),
                     "minbytes 0 with a step factor never grows; start at 1 byte or more");
  }
  if (const int64_t n = SizeCount(o); n > kMaxSizes) {
    throw InputError(Cli(o.step_factor > 1 ? "-f" : "-i"),
                     fmt::format("the sweep from {} to {} bytes has {} sizes; at most {}",
                                 o.min_bytes, o.max_bytes, n, kMaxSizes));
  }
  if (!o.algo.empty()) SetAlgo(o, o.algo, Cli("--algo"));
  if (o.root >= o.Ranks()) {
    throw InputError(Cli("-r"),
                     fmt::format("root {} is not one of the {} ranks", o.root, o.Ranks()));
  }
  if (o.per_iter_skip > 0 && (o.per_iter_timing == 0 || o.per_iter_skip >= o.iters)) {
    throw InputError(
        Cli("-K"), fmt::format("per-iteration skip needs -I 1 and must be below -n ({})", o.iters));
  }
  if (o.per_iter_timing && o.format == OutputFormat::kG2) {
    throw InputError(
        Cli("-I"),
        "per-iteration columns exist only in the G3 layout (nccl-tests v2.19.2+); drop "
        "--format g2");
  }
  if (o.report_timestamps) {
    throw InputError(Cli("-S"), "timestamps are not supported: lossless output is deterministic");
  }
  if (o.memory_report) {
    throw InputError(Cli("-M"), "the GPU memory report is not modelled");
  }
  if (o.device_impl > 0 && o.local_register != 2) {
    throw InputError(Cli("-D"),
                     "device implementation (-D > 0) requires symmetric registration (-R 2)");
  }
  return o;
}

int64_t SizeCount(const PerfOptions& o) {
  if (o.min_bytes > o.max_bytes) return 0;
  if (o.step_factor > 1) {
    if (o.min_bytes <= 0) return 1;  // rejected by ParsePerfArgs: 0 never grows
    int64_t n = 1;
    for (int64_t s = o.min_bytes; s <= o.max_bytes / o.step_factor; s *= o.step_factor) ++n;
    return n;
  }
  if (o.step_bytes <= 0) return 1;
  return (o.max_bytes - o.min_bytes) / o.step_bytes + 1;
}

std::vector<int64_t> SizeSequence(const PerfOptions& o) {
  std::vector<int64_t> sizes;
  int64_t s = o.min_bytes;
  while (s <= o.max_bytes) {
    sizes.push_back(s);
    int64_t next = 0;
    if (o.step_factor > 1) {
      if (s > o.max_bytes / o.step_factor) break;  // the next one would exceed max (or overflow)
      next = s * o.step_factor;
    } else {
      if (o.step_bytes <= 0 || s > o.max_bytes - o.step_bytes) break;
      next = s + o.step_bytes;
    }
    if (next == s) break;
    s = next;
  }
  return sizes;
}

std::string PerfUsage() {
  return "usage: lossless perf <collective> [nccl-tests flags] [lossless flags]\n"
         "  collectives: all_reduce reduce_scatter all_gather broadcast reduce alltoall sendrecv\n"
         "  nccl-tests flags (same meaning and defaults as nccl-tests v2.19.6):\n"
         "    -t,--nthreads <n> (1)  -g,--ngpus <GPUs per thread> (1)\n"
         "    -b,--minbytes <size> (32M)  -e,--maxbytes <size> (32M)\n"
         "    -i,--stepbytes <size> (1M)  -f,--stepfactor <factor> (1: use -i)\n"
         "    -n,--iters <n> (20)  -w,--warmup_iters <n> (1)  -m,--agg_iters <n> (1)  "
         "-N,--run_cycles <n> (1)\n"
         "    -o,--op <sum|prod|min|max|avg|mulsum|all> (sum)\n"
         "    -d,--datatype "
         "<int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16|f8e4m3|f8e5m2|all> "
         "(float)\n"
         "    -r,--root <rank|-1> (0)  -c,--check <n> (1)  -z,--blocking <0-3> (0)  -a,--average "
         "<0-3> (1)\n"
         "    -p -y -T -G -C -R -x -D -V -J -S -M -u -I -K as nccl-tests\n"
         "  lossless flags:\n"
         "    --nodes <n> (1)  --fabric <name>  --scenario <file>  --format <g3|g2> (g3)\n"
         "    --json <file> (lossless.perf/1)  --model (the alpha-beta model beside each row)\n"
         "    --timing (wall time, events and packet-hops per second on standard error)\n"
         "    --trace <file> (timeline for ui.perfetto.dev)  --pcap <file> (pcapng for Wireshark)\n"
         "    --algo <ring|tree> (NCCL's choice per size; NCCL_ALGO=Ring|Tree too)\n"
         "    --proto <LL|LL128|Simple> (NCCL's choice per size; NCCL_PROTO too, lists and ^)\n"
         "    --gpu <a100|h100|h200|b200> (h100)  --gdr <on|off> (on)  --pcie-gen <1-6> (preset's)\n"
         "    --topo <nvidia-smi topo -m file> (each GPU its nearest NIC)  --nic-map <0,1,...>\n"
         "    --qps <1-128> (queue pairs per network connection; NCCL_IB_QPS_PER_CONNECTION too)\n"
         "  NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_BUFFSIZE, NCCL_IB_QPS_PER_CONNECTION,\n"
         "  NCCL_IB_SPLIT_DATA_ON_QPS as NCCL reads them\n"
         "  ranks = nodes x threads x GPUs (one process per node)\n";
}

}  // namespace lossless::perf
