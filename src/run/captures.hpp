#pragma once
// outputs.pcap and outputs.trace of a run or a `perf` sweep (docs/capture.md):
// installs the packet capture and the timeline recorder on the network's
// transmit, pause and watchdog traces, and takes the collective engines'
// steps (collective::StepObserver); streams the capture to its file while the
// run goes (renamed into place at the end) and writes the timeline when the
// run ends. Without either output it installs nothing (the packet path keeps
// its one null test).
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
  Captures(const scenario::Scenario& s, const topology::Topology& topo, fabric::Network& net,
           bool flows = true);
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

  const scenario::Scenario& s_;
  std::unique_ptr<OutputStream> pcap_out_;  // the capture is streamed to its file
  std::unique_ptr<capture::PacketCapture> pcap_;
  std::unique_ptr<capture::TraceRecorder> trace_;
};

}  // namespace lossless::run
