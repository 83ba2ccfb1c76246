// Distributed runs (docs/parallel.md): the network's side of a run split
// over ranks. Frames, PAUSE frames and FCPs sent on a cut link leave through
// RemoteLinks and come in by DeliverRemote under the sender's key; at the
// end each rank exports the results of what it owns and rank 0 merges them
// (integers only, in entity order). The link layer's packet path calls in
// here only through the one `remote_` branch per frame (network.cpp).
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "fabric/network.hpp"

namespace lossless::fabric {

void Network::SetDistributed(RemoteLinks* remote, std::vector<uint8_t> cut, size_t local_flows) {
  if (cut.size() != ports_.size())
    throw std::invalid_argument("SetDistributed: expected one cut flag per port");
  remote_ = remote;
  cut_ = std::move(cut);
  remote_keys_.assign(ports_.size(), {});
  wire_epoch_.assign(ports_.size(), 0);
  in_flight_.clear();
  if (!state_ports_.empty()) in_flight_.resize(ports_.size());
  copied_events_.clear();
  local_flows_ = local_flows;
  base_totals_ = Totals();
  base_flow_drops_.clear();
  for (const FlowStats& f : nics_.flows()) base_flow_drops_.push_back(f.drops);
  base_live_ = static_cast<int64_t>(pool_.live());
  base_peak_ = pool_.peak();
}

void Network::SendRemote(uint32_t pi, PacketRef r, int64_t head) {
  // The frame leaves this rank: the receiver's rank holds it on its copy of
  // this port's wire, runs its arrival (and the link's loss draws) under the
  // key drawn here, and frees it. Counted alive here until then (SerialLive).
  // arg: the port and the times its link went down before (the receiver
  // loses a frame sent before a down it has run: CopiedPortDown).
  remote_->Send(pi, Time::Ps(head), kArrival, uint64_t{pi} | uint64_t{wire_epoch_[pi]} << 32,
                &pool_[r]);
  sent_away_.push_back(r);  // freed by SettleEvent
  if (!in_flight_.empty() && state_ports_[pi]) {
    // The link may go down before it arrives (LoseInFlight): keep what the
    // drop counts. Frames that arrived before now are done with.
    Ring<InFlight>& f = in_flight_[pi];
    const int64_t now = sim_.Now().ps();
    while (!f.empty() && f.front().at < now) f.pop();
    f.push({head, remote_->sent_key, pool_[r].flow, pool_[r].tclass});
  }
}

void Network::SetForeignPorts(std::vector<uint8_t> foreign) {
  if (foreign.size() != ports_.size())
    throw std::invalid_argument("SetForeignPorts: expected one flag per port");
  foreign_ = std::move(foreign);
}

void Network::SettleEvent() {
  for (PacketRef r : sent_away_) pool_.FreeQuiet(r);
  remote_out_ += static_cast<int64_t>(sent_away_.size());
  sent_away_.clear();
}

void Network::DeliverRemote(Time at, uint64_t key, uint32_t kind, uint64_t arg, const Packet* pk) {
  if (kind == kFcpArrive) {
    // arg = receiving port | vl << 32 | fccl << 35 | epoch << 47 (IbTransmitFcps).
    IbPushFcp(static_cast<uint32_t>(arg),
              {at.ps(), key, static_cast<uint16_t>(arg >> 35 & 0xFFF),
               static_cast<uint16_t>(arg >> 47), static_cast<uint8_t>(arg >> 32 & 7)});
    return;
  }
  if (kind != kArrival) {
    sim_.ScheduleKeyed(at, key, this, kind, arg);
    return;
  }
  // The receiver's copy of the sender's wire: frames come in wire order
  // (sent in order, batches in window order); only the head has an event.
  const uint32_t pi = static_cast<uint32_t>(arg);
  const uint32_t epoch = static_cast<uint32_t>(arg >> 32);
  if (epoch != wire_epoch_[pi]) [[unlikely]] {
    // Sent before the link went down, which this rank has run (the frame was
    // sent in the window of the down, so it arrives after it): lost on the
    // wire, counted by the sender's rank (LoseInFlight). Its arrival event
    // runs all the same, finding no frame, as the serial run's does.
    if (epoch > wire_epoch_[pi])
      throw std::logic_error("distributed run: a frame sent after a link down not yet run here");
    const PacketRef gone = pool_.AllocQuiet();
    pool_.FreeQuiet(gone);
    sim_.ScheduleKeyed(at, key, this, kArrival, ArrivalArg(pi, gone));
    ++cut_lost_late_;
    return;
  }
  const PacketRef r = pool_.AllocQuiet();
  pool_[r] = *pk;
  ++remote_in_;
  const bool idle_wire = ports_[pi].wire.empty();
  ports_[pi].wire.Push(pool_, r);
  if (idle_wire)
    sim_.ScheduleKeyed(at, key, this, kArrival, ArrivalArg(pi, r));
  else
    remote_keys_[pi].keys.push_back(key);
}

void Network::QueueRemoteArrival(uint32_t pi) {
  KeyFifo& f = remote_keys_[pi];
  const PacketRef r = ports_[pi].wire.head;
  sim_.ScheduleKeyed(Time::Ps(pool_[r].next_arrive_ps), f.keys[f.head], this, kArrival,
                     ArrivalArg(pi, r));
  if (++f.head == f.keys.size()) {
    f.keys.clear();
    f.head = 0;
  } else if (f.head >= 1024 && 2 * f.head >= f.keys.size()) {
    // A wire that never drains: drop the used front now and then (amortised O(1)).
    f.keys.erase(f.keys.begin(), f.keys.begin() + static_cast<std::ptrdiff_t>(f.head));
    f.head = 0;
  }
}

namespace {
template <class T>
void Put(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
void TakeInto(const std::string& in, size_t& at, T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (at + sizeof v > in.size()) throw std::runtime_error("distributed results: short record");
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
}
template <class T>
T Take(const std::string& in, size_t& at) {
  T v;
  if (at + sizeof v > in.size()) throw std::runtime_error("distributed results: short record");
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}
// A port's merged record crosses ranks as the words that are not zero: a
// bit mask of them, then those words (a port holds every traffic class's
// counters, about 1 KB, and a run uses one or two classes: 98 % of the
// bytes were zero on a 1,024-host fat tree).
template <class T>
void PutNonZeroWords(std::string& out, const T& v) {
  static_assert(std::has_unique_object_representations_v<T> && sizeof(T) % 8 == 0);
  constexpr size_t kWords = sizeof(T) / 8, kMasks = (kWords + 63) / 64;
  uint64_t w[kWords];
  std::memcpy(w, &v, sizeof v);
  uint64_t mask[kMasks] = {};
  for (size_t i = 0; i < kWords; ++i)
    if (w[i] != 0) mask[i / 64] |= uint64_t{1} << (i % 64);
  out.append(reinterpret_cast<const char*>(mask), sizeof mask);
  for (size_t i = 0; i < kWords; ++i)
    if (w[i] != 0) Put(out, w[i]);
}
template <class T>
T TakeNonZeroWords(const std::string& in, size_t& at) {
  static_assert(std::has_unique_object_representations_v<T> && sizeof(T) % 8 == 0);
  constexpr size_t kWords = sizeof(T) / 8, kMasks = (kWords + 63) / 64;
  uint64_t mask[kMasks];
  for (uint64_t& m : mask) m = Take<uint64_t>(in, at);
  if constexpr (kWords % 64 != 0) {
    if ((mask[kMasks - 1] >> (kWords % 64)) != 0)
      throw std::runtime_error("distributed results: a word past the record");
  }
  uint64_t w[kWords] = {};
  for (size_t m = 0; m < kMasks; ++m)
    for (uint64_t bits = mask[m]; bits != 0; bits &= bits - 1)
      w[m * 64 + static_cast<size_t>(__builtin_ctzll(bits))] = Take<uint64_t>(in, at);
  T v;
  std::memcpy(&v, w, sizeof v);
  return v;
}
}  // namespace

uint32_t Network::DistributedEventPort(uint32_t kind, uint64_t arg) const {
  // Link events run by the receiving end (arrivals, PAUSE frames, FCPs).
  switch (kind) {
    case kArrival:
      return ports_[static_cast<uint32_t>(arg)].peer;
    case kPauseArrive:
      return static_cast<uint32_t>(arg >> 24);
    case kFcpArrive:
      return static_cast<uint32_t>(arg);
    default:
      return kNone;
  }
}

std::array<uint64_t, 6> Network::Totals() const {
  return {uint64_t{nics_.flows_done_},
          packet_hops_,
          nics_.packets_created_,
          drops_,
          nics_.cnps_,
          link_losses_};
}

std::string Network::ExportResults(const std::vector<int32_t>& port_rank, int rank) const {
  // Setup (the constructor, AddFlow, faults) ran alike on every rank, so
  // its effects are in every replica: a port's and a flow's figures come
  // from the rank that owns them, counters as their growth since setup
  // (SetDistributed), and the one setup share is added back on rank 0.
  std::string out;
  Put(out, static_cast<uint64_t>(ports_.size()));
  Put(out, static_cast<uint64_t>(nics_.flows_.size()));
  for (uint32_t p = 0; p < ports_.size(); ++p) {
    if (port_rank[p] != rank) {
      // The one counter another rank writes: losses on a cut link into this
      // rank, found at the arrival, which runs on the receiver's rank.
      if (port_rank[ports_[p].peer] == rank) Put(out, ports_[p].stats.link_losses);
      continue;
    }
    MergedPort m;
    m.stats = port_stats(p);
    m.paused_ps = PausedPsUntilNow(p);
    for (int c = 0; c < kMaxClasses; ++c)
      m.paused_class[static_cast<size_t>(c)] = PausedPsUntilNow(p, c);
    m.busy_ps = BusyPsUntilNow(p);
    PutNonZeroWords(out, m);
  }
  for (size_t f = 0; f < nics_.flows_.size(); ++f) {
    const FlowStats& st = nics_.flows_[f];
    if (port_rank[nics_.HostPort(st.spec.src)] == rank) {
      Put(out, st.sent_bytes);
      Put(out, st.packets);
      Put(out, st.retx_packets);
      Put(out, st.naks);
      Put(out, st.timeouts);
      // DCQCN: the flow's reaction point as the source NIC left it (the
      // injected-CNP report reads it; the events that change it are the
      // source NIC's).
      if (!nics_.rp_.empty()) Put(out, nics_.rp_[f]);
    }
    if (port_rank[nics_.HostPort(st.spec.dst)] == rank) {
      Put(out, st.recv_bytes);
      Put(out, st.finish.ps());
      Put(out, st.max_latency.ps());
    }
    Put(out, st.drops - SetupDrops(f));
  }
  const std::array<uint64_t, 6> t = Totals();
  for (size_t i = 0; i < t.size(); ++i) Put(out, t[i] - base_totals_[i]);
  return out;
}

void Network::ImportResults(const std::vector<std::string>& per_rank,
                            const std::vector<int32_t>& port_rank, uint64_t peak_alive) {
  std::vector<MergedPort> ports(ports_.size());
  std::vector<uint64_t> other_losses(ports_.size(), 0);
  std::vector<FlowStats> flows = nics_.flows_;
  for (size_t f = 0; f < flows.size(); ++f) flows[f].drops = SetupDrops(f);
  std::vector<cc::DcqcnReactionPoint> rps = nics_.rp_;
  std::array<uint64_t, 6> totals = base_totals_;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const std::string& in = per_rank[r];
    const int rank = static_cast<int>(r);
    size_t at = 0;
    if (Take<uint64_t>(in, at) != ports_.size() || Take<uint64_t>(in, at) != nics_.flows_.size())
      throw std::runtime_error("distributed results: ranks built different networks");
    for (uint32_t p = 0; p < ports_.size(); ++p) {
      if (port_rank[p] != rank) {
        if (port_rank[ports_[p].peer] == rank) other_losses[p] += Take<uint64_t>(in, at);
        continue;
      }
      ports[p] = TakeNonZeroWords<MergedPort>(in, at);
    }
    for (size_t i = 0; i < flows.size(); ++i) {
      FlowStats& f = flows[i];
      if (port_rank[nics_.HostPort(f.spec.src)] == rank) {
        f.sent_bytes = Take<int64_t>(in, at);
        f.packets = Take<int64_t>(in, at);
        f.retx_packets = Take<uint64_t>(in, at);
        f.naks = Take<uint64_t>(in, at);
        f.timeouts = Take<uint64_t>(in, at);
        if (!rps.empty()) TakeInto(in, at, rps[i]);
      }
      if (port_rank[nics_.HostPort(f.spec.dst)] == rank) {
        f.recv_bytes = Take<int64_t>(in, at);
        f.finish = Time::Ps(Take<int64_t>(in, at));
        f.max_latency = Time::Ps(Take<int64_t>(in, at));
      }
      f.drops += Take<int64_t>(in, at);
    }
    for (uint64_t& t : totals) t += Take<uint64_t>(in, at);
    if (at != in.size()) throw std::runtime_error("distributed results: trailing bytes");
  }
  for (uint32_t p = 0; p < ports_.size(); ++p) ports[p].stats.link_losses += other_losses[p];
  nics_.flows_ = std::move(flows);
  nics_.rp_ = std::move(rps);
  nics_.flows_done_ = totals[0];
  packet_hops_ = totals[1];
  nics_.packets_created_ = totals[2];
  drops_ = totals[3];
  nics_.cnps_ = totals[4];
  link_losses_ = totals[5];
  merged_ports_ = std::move(ports);
  merged_peak_ = peak_alive;
  merged_ = true;
}

}  // namespace lossless::fabric
