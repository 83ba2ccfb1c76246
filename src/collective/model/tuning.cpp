#include "collective/model/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::collective {
namespace {

constexpr int kTree = 0;
constexpr int kRing = 1;
constexpr int kLL = 0;
constexpr int kLL128 = 1;
constexpr int kSimple = 2;
constexpr int kHwNvlink = 0;
constexpr int kHwPci = 1;
constexpr int kHwNet = 2;

// NCCL's function index (ncclFunc_t order): Broadcast, Reduce, AllGather, ReduceScatter, AllReduce.
constexpr std::array<std::string_view, 5> kFuncNames = {"Broadcast", "Reduce", "AllGather",
                                                        "ReduceScatter", "AllReduce"};
constexpr int kFuncBroadcast = 0;
constexpr int kFuncReduce = 1;
constexpr int kFuncAllGather = 2;
constexpr int kFuncReduceScatter = 3;
constexpr int kFuncAllReduce = 4;
// ncclAlgoStr: the modelled ones first; the others parse but are never available here.
constexpr std::array<std::string_view, 7> kAlgoNames = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, 3> kProtoNames = {"LL", "LL128", "Simple"};

std::optional<int> FuncIndex(Collective c) {
  switch (c) {
    case Collective::kBroadcast:
      return kFuncBroadcast;
    case Collective::kReduce:
      return kFuncReduce;
    case Collective::kAllGather:
      return kFuncAllGather;
    case Collective::kReduceScatter:
      return kFuncReduceScatter;
    case Collective::kAllReduce:
      return kFuncAllReduce;
    case Collective::kAllToAll:
    case Collective::kSendRecv:
      return std::nullopt;
  }
  return std::nullopt;
}

// log2i of NCCL (src/include/bitops.h log2Down): floor(log2(n)), -1 for n <= 0.
int Log2i(int64_t n) {
  if (n <= 0) return -1;
  int r = -1;
  while (n > 0) {
    n >>= 1;
    ++r;
  }
  return r;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return text::ToLower(a) == text::ToLower(b);
}

// NCCL's parseList (src/graph/tuning.cc): "[prefix:]list[;prefix:list...]", the list
// comma-separated, a leading '^' inverting it; every entry but the first needs a prefix.
// `list` is [5 funcs][n elements], 1 = enabled. Throws InputError naming the variable.
void ParseList(const std::string& str, std::string_view var,
               std::span<const std::string_view> elems, std::vector<int>& list) {
  const size_t n = elems.size();
  Location where{"<env>", 0, std::string(var)};
  size_t start = 0;
  bool first = true;
  while (start <= str.size()) {
    size_t end = str.find(';', start);
    if (end == std::string::npos) end = str.size();
    std::string_view token(str.data() + start, end - start);
    start = end + 1;
    if (token.empty()) {
      if (end == str.size()) break;
      continue;
    }
    std::string_view prefix;
    std::string_view elem_list = token;
    size_t colon = token.find(':');
    if (colon != std::string_view::npos) {
      prefix = token.substr(0, colon);
      elem_list = token.substr(colon + 1);
    } else if (!first) {
      throw InputError(where,
                       fmt::format("every entry but the first needs a function prefix, got {}",
                                   QuoteForMessage(str)));
    }
    first = false;
    int set = 1;
    if (!elem_list.empty() && elem_list.front() == '^') {
      set = 0;
      elem_list.remove_prefix(1);
    }
    bool found_prefix = false;
    for (size_t f = 0; f < kFuncNames.size(); ++f) {
      if (!prefix.empty() && !EqualsNoCase(prefix, kFuncNames[f])) continue;
      found_prefix = true;
      for (size_t e = 0; e < n; ++e) list[f * n + e] = 1 - set;
      size_t p = 0;
      while (p <= elem_list.size()) {
        size_t q = elem_list.find(',', p);
        if (q == std::string_view::npos) q = elem_list.size();
        std::string_view elem = elem_list.substr(p, q - p);
        p = q + 1;
        size_t e = 0;
        for (; e < n; ++e) {
          if (EqualsNoCase(elem, elems[e])) break;
        }
        if (e == n) {
          std::string names;
          for (auto name : elems) names += (names.empty() ? "" : ", ") + std::string(name);
          throw InputError(where, Expected(fmt::format("one of {}", names), std::string(elem)));
        }
        list[f * n + e] = set;
        if (q == elem_list.size()) break;
      }
    }
    if (!found_prefix) {
      throw InputError(where, Expected("a function prefix (Broadcast, Reduce, AllGather, "
                                       "ReduceScatter, AllReduce)",
                                       std::string(prefix)));
    }
  }
}

int ArchIndex(GpuArch a) {
  return static_cast<int>(a);
}

}  // namespace

