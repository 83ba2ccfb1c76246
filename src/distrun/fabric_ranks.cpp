#include "distrun/fabric_ranks.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "base/error.hpp"
#include "parallel/partition.hpp"
#include "sim/rng.hpp"

namespace lossless::distrun {

// One rank's side of the cut links: frames handed over by the network go to
// the engine under the sending port's entity (its next key, drawn here
// exactly where the serial run draws it), for the peer port's rank.
class FabricRanks::Links final : public fabric::Network::RemoteLinks {
 public:
  Links(const fabric::Network& net, const std::vector<int32_t>& port_rank)
      : net_(net), port_rank_(port_rank) {}
  void set_engine(parallel::WindowEngine* e) { engine_ = e; }
  void Send(uint32_t port, units::Time at, uint32_t kind, uint64_t arg,
            const fabric::Packet* pk) override {
    const uint32_t peer = net_.PortPeer(port);
    sent_key = engine_->Send(port_rank_[peer], at, net_.PortEntity(port), peer, kind, arg, pk);
  }

 private:
  const fabric::Network& net_;
  const std::vector<int32_t>& port_rank_;
  parallel::WindowEngine* engine_ = nullptr;
};

// Where in the serial order this rank's part of the count of packets alive
// changes (the packet pool's observer: called only when a packet is made or
// freed, so events that do neither cost nothing), and, with `--digest`, the
// same-time ties with other ranks (Simulator's event probe, per event).
//
// The exact peak (docs/parallel.md#the-peak-of-packets-alive). The serial
// count at any point of the serial order is the sum over ranks of each
// rank's part, but the ranks' events interleave, so the peak needs the
// changes in (time, key) order. It does not need all of them: at each
// window's end the window's reduction carries every rank's highest part
// within the window (M_r) and its part at the end (E_r). Sum M_r bounds the
// count everywhere in the window from above; sum E_r is the count at the
// window's end, a value the serial run reaches, so the largest such sum so
// far (`floor`) bounds the peak from below. A window whose sum M_r is at
// most `floor` cannot raise the peak: every rank drops its changes. Only
// the other windows' changes are kept and merged on rank 0 at the end.
struct FabricRanks::Probe final : fabric::PacketPool::Observer {
  sim::Simulator* sim = nullptr;
  fabric::Network* net = nullptr;
  int rank = 0;
  int ranks = 1;
  uint64_t ties = 0;
  struct Change {
    int64_t time;
    uint64_t key;
    int64_t delta;
    int64_t peak;     // highest part within the event, minus the part before it
    uint64_t window;  // the window it ran in (the number of reductions before it)
  };
  std::vector<Change> window_log;  // this window's changes, one record per event
  std::vector<Change> kept;        // the changes of windows that may hold the peak
  // This rank's part: its SerialLive minus setup's packets, which are alike
  // on every rank (each built the whole scenario); the count is them plus
  // the sum of the parts.
  int64_t part = 0;
  int64_t window_max = 0;  // M_r so far in this window
  uint64_t window = 0;
  int64_t base = 0;
  // Agreed on every rank (from the reductions):
  int64_t floor = 0;  // the largest count at a window's end (and setup's peak)
  int64_t count = 0;  // the count at the last window's end
  struct Kept {
    uint64_t window;
    int64_t start;  // the count at its start
    int64_t bound;  // sum of M_r
  };
  std::vector<Kept> kept_windows;
  uint64_t windows_dropped = 0;

  // A packet made (+1) or freed (-1) by the running event: one record per
  // event that changes the part, its net change and its highest point.
  void PacketsChanged(int delta) override {
    part += delta;
    if (part > window_max) window_max = part;
    const int64_t t = sim->Now().ps();
    const uint64_t key = sim->RunningKey();
    if (!window_log.empty()) {
      Change& c = window_log.back();
      if (c.key == key && c.time == t) {
        c.delta += delta;
        if (c.delta > c.peak) c.peak = c.delta;
        return;
      }
    }
    window_log.push_back({t, key, delta, delta > 0 ? delta : 0, window});
  }

