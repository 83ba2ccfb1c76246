#pragma once
// Online PFC deadlock detector: a wait-for graph of paused (port, priority)
// pairs, fed by the simulator as pause state changes, and a cycle search that
// is cheap to run after every change.
//
// A vertex (X, q) is the lossless ingress buffer of priority q at port X:
// what the node owning X holds of what it received through X on q (the
// vertices of deadlock::BufferGraph). An edge (X, q) -> (Y, r) means: buffer
// (X, q) holds packets queued on class r at the egress port whose peer is Y,
// and Y has XOFF asserted on r, so they wait for buffer (Y, r) to drain
// (Y waits in turn for the egresses its own packets are queued at). The
// simulator feeds it through fabric::PfcWaitObserver; r differs from q only
// where a route changes a packet's class. A cycle (X1, q1) -> (X2, q2) -> ...
// -> (X1, q1) is a set of buffers each above XOFF and waiting on the next:
// under PFC none of them can drain on its own, which is a deadlock
// (docs/model/pfc.md#deadlock). Edges are AND-waits: a vertex with
// several out-edges waits on all of them, so any cycle is reported (a buffer
// whose other packets can still leave is over-approximated: callers confirm
// that a cycle persists). Pure data structure: no engine, no fabric dependency.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "units/units.hpp"

namespace lossless::deadlock {

struct WaitHop {
  uint32_t port = 0;  // this buffer waits on the next hop's (the last on the first)
  int priority = 0;   // 0 .. 7
  units::Time since;  // when this hop's wait edge was set
  bool operator==(const WaitHop&) const = default;
};

struct Cycle {
  std::vector<WaitHop> hops;  // in wait order, starting at the smallest (port, priority)
  units::Time formed;         // the latest `since` on the cycle: when it closed
};

class WaitForGraph {
 public:
  // Sets (paused = true) or clears the edge (port, priority) -> (paused_by_port,
  // priority) at time `at`. Setting an edge that is already set keeps its
  // original time; clearing an absent edge does nothing. priority in 0..7
  // (checked by assert: the simulator, not the user, calls this).
  // O(out-degree of port).
  void SetPaused(uint32_t port, int priority, uint32_t paused_by_port, bool paused,
                 units::Time at = units::Time::Zero()) {
    SetWait(port, priority, paused_by_port, priority, paused, at);
  }
  // The same across priorities: (port, priority) -> (on_port, on_priority).
  void SetWait(uint32_t port, int priority, uint32_t on_port, int on_priority, bool waiting,
               units::Time at = units::Time::Zero());

  bool IsPaused(uint32_t port, int priority, uint32_t paused_by_port) const;
  size_t num_edges() const { return num_edges_; }

  // A cycle of waits if one exists now, else nullopt.
  // Incremental: a new cycle must use an edge set since the previous call, so
  // only paths from those edges' heads back to their tails are searched
  // (breadth-first: the shortest such cycle). While the cycle returned last
  // time still stands it is returned again at O(its length); once one of its
  // edges clears, the next call scans the whole graph once, O(V + E).
  std::optional<Cycle> FindCycle();

 private:
  using Key = uint64_t;  // port << 8 | priority
  struct Edge {
    Key to;
    units::Time since;
  };
  static Key MakeKey(uint32_t port, int priority) {
    return static_cast<Key>(port) << 8 | static_cast<uint8_t>(priority);
  }
  const Edge* FindEdge(Key from, Key to) const;
  std::optional<Cycle> MakeCycle(const std::vector<Key>& keys) const;
  std::optional<Cycle> SearchFrom(Key tail, Key head) const;
  std::optional<Cycle> FullScan() const;

  std::unordered_map<Key, std::vector<Edge>> out_;
  size_t num_edges_ = 0;
  std::vector<std::pair<Key, Key>> added_;  // edges set since the last FindCycle
  std::vector<Key> last_;                   // keys of the last cycle returned
  bool rescan_ = false;                     // the last cycle broke: scan everything
};

}  // namespace lossless::deadlock
