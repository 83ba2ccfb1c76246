#pragma once
// Joins the network's node-local PFC facts into wait edges for the online
// deadlock detector. The network reports, each from the node that owns the
// state (fabric::PfcWaitObserver): a switch starts or stops holding packets
// from ingress buffer (X, q) queued at its egress E on class r (OnHold), and
// a node asserts or releases XOFF on class r at its ingress Y (OnXoff). The
// buffer (X, q) waits for (Y, r) while both hold, with Y the peer of E; this
// class keeps both sets and tells its sink each time such an edge starts or
// ends (WaitSink::OnWait), at the time of the fact that changed it.
//
// The edges come out in the order the network's former synchronous observer
// produced them (a hold change: at once if the peer has XOFF asserted; an
// XOFF change: one edge per holding buffer of the upstream switch, in the
// order of that switch's ports, then by class), so the detector's cycle search
// sees the same sequence. This is the one place where the two nodes' states
// meet: a parallel run must deliver the facts here in the serial order
// (time, owner, per-owner sequence) -- docs/architecture.md, "Event ownership".
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "fabric/network.hpp"
#include "units/units.hpp"

namespace lossless::deadlock {

// Receives wait edges: (from, from_prio) waits for (to, to_prio) from `at`
// on (waiting) or no longer (!waiting).
class WaitSink {
 public:
  virtual void OnWait(uint32_t from, int from_prio, uint32_t to, int to_prio, bool waiting,
                      units::Time at) = 0;

 protected:
  ~WaitSink() = default;
};

class WaitJoin final : public fabric::PfcWaitObserver {
 public:
  // `net` is read for its static port structure only (peers, a node's ports).
  WaitJoin(const fabric::Network& net, WaitSink& sink);

  void OnHold(uint32_t ingress, int in_class, uint32_t egress, int out_class, bool holding,
              units::Time at) override;
  void OnXoff(uint32_t port, int tclass, bool asserted, units::Time at) override;

 private:
  static uint64_t Key(uint32_t port, int c) { return uint64_t{port} << 3 | static_cast<uint64_t>(c); }
  const fabric::Network& net_;
  WaitSink& sink_;
  std::vector<uint16_t> local_index_;  // port -> index among its node's ports
  std::set<uint64_t> xoff_;            // Key(port, class) with XOFF asserted
  // Key(egress, out class) -> the buffers holding packets there, as
  // (local index of the ingress, in class, ingress port), in that order.
  std::map<uint64_t, std::set<std::tuple<uint16_t, int, uint32_t>>> holds_;
};

}  // namespace lossless::deadlock