  // Ties (probe, `--digest` only): pairs of consecutive events at one time,
  // one of them from another rank. remote[e] != 0: entity e is another
  // rank's (its events here are the ones delivered from there). Entities
  // past the end (sampler, detector) are not.
  std::vector<uint8_t> remote;
  int64_t prev_time = -1;
  bool prev_remote = false;
  void SetOwners(const std::vector<int32_t>& owner) {
    remote.resize(owner.size());
    for (size_t e = 0; e < owner.size(); ++e) remote[e] = owner[e] != rank ? 1 : 0;
  }
  static void OnEvent(void* ctx) {
    Probe& p = *static_cast<Probe*>(ctx);
    const int64_t t = p.sim->Now().ps();
    const uint64_t source = p.sim->RunningKey() >> 40;
    const bool remote = source < p.remote.size() && p.remote[source] != 0;
    if (t == p.prev_time && (remote || p.prev_remote)) ++p.ties;
    p.prev_time = t;
    p.prev_remote = remote;
  }

  // The part as the network has it, after freeing the frames handed to
  // other ranks; the observer must have seen every change (a cheap check
  // per window: a packet made or freed past the pool would corrupt the peak).
  int64_t Settle() {
    net->SettleEvent();
    const int64_t live = net->SerialLive() - base;
    if (live != part)
      throw std::logic_error(fmt::format(
          "distributed run: packets alive {} on this rank, the packet log says {}", live, part));
    return part;
  }
  // The window's lanes: [r] = M_r, [ranks + r] = E_r; other ranks' lanes
  // INT64_MAX, so the minimum over ranks gives every rank every value.
  void Fill(int64_t* lanes) {
    Settle();
    for (size_t i = 0; i < 2 * static_cast<size_t>(ranks); ++i) lanes[i] = INT64_MAX;
    lanes[rank] = window_max;
    lanes[ranks + rank] = part;
  }
  void Take(const int64_t* lanes) {
    int64_t bound = base, end = base;
    for (int r = 0; r < ranks; ++r) {
      bound += lanes[r];
      end += lanes[ranks + r];
    }
    floor = std::max(floor, end);
    if (bound > floor) {
      kept_windows.push_back({window, count, bound});
      kept.insert(kept.end(), window_log.begin(), window_log.end());
      if (kept.size() >= prune_at) Prune();
    } else {
      ++windows_dropped;
    }
    window_log.clear();
    count = end;
    window_max = part;
    ++window;
  }
  // Drops the kept windows the floor has since risen to (their bound is at
  // most it): the end would drop them anyway, as the floor only rises, and
  // every rank drops the same ones (the floor is agreed), whenever it
  // prunes. Run when the log has doubled since the last prune (amortised
  // O(1) per change): on the 1,024-host permutation rank 0 held 1.08 M
  // changes (43 MB) at the end without it, of which 7,173 were merged.
  size_t prune_min = 1 << 16;
  size_t prune_at = 1 << 16;
  void Prune() {
    std::vector<uint8_t> need(window + 1, 0);
    size_t w = 0;
    for (const Kept& k : kept_windows)
      if (k.bound > floor) {
        need[k.window] = 1;
        kept_windows[w++] = k;
      }
    kept_windows.resize(w);
    size_t c = 0;
    for (const Change& ch : kept)
      if (need[ch.window]) kept[c++] = ch;
    kept.resize(c);
    kept.shrink_to_fit();
    prune_at = std::max(2 * kept.size(), prune_min);
  }
  // After the run: the changes since the last reduction (the window a stop
  // ended) are kept whatever they are.
  void Finish() {
    Settle();
    kept_windows.push_back({window, count, INT64_MAX});
    kept.insert(kept.end(), window_log.begin(), window_log.end());
    window_log.clear();
  }
  // This rank's kept changes of the windows that may still hold the peak.
  std::vector<Change> Needed() const {
    std::vector<uint8_t> need(window + 1, 0);
    for (const Kept& k : kept_windows) need[k.window] = k.bound > floor;
    std::vector<Change> out;
    for (const Change& c : kept)
      if (need[c.window]) out.push_back(c);
    return out;
  }
};

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// The serial order of the changes (Probe::Change) of kept windows.
bool ChangeBefore(const FabricRanks::Probe::Change& a, const FabricRanks::Probe::Change& b) {
  if (a.window != b.window) return a.window < b.window;
  return a.time != b.time ? a.time < b.time : a.key < b.key;
}

template <class T>
void PutVec(std::string& out, const std::vector<T>& v) {
  const uint64_t n = v.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  if (n > 0) out.append(reinterpret_cast<const char*>(v.data()), n * sizeof(T));
}
template <class T>
std::vector<T> TakeVec(const std::string& in, size_t& at) {
  uint64_t n = 0;
  if (at + sizeof n > in.size()) throw std::runtime_error("distributed run: short gather");
  std::memcpy(&n, in.data() + at, sizeof n);
  at += sizeof n;
  if (at + n * sizeof(T) > in.size()) throw std::runtime_error("distributed run: short gather");
  std::vector<T> v(n);
  if (n > 0) std::memcpy(v.data(), in.data() + at, n * sizeof(T));
  at += n * sizeof(T);
  return v;
}

}  // namespace

