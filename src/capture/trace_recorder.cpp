#include "capture/trace_recorder.hpp"

#include <algorithm>

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
  const bool queued =
      p.kind == PacketKind::kData || p.kind == PacketKind::kAck || p.kind == PacketKind::kCnp;
  Record(port, p, start_ps, queued ? net_.QueueBytes(port, c) : 0,
         queued ? net_.EcnMarks(port, c) : 0);
}

void TraceRecorder::Record(uint32_t port, const Packet& p, int64_t start_ps, int64_t q,
                           uint64_t marks) {
  if (port >= selected_.size() || !selected_[port]) return;
  const int c = p.tclass & 7;
  if (p.kind == PacketKind::kData || p.kind == PacketKind::kAck || p.kind == PacketKind::kCnp) {
    if (q != queue_[port][c]) {
      queue_[port][c] = q;
      Add(fmt::format(
          R"({{"name":"queue prio {}","ph":"C","ts":{},"pid":{},"tid":0,"args":{{"bytes":{}}}}})",
          c, TraceTs(start_ps), Pid(port), q));
    }
    if (marks != marks_[port][c]) {
      marks_[port][c] = marks;
      Add(fmt::format(
          R"({{"name":"ECN mark","ph":"i","s":"t","ts":{},"pid":{},"tid":100,"args":{{"class":{},"flow":{},"psn":{}}}}})",
          TraceTs(start_ps), Pid(port), c, p.flow, p.seq));
    }
  }
  if (p.kind == PacketKind::kPause) {  // class-enable vector in entropy, quanta in payload
    Add(fmt::format(
        R"({{"name":"PFC frame","ph":"i","s":"t","ts":{},"pid":{},"tid":100,"args":{{"classes":{},"quanta":{}}}}})",
        TraceTs(start_ps), Pid(port), p.entropy, p.payload));
    return;
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

void TraceRecorder::Watchdog(uint32_t port, int c, int64_t at, bool restore, uint64_t flushed) {
  if (port >= selected_.size() || !selected_[port]) return;
  if (!restore && pause_from_[port][c] >= 0 && pause_until_[port][c] > at)
    pause_until_[port][c] = at;  // the action ignores the PAUSE in force
  Add(fmt::format(
      R"({{"name":"{}","ph":"i","s":"t","ts":{},"pid":{},"tid":100,"args":{{"class":{},"flushed":{}}}}})",
      restore ? "watchdog restore" : "watchdog action", TraceTs(at), Pid(port), c, flushed));
}

void TraceRecorder::CollectiveBegin(const std::string& name, int64_t bytes, int64_t at) {
  CollectiveEnd(at);
  if (collectives_ == 0)
    Add(R"({"name":"process_name","ph":"M","pid":3,"tid":0,"args":{"name":"collectives"}})");
  collective_ = name;
  collective_bytes_ = bytes;
  collective_from_ = at;
}

void TraceRecorder::StepPost(uint32_t rank, uint32_t channel, uint32_t peer, int64_t loop,
                             int32_t step, int64_t bytes, bool nvlink, int64_t at) {
  if (rank_named_.size() <= rank) rank_named_.resize(rank + 1, 0);
  StepTrack& t = steps_[uint64_t{rank} << 32 | channel];
  if (!rank_named_[rank]) {
    rank_named_[rank] = 1;
    Add(fmt::format(
        R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":"rank {}"}}}})",
        RankPid(rank), rank));
    Add(fmt::format(
        R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
        RankPid(rank), static_cast<int64_t>(rank) - (int64_t{1} << 30)));
  }
  if (t.next_serial == 0 && !t.open) {
    Add(fmt::format(
        R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"channel {}"}}}})",
        RankPid(rank), channel + 1, channel));
  }
  if (t.open && (t.loop != loop || t.step != step)) CloseStep(rank, channel, t, at);
  if (!t.open) {
    t.open = true;
    t.loop = loop;
    t.step = step;
    t.peer = peer;
    t.nvlink = nvlink;
    t.bytes = t.messages = t.outstanding = 0;
    t.from = t.last_done = at;
    t.serial = t.next_serial;
  }
  t.bytes += bytes;
  ++t.messages;
  ++t.outstanding;
  t.posted.push_back(t.serial);
  ++t.next_serial;
}

