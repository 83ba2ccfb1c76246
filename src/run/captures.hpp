#pragma once
// outputs.pcap and outputs.trace of a run (docs/capture.md): installs the
// packet capture and the timeline recorder on the network's transmit and
// pause traces; streams the capture to its file while the run goes (renamed
// into place at the end) and writes the timeline when the run ends. Without either
// output it installs nothing (the packet path keeps its one null test).
#include <memory>

#include "capture/packet_capture.hpp"
#include "capture/trace_recorder.hpp"
#include "fabric/network.hpp"
#include "report/result.hpp"
#include "scenario/scenario.hpp"

namespace lossless::run {

class Captures {
 public:
  // InputError naming outputs.pcap_ports / outputs.trace_ports for a port
  // name the topology lacks.
  Captures(const scenario::Scenario& s, const topology::Topology& topo, fabric::Network& net);
  // Writes the files (InputError naming outputs.pcap / outputs.trace when
  // one cannot be written) and adds a warning to r.warnings for each output
  // its limit cut.
  void Finish(report::RunResult& r, units::Time end);

 private:
  static void OnTx(void* ctx, uint32_t port, const fabric::Packet& p, units::Time start);
  static void OnPause(void* ctx, uint32_t port, uint8_t mask, units::Time now, units::Time until);

  const scenario::Scenario& s_;
  std::unique_ptr<OutputStream> pcap_out_;  // the capture is streamed to its file
  std::unique_ptr<capture::PacketCapture> pcap_;
  std::unique_ptr<capture::TraceRecorder> trace_;
};

}  // namespace lossless::run
