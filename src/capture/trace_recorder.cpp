#include "capture/trace_recorder.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace lossless::capture {

using fabric::Packet;
using fabric::PacketKind;

std::string TraceTs(int64_t ps) {
  return fmt::format("{}.{:06}", ps / 1'000'000, ps % 1'000'000);
}

namespace {
std::string Quote(const std::string& s) {
  return nlohmann::json(s).dump();
}
}  // namespace

TraceRecorder::TraceRecorder(const fabric::Network& net, TraceOptions opt)
    : net_(net),
      opt_(std::move(opt)),
      selected_(net.num_ports(), 0),
      marks_(net.num_ports()),
      queue_(net.num_ports()),
      pause_from_(net.num_ports()),
      pause_until_(net.num_ports()) {
  for (auto& q : queue_) q.fill(0);
  for (auto& m : marks_) m.fill(0);
  for (auto& a : pause_from_) a.fill(-1);
  for (auto& a : pause_until_) a.fill(-1);
  Add(R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"flows"}})");
  Add(R"({"name":"process_name","ph":"M","pid":2,"tid":0,"args":{"name":"verdicts"}})");
  for (uint32_t p : opt_.ports) {
    selected_[p] = 1;
    Add(fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":{}}}}})",
                    Pid(p), Quote(net.PortName(p))));
    Add(fmt::format(
        R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
        Pid(p), Pid(p)));
    for (int c = 0; c < 8; ++c) {
      Add(fmt::format(
          R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"paused prio {}"}}}})",
          Pid(p), c + 1, c));
    }
    Add(fmt::format(
        R"({{"name":"thread_name","ph":"M","pid":{},"tid":100,"args":{{"name":"events"}}}})",
        Pid(p)));
  }
}

void TraceRecorder::Add(const std::string& event) {
  if (static_cast<int64_t>(body_.size() + event.size() + 2) > opt_.limit) {
    ++cut_;
    return;
  }
  if (!body_.empty()) body_ += ",\n";
  body_ += event;
  ++events_;
}

void TraceRecorder::Record(uint32_t port, const Packet& p, int64_t start_ps) {
  if (port >= selected_.size() || !selected_[port]) return;
  const int c = p.tclass & 7;
  if (p.kind == PacketKind::kData || p.kind == PacketKind::kAck || p.kind == PacketKind::kCnp) {
    const int64_t q = net_.QueueBytes(port, c);
    if (q != queue_[port][c]) {
      queue_[port][c] = q;
      Add(fmt::format(
          R"({{"name":"queue prio {}","ph":"C","ts":{},"pid":{},"tid":0,"args":{{"bytes":{}}}}})",
          c, TraceTs(start_ps), Pid(port), q));
    }
    const uint64_t marks = net_.EcnMarks(port, c);
    if (marks != marks_[port][c]) {
      marks_[port][c] = marks;
      Add(fmt::format(
          R"({{"name":"ECN mark","ph":"i","s":"t","ts":{},"pid":{},"tid":100,"args":{{"class":{},"flow":{},"psn":{}}}}})",
          TraceTs(start_ps), Pid(port), c, p.flow, p.seq));
    }
  }
  if (p.kind == PacketKind::kCnp && p.hops == 0) {
    Add(fmt::format(
        R"({{"name":"CNP","ph":"i","s":"t","ts":{},"pid":{},"tid":100,"args":{{"class":{},"flow":{}}}}})",
        TraceTs(start_ps), Pid(port), c, p.flow));
  }
}

void TraceRecorder::Slice(uint32_t port, int c, int64_t from, int64_t to) {
  if (to <= from) return;
  Add(fmt::format(
      R"({{"name":"paused","ph":"X","ts":{},"dur":{},"pid":{},"tid":{},"args":{{"class":{},"ps":{}}}}})",
      TraceTs(from), TraceTs(to - from), Pid(port), c + 1, c, to - from));
}

void TraceRecorder::Pause(uint32_t port, uint8_t mask, int64_t now, int64_t until) {
  if (port >= selected_.size() || !selected_[port]) return;
  for (unsigned m = mask; m != 0; m &= m - 1) {
    const int c = __builtin_ctz(m);
    int64_t& from = pause_from_[port][c];
    int64_t& end = pause_until_[port][c];
    if (from >= 0 && now < end) {  // paused: the frame moves the end (an XON cuts it)
      end = std::max(until, now);
      continue;
    }
    if (from >= 0) Slice(port, c, from, end);
    from = until > now ? now : -1;
    end = until;
  }
}

std::string TraceRecorder::Finish(const TraceVerdict& v, int64_t end_ps) {
  for (uint32_t p : opt_.ports) {
    for (int c = 0; c < 8; ++c) {
      if (pause_from_[p][c] >= 0) Slice(p, c, pause_from_[p][c], pause_until_[p][c]);
      pause_from_[p][c] = -1;
    }
    const fabric::PortStats st = net_.port_stats(p);
    if (st.wd_actions > 0) {
      Add(fmt::format(
          R"({{"name":"watchdog action","ph":"i","s":"t","ts":{},"pid":{},"tid":100,"args":{{"first_action":true,"actions":{},"drops":{}}}}})",
          TraceTs(st.wd_first_action_ps), Pid(p), st.wd_actions, st.wd_drops));
    }
  }
  const auto& flows = net_.flows();
  for (uint32_t f = 0; f < flows.size(); ++f) {
    const fabric::FlowStats& fs = flows[f];
    const int64_t from = fs.spec.start.ps();
    const int64_t to = fs.done() ? fs.finish.ps() : std::max(end_ps, from);
    Add(fmt::format(
        R"({{"name":"thread_name","ph":"M","pid":1,"tid":{},"args":{{"name":"flow {}"}}}})", f + 1,
        f));
    Add(fmt::format(
        R"({{"name":"flow {} host{}->host{}","ph":"X","ts":{},"dur":{},"pid":1,"tid":{},"args":{{"bytes":{},"done":{},"bytes_received":{}}}}})",
        f, fs.spec.src, fs.spec.dst, TraceTs(from), TraceTs(to - from), f + 1, fs.spec.bytes,
        fs.done() ? "true" : "false", fs.recv_bytes));
  }
  if (!v.cycle.empty()) {
    nlohmann::json cycle = v.cycle;
    Add(fmt::format(
        R"({{"name":"PFC deadlock","ph":"i","s":"g","ts":{},"pid":2,"tid":1,"args":{{"formed_ps":{},"cycle":{}}}}})",
        TraceTs(v.detected_ps), v.formed_ps, cycle.dump()));
  }
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"schema\":\"lossless.trace/1\"";
  out += fmt::format(",\"events_cut\":{}}},\n\"traceEvents\":[\n", cut_);
  out += body_;
  out += "\n]}\n";
  return out;
}

}  // namespace lossless::capture
