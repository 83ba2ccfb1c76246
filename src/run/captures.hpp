#pragma once
// outputs.pcap and outputs.trace of a run or a `perf` sweep (docs/capture.md):
// installs the packet capture and the timeline recorder on the network's
// transmit, pause and watchdog traces, and takes the collective engines'
// steps (collective::StepObserver); streams the capture to its file while the
// run goes (renamed into place at the end) and writes the timeline when the
// run ends. Without either output it installs nothing (the packet path keeps
// its one null test).
//
// Distributed (mpirun -np K, docs/parallel.md, "Captures and timelines"):
// every rank logs what its own events hand the capture and the timeline
// (the frame with the port's queue bytes and ECN marks of the moment, PAUSE
// and watchdog calls, collective steps) with the event's place in the serial
// order; rank 0 gathers the logs at the end, merges them into that order and
// replays them through the same PacketCapture and TraceRecorder the serial
// run uses, so the files are the serial ones byte for byte (the limits cut
// the same records). The logs are held in memory until the end.
#include <memory>
#include <string>
#include <vector>

#include "capture/packet_capture.hpp"
#include "capture/trace_recorder.hpp"
#include "collective/step_observer.hpp"
#include "fabric/network.hpp"
#include "report/result.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {

class Captures final : public collective::StepObserver {
 public:
  // InputError naming outputs.pcap_ports / outputs.trace_ports for a port
  // name the topology lacks. `flows`: a slice per flow of the network in the
  // timeline (`perf` passes false: its queue pairs are not flows).
  // `dist_rank` >= 0: a distributed run's rank (only rank 0 opens and
  // writes the files); setup's calls, alike on every rank, are logged by
  // rank 0 only until StartDistributed.
  Captures(const scenario::Scenario& s, const topology::Topology& topo, fabric::Network& net,
           bool flows = true, int dist_rank = -1);

  // Distributed: from now on every rank logs its events' calls (each event
  // runs on one rank) with sim's (time, key) of the running event.
  // `port_rank`: the rank of each port (the flows' bytes a rank reports are
  // those of the flows whose source it owns).
  void StartDistributed(const sim::Simulator& sim, std::vector<int32_t> port_rank);
  // The serial launch order of ring engine records (channel c's ring
  // `rings[c]`, GPUs in ring order): the launch event runs on every rank,
  // each progressing its own GPUs in this order, so steps posted in it are
  // merged by it. Distributed only; perf calls it as a ring collective begins.
  void SetLaunchOrder(const std::vector<std::vector<uint32_t>>& rings);
  // This rank's log (and its flows' bytes); on rank 0, ImportLogs merges every
  // rank's (Comm::Gather's order) and replays it. Throws std::logic_error when
  // the launch event, run by several ranks, handed the capture a frame (its
  // place among the ranks' parts would not be known).
  std::string ExportLog() const;
  void ImportLogs(const std::vector<std::string>& per_rank);
  bool distributed() const { return dist_rank_ >= 0; }
  // Writes the files (InputError naming outputs.pcap / outputs.trace when
  // one cannot be written) and adds a warning to r.warnings for each output
  // its limit cut.
  void Finish(report::RunResult& r, units::Time end);
  // The same for `perf` (no deadlock verdict): returns the warnings.
  std::vector<std::string> Finish(units::Time end);

  bool tracing() const { return trace_ != nullptr; }
  // A collective named `name` of `bytes` starts / ended (its steps come
  // through the StepObserver calls in between); no-ops without a timeline.
  void CollectiveBegin(const std::string& name, int64_t bytes, units::Time at);
  void CollectiveEnd(units::Time at);
  void OnStepPost(const collective::StepMessage& m, units::Time at) override;
  void OnStepSendDone(uint32_t rank, uint32_t channel, units::Time at) override;

 private:
  static void OnTx(void* ctx, uint32_t port, const fabric::Packet& p, units::Time start);
  static void OnPause(void* ctx, uint32_t port, uint8_t mask, units::Time now, units::Time until);
  static void OnWatchdog(void* ctx, uint32_t port, int c, units::Time at, bool restore,
                         uint64_t flushed);
  std::vector<std::string> Write(const capture::TraceVerdict& v, units::Time end);

  // A distributed run's log: one record per call, in the order this rank
  // made them. Fixed size (memcpy across ranks).
  enum RecordType : uint32_t { kTx, kPause, kWatchdog, kStepPost, kStepDone, kBegin, kEnd };
  struct Record {
    uint32_t segment;  // driver calls between: 0 setup, 1 the run, +1 per collective begin/end
    uint32_t type;
    int64_t time;        // of the running event
    uint64_t key;        // of the running event
    uint64_t sub;        // a step's place in the launch order (merging the launch's parts)
    uint64_t seq;        // this rank's call count
    uint32_t port;       // kTx, kPause, kWatchdog; a step's rank
    uint32_t u;          // kPause mask; kWatchdog class; a step's channel
    uint32_t v;          // kStepPost peer
    int32_t w;           // kStepPost step
    int64_t a, b, c, d;  // the call's other arguments
    char pk[sizeof(fabric::Packet)];  // kTx: the frame's record (bytes: no 64-byte alignment)
  };
  static_assert(sizeof(Record) == 152, "a log record crosses ranks as it is");
  void Log(Record r);
  bool logging() const { return dist_rank_ == 0 || sim_ != nullptr; }
  void Replay(const Record& r);

  const scenario::Scenario& s_;
  fabric::Network& net_;
  int dist_rank_ = -1;
  const sim::Simulator* sim_ = nullptr;  // set by StartDistributed
  std::vector<int32_t> port_rank_;
  uint32_t segment_ = 0;
  uint64_t seq_ = 0;
  std::vector<Record> log_;
  // Calls made by a collective's Begin (a driver call every rank makes for
  // its own GPUs: a launch without latency) are at this (time, key), that of
  // the last event before it on this rank; they are logged as the segment's
  // first, merged in the launch order.
  bool driver_ = false;
  int64_t driver_time_ = 0;
  uint64_t driver_key_ = 0;
  std::vector<std::vector<uint32_t>> launch_pos_;  // [channel][gpu]: the launch order
  std::vector<std::string> names_;                 // kBegin's collective names (rank 0)
  std::vector<int64_t> flow_bytes_;                // merged on rank 0: each flow's bytes
  std::unique_ptr<OutputStream> pcap_out_;  // the capture is streamed to its file
  std::unique_ptr<capture::PacketCapture> pcap_;
  std::unique_ptr<capture::TraceRecorder> trace_;
};

}  // namespace lossless::run