int64_t LastArrivalBound(int64_t ran_before, Int128 missing, int64_t largest, int64_t bps) {
  missing -= largest + 64;
  if (missing <= 0 || bps <= 0) return ran_before;
  const Int128 ps = missing * 8'000'000'000'000 / bps;  // rounded down
  const Int128 t = ran_before + ps;
  return t > INT64_MAX ? INT64_MAX : static_cast<int64_t>(t);
}

FabricRanks::FabricRanks(parallel::Comm& comm, sim::Simulator& sim, fabric::Network& net,
                         const scenario::Scenario& s, std::vector<int32_t> rank_of_node, Stats& st)
    : comm_(comm),
      sim_(sim),
      net_(net),
      s_(s),
      me_(comm.Rank()),
      t_setup_(std::chrono::steady_clock::now()),
      rank_of_node_(std::move(rank_of_node)) {
  st.ranks = comm.Size();
  const topology::Topology& topo = net.topology();
  if (rank_of_node_.empty()) {
    const bool clos = s.topology_kind == "leaf-spine" || s.topology_kind == "fat-tree" ||
                      s.topology_kind == "rail-optimized";
    const parallel::Partition p = parallel::PartitionFabric(topo, clos ? s.clos.gpus_per_node : 1,
                                                            comm.Size(), {s.file, 0, "mpirun -np"});
    rank_of_node_ = p.rank_of_node;
  }
  if (rank_of_node_.size() != topo.nodes.size())
    throw std::invalid_argument("distributed run: expected a rank for every topology node");
  // Owners: a port is its node's, a switch its own node's. No other entity
  // may have events when Start keeps this rank's (the callers refuse the
  // components that add them, or build them without events).
  port_rank_.assign(net.num_ports(), 0);
  uint32_t max_entity = 0;
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    port_rank_[p] = rank_of_node_[net.PortNode(p)];
    max_entity = std::max(max_entity, net.PortEntity(p));
  }
  for (uint32_t sw = 0; sw < net.num_switches(); ++sw)
    max_entity = std::max(max_entity, net.SwitchEntity(sw));
  entity_rank_.assign(max_entity + 1, -1);
  for (uint32_t p = 0; p < net.num_ports(); ++p) entity_rank_[net.PortEntity(p)] = port_rank_[p];
  for (uint32_t sw = 0; sw < net.num_switches(); ++sw)
    entity_rank_[net.SwitchEntity(sw)] = rank_of_node_[net.NodeOfSwitch(sw)];
  // Cut links, neighbours, lookahead.
  cut_.assign(net.num_ports(), 0);
  std::set<int> neighbours;
  int64_t lookahead = INT64_MAX;
  st.cut_links = 0;
  st.switch_links = 0;
  std::vector<uint8_t> is_host(topo.nodes.size(), 0);
  for (uint32_t h : topo.hosts) is_host[h] = 1;
  for (uint32_t l = 0; l < topo.links.size(); ++l) {
    const uint32_t a = 2 * l, b = 2 * l + 1;
    const bool host_link = is_host[net.PortNode(a)] || is_host[net.PortNode(b)];
    if (!host_link) ++st.switch_links;
    if (port_rank_[a] == port_rank_[b]) continue;
    if (host_link)
      throw std::invalid_argument(fmt::format(
          "distributed run: link {} joins a host to a switch on another rank (units keep "
          "hosts with their switches)",
          l));
    cut_[a] = cut_[b] = 1;
    ++st.cut_links;
    lookahead = std::min(lookahead, topo.links[l].delay.ps());
    if (port_rank_[a] == me_) neighbours.insert(port_rank_[b]);
    if (port_rank_[b] == me_) neighbours.insert(port_rank_[a]);
  }
  if (lookahead <= 0)
    throw InputError({s.file, 0, "mpirun -np"},
                     "expected cut links with a delay above zero (the lookahead), got 0");
  neighbours_.assign(neighbours.begin(), neighbours.end());
  // A rank without cut links still windows with the others.
  st.lookahead = units::Time::Ps(lookahead == INT64_MAX ? s.stop_time.ps() + 1 : lookahead);
}

