#pragma once
// Collective kinds, data types and reduction ops as nccl-tests names them,
// per-size element counts and bus-bandwidth factors (docs/model/collectives.md).
//
// Engine-free: this is what the `perf` front end, the NCCL tuning model and the
// alpha-beta model share. Names are the nccl-tests spellings
// (nccl-tests `src/common.cu` `test_typenames`, `test_opnames`, tag v2.19.6).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/error.hpp"

namespace lossless::collective {

enum class Collective {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
};

// All seven, in the order above.
std::span<const Collective> AllCollectives();
// "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "alltoall", "sendrecv".
std::string_view CollectiveName(Collective c);
// The nccl-tests binary: "all_reduce_perf", ...
std::string BinaryName(Collective c);
// Accepts the name, the binary name, and NCCL's spelling without the
// underscore ("allreduce", "reducescatter", "allgather"); case-insensitive.
std::optional<Collective> CollectiveFromName(std::string_view name);
// Same, but throws InputError{where} naming the nearest valid name.
Collective ParseCollective(std::string_view name, const Location& where);

// Whether the `redop` column shows the op (all_reduce, reduce_scatter, reduce and
// sendrecv, which prints it although it does not reduce) or `none`.
bool PrintsRedOp(Collective c);
// Whether the collective has a root (broadcast, reduce); the `root` column is -1 otherwise.
bool HasRoot(Collective c);
// Whether nccl-tests checks the in-place half (not for alltoall and sendrecv: `N/A`).
bool ChecksInPlace(Collective c);

enum class DataType {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kFloat,
  kDouble,
  kBfloat16,
  kF8e4m3,
  kF8e5m2,
};
std::span<const DataType> AllDataTypes();
// "int8", ..., "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2".
std::string_view DataTypeName(DataType t);
// Bytes per element: 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1.
int64_t ElementSize(DataType t);
// Exact nccl-tests names; throws InputError{where} otherwise.
DataType ParseDataType(std::string_view name, const Location& where);

enum class RedOp { kSum, kProd, kMax, kMin, kAvg, kMulSum };
std::span<const RedOp> AllRedOps();
// "sum", "prod", "max", "min", "avg", "mulsum".
std::string_view RedOpName(RedOp op);
RedOp ParseRedOp(std::string_view name, const Location& where);

// One row's counts for a requested size, as nccl-tests computes them
// (`<coll>GetCollByteCount` in nccl-tests `src/<coll>.cu`, v2.13.12 and later):
// count = requested / element size; the per-rank collectives (all_gather,
// reduce_scatter, alltoall) use base = (count / n) rounded down to a multiple
// of 16 bytes' worth of elements.
struct CollCounts {
  int64_t count = 0;       // the `count (elements)` column: the count passed to NCCL
  int64_t send_elems = 0;  // per rank
  int64_t recv_elems = 0;  // per rank
  int64_t size_bytes = 0;  // the `size (B)` column: max(send, recv) x element size
};
// requested_bytes >= 0, n_ranks >= 1 (programmer error otherwise).
CollCounts CountsFor(Collective c, int64_t requested_bytes, DataType t, int64_t n_ranks);

// busbw = algbw x factor (nccl-tests `src/<coll>.cu` `<coll>GetBw`, doc/PERFORMANCE.md):
// 2(n-1)/n all_reduce; (n-1)/n reduce_scatter, all_gather, alltoall; 1 otherwise.
// algbw's numerator is always CollCounts::size_bytes for these seven collectives.
double BusBwFactor(Collective c, int64_t n_ranks);

}  // namespace lossless::collective
