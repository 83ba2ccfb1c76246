#pragma once
// outputs.trace (docs/capture.md): a Chrome trace-event JSON timeline that
// ui.perfetto.dev and chrome://tracing open. One process per selected port
// (named by the port) with a thread per flow-controlled priority holding its
// paused intervals as complete ("X") slices, queue occupancy as counter
// ("C") tracks sampled at each transmission, and instants ("i") for ECN
// marks, CNPs sent and the PFC watchdog's first action; a "flows" process
// with one slice per flow (start to completion); a "verdicts" process with
// the deadlock verdict and its witness cycle. Times in microseconds with
// picosecond digits. Bounded: events past `limit` bytes are counted, not written.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/network.hpp"

namespace lossless::capture {

struct TraceOptions {
  std::vector<uint32_t> ports;  // ports with tracks
  int64_t limit = int64_t{256} << 20;
};

// The deadlock verdict to show (report::DeadlockReport's fields).
struct TraceVerdict {
  int64_t formed_ps = -1, detected_ps = -1;
  std::vector<std::string> cycle;
};

class TraceRecorder {
 public:
  TraceRecorder(const fabric::Network& net, TraceOptions opt);
  // Network::TxTrace: queue occupancy, ECN marks (from the port's mark
  // counter, so an instant per mark at the port that marked), CNPs.
  void Record(uint32_t port, const fabric::Packet& p, int64_t start_ps);
  // Network::PauseTrace: classes `mask` of `port` paused from `now_ps` until `until_ps`.
  void Pause(uint32_t port, uint8_t mask, int64_t now_ps, int64_t until_ps);
  // Closes the open intervals, adds flows, watchdog actions and the verdict;
  // returns the JSON text.
  std::string Finish(const TraceVerdict& verdict, int64_t end_ps);
  uint64_t events() const { return events_; }
  uint64_t cut() const { return cut_; }

 private:
  void Add(const std::string& event);
  int Pid(uint32_t port) const { return static_cast<int>(10 + port); }
  void Slice(uint32_t port, int c, int64_t from, int64_t to);

  const fabric::Network& net_;
  TraceOptions opt_;
  std::vector<uint8_t> selected_;                   // by port
  std::vector<std::array<uint64_t, 8>> marks_;      // by port: ECN marks seen
  std::vector<std::array<int64_t, 8>> queue_;       // by port: last queue bytes written
  std::vector<std::array<int64_t, 8>> pause_from_;  // by port: open paused interval
  std::vector<std::array<int64_t, 8>> pause_until_;
  std::string body_;
  uint64_t events_ = 0;
  uint64_t cut_ = 0;
};

// "12.345678" microseconds from picoseconds (exact).
std::string TraceTs(int64_t ps);

}  // namespace lossless::capture