FabricRanks::~FabricRanks() {
  // The network outlives this: it must not call into the engine or the log.
  if (probe_) net_.set_packet_observer(nullptr);
  if (probe_) sim_.set_event_probe(nullptr, nullptr);
}

void FabricRanks::Replicate(uint32_t entity, int32_t owner) {
  if (replicated_.size() <= entity) replicated_.resize(entity + 1, -1);
  replicated_[entity] = owner;
}

parallel::WindowEngine& FabricRanks::Start(size_t local_flows, units::Time window, bool ties,
                                           size_t peak_log_prune) {
  links_ = std::make_unique<Links>(net_, port_rank_);
  net_.SetDistributed(links_.get(), cut_, local_flows);
  std::vector<uint8_t> foreign_port(port_rank_.size());
  for (size_t p = 0; p < port_rank_.size(); ++p) foreign_port[p] = port_rank_[p] != me_ ? 1 : 0;
  net_.SetForeignPorts(std::move(foreign_port));
  // Keep the events of this rank's entities (setup queued every entity's),
  // every replicated entity's, and a copy of the link-state events of the
  // ports that send to this rank on cut links: this rank holds their wires'
  // copies (Network::SetPortUp).
  bool foreign = false;
  sim_.Retain([&](uint64_t key, uint32_t kind, uint64_t arg) {
    if ((key >> 40) < replicated_.size() && replicated_[key >> 40] >= 0) return true;
    const uint32_t state_port = net_.LinkStateEventPort(kind, arg);
    if (state_port != UINT32_MAX && cut_[state_port] &&
        port_rank_[net_.PortPeer(state_port)] == me_)
      return true;
    const uint32_t at_port = net_.DistributedEventPort(kind, arg);
    if (at_port != UINT32_MAX) return port_rank_[at_port] == me_;
    const uint64_t e = key >> 40;
    if (e >= entity_rank_.size() || entity_rank_[e] < 0) foreign = true;
    return e < entity_rank_.size() && entity_rank_[e] == me_;
  });
  if (foreign)
    throw std::logic_error(
        "distributed run: an event of an entity that is neither a port nor "
        "a switch (a component the distributed run does not place)");
  // The packets-alive log from the packet pool; the per-event probe (same-
  // time ties) only when asked (`--digest`), so that a run without it runs
  // the simulator's plain loop.
  probe_ = std::make_unique<Probe>();
  Probe& probe = *probe_;
  probe.sim = &sim_;
  probe.net = &net_;
  probe.rank = me_;
  probe.SetOwners(entity_rank_);
  probe.ranks = comm_.Size();
  probe.base = net_.setup_live();
  probe.count = net_.setup_live();
  probe.floor = static_cast<int64_t>(net_.setup_peak());
  probe.prune_min = probe.prune_at = std::max<size_t>(peak_log_prune, 1);
  probe.Settle();
  net_.set_packet_observer(&probe);
  ties_ = ties;
  if (ties) sim_.set_event_probe(&Probe::OnEvent, &probe);
  engine_start_ = std::chrono::steady_clock::now();
  engine_ = std::make_unique<parallel::WindowEngine>(
      comm_, sim_, window, neighbours_, sizeof(fabric::Packet),
      [this](const parallel::RemoteEvent& e, const char* payload) {
        fabric::Packet pk;
        std::memcpy(&pk, payload, sizeof pk);
        net_.DeliverRemote(units::Time::Ps(e.time_ps), e.key, e.kind, e.arg, &pk);
      });
  links_->set_engine(engine_.get());
  parallel::ModelLanes lanes;
  lanes.count = probe_lanes();
  lanes.fill = [this](int64_t* l) { FillProbeLanes(l); };
  lanes.take = [this](const int64_t* l) { TakeProbeLanes(l); };
  engine_->set_model_lanes(std::move(lanes));
  return *engine_;
}