std::string_view AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kTree:
      return "Tree";
    case Algorithm::kRing:
      return "Ring";
    case Algorithm::kP2p:
      return "P2P";
  }
  return "?";
}

std::string_view ProtocolName(Protocol p) {
  return kProtoNames[static_cast<size_t>(p)];
}

std::string_view GpuArchName(GpuArch a) {
  switch (a) {
    case GpuArch::kVolta:
      return "Volta";
    case GpuArch::kAmpere:
      return "Ampere";
    case GpuArch::kHopper:
      return "Hopper";
    case GpuArch::kBlackwell:
      return "Blackwell";
  }
  return "?";
}

const TuningConstants& Nccl2_27Constants() {
  static const TuningConstants kConstants = [] {
    TuningConstants c{};
    c.nccl_version = "2.27.7";
    c.nccl_version_code = 22707;
    const double base[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
    const double hw[3][2][3] = {
        {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},   // NVLINK: Tree, Ring
        {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},    // PCI
        {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}},  // NET
    };
    const double ll_max[4][3] = {
        {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
    const double ring_ll128[4][3] = {
        {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}};
    const double tree_ll128[4][3] = {
        {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}};
    const double tree_bw[4][3] = {
        {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}};
    const double corr[3][23] = {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
                                 .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
                                {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
                                 .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
                                {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                 .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
    std::copy(&base[0][0], &base[0][0] + 6, &c.base_lat_us[0][0]);
    std::copy(&hw[0][0][0], &hw[0][0][0] + 18, &c.hw_lat_us[0][0][0]);
    std::copy(&ll_max[0][0], &ll_max[0][0] + 12, &c.ll_max_bw[0][0]);
    std::copy(&ring_ll128[0][0], &ring_ll128[0][0] + 12, &c.per_ch_max_ring_ll128_bw[0][0]);
    std::copy(&tree_ll128[0][0], &tree_ll128[0][0] + 12, &c.per_ch_max_tree_ll128_bw[0][0]);
    std::copy(&tree_bw[0][0], &tree_bw[0][0] + 12, &c.per_ch_max_tree_bw[0][0]);
    std::copy(&corr[0][0], &corr[0][0] + 69, &c.tree_correction[0][0]);
    return c;
  }();
  return kConstants;
}

SearchGraph DeriveSearchGraph(const NodeHardware& hw, int nodes, int max_channels) {
  // Speed arrays of src/graph/search.cc (v2.27.7).
  static constexpr double kIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                      9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
  static constexpr double kInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                      7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr double kIntra90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                        15.0, 12.0, 11.0, 6.0,  3.0};
  static constexpr double kInter90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                        15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr double kIntra100[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0,
                                         30.0, 24.0, 20.0, 19.0, 18.0};
  static constexpr double kInter100[] = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                         17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  std::span<const double> intra = kIntra;
  std::span<const double> inter = kInter;
  if (hw.arch == GpuArch::kHopper) {
    intra = kIntra90;
    inter = kInter90;
  } else if (hw.arch == GpuArch::kBlackwell) {
    intra = kIntra100;
    inter = kInter100;
  }
  auto pick = [](std::span<const double> speeds, double cap) {
    for (double s : speeds) {
      if (s <= cap) return s;
    }
    return speeds.back();
  };
  SearchGraph g;
  g.intra_nvlink = hw.nvlink;
  if (nodes > 1) {
    const double speed = pick(inter, hw.nic_gbs);
    g.channels = std::max(1, hw.nics * static_cast<int>(std::floor(hw.nic_gbs / speed)));
    g.bw_intra_gbs = g.bw_inter_gbs = speed;
  } else {
    const double speed = pick(intra, hw.nvlink_gbs);
    g.channels = std::max(1, static_cast<int>(std::floor(hw.nvlink_gbs / speed)));
    g.bw_intra_gbs = g.bw_inter_gbs = speed;
  }
  g.channels = std::min(g.channels, max_channels / 2);
  // ncclTopoDupChannels.
  const bool sm_above_80 = hw.arch == GpuArch::kHopper || hw.arch == GpuArch::kBlackwell;
  if (g.bw_intra_gbs >= 25.0 && !(sm_above_80 && g.bw_intra_gbs < 50.0 && g.channels > 4)) {
    const int dup = std::min(g.channels * 2, max_channels / 2);
    const int div = (dup + g.channels - 1) / g.channels;
    g.bw_intra_gbs /= div;
    g.bw_inter_gbs /= div;
    g.channels = dup;
  }
  return g;
}

TuningModel::TuningModel(const CommShape& shape, const SearchGraph& graph,
                         const TuningOverrides& overrides, const TuningConstants& constants)
    : shape_(shape), graph_(graph), constants_(&constants) {
  const TuningConstants& k = constants;
  if (overrides.min_channels < -1 || overrides.max_channels < -1) {
    throw InputError(
        {"<env>", 0, overrides.min_channels < -1 ? "NCCL_MIN_NCHANNELS" : "NCCL_MAX_NCHANNELS"},
        "expected a channel count >= 0");
  }
  // Channels (src/graph/connect.cc ncclTopoPostset).
  int nch = std::min(k.max_channels, graph.channels * 2);
  if (shape.arch >= GpuArch::kHopper && shape.nodes > 1 && graph.bw_intra_gbs > 45.0 && nch < 16) {
    nch *= 2;
  }
  int max_nch = overrides.max_channels >= 0 ? overrides.max_channels : k.max_channels;
  max_nch = std::clamp(max_nch, 1, k.max_channels);
  int min_nch =
      std::clamp(overrides.min_channels >= 0 ? overrides.min_channels : 0, 0, k.max_channels);
  nch = std::min(max_nch, nch);
  nch = std::max(nch, std::max(min_nch, 1));
  comm_channels_ = nch;

  const int nodes = shape.nodes;
  const int nranks = shape.Ranks();
  const double ppn = static_cast<double>(nranks) / nodes;

  // Threads (ncclTopoTuneModel).
  const int simple_ring =
      graph.bw_intra_gbs * graph.channels <= k.pci_bw ? 256 : k.max_threads_simple;
  max_threads_[kRing][kSimple] = simple_ring;
  max_threads_[kTree][kSimple] = k.max_threads_simple;
  max_threads_[kRing][kLL] = max_threads_[kTree][kLL] = k.max_threads_ll;
  max_threads_[kRing][kLL128] = max_threads_[kTree][kLL128] = k.max_threads_ll128;
  for (auto& row : thread_threshold_) {
    for (int p = 0; p < 3; ++p) row[p] = k.thread_threshold[p];
  }
  thread_threshold_[kRing][kLL] *= nranks;

  if (nranks <= 1) return;  // NCCL returns before filling the tables: nothing to choose.

  const int arch = ArchIndex(shape.arch);
  const int index2 = nodes <= 2 ? nodes - 1 : 2;
  const int index1 = nodes == 1 ? arch : (shape.cpu == CpuVendor::kAmd ? 1 : 0);
  const double ll_max_bw = k.ll_max_bw[index1][index2];
  const double per_ch_tree_bw = k.per_ch_max_tree_bw[arch][index2];
  const double per_ch_ring_ll128 = k.per_ch_max_ring_ll128_bw[arch][index2];
  const double per_ch_tree_ll128 = k.per_ch_max_tree_ll128_bw[arch][index2];
  const int intra_hw = graph.intra_nvlink ? kHwNvlink : kHwPci;
  const int hw = nodes == 1 ? intra_hw : kHwNet;

  for (int f = 0; f < 5; ++f) {
    const int nsteps = f == kFuncAllReduce                                ? 2 * (nranks - 1)
                       : (f == kFuncReduceScatter || f == kFuncAllGather) ? nranks - 1
                                                                          : nranks;
    for (int a = 0; a < 2; ++a) {
      // Broadcast, Reduce, AllGather and ReduceScatter have no Tree (PAT/NVLS/CollNet not
      // modelled).
      if (f != kFuncAllReduce && a != kRing) continue;
      for (int p = 0; p < 3; ++p) {
        const double bw = nodes <= 2 ? graph.bw_intra_gbs : graph.bw_inter_gbs;
        double bus_bw = graph.channels * bw;
        if (a == kRing && p == kLL) bus_bw = std::min(ll_max_bw, bus_bw * .5);
        if (a == kRing && p == kLL128)
          bus_bw = std::min(bus_bw * 0.92, graph.channels * per_ch_ring_ll128);
        if (a == kTree && f == kFuncAllReduce)
          bus_bw = std::min(bus_bw * .92, graph.channels * per_ch_tree_bw);
        if (a == kTree && p == kLL) bus_bw = std::min(bus_bw * 1.0 / 3.8, ll_max_bw);
        if (a == kTree && p == kLL128) {
          bus_bw = std::min(bus_bw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                            graph.channels * per_ch_tree_ll128);
        }
        if (a == kTree && graph.plain_tree_pattern) bus_bw *= .85;
        // busBw -> algBw.
        bus_bw *= a == kRing ? static_cast<double>(nranks) / nsteps : 0.5;
        bw_[f][a][p] = bus_bw;

        double lat = k.base_lat_us[a][p];
        double intra_lat = k.hw_lat_us[intra_hw][a][p];
        double inter_lat = ppn == 1 ? k.hw_lat_us[kHwNet][kTree][p] : k.hw_lat_us[kHwNet][a][p];
        inter_lat += graph.latency_inter_us;
        if (p == kSimple) inter_lat += graph.latency_inter_us;
        if (a == kRing) {
          double hop = k.hw_lat_us[hw][a][p];
          if (f == kFuncReduce || f == kFuncBroadcast) {
            // lossless builds every channel with its own ring order (sameChannels = 0).
            if (p == kSimple) hop = k.hw_lat_us[hw][kTree][p];
            lat += nsteps * hop;
          } else {
            double net_overhead = 0.0;
            if (nodes > 1) {
              net_overhead = overrides.net_overhead_us.value_or(
                  k.net_overhead_us[static_cast<int>(shape.cpu)]);
              if (p == kSimple) net_overhead *= 3;
            }
            intra_lat = std::max(intra_lat, net_overhead);
            const int inter_steps = nodes == 1            ? 0
                                    : f == kFuncAllReduce ? 2 * (nodes - 1)
                                                          : nodes - 1;
            lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
          }
        } else if (f == kFuncAllReduce) {
          // NOLINTNEXTLINE(bugprone-integer-division): NCCL's own integer nRanks / nNodes
          lat += 2 * ((nranks / nodes - 1) * intra_lat + Log2i(nodes) * inter_lat);
        }
        lat_[f][a][p] = lat;
      }
    }
  }

  // Enable matrices: NCCL_PROTO, NCCL_ALGO, the LL128 rule.
  std::vector<int> proto_enable(size_t{5} * 3, 1);
  for (int f = 0; f < 5; ++f) proto_enable[f * 3 + kLL128] = 2;  // 2: NCCL's "auto"
  std::vector<int> algo_enable(5 * kAlgoNames.size(), 1);
  if (!overrides.proto.empty()) ParseList(overrides.proto, "NCCL_PROTO", kProtoNames, proto_enable);
  if (!overrides.algo.empty()) ParseList(overrides.algo, "NCCL_ALGO", kAlgoNames, algo_enable);
  const bool ll128_default = graph.ll128_paths_ok;  // every modelled arch is >= sm70
  for (int f = 0; f < 5; ++f) {
    for (int a = 0; a < 2; ++a) {
      for (int p = 0; p < 3; ++p) {
        int pe = proto_enable[f * 3 + p];
        // LL128 is on by default only where safe; NCCL_PROTO decides it explicitly.
        if (pe == 2) pe = ll128_default ? 1 : 0;
        const bool on = pe != 0 && algo_enable[f * kAlgoNames.size() + a] != 0;
        if (!on) bw_[f][a][p] = 0;
      }
    }
  }
}

double TuningModel::Bandwidth(Collective c, Algorithm a, Protocol p) const {
  auto f = FuncIndex(c);
  if (!f || a == Algorithm::kP2p) return 0;
  return bw_[*f][static_cast<int>(a)][static_cast<int>(p)];
}

double TuningModel::Latency(Collective c, Algorithm a, Protocol p) const {
  auto f = FuncIndex(c);
  if (!f || a == Algorithm::kP2p) return 0;
  return lat_[*f][static_cast<int>(a)][static_cast<int>(p)];
}

double TuningModel::ProtocolCapGbs(Algorithm a, Protocol p) const {
  if (p == Protocol::kSimple || a == Algorithm::kP2p) return 0;
  const TuningConstants& k = *constants_;
  const int nodes = shape_.nodes;
  const int arch = ArchIndex(shape_.arch);
  const int index2 = nodes <= 2 ? nodes - 1 : 2;
  const int index1 = nodes == 1 ? arch : (shape_.cpu == CpuVendor::kAmd ? 1 : 0);
  if (p == Protocol::kLL) return k.ll_max_bw[index1][index2];
  return graph_.channels * (a == Algorithm::kRing ? k.per_ch_max_ring_ll128_bw[arch][index2]
                                                  : k.per_ch_max_tree_ll128_bw[arch][index2]);
}

std::optional<double> TuningModel::Time(Collective c, Algorithm a, Protocol p,
                                        int64_t nbytes) const {
  double bw = Bandwidth(c, a, p);
  if (bw <= 0) return std::nullopt;
  double lat = Latency(c, a, p);
  const int log_size = Log2i(nbytes >> 6);
  if (a == Algorithm::kTree && c == Collective::kAllReduce && log_size >= 0 && log_size < 23) {
    bw *= constants_->tree_correction[static_cast<int>(p)][log_size];
  }
  if (a == Algorithm::kRing && p == Protocol::kSimple && shape_.nodes > 1 &&
      c == Collective::kAllReduce &&
      nbytes / (static_cast<int64_t>(comm_channels_) * shape_.Ranks()) >= 64) {
    lat *= shape_.arch >= GpuArch::kAmpere ? constants_->ring_plateau_sm80
                                           : constants_->ring_plateau_older;
  }
  // numPipeOps = 1: latCount = 1 for every algorithm.
  return lat + static_cast<double>(nbytes) / (1000.0 * bw);
}

AlgoChoice TuningModel::Choose(Collective c, int64_t nbytes) const {
  AlgoChoice out;
  if (!FuncIndex(c)) {
    out.algorithm = Algorithm::kP2p;
    out.protocol = Protocol::kSimple;
    out.channels = comm_channels_;
    out.threads = constants_->max_threads_simple;
    return out;
  }
  if (shape_.Ranks() <= 1) {
    // One rank: NCCL copies locally (no table); Ring/Simple on one channel, time 0.
    out.channels = 1;
    out.threads = constants_->max_threads_simple;
    return out;
  }
  double best = 3600000000.0;
  bool found = false;
  for (Algorithm a : {Algorithm::kTree, Algorithm::kRing}) {
    for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
      auto t = Time(c, a, p, nbytes);
      if (t && *t >= 0 && *t < best) {
        best = *t;
        out.algorithm = a;
        out.protocol = p;
        found = true;
      }
    }
  }
  if (!found) {
    throw InputError({"<env>", 0, "NCCL_ALGO"},
                     fmt::format("no algorithm/protocol available for {} (lossless models Ring and "
                                 "Tree with LL, LL128 and Simple)",
                                 CollectiveName(c)));
  }
  out.time_us = best;
  const int a = static_cast<int>(out.algorithm);
  const int p = static_cast<int>(out.protocol);
  int64_t nc = comm_channels_;
  int64_t nt = max_threads_[a][p];
  const int64_t threshold = thread_threshold_[a][p];
  while (nbytes < nc * nt * threshold) {
    if (nc >= 2) {
      --nc;
    } else {
      break;
    }
  }
  while (nbytes < nc * nt * threshold) {
    if (nt % 128 == 0) {
      nt /= 2;
    } else {
      break;
    }
  }
  if (out.protocol == Protocol::kSimple) {
    if (out.algorithm == Algorithm::kRing) nt += 32;
    if (out.algorithm == Algorithm::kTree) nt += int64_t{4} * 32;
  }
  nt = nt / 32 < 3 ? int64_t{3} * 32 : nt;
  if (out.algorithm == Algorithm::kTree) nt = constants_->max_threads;
  out.channels = static_cast<int>(nc);
  out.threads = static_cast<int>(nt);
  return out;
}

int64_t ChunkBytes(Collective c, Algorithm a, Protocol p, int64_t simple_buffsize) {
  constexpr int64_t kSteps = 8;  // NCCL_STEPS
  switch (p) {
    case Protocol::kLL:
      return (int64_t{512} * 1024 / kSteps) / 2;  // DEFAULT_LL_BUFFSIZE / NCCL_STEPS, half is flags
    case Protocol::kLL128:
      return int64_t{4915200} / kSteps * 15 / 16;  // DEFAULT_LL128_BUFFSIZE step, 15 of 16 words
    case Protocol::kSimple: {
      const bool four =
          a == Algorithm::kRing && (c == Collective::kAllReduce || c == Collective::kAllGather ||
                                    c == Collective::kReduceScatter);
      return simple_buffsize / kSteps * (four ? 4 : 1);
    }
  }
  return 0;
}

std::string OffloadVerdict::HeaderNote() const {
  std::vector<std::string> names;
  if (nvls) names.emplace_back("NVLS (NVSwitch nodes)");
  if (nvls_tree) names.emplace_back("NVLSTree (NVSwitch nodes)");
  if (collnet) names.emplace_back("CollNet (SHARP)");
  if (names.empty()) return {};
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
  return fmt::format("real NCCL would consider {}; lossless does not model them and runs Ring/Tree",
                     list);
}

OffloadVerdict OffloadNcclWouldUse(Collective c, const CommShape& shape, bool nvswitch,
                                   bool sharp) {
  OffloadVerdict v;
  const bool nvls_hw = nvswitch && shape.arch >= GpuArch::kHopper && shape.gpus_per_node > 1;
  if (c == Collective::kAllReduce) {
    // NVLS on one node; across nodes NVLS proper needs CollNet, NVLSTree does not.
    v.nvls = nvls_hw && (shape.nodes == 1 || sharp);
    v.nvls_tree = nvls_hw && shape.nodes > 1;
    v.collnet = sharp && shape.nodes > 1;
  } else if (c == Collective::kAllGather || c == Collective::kReduceScatter) {
    v.nvls = nvls_hw && shape.nodes == 1;
  }
  return v;
}

}  // namespace lossless::collective