void TraceRecorder::StepSendDone(uint32_t rank, uint32_t channel, int64_t at) {
  auto it = steps_.find(uint64_t{rank} << 32 | channel);
  if (it == steps_.end() || it->second.posted.empty()) return;
  StepTrack& t = it->second;
  const uint64_t serial = t.posted.front();
  t.posted.pop_front();
  if (t.open && serial == t.serial) {
    --t.outstanding;
    t.last_done = at;
  }
}

void TraceRecorder::CloseStep(uint32_t rank, uint32_t channel, StepTrack& t, int64_t at) {
  const bool clipped = t.outstanding > 0;
  const int64_t to = clipped ? at : std::max(t.from, t.last_done);
  t.open = false;  // later completions of its messages match no open step (serials differ)
  Add(fmt::format(
      R"({{"name":"{} step {}","ph":"X","ts":{},"dur":{},"pid":{},"tid":{},"args":{{"collective":"{}","size":{},"iteration":{},"channel":{},"loop":{},"step":{},"peer":{},"bytes":{},"messages":{},"link":"{}","clipped":{}}}}})",
      collective_, t.step, TraceTs(t.from), TraceTs(to - t.from), RankPid(rank), channel + 1,
      collective_, collective_bytes_, collectives_, channel, t.loop, t.step, t.peer, t.bytes,
      t.messages, t.nvlink ? "nvlink" : "network", clipped ? "true" : "false"));
}

void TraceRecorder::CollectiveEnd(int64_t at) {
  if (collective_.empty()) return;
  for (auto& [key, t] : steps_) {
    if (t.open) CloseStep(static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key), t, at);
    t.posted.clear();
  }
  Add(fmt::format(
      R"({{"name":"{} {} B","ph":"X","ts":{},"dur":{},"pid":3,"tid":1,"args":{{"collective":"{}","size":{},"iteration":{}}}}})",
      collective_, collective_bytes_, TraceTs(collective_from_), TraceTs(at - collective_from_),
      collective_, collective_bytes_, collectives_));
  ++collectives_;
  collective_.clear();
}

std::string TraceRecorder::Finish(const TraceVerdict& v, int64_t end_ps,
                                  const std::vector<int64_t>* flow_bytes) {
  for (uint32_t p : opt_.ports) {
    for (int c = 0; c < 8; ++c) {
      // A pause in force at the end is shown up to the end (as the run counts it).
      if (pause_from_[p][c] >= 0)
        Slice(p, c, pause_from_[p][c], std::min(pause_until_[p][c], end_ps));
      pause_from_[p][c] = -1;
    }
  }
  CollectiveEnd(end_ps);
  const auto& flows = net_.flows();
  for (uint32_t f = 0; opt_.flows && f < flows.size(); ++f) {
    const fabric::FlowStats& fs = flows[f];
    const int64_t from = fs.spec.start.ps();
    const int64_t to = fs.done() ? fs.finish.ps() : std::max(end_ps, from);
    Add(fmt::format(
        R"({{"name":"thread_name","ph":"M","pid":1,"tid":{},"args":{{"name":"flow {}"}}}})", f + 1,
        f));
    Add(fmt::format(
        R"({{"name":"flow {} host{}->host{}","ph":"X","ts":{},"dur":{},"pid":1,"tid":{},"args":{{"bytes":{},"done":{},"bytes_received":{}}}}})",
        f, fs.spec.src, fs.spec.dst, TraceTs(from), TraceTs(to - from), f + 1,
        flow_bytes != nullptr && f < flow_bytes->size() ? (*flow_bytes)[f] : fs.spec.bytes,
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