size_t FabricRanks::probe_lanes() const {
  return 2 * static_cast<size_t>(comm_.Size());
}
void FabricRanks::FillProbeLanes(int64_t* lanes) {
  probe_->Fill(lanes);
}
void FabricRanks::TakeProbeLanes(const int64_t* lanes) {
  probe_->Take(lanes);
}

int FabricRanks::GatherQpFailure() {
  // The record, from the one rank that has it (the failing queue pair's
  // source NIC's): qp, time, head length, text.
  std::string mine;
  if (const fabric::QpFailure* f = net_.qp_failure()) {
    const uint32_t qp = f->qp;
    const int64_t at = f->at.ps();
    const uint64_t head = f->head_len;
    mine.append(reinterpret_cast<const char*>(&qp), sizeof qp);
    mine.append(reinterpret_cast<const char*>(&at), sizeof at);
    mine.append(reinterpret_cast<const char*>(&head), sizeof head);
    mine += f->what;
  }
  const std::vector<std::string> all = comm_.Gather(mine);
  fabric::QpFailure fail;
  int failing = -1;
  std::string qp_bytes;
  if (me_ == 0) {
    int found = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string& b = all[i];
      if (b.empty()) continue;
      failing = static_cast<int>(i);
      constexpr size_t kHead = sizeof(uint32_t) + sizeof(int64_t) + sizeof(uint64_t);
      if (b.size() < kHead) throw std::runtime_error("distributed run: a short QP failure record");
      int64_t at = 0;
      uint64_t head = 0;
      std::memcpy(&fail.qp, b.data(), sizeof fail.qp);
      std::memcpy(&at, b.data() + sizeof(uint32_t), sizeof at);
      std::memcpy(&head, b.data() + sizeof(uint32_t) + sizeof(int64_t), sizeof head);
      fail.at = units::Time::Ps(at);
      fail.what = b.substr(kHead);
      fail.head_len = static_cast<size_t>(std::min<uint64_t>(head, fail.what.size()));
      ++found;
    }
    if (found != 1)
      throw std::logic_error(fmt::format(
          "distributed run: {} ranks recorded a QP failure at the failure's stop (one expected)",
          found));
    qp_bytes.assign(reinterpret_cast<const char*>(&fail.qp), sizeof fail.qp);
  }
  qp_bytes = comm_.Broadcast(qp_bytes);
  uint32_t qp = 0;
  if (qp_bytes.size() != sizeof qp) throw std::runtime_error("distributed run: a bad QP broadcast");
  std::memcpy(&qp, qp_bytes.data(), sizeof qp);
  // The link of the flow's last loss: the latest (time, key) over the
  // ranks that saw one (a frame is lost where its arrival or drop runs).
  const fabric::LastLoss l = net_.LastLossOf(qp);
  constexpr size_t kLoss = sizeof(int64_t) + sizeof(uint64_t) + sizeof(uint32_t);
  std::string loss(kLoss, '\0');
  std::memcpy(loss.data(), &l.time_ps, sizeof l.time_ps);
  std::memcpy(loss.data() + 8, &l.key, sizeof l.key);
  std::memcpy(loss.data() + 16, &l.port, sizeof l.port);
  const std::vector<std::string> losses = comm_.Gather(loss);
  if (me_ != 0) return -1;
  fabric::LastLoss latest;
  for (const std::string& b : losses) {
    fabric::LastLoss x;
    if (b.size() != kLoss) throw std::runtime_error("distributed run: a bad last-loss record");
    std::memcpy(&x.time_ps, b.data(), sizeof x.time_ps);
    std::memcpy(&x.key, b.data() + 8, sizeof x.key);
    std::memcpy(&x.port, b.data() + 16, sizeof x.port);
    if (x.time_ps > latest.time_ps || (x.time_ps == latest.time_ps && x.key > latest.key))
      latest = x;
  }
  net_.ImportQpFailure(std::move(fail), latest.port);
  return failing;
}

