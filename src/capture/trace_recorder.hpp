#pragma once
// outputs.trace (docs/capture.md): a Chrome trace-event JSON timeline that
// ui.perfetto.dev and chrome://tracing open. One process per selected port
// (named by the port) with a thread per flow-controlled priority holding its
// paused intervals as complete ("X") slices, queue occupancy as counter
// ("C") tracks sampled at each transmission, and instants ("i") for ECN
// marks, CNPs and PFC frames sent and every PFC watchdog action and restore;
// a "flows" process with one slice per flow (start to completion); a
// "verdicts" process with the deadlock verdict and its witness cycle; for
// collectives (`perf`), a "collectives" process with one slice per collective
// and one process per rank with a thread per channel holding its steps as
// slices. Times in microseconds with picosecond digits. Bounded: events past
// `limit` bytes are counted, not written.
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "fabric/network.hpp"

namespace lossless::capture {

struct TraceOptions {
  std::vector<uint32_t> ports;  // ports with tracks
  int64_t limit = int64_t{256} << 20;
  bool flows = true;  // a slice per flow of the network (false: `perf`, whose QPs are not flows)
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
  // The same with the port's queue bytes and ECN mark count of the packet's
  // class as they were then (a distributed run replays what the ranks logged).
  void Record(uint32_t port, const fabric::Packet& p, int64_t start_ps, int64_t queue_bytes,
              uint64_t marks);
  bool selected(uint32_t port) const { return port < selected_.size() && selected_[port] != 0; }
  // Network::PauseTrace: classes `mask` of `port` paused from `now_ps` until `until_ps`.
  void Pause(uint32_t port, uint8_t mask, int64_t now_ps, int64_t until_ps);
  // Network::WatchdogTrace: an instant per action (closing the paused slice
  // the action cuts short) and per restore of (`port`, class c).
  void Watchdog(uint32_t port, int c, int64_t at_ps, bool restore, uint64_t flushed);

  // Collective steps (collective::StepObserver, docs/capture.md). Between
  // CollectiveBegin and CollectiveEnd, StepPost and StepSendDone describe
  // the messages each (rank, channel) sends; consecutive messages of one
  // (loop, step) make one slice on the thread of (rank, channel), from the
  // first message's post to the last one's completion, cut at the post of
  // the next step's first message when that comes earlier (NCCL pipelines
  // steps; args "clipped" says so), so a thread's slices never overlap.
  void CollectiveBegin(const std::string& name, int64_t bytes, int64_t at_ps);
  void StepPost(uint32_t rank, uint32_t channel, uint32_t peer, int64_t loop, int32_t step,
                int64_t bytes, bool nvlink, int64_t at_ps);
  void StepSendDone(uint32_t rank, uint32_t channel, int64_t at_ps);
  void CollectiveEnd(int64_t at_ps);

  // Closes the open intervals, adds flows and the verdict; returns the JSON text.
  // `flow_bytes` (by flow, when given): each flow's bytes in place of the
  // network's spec.bytes (a distributed run: a queue pair's grow on the rank
  // of its source).
  std::string Finish(const TraceVerdict& verdict, int64_t end_ps,
                     const std::vector<int64_t>* flow_bytes = nullptr);
  uint64_t events() const { return events_; }
  uint64_t cut() const { return cut_; }

 private:
  void Add(const std::string& event);
  int Pid(uint32_t port) const { return static_cast<int>(10 + port); }
  void Slice(uint32_t port, int c, int64_t from, int64_t to);
  struct StepTrack {
    bool open = false;
    int64_t loop = 0;
    int32_t step = 0;
    uint32_t peer = 0;
    bool nvlink = false;
    int64_t bytes = 0, messages = 0, from = 0, last_done = 0, outstanding = 0;
    uint64_t serial = 0, next_serial = 0;
    std::deque<uint64_t> posted;  // serial of each message not yet complete, in post order
  };
  void CloseStep(uint32_t rank, uint32_t channel, StepTrack& t, int64_t at_ps);
  int RankPid(uint32_t rank) const { return static_cast<int>(10 + selected_.size() + rank); }

  const fabric::Network& net_;
  TraceOptions opt_;
  std::vector<uint8_t> selected_;                   // by port
  std::vector<std::array<uint64_t, 8>> marks_;      // by port: ECN marks seen
  std::vector<std::array<int64_t, 8>> queue_;       // by port: last queue bytes written
  std::vector<std::array<int64_t, 8>> pause_from_;  // by port: open paused interval
  std::vector<std::array<int64_t, 8>> pause_until_;
  std::map<uint64_t, StepTrack> steps_;  // by rank << 32 | channel
  std::vector<uint8_t> rank_named_;
  std::string collective_;
  int64_t collective_bytes_ = 0, collective_from_ = 0, collectives_ = 0;
  std::string body_;
  uint64_t events_ = 0;
  uint64_t cut_ = 0;
};

// "12.345678" microseconds from picoseconds (exact).
std::string TraceTs(int64_t ps);

}  // namespace lossless::capture
