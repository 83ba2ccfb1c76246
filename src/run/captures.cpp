#include "run/captures.hpp"

#include <fmt/format.h>

#include "base/file.hpp"

namespace lossless::run {

Captures::Captures(const scenario::Scenario& s, const topology::Topology& topo,
                   fabric::Network& net, bool flows)
    : s_(s) {
  const scenario::CaptureSpec& c = s.capture;
  if (!c.pcap.empty()) {
    capture::PcapOptions o;
    o.ports = scenario::SelectPorts(c.pcap_ports, c.pcap_ports_where, topo);
    for (uint32_t p : o.ports) o.names.push_back(net.PortName(p));
    o.from_ps = c.pcap_from.ps();
    o.until_ps = c.pcap_until.ps();
    o.limit = c.pcap_limit;
    o.snaplen = static_cast<uint32_t>(c.pcap_snaplen);
    o.ps_resolution = c.pcap_ps;
    pcap_ = std::make_unique<capture::PacketCapture>(net, std::move(o));
    pcap_out_ = std::make_unique<OutputStream>(c.pcap, Location{c.pcap, 0, "outputs.pcap"});
    pcap_->set_sink(pcap_out_.get());
  }
  if (!c.trace.empty()) {
    capture::TraceOptions o;
    o.ports = scenario::SelectPorts(c.trace_ports, c.trace_ports_where, topo);
    o.limit = c.trace_limit;
    o.flows = flows;
    trace_ = std::make_unique<capture::TraceRecorder>(net, std::move(o));
    net.set_pause_trace(&Captures::OnPause, this);
    net.set_watchdog_trace(&Captures::OnWatchdog, this);
  }
  if (pcap_ || trace_) net.set_tx_trace(&Captures::OnTx, this);
}

void Captures::OnTx(void* ctx, uint32_t port, const fabric::Packet& p, units::Time start) {
  auto* self = static_cast<Captures*>(ctx);
  if (self->pcap_) self->pcap_->Record(port, p, start.ps());
  if (self->trace_) self->trace_->Record(port, p, start.ps());
}

void Captures::OnPause(void* ctx, uint32_t port, uint8_t mask, units::Time now, units::Time until) {
  static_cast<Captures*>(ctx)->trace_->Pause(port, mask, now.ps(), until.ps());
}

void Captures::OnWatchdog(void* ctx, uint32_t port, int c, units::Time at, bool restore,
                          uint64_t flushed) {
  static_cast<Captures*>(ctx)->trace_->Watchdog(port, c, at.ps(), restore, flushed);
}

void Captures::CollectiveBegin(const std::string& name, int64_t bytes, units::Time at) {
  if (trace_) trace_->CollectiveBegin(name, bytes, at.ps());
}

void Captures::CollectiveEnd(units::Time at) {
  if (trace_) trace_->CollectiveEnd(at.ps());
}

void Captures::OnStepPost(const collective::StepMessage& m, units::Time at) {
  trace_->StepPost(m.rank, m.channel, m.peer, m.loop, m.step, m.bytes, m.nvlink, at.ps());
}

void Captures::OnStepSendDone(uint32_t rank, uint32_t channel, units::Time at) {
  trace_->StepSendDone(rank, channel, at.ps());
}

void Captures::Finish(report::RunResult& r, units::Time end) {
  capture::TraceVerdict v;
  if (r.deadlock.enabled && !r.deadlock.cycle.empty()) {
    v.formed_ps = r.deadlock.formed.ps();
    v.detected_ps = r.deadlock.detected.ps();
    v.cycle = r.deadlock.cycle;
  }
  for (std::string& w : Write(v, end)) r.warnings.push_back(std::move(w));
}

std::vector<std::string> Captures::Finish(units::Time end) {
  return Write({}, end);
}

std::vector<std::string> Captures::Write(const capture::TraceVerdict& v, units::Time end) {
  std::vector<std::string> warnings;
  const scenario::CaptureSpec& c = s_.capture;
  if (pcap_) {
    const capture::PcapngWriter& w = pcap_->writer();
    if (w.cut() > 0) {
      warnings.push_back(fmt::format(
          "outputs.pcap: the capture reached outputs.pcap_limit ({} bytes): {} frames written, "
          "{} left out",
          c.pcap_limit, w.packets(), w.cut()));
    }
    pcap_->Finish();
    pcap_out_->Commit();
  }
  if (trace_) {
    const std::string text = trace_->Finish(v, end.ps());
    if (trace_->cut() > 0) {
      warnings.push_back(fmt::format(
          "outputs.trace: the timeline reached outputs.trace_limit ({} bytes): {} events "
          "written, {} left out",
          c.trace_limit, trace_->events(), trace_->cut()));
    }
    WriteOutput(c.trace, text, Location{c.trace, 0, "outputs.trace"});
  }
  return warnings;
}

}  // namespace lossless::run