FabricRanks::Gathered FabricRanks::Finish(Stats& st, std::chrono::steady_clock::time_point run_end,
                                          uint64_t not_events) {
  Probe& probe = *probe_;
  probe.Finish();
  net_.set_packet_observer(nullptr);
  sim_.set_event_probe(nullptr, nullptr);
  st.setup_s = Seconds(engine_start_ - t_setup_);
  Gathered out;
  // Gather: results, events, the alive log, digests, engine figures.
  constexpr size_t kFigures = 10;
  std::string mine = net_.ExportResults(port_rank_, me_);
  // The copies of other ranks' link-state events this rank ran count on
  // their owners only (the serial run has each once).
  const std::vector<fabric::Network::CopiedEvent>& copies = net_.copied_events();
  const uint64_t events = sim_.events_executed() - not_events - copies.size();
  std::vector<sim::EntityDigest> digests = sim_.digests();
  for (const fabric::Network::CopiedEvent& c : copies) {
    const uint64_t e = c.key >> 40;
    if (e >= digests.size()) continue;  // digests off
    --digests[e].events;
    digests[e].sum -=
        sim::Mix(static_cast<uint64_t>(c.time), c.key & ((uint64_t{1} << 40) - 1), c.kind & 0xFFFF);
  }
  std::string extra;
  extra.append(reinterpret_cast<const char*>(&events), sizeof events);
  const parallel::WindowStats& ws = engine_->stats();
  const uint64_t figures[kFigures] = {ws.sent,
                                      ws.received,
                                      probe.ties,
                                      ws.windows,
                                      ws.careful,
                                      ws.reductions,
                                      ws.exchanges,
                                      ws.sent_bytes,
                                      net_.cut_frames_lost(),
                                      net_.late_frames_lost()};
  extra.append(reinterpret_cast<const char*>(figures), sizeof figures);
  extra.append(reinterpret_cast<const char*>(&ws.wait_s), sizeof ws.wait_s);
  extra.append(reinterpret_cast<const char*>(&ws.run_s), sizeof ws.run_s);
  extra.append(reinterpret_cast<const char*>(&ws.cpu_s), sizeof ws.cpu_s);
  PutVec(extra, probe.Needed());
  // A replicated entity's events ran on every rank: its digest is its owner's.
  for (size_t e = 0; e < digests.size() && e < replicated_.size(); ++e)
    if (replicated_[e] >= 0 && replicated_[e] != me_) digests[e] = {};
  PutVec(extra, digests);
  // Packed for the crossing (zero runs: 3.2 MB -> 0.25 MB per rank of
  // the 1,024-host fat tree); rank 0 keeps its own as it is.
  std::vector<std::string> results = comm_.Gather(PackZeroRuns(mine));
  for (size_t r = 1; r < results.size(); ++r) results[r] = UnpackZeroRuns(results[r]);
  if (me_ == 0) results[0] = std::move(mine);
  const std::vector<std::string> extras = comm_.Gather(extra);
  st.windows = ws.windows;
  st.sent = ws.sent;
  st.received = ws.received;
  st.ties = probe.ties;
  st.ties_counted = ties_;
  st.careful = ws.careful;
  st.peak_windows_dropped = probe.windows_dropped;
  st.held_changes = probe.kept.size();
  st.reductions = ws.reductions;
  st.exchanges = ws.exchanges;
  st.sent_bytes = ws.sent_bytes;
  st.cut_frames_lost = net_.cut_frames_lost();
  st.late_frames_lost = net_.late_frames_lost();
  st.wait_s = ws.wait_s;
  st.run_s = ws.run_s;
  st.cpu_s = ws.cpu_s;
  st.critical_cpu_s = ws.critical_cpu_s;
  if (me_ == 0) {
    std::vector<Probe::Change> all;
    st.sent = st.received = st.ties = st.sent_bytes = st.cut_frames_lost = st.late_frames_lost = 0;
    st.wait_s = st.run_s = st.cpu_s = 0;
    for (const std::string& x : extras) {
      size_t at = 0;
      uint64_t ev = 0;
      uint64_t fig[kFigures];
      double wait = 0;
      std::memcpy(&ev, x.data(), sizeof ev);
      at += sizeof ev;
      std::memcpy(fig, x.data() + at, sizeof fig);
      at += sizeof fig;
      std::memcpy(&wait, x.data() + at, sizeof wait);
      at += sizeof wait;
      out.events += ev;
      st.events += ev;
      st.sent += fig[0];
      st.received += fig[1];
      st.ties += fig[2];
      st.sent_bytes += fig[7];
      st.cut_frames_lost += fig[8];
      st.late_frames_lost += fig[9];
      st.wait_s = std::max(st.wait_s, wait);
      double run = 0;
      std::memcpy(&run, x.data() + at, sizeof run);
      at += sizeof run;
      st.run_s = std::max(st.run_s, run);
      double cpu = 0;
      std::memcpy(&cpu, x.data() + at, sizeof cpu);
      at += sizeof cpu;
      st.cpu_s += cpu;
      // Each rank's log is in (window, time, key) order already (it ran its
      // events in that order): merge rather than sort.
      const std::vector<Probe::Change> log = TakeVec<Probe::Change>(x, at);
      const size_t mid = all.size();
      all.insert(all.end(), log.begin(), log.end());
      const auto first = all.begin() + static_cast<std::ptrdiff_t>(mid);
      if (!std::is_sorted(first, all.end(), ChangeBefore))
        std::sort(first, all.end(), ChangeBefore);
      std::inplace_merge(all.begin(), first, all.end(), ChangeBefore);
      const std::vector<sim::EntityDigest> d = TakeVec<sim::EntityDigest>(x, at);
      if (out.digests.size() < d.size()) out.digests.resize(d.size());
      for (size_t e = 0; e < d.size(); ++e) {
        out.digests[e].events += d[e].events;
        out.digests[e].sum += d[e].sum;
      }
    }
    // The serial count of packets alive, event by event in (time, key)
    // order, through the windows that may hold the peak, each from its
    // count at the start (Probe).
    std::vector<int64_t> start(probe.window + 1, 0);
    for (const Probe::Kept& k : probe.kept_windows) start[k.window] = k.start;
    int64_t peak = probe.floor;
    int64_t live = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      const Probe::Change& c = all[i];
      if (i == 0 || all[i - 1].window != c.window) live = start[c.window];
      peak = std::max(peak, live + c.peak);
      live += c.delta;
    }
    st.kept_changes = all.size();
    net_.ImportResults(results, port_rank_, static_cast<uint64_t>(peak));
  }
  st.finish_s = Seconds(std::chrono::steady_clock::now() - run_end);
  return out;
}

}  // namespace lossless::distrun
