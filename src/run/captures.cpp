#include "run/captures.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "base/file.hpp"

namespace lossless::run {

Captures::Captures(const scenario::Scenario& s, const topology::Topology& topo,
                   fabric::Network& net, bool flows, int dist_rank)
    : s_(s), net_(net), dist_rank_(dist_rank) {
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
    // Distributed, only rank 0 writes the file.
    if (dist_rank_ <= 0) {
      pcap_out_ = std::make_unique<OutputStream>(c.pcap, Location{c.pcap, 0, "outputs.pcap"});
      pcap_->set_sink(pcap_out_.get());
    }
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

void Captures::StartDistributed(const sim::Simulator& sim, std::vector<int32_t> port_rank) {
  sim_ = &sim;
  port_rank_ = std::move(port_rank);
  segment_ = 1;
}

void Captures::SetLaunchOrder(const std::vector<std::vector<uint32_t>>& rings) {
  if (!distributed()) return;
  launch_pos_.assign(rings.size(), {});
  uint32_t n = rings.empty() ? 0 : static_cast<uint32_t>(rings[0].size());
  for (size_t c = 0; c < rings.size(); ++c) {
    std::vector<uint32_t>& pos = launch_pos_[c];
    for (size_t j = 0; j < rings[c].size(); ++j) {
      const uint32_t gpu = rings[c][j];
      if (pos.size() <= gpu) pos.resize(gpu + 1, UINT32_MAX);
      pos[gpu] = static_cast<uint32_t>(c * n + j);
    }
  }
}

static_assert(sizeof(fabric::Packet) == 64);

void Captures::Log(Record r) {
  r.segment = segment_;
  r.seq = seq_++;
  if (sim_ != nullptr) {
    r.time = sim_->Now().ps();
    r.key = sim_->RunningKey();
    if (driver_ && r.time == driver_time_ && r.key == driver_key_) {
      r.time = INT64_MIN;
      r.key = 0;
    }
  } else {
    r.time = 0;
    r.key = 0;
  }
  log_.push_back(r);
}

void Captures::OnTx(void* ctx, uint32_t port, const fabric::Packet& p, units::Time start) {
  auto* self = static_cast<Captures*>(ctx);
  if (self->distributed()) {
    if (!self->logging()) return;
    const bool pcap = self->pcap_ && self->pcap_->Needs(port, p);
    const bool trace = self->trace_ && self->trace_->selected(port);
    if (!pcap && !trace) return;
    Record r{};
    r.type = kTx;
    r.port = port;
    std::memcpy(r.pk, &p, sizeof p);
    r.a = start.ps();
    const int c = p.tclass & 7;
    if (trace) {
      r.b = self->net_.QueueBytes(port, c);
      r.c = static_cast<int64_t>(self->net_.EcnMarks(port, c));
    }
    self->Log(r);
    return;
  }
  if (self->pcap_) self->pcap_->Record(port, p, start.ps());
  if (self->trace_) self->trace_->Record(port, p, start.ps());
}

void Captures::OnPause(void* ctx, uint32_t port, uint8_t mask, units::Time now, units::Time until) {
  auto* self = static_cast<Captures*>(ctx);
  if (self->distributed()) {
    if (!self->logging() || !self->trace_->selected(port)) return;
    Record r{};
    r.type = kPause;
    r.port = port;
    r.u = mask;
    r.a = now.ps();
    r.b = until.ps();
    self->Log(r);
    return;
  }
  self->trace_->Pause(port, mask, now.ps(), until.ps());
}

void Captures::OnWatchdog(void* ctx, uint32_t port, int c, units::Time at, bool restore,
                          uint64_t flushed) {
  auto* self = static_cast<Captures*>(ctx);
  if (self->distributed()) {
    if (!self->logging() || !self->trace_->selected(port)) return;
    Record r{};
    r.type = kWatchdog;
    r.port = port;
    r.u = static_cast<uint32_t>(c);
    r.a = at.ps();
    r.b = restore ? 1 : 0;
    r.c = static_cast<int64_t>(flushed);
    self->Log(r);
    return;
  }
  self->trace_->Watchdog(port, c, at.ps(), restore, flushed);
}

// Driver calls (between collectives) run alike on every rank at one point of
// the serial order: each is a segment of its own, logged by rank 0.
void Captures::CollectiveBegin(const std::string& name, int64_t bytes, units::Time at) {
  if (!distributed()) {
    if (trace_) trace_->CollectiveBegin(name, bytes, at.ps());
    return;
  }
  ++segment_;
  if (dist_rank_ == 0 && trace_) {
    Record r{};
    r.type = kBegin;
    r.a = static_cast<int64_t>(names_.size());
    names_.push_back(name);
    r.b = bytes;
    r.c = at.ps();
    Log(r);
  }
  ++segment_;
  if (sim_ != nullptr) {
    driver_ = true;
    driver_time_ = sim_->Now().ps();
    driver_key_ = sim_->RunningKey();
  }
}

void Captures::CollectiveEnd(units::Time at) {
  if (!distributed()) {
    if (trace_) trace_->CollectiveEnd(at.ps());
    return;
  }
  ++segment_;
  if (dist_rank_ == 0 && trace_) {
    Record r{};
    r.type = kEnd;
    r.c = at.ps();
    Log(r);
  }
  ++segment_;
}

void Captures::OnStepPost(const collective::StepMessage& m, units::Time at) {
  if (!distributed()) {
    trace_->StepPost(m.rank, m.channel, m.peer, m.loop, m.step, m.bytes, m.nvlink, at.ps());
    return;
  }
  if (!logging()) return;
  Record r{};
  r.type = kStepPost;
  r.port = m.rank;
  r.u = m.channel;
  r.v = m.peer;
  r.w = m.step;
  r.a = m.loop;
  r.b = m.bytes;
  r.c = at.ps();
  r.d = m.nvlink ? 1 : 0;
  r.sub = m.channel < launch_pos_.size() && m.rank < launch_pos_[m.channel].size()
              ? launch_pos_[m.channel][m.rank]
              : UINT64_MAX;
  Log(r);
}

void Captures::OnStepSendDone(uint32_t rank, uint32_t channel, units::Time at) {
  if (!distributed()) {
    trace_->StepSendDone(rank, channel, at.ps());
    return;
  }
  if (!logging()) return;
  Record r{};
  r.type = kStepDone;
  r.port = rank;
  r.u = channel;
  r.c = at.ps();
  Log(r);
}

std::string Captures::ExportLog() const {
  std::string out;
  const uint64_t n = log_.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  if (n > 0) out.append(reinterpret_cast<const char*>(log_.data()), n * sizeof(Record));
  // The bytes of the flows whose source this rank owns (a queue pair's grow
  // with each message posted at its source).
  const std::vector<fabric::FlowStats>& flows = net_.flows();
  for (const fabric::FlowStats& f : flows) {
    const bool mine =
        port_rank_.empty() || port_rank_[net_.HostPort(f.spec.src)] == std::max(dist_rank_, 0);
    const int64_t b = mine ? f.spec.bytes : 0;
    out.append(reinterpret_cast<const char*>(&b), sizeof b);
  }
  return out;
}

void Captures::ImportLogs(const std::vector<std::string>& per_rank) {
  struct Ref {
    const Record* r;
    uint32_t rank;
  };
  std::vector<std::vector<Record>> logs(per_rank.size());
  const size_t flows = net_.flows().size();
  flow_bytes_.assign(flows, 0);
  size_t total = 0;
  for (size_t k = 0; k < per_rank.size(); ++k) {
    const std::string& in = per_rank[k];
    uint64_t n = 0;
    if (in.size() < sizeof n) throw std::runtime_error("distributed captures: short log");
    std::memcpy(&n, in.data(), sizeof n);
    if (in.size() != sizeof n + n * sizeof(Record) + flows * sizeof(int64_t))
      throw std::runtime_error("distributed captures: a log of another size");
    logs[k].resize(n);
    if (n > 0) std::memcpy(logs[k].data(), in.data() + sizeof n, n * sizeof(Record));
    total += n;
    const char* fb = in.data() + sizeof n + n * sizeof(Record);
    for (size_t f = 0; f < flows; ++f) {
      int64_t b = 0;
      std::memcpy(&b, fb + f * sizeof b, sizeof b);
      flow_bytes_[f] += b;
    }
  }
  // The serial order: (segment, time, key) of the event that made the call,
  // then within one event the order it made them in. One event runs on one
  // rank, except the collective launch, which every rank runs for its own
  // GPUs: its steps go in the launch order (sub).
  std::vector<Ref> all;
  all.reserve(total);
  for (size_t k = 0; k < logs.size(); ++k)
    for (const Record& r : logs[k]) all.push_back({&r, static_cast<uint32_t>(k)});
  auto event_before = [](const Record& a, const Record& b) {
    if (a.segment != b.segment) return a.segment < b.segment;
    if (a.time != b.time) return a.time < b.time;
    return a.key < b.key;
  };
  std::stable_sort(all.begin(), all.end(),
                   [&](const Ref& a, const Ref& b) { return event_before(*a.r, *b.r); });
  for (size_t i = 0; i < all.size();) {
    size_t j = i + 1;
    bool shared = false;
    while (j < all.size() && !event_before(*all[i].r, *all[j].r)) {
      shared = shared || all[j].rank != all[i].rank;
      ++j;
    }
    if (shared) {
      for (size_t k = i; k < j; ++k)
        if (all[k].r->type != kStepPost || all[k].r->sub == UINT64_MAX)
          throw std::logic_error(
              "distributed captures: an event several ranks ran (the collective launch) handed "
              "the capture a frame or an unordered step");
      std::stable_sort(all.begin() + static_cast<std::ptrdiff_t>(i),
                       all.begin() + static_cast<std::ptrdiff_t>(j),
                       [](const Ref& a, const Ref& b) { return a.r->sub < b.r->sub; });
    }
    i = j;
  }
  for (const Ref& ref : all) Replay(*ref.r);
  log_.clear();
}

void Captures::Replay(const Record& r) {
  switch (r.type) {
    case kTx: {
      fabric::Packet pk;
      std::memcpy(&pk, r.pk, sizeof pk);
      if (pcap_) pcap_->Record(r.port, pk, r.a);
      if (trace_) trace_->Record(r.port, pk, r.a, r.b, static_cast<uint64_t>(r.c));
      break;
    }
    case kPause:
      trace_->Pause(r.port, static_cast<uint8_t>(r.u), r.a, r.b);
      break;
    case kWatchdog:
      trace_->Watchdog(r.port, static_cast<int>(r.u), r.a, r.b != 0, static_cast<uint64_t>(r.c));
      break;
    case kStepPost:
      trace_->StepPost(r.port, r.u, r.v, r.a, r.w, r.b, r.d != 0, r.c);
      break;
    case kStepDone:
      trace_->StepSendDone(r.port, r.u, r.c);
      break;
    case kBegin:
      trace_->CollectiveBegin(names_.at(static_cast<size_t>(r.a)), r.b, r.c);
      break;
    case kEnd:
      trace_->CollectiveEnd(r.c);
      break;
    default:
      throw std::runtime_error("distributed captures: a record of an unknown type");
  }
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
  if (dist_rank_ > 0) return warnings;  // rank 0 writes
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
    const std::string text = trace_->Finish(v, end.ps(), distributed() ? &flow_bytes_ : nullptr);
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
