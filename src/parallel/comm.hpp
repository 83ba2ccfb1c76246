#pragma once
// The message passing the parallel code needs, behind one small interface
// (docs/parallel.md): rank and size, a barrier, an integer minimum over all
// ranks, bytes gathered to rank 0, bytes broadcast from rank 0, and one
// batch exchanged with each neighbour rank. Two implementations: MPI
// (mpi_comm.hpp, when the build has it) and an in-process loopback of K
// ranks on K threads (loopback.hpp) that the fast tests use.
//
// Every collective call (Barrier, AllreduceMin, Gather, Broadcast) must be
// made by all ranks in the same order; Exchange by the ranks that list each
// other. Payloads are opaque bytes: the caller serializes. Integer
// reductions only: a floating-point sum over ranks would depend on the
// order the ranks arrive in, and results must not.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace lossless::parallel {

// One batch for one peer rank.
struct Outgoing {
  int peer = 0;
  std::string bytes;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int Rank() const = 0;  // 0 .. Size()-1
  virtual int Size() const = 0;  // >= 1
  virtual void Barrier() = 0;
  // The smallest `v` over all ranks, on every rank.
  virtual int64_t AllreduceMin(int64_t v) = 0;
  // The elementwise minimum of lanes[0 .. n) over all ranks, in place, in
  // one collective (the window engine packs its per-window figures into
  // lanes: docs/parallel.md#one-reduction-per-window). Every rank passes the
  // same n. The default makes one AllreduceMin per lane.
  virtual void AllreduceMinLanes(int64_t* lanes, size_t n);
  // Rank 0 gets every rank's `bytes` in rank order (its own first); the
  // other ranks get an empty vector.
  virtual std::vector<std::string> Gather(const std::string& bytes) = 0;
  // Every rank gets rank 0's `bytes` (the argument is ignored elsewhere).
  virtual std::string Broadcast(const std::string& bytes) = 0;
  // Sends each out[i].bytes to out[i].peer and receives exactly one batch
  // from each rank in `from`, returned in the order of `from` whatever the
  // order they arrive in. An empty batch is still sent (it says "nothing
  // for you in this window"). Peers must be distinct and not this rank.
  virtual std::vector<std::string> Exchange(const std::vector<Outgoing>& out,
                                            const std::vector<int>& from) = 0;
  // The same into `in` (resized to from.size()), reusing its strings'
  // memory: the window engine exchanges batches of hundreds of kilobytes
  // every window, and fresh buffers that size cost a page fault per 4 KiB
  // (docs/benchmarks.md). The default calls Exchange.
  virtual void ExchangeInto(const std::vector<Outgoing>& out, const std::vector<int>& from,
                            std::vector<std::string>& in);
};

// Runs fn on every rank and makes them agree on failure: when fn throws on
// any rank, every rank throws RankError carrying the message of the lowest
// rank that failed ("rank 2: ..." for a rank other than 0), so no rank is
// left waiting in a later collective. Collective (one Gather, one Broadcast).
class RankError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
void RunAgreed(Comm& comm, const std::function<void()>& fn);

// A one-rank Comm: every collective returns its own input.
class SerialComm final : public Comm {
 public:
  int Rank() const override { return 0; }
  int Size() const override { return 1; }
  void Barrier() override {}
  int64_t AllreduceMin(int64_t v) override { return v; }
  void AllreduceMinLanes(int64_t*, size_t) override {}
  std::vector<std::string> Gather(const std::string& bytes) override { return {bytes}; }
  std::string Broadcast(const std::string& bytes) override { return bytes; }
  std::vector<std::string> Exchange(const std::vector<Outgoing>& out,
                                    const std::vector<int>& from) override;
};

}  // namespace lossless::parallel
