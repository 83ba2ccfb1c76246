#include "distrun/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.hpp"
#include "deadlock/deadlock_detector.hpp"
#include "parallel/engine.hpp"
#include "parallel/partition.hpp"
#include "report/series.hpp"
#include "scenario/scenario.hpp"

namespace lossless::distrun {

namespace {

void Refuse(const scenario::Scenario& s, const std::string& field, const std::string& why) {
  throw InputError({s.file, 0, field},
                   fmt::format("expected it off in a distributed run (mpirun -np K with K > 1): "
                               "{} (docs/parallel.md); run without mpirun",
                               why));
}

// One rank's side of the cut links: frames handed over by the network go to
// the engine under the sending port's entity (its next key, drawn here
// exactly where the serial run draws it), for the peer port's rank.
class Links final : public fabric::Network::RemoteLinks {
 public:
  Links(const fabric::Network& net, const std::vector<int32_t>& port_rank)
      : net_(net), port_rank_(port_rank) {}
  void set_engine(parallel::WindowEngine* e) { engine_ = e; }
  void Send(uint32_t port, units::Time at, uint32_t kind, uint64_t arg,
            const fabric::Packet* pk) override {
    const uint32_t peer = net_.PortPeer(port);
    engine_->Send(port_rank_[peer], at, net_.PortEntity(port), peer, kind, arg, pk);
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
struct Probe final : fabric::PacketPool::Observer {
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

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// The serial order of the changes (Probe::Change) of kept windows.
bool ChangeBefore(const Probe::Change& a, const Probe::Change& b) {
  if (a.window != b.window) return a.window < b.window;
  return a.time != b.time ? a.time < b.time : a.key < b.key;
}

// The network's PFC facts on this rank (fabric::PfcWaitObserver), each with
// the (time, key) of the event that reported it and its order within the
// rank, for the deadlock detector on rank 0 (docs/parallel.md).
struct Fact {
  int64_t time;
  uint64_t key;
  uint64_t order;
  uint32_t port;    // OnHold: ingress; OnXoff: the port
  uint32_t egress;  // OnHold only
  int32_t in_class;
  int32_t out_class;
  uint32_t xoff;  // 0: OnHold, 1: OnXoff
  uint32_t on;    // holding / asserted
};
static_assert(sizeof(Fact) == 48);

class FactLog final : public fabric::PfcWaitObserver {
 public:
  explicit FactLog(const sim::Simulator& sim) : sim_(sim) {}
  void OnHold(uint32_t ingress, int in_class, uint32_t egress, int out_class, bool holding,
              units::Time at) override {
    facts.push_back({at.ps(), sim_.RunningKey(), order_++, ingress, egress, in_class, out_class, 0,
                     holding ? 1u : 0u});
  }
  void OnXoff(uint32_t port, int tclass, bool asserted, units::Time at) override {
    facts.push_back(
        {at.ps(), sim_.RunningKey(), order_++, port, 0, tclass, 0, 1, asserted ? 1u : 0u});
  }
  std::vector<Fact> facts;

 private:
  const sim::Simulator& sim_;
  uint64_t order_ = 0;
};

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

// The stop rule's lower bound (parallel::StopRule::earliest_clear): this
// rank's last flow cannot complete before its destination has received
// every payload byte still missing, and the frames carrying them arrive one
// after another on the destination's host link. Between the arrivals of two
// consecutive frames on a link lies at least the first one's serialization
// time (a port sends one frame at a time; FrameTimePs rounds up), less at
// most a 64-byte header's time where the receiver cuts through on the header
// (fabric Network::TryTransmit). So with R payload bytes missing at a host,
// the last arrives at least (R - P - 64) x 8 / rate after the first, which is
// at or after `ran_before` (every event before it has run on this rank, which
// owns the host's port), P being the largest payload of a frame. RC queue
// pairs place bytes when a gap fills, not on arrival: no bound there.
__extension__ using Int128 = __int128;

int64_t EarliestClear(const fabric::Network& net, const topology::Topology& topo,
                      const std::vector<std::vector<uint32_t>>& dst_flows, int64_t ran_before) {
  int64_t latest = ran_before;
  for (const std::vector<uint32_t>& at_host : dst_flows) {
    Int128 missing = 0;
    int64_t largest = net.config().framing.mtu_payload;
    for (uint32_t i : at_host) {
      const fabric::FlowStats& f = net.flows()[i];
      if (f.done()) continue;
      if (f.spec.rc) return ran_before;
      missing += f.spec.bytes - f.recv_bytes;
      largest = std::max<int64_t>(largest, f.spec.max_payload);
    }
    missing -= largest + 64;
    if (missing <= 0) continue;
    const uint32_t port = net.HostPort(net.flows()[at_host.front()].spec.dst);
    const int64_t bps = topo.links[port / 2].rate.bps();
    if (bps <= 0) continue;
    const Int128 ps = missing * 8'000'000'000'000 / bps;  // rounded down
    const Int128 t = ran_before + ps;
    latest = std::max<int64_t>(latest, t > INT64_MAX ? INT64_MAX : static_cast<int64_t>(t));
  }
  return latest;
}

}  // namespace

void CheckSupported(const scenario::Scenario& s) {
  if (s.shared.tenant_load > 0)
    Refuse(s, "tenants.load", "other tenants' traffic is not placed on ranks yet");
  if (!s.capture.pcap.empty()) Refuse(s, "outputs.pcap", "captures are not gathered yet");
  if (!s.capture.trace.empty()) Refuse(s, "outputs.trace", "timelines are not gathered yet");
  if (!s.link_down.empty())
    Refuse(s, "faults.link_down", "link state changes and reroutes are not distributed yet");
  if (!s.cnp_inject.empty())
    Refuse(s, "faults.cnp_inject", "the injection report reads the flow's reaction point");
}

void CheckRanks(const scenario::Scenario& s, int ranks) {
  const topology::Topology t = scenario::BuildTopology(s);
  const bool clos = s.topology_kind == "leaf-spine" || s.topology_kind == "fat-tree" ||
                    s.topology_kind == "rail-optimized";
  (void)parallel::PartitionFabric(t, clos ? s.clos.gpus_per_node : 1, ranks,
                                  {"<cli>", 0, "mpirun -np"});
}

report::RunResult Run(const scenario::Scenario& s, parallel::Comm& comm, const Options& opt,
                      Stats* stats, std::vector<run::EntityDigestLine>* digests) {
  CheckSupported(s);
  Stats st;
  st.ranks = comm.Size();
  run::RunHooks hooks;
  hooks.digests = digests;
  hooks.engine = [&](sim::Simulator& sim, fabric::Network& net,
                     const std::vector<fabric::FlowSpec>& flows, const run::EngineParts& parts) {
    const auto t_setup = std::chrono::steady_clock::now();
    const topology::Topology& topo = net.topology();
    std::vector<int32_t> rank_of_node = opt.rank_of_node;
    if (rank_of_node.empty()) {
      const bool clos = s.topology_kind == "leaf-spine" || s.topology_kind == "fat-tree" ||
                        s.topology_kind == "rail-optimized";
      const parallel::Partition p = parallel::PartitionFabric(
          topo, clos ? s.clos.gpus_per_node : 1, comm.Size(), {s.file, 0, "mpirun -np"});
      rank_of_node = p.rank_of_node;
    }
    if (rank_of_node.size() != topo.nodes.size())
      throw std::invalid_argument("distributed run: expected a rank for every topology node");
    const int me = comm.Rank();
    // Owners: a port is its node's, a switch its own node's. No other entity
    // may have events (CheckSupported refused the components that add them).
    std::vector<int32_t> port_rank(net.num_ports());
    uint32_t max_entity = 0;
    for (uint32_t p = 0; p < net.num_ports(); ++p) {
      port_rank[p] = rank_of_node[net.PortNode(p)];
      max_entity = std::max(max_entity, net.PortEntity(p));
    }
    for (uint32_t sw = 0; sw < net.num_switches(); ++sw)
      max_entity = std::max(max_entity, net.SwitchEntity(sw));
    std::vector<int32_t> entity_rank(max_entity + 1, -1);
    for (uint32_t p = 0; p < net.num_ports(); ++p) entity_rank[net.PortEntity(p)] = port_rank[p];
    for (uint32_t sw = 0; sw < net.num_switches(); ++sw)
      entity_rank[net.SwitchEntity(sw)] = rank_of_node[net.NodeOfSwitch(sw)];
    // Cut links, neighbours, lookahead.
    std::vector<uint8_t> cut(net.num_ports(), 0);
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
      if (port_rank[a] == port_rank[b]) continue;
      if (host_link)
        throw std::invalid_argument(fmt::format(
            "distributed run: link {} joins a host to a switch on another rank (units keep "
            "hosts with their switches)",
            l));
      cut[a] = cut[b] = 1;
      ++st.cut_links;
      lookahead = std::min(lookahead, topo.links[l].delay.ps());
      if (port_rank[a] == me) neighbours.insert(port_rank[b]);
      if (port_rank[b] == me) neighbours.insert(port_rank[a]);
    }
    if (lookahead <= 0)
      throw InputError({s.file, 0, "mpirun -np"},
                       "expected cut links with a delay above zero (the lookahead), got 0");
    // A rank without cut links still windows with the others.
    st.lookahead = units::Time::Ps(lookahead == INT64_MAX ? s.stop_time.ps() + 1 : lookahead);
    size_t local_flows = 0;
    std::vector<std::vector<uint32_t>> dst_flows;  // this rank's destinations' flows
    {
      std::vector<int64_t> slot(topo.hosts.size(), -1);
      for (uint32_t i = 0; i < flows.size(); ++i) {
        const uint32_t dst = flows[i].dst;
        if (port_rank[net.HostPort(dst)] != me) continue;
        ++local_flows;
        if (slot[dst] < 0) {
          slot[dst] = static_cast<int64_t>(dst_flows.size());
          dst_flows.emplace_back();
        }
        dst_flows[static_cast<size_t>(slot[dst])].push_back(i);
      }
    }
    // The sampler and the detector run at boundaries (docs/parallel.md); their
    // events count once, on rank 0.
    report::SeriesSampler* const sampler = parts.sampler;
    deadlock::DeadlockDetector* const detector = parts.detector;
    if (sampler != nullptr) sampler->StartExternal(me == 0);
    if (detector != nullptr) detector->StartExternal(me == 0);
    FactLog facts(sim);
    if (detector != nullptr) net.set_wait_observer(&facts);
    // A confirmation is at least `persist` after the check that scheduled it:
    // with windows no longer than that, it is never inside the window whose
    // facts scheduled it, so the window can end at it.
    int64_t window = st.lookahead.ps();
    if (detector != nullptr) window = std::min(window, s.deadlock.persist.ps());
    Links links(net, port_rank);
    net.SetDistributed(&links, cut, local_flows);
    // Keep the events of this rank's entities (setup queued every entity's).
    bool foreign = false;
    sim.Retain([&](uint64_t key, uint32_t kind, uint64_t arg) {
      const uint32_t at_port = net.DistributedEventPort(kind, arg);
      if (at_port != UINT32_MAX) return port_rank[at_port] == me;
      const uint64_t e = key >> 40;
      if (e >= entity_rank.size() || entity_rank[e] < 0) foreign = true;
      return e < entity_rank.size() && entity_rank[e] == me;
    });
    if (foreign)
      throw std::logic_error(
          "distributed run: an event of an entity that is neither a port nor "
          "a switch (a component the distributed run does not place)");
    // The packets-alive log from the packet pool; the per-event probe (same-
    // time ties) only with digests (`--digest`: RunScenario turned them on),
    // so that a run without them runs the simulator's plain loop.
    Probe probe;
    probe.sim = &sim;
    probe.net = &net;
    probe.rank = me;
    probe.SetOwners(entity_rank);
    probe.ranks = comm.Size();
    probe.base = net.setup_live();
    probe.count = net.setup_live();
    probe.floor = static_cast<int64_t>(net.setup_peak());
    probe.prune_min = probe.prune_at = std::max<size_t>(opt.peak_log_prune, 1);
    probe.Settle();
    net.set_packet_observer(&probe);
    if (digests != nullptr) sim.set_event_probe(&Probe::OnEvent, &probe);
    st.setup_s = Seconds(std::chrono::steady_clock::now() - t_setup);
    parallel::WindowEngine engine(
        comm, sim, units::Time::Ps(window), std::vector<int>(neighbours.begin(), neighbours.end()),
        sizeof(fabric::Packet), [&](const parallel::RemoteEvent& e, const char* payload) {
          fabric::Packet pk;
          std::memcpy(&pk, payload, sizeof pk);
          net.DeliverRemote(units::Time::Ps(e.time_ps), e.key, e.kind, e.arg, &pk);
        });
    links.set_engine(&engine);
    // Detector: every rank's facts of a window go to rank 0, which replays
    // them in (time, key) order; its next event time and whether a
    // confirmation stopped the run are then agreed (integers).
    bool facts_anywhere = false;  // some rank logged PFC facts in the window (its reduction)
    int64_t det_next = INT64_MAX;
    int64_t det_stop = -1;
    auto feed_facts = [&](int64_t through) {
      const std::string mine(reinterpret_cast<const char*>(facts.facts.data()),
                             facts.facts.size() * sizeof(Fact));
      facts.facts.clear();
      const std::vector<std::string> all = comm.Gather(mine);
      if (me == 0) {
        std::vector<Fact> merged;
        for (const std::string& b : all) {
          const size_t n = b.size() / sizeof(Fact);
          const size_t at = merged.size();
          merged.resize(at + n);
          if (n > 0) std::memcpy(&merged[at], b.data(), n * sizeof(Fact));
        }
        std::sort(merged.begin(), merged.end(), [](const Fact& a, const Fact& b) {
          if (a.time != b.time) return a.time < b.time;
          if (a.key != b.key) return a.key < b.key;
          return a.order < b.order;
        });
        for (const Fact& f : merged) {
          detector->RunExternalThrough(f.time - 1);
          if (detector->external_stop() >= 0) break;
          if (f.xoff != 0)
            detector->OnXoff(f.port, f.in_class, f.on != 0, units::Time::Ps(f.time));
          else
            detector->OnHold(f.port, f.in_class, f.egress, f.out_class, f.on != 0,
                             units::Time::Ps(f.time));
        }
        detector->RunExternalThrough(through);
      }
    };
    auto agree_detector = [&] {
      det_next = comm.AllreduceMin(me == 0 ? detector->NextExternalTime() : INT64_MAX);
      det_stop = -comm.AllreduceMin(me == 0 ? -detector->external_stop() : INT64_MAX);
    };
    if (detector != nullptr || sampler != nullptr) {
      parallel::Boundaries b;
      b.next_boundary = [&]() -> int64_t {
        if (det_stop >= 0) return det_stop;
        int64_t t = detector != nullptr ? det_next : INT64_MAX;
        if (sampler != nullptr) t = std::min(t, sampler->NextSampleTime());
        return t;
      };
      b.reached = [&](int64_t at, int64_t next) {
        if (detector != nullptr && det_stop < 0) {
          if (me == 0) detector->RunExternalThrough(at);
          agree_detector();
        }
        if (det_stop >= 0) return true;
        if (sampler != nullptr && sampler->NextSampleTime() == at)
          sampler->TakeSample(next != INT64_MAX || det_next != INT64_MAX);
        return false;
      };
      if (detector != nullptr)
        b.after_window = [&](int64_t bound) {
          // Nothing to replay (the usual window): one reduction, no gather.
          // The detector's own events are boundaries: none is at or before
          // `bound` unless the window ended at it.
          if (!facts_anywhere && det_next > bound) return;
          feed_facts(bound);
          agree_detector();
          if (det_stop >= 0 && det_stop != bound)
            throw std::logic_error(
                "distributed run: a deadlock confirmation inside a window (windows are no "
                "longer than deadlock.persist)");
        };
      engine.set_boundaries(std::move(b));
    }
    // The window's one reduction also carries the packets-alive figures and,
    // with the detector, whether any rank logged PFC facts.
    const size_t probe_lanes = 2 * static_cast<size_t>(comm.Size());
    parallel::ModelLanes lanes;
    lanes.count = probe_lanes + (detector != nullptr ? 1 : 0);
    lanes.fill = [&](int64_t* l) {
      probe.Fill(l);
      if (detector != nullptr) l[probe_lanes] = facts.facts.empty() ? 1 : 0;
    };
    lanes.take = [&](const int64_t* l) {
      probe.Take(l);
      if (detector != nullptr) facts_anywhere = l[probe_lanes] != 1;
    };
    engine.set_model_lanes(std::move(lanes));
    run::EngineOutcome out;
    bool stopped = false;
    const bool rule = s.net.stop_when_flows_done && !flows.empty();
    if (rule) {
      parallel::StopRule stop_rule;
      stop_rule.pending = [&] { return static_cast<int64_t>(net.local_flows_pending()); };
      // A stalled NIC (faults.nic_stall) holds frames that have arrived and
      // counts them all at its resume: no bound there.
      // A bound computed once stays a bound (the clearing is one point of the
      // run), so it is reused while it is far ahead: recomputing it walks
      // every destination host of the rank, which cost 4 % of a 1,024-host
      // run's instructions when done every window (docs/benchmarks.md). A
      // reused bound is at most as late as a fresh one, so at worst a window
      // waits for a verdict it would not have needed; never another result.
      int64_t clear_bound = INT64_MIN;
      const int64_t reuse_margin = window > INT64_MAX / 64 ? INT64_MAX : 64 * window;
      if (s.nic_stall.host < 0)
        stop_rule.earliest_clear = [&, reuse_margin](int64_t ran_before) {
          if (opt.reuse_stop_bound && clear_bound > ran_before &&
              clear_bound - ran_before > reuse_margin)
            return clear_bound;
          ++st.stop_bounds;
          clear_bound = EarliestClear(net, topo, dst_flows, ran_before);
          return clear_bound;
        };
      stopped = engine.Run(s.stop_time, stop_rule);
    } else {
      engine.Run(s.stop_time);
    }
    const auto t_finish = std::chrono::steady_clock::now();
    probe.Finish();
    net.set_packet_observer(nullptr);
    sim.set_event_probe(nullptr, nullptr);
    if (stopped && detector != nullptr) {
      // The flows-done stop at (t*, k*): the detector's events at t* come
      // after k* (a network event's key), so it runs those before t*.
      feed_facts(sim.Now().ps() - 1);
      agree_detector();
    }
    if (detector != nullptr) net.set_wait_observer(nullptr);
    // Why the serial run would have ended, and its clock then.
    if (stopped || engine.boundary_stop()) {
      out.why = sim::StopReason::kStopped;
    } else if (comm.AllreduceMin(sim.NextTime().ps()) != units::Time::Max().ps() ||
               (detector != nullptr && det_next != INT64_MAX)) {
      out.why = sim::StopReason::kTimeLimit;
      sim.AdvanceTo(s.stop_time);
    } else {
      out.why = sim::StopReason::kQueueEmpty;
      sim.AdvanceTo(units::Time::Ps(-comm.AllreduceMin(-sim.Now().ps())));
    }
    // Gather: results, events, the alive log, digests, engine figures.
    constexpr size_t kFigures = 8;
    std::string mine = net.ExportResults(port_rank, me);
    const uint64_t events = sim.events_executed();
    std::string extra;
    extra.append(reinterpret_cast<const char*>(&events), sizeof events);
    const parallel::WindowStats& ws = engine.stats();
    const uint64_t figures[kFigures] = {ws.sent,    ws.received,   probe.ties,   ws.windows,
                                        ws.careful, ws.reductions, ws.exchanges, ws.sent_bytes};
    extra.append(reinterpret_cast<const char*>(figures), sizeof figures);
    extra.append(reinterpret_cast<const char*>(&ws.wait_s), sizeof ws.wait_s);
    extra.append(reinterpret_cast<const char*>(&ws.run_s), sizeof ws.run_s);
    extra.append(reinterpret_cast<const char*>(&ws.cpu_s), sizeof ws.cpu_s);
    PutVec(extra, probe.Needed());
    PutVec(extra, sim.digests());
    // Packed for the crossing (zero runs: 3.2 MB -> 0.25 MB per rank of
    // the 1,024-host fat tree); rank 0 keeps its own as it is.
    std::vector<std::string> results = comm.Gather(PackZeroRuns(mine));
    for (size_t r = 1; r < results.size(); ++r) results[r] = UnpackZeroRuns(results[r]);
    if (me == 0) results[0] = std::move(mine);
    const std::vector<std::string> extras = comm.Gather(extra);
    if (sampler != nullptr) {
      // Each series from the rank that owns what it reads.
      const std::vector<std::string> values = comm.Gather(sampler->ExportValues());
      if (me == 0) {
        std::vector<int32_t> owner(sampler->num_sources());
        for (size_t i = 0; i < owner.size(); ++i) {
          const report::SeriesSampler::SourceRef ref = sampler->source(i);
          if (ref.port) {
            owner[i] = port_rank[ref.index];
          } else {
            const fabric::FlowSpec& f = net.flows()[ref.index].spec;
            owner[i] = port_rank[net.HostPort(ref.at_sender ? f.src : f.dst)];
          }
        }
        sampler->ImportValues(values, owner);
      }
    }
    st.windows = ws.windows;
    st.sent = ws.sent;
    st.received = ws.received;
    st.ties = probe.ties;
    st.ties_counted = digests != nullptr;
    st.careful = ws.careful;
    st.peak_windows_dropped = probe.windows_dropped;
    st.held_changes = probe.kept.size();
    st.reductions = ws.reductions;
    st.exchanges = ws.exchanges;
    st.sent_bytes = ws.sent_bytes;
    st.wait_s = ws.wait_s;
    st.run_s = ws.run_s;
    st.cpu_s = ws.cpu_s;
    st.critical_cpu_s = ws.critical_cpu_s;
    if (me == 0) {
      std::vector<Probe::Change> all;
      st.sent = st.received = st.ties = st.sent_bytes = 0;
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
      net.ImportResults(results, port_rank, static_cast<uint64_t>(peak));
    }
    st.finish_s = Seconds(std::chrono::steady_clock::now() - t_finish);
    return out;
  };
  report::RunResult r = run::RunScenario(s, hooks);
  if (stats != nullptr) *stats = st;
  return r;
}

namespace {
constexpr size_t kMinZeroRun = 16;  // shorter runs of zeros stay as they are

void PutU64(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
uint64_t TakeU64(const std::string& in, size_t& at) {
  uint64_t v = 0;
  if (in.size() - at < sizeof v)
    throw std::runtime_error("distributed run: a packed gather ends early");
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}
}  // namespace

std::string PackZeroRuns(const std::string& in) {
  std::string out;
  out.reserve(in.size() / 16 + 64);
  PutU64(out, in.size());
  const size_t n = in.size();
  size_t i = 0;
  while (i < n) {
    // Bytes as they are up to the next run of at least kMinZeroRun zeros.
    size_t j = i, zeros = 0;
    while (j < n) {
      if (in[j] != 0) {
        ++j;
        continue;
      }
      size_t k = j;
      while (k < n && in[k] == 0) ++k;
      if (k - j >= kMinZeroRun || k == n) {
        zeros = k - j;
        break;
      }
      j = k;
    }
    PutU64(out, j - i);
    out.append(in, i, j - i);
    PutU64(out, zeros);
    i = j + zeros;
  }
  return out;
}

std::string UnpackZeroRuns(const std::string& in) {
  size_t at = 0;
  const uint64_t size = TakeU64(in, at);
  std::string out;
  // Bounded by what the packed form can describe: 2^20 zero bytes per byte
  // of it at most, so a corrupt size is refused below, not allocated.
  if (size / (1u << 20) <= in.size()) out.reserve(size);
  while (at < in.size()) {
    const uint64_t n = TakeU64(in, at);
    if (n > in.size() - at || n > size - out.size())
      throw std::runtime_error("distributed run: a packed gather's bytes overrun it");
    out.append(in, at, n);
    at += n;
    const uint64_t zeros = TakeU64(in, at);
    if (zeros > size - out.size())
      throw std::runtime_error("distributed run: a packed gather's zeros overrun it");
    out.append(zeros, '\0');
  }
  if (out.size() != size)
    throw std::runtime_error("distributed run: a packed gather unpacks to another size");
  return out;
}

std::string StatsLine(const Stats& st) {
  const double wait = st.run_s > 0 ? 100.0 * st.wait_s / st.run_s : 0;
  const double per_window = st.windows > 0 ? static_cast<double>(st.reductions + st.exchanges) /
                                                 static_cast<double>(st.windows)
                                           : 0;
  return fmt::format(
      "distributed: {} ranks, {} of {} switch links cut, lookahead {}, {} windows ({} waiting for "
      "a stop verdict, {:.2f} synchronisations each), {} cross-rank events ({} batch bytes), {}, "
      "waiting {:.1f}% of {:.3f} s (the rank that waited most, of the longest "
      "run); work {:.3f} s CPU over the ranks, {:.3f} s on the critical path (the busiest rank "
      "of each window); outside the engine {:.3f} s before, {:.3f} s after (rank 0: results "
      "gathered and merged); packets-alive log: {} windows of {} dropped, {} changes held by rank "
      "0 at the end, {} merged",
      st.ranks, st.cut_links, st.switch_links, units::FormatTime(st.lookahead), st.windows,
      st.careful, per_window, st.sent, st.sent_bytes,
      st.ties_counted ? fmt::format("{} same-time ties", st.ties)
                      : std::string("same-time ties not counted (--digest counts them)"),
      wait, st.run_s, st.cpu_s, st.critical_cpu_s, st.setup_s, st.finish_s,
      st.peak_windows_dropped, st.windows, st.held_changes, st.kept_changes);
}

}  // namespace lossless::distrun
