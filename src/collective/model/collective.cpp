#include "collective/model/collective.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::collective {
namespace {

constexpr std::array<Collective, 7> kCollectives = {
    Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
    Collective::kBroadcast, Collective::kReduce,        Collective::kAllToAll,
    Collective::kSendRecv,
};
constexpr std::array<DataType, 12> kTypes = {
    DataType::kInt8,   DataType::kUint8,    DataType::kInt32,  DataType::kUint32,
    DataType::kInt64,  DataType::kUint64,   DataType::kHalf,   DataType::kFloat,
    DataType::kDouble, DataType::kBfloat16, DataType::kF8e4m3, DataType::kF8e5m2,
};
constexpr std::array<RedOp, 6> kOps = {RedOp::kSum, RedOp::kProd, RedOp::kMax,
                                       RedOp::kMin, RedOp::kAvg,  RedOp::kMulSum};

template <typename T, size_t N, typename NameFn>
T ParseName(std::string_view name, const Location& where, const std::array<T, N>& all,
            NameFn name_of, std::string_view what) {
  for (T v : all) {
    if (name_of(v) == name) return v;
  }
  std::vector<std::string> names;
  names.reserve(N);
  for (T v : all) names.emplace_back(name_of(v));
  NearestName near = FindNearestName(std::string(name), names);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
  std::string msg = Expected(fmt::format("a {} ({})", what, list), std::string(name));
  if (near.Close(2)) msg += fmt::format("; did you mean '{}'?", near.name);
  throw InputError(where, msg);
}

}  // namespace

std::span<const Collective> AllCollectives() {
  return kCollectives;
}

std::string_view CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

std::string BinaryName(Collective c) {
  return std::string(CollectiveName(c)) + "_perf";
}

std::optional<Collective> CollectiveFromName(std::string_view name) {
  std::string s = text::ToLower(name);
  if (s.size() > 5 && s.ends_with("_perf")) s.resize(s.size() - 5);
  for (Collective c : kCollectives) {
    std::string canonical(CollectiveName(c));
    std::string squeezed;
    for (char ch : canonical) {
      if (ch != '_') squeezed += ch;
    }
    if (s == canonical || s == squeezed) return c;
  }
  return std::nullopt;
}

Collective ParseCollective(std::string_view name, const Location& where) {
  if (auto c = CollectiveFromName(name)) return *c;
  return ParseName(name, where, kCollectives, CollectiveName, "collective");
}

bool PrintsRedOp(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter ||
         c == Collective::kReduce || c == Collective::kSendRecv;
}

bool HasRoot(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce;
}

bool ChecksInPlace(Collective c) {
  return c != Collective::kAllToAll && c != Collective::kSendRecv;
}

std::span<const DataType> AllDataTypes() {
  return kTypes;
}

std::string_view DataTypeName(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return "int8";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt32:
      return "int32";
    case DataType::kUint32:
      return "uint32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUint64:
      return "uint64";
    case DataType::kHalf:
      return "half";
    case DataType::kFloat:
      return "float";
    case DataType::kDouble:
      return "double";
    case DataType::kBfloat16:
      return "bfloat16";
    case DataType::kF8e4m3:
      return "f8e4m3";
    case DataType::kF8e5m2:
      return "f8e5m2";
  }
  return "?";
}

int64_t ElementSize(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kF8e4m3:
    case DataType::kF8e5m2:
      return 1;
    case DataType::kHalf:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kDouble:
      return 8;
  }
  return 1;
}

DataType ParseDataType(std::string_view name, const Location& where) {
  return ParseName(name, where, kTypes, DataTypeName, "data type");
}

std::span<const RedOp> AllRedOps() {
  return kOps;
}

std::string_view RedOpName(RedOp op) {
  switch (op) {
    case RedOp::kSum:
      return "sum";
    case RedOp::kProd:
      return "prod";
    case RedOp::kMax:
      return "max";
    case RedOp::kMin:
      return "min";
    case RedOp::kAvg:
      return "avg";
    case RedOp::kMulSum:
      return "mulsum";
  }
  return "?";
}

RedOp ParseRedOp(std::string_view name, const Location& where) {
  return ParseName(name, where, kOps, RedOpName, "reduction op");
}

CollCounts CountsFor(Collective c, int64_t requested_bytes, DataType t, int64_t n_ranks) {
  assert(requested_bytes >= 0 && n_ranks >= 1);
  const int64_t e = ElementSize(t);
  const int64_t count = requested_bytes / e;
  // `& ~(16/eltSize - 1)`: a whole number of 16-byte groups per rank.
  const int64_t group = 16 / e;
  const int64_t base = (count / n_ranks) / group * group;
  CollCounts out;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
      out = {count, count, count, 0};
      break;
    case Collective::kAllGather:
      out = {base, base, base * n_ranks, 0};
      break;
    case Collective::kReduceScatter:
      out = {base, base * n_ranks, base, 0};
      break;
    case Collective::kAllToAll:
      out = {base, base * n_ranks, base * n_ranks, 0};
      break;
  }
  out.size_bytes = std::max(out.send_elems, out.recv_elems) * e;
  return out;
}

double BusBwFactor(Collective c, int64_t n_ranks) {
  if (n_ranks < 1) return 0;
  const double n = static_cast<double>(n_ranks);
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
      return 1.0;
  }
  return 0;
}

}  // namespace lossless::collective
