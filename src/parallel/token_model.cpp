#include "parallel/token_model.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "sim/rng.hpp"
#include "sim/simulator.hpp"

namespace lossless::parallel {
namespace {

using units::Time;

constexpr uint64_t kReceived = 1ULL << 63;  // arg bit: the event came from another rank
constexpr uint32_t kTargetBits = 20;

class Model final : public sim::EventHandler {
 public:
  Model(sim::Simulator& sim, const TokenModelConfig& cfg, std::vector<int> rank_of_unit, int rank)
      : sim_(sim),
        cfg_(cfg),
        rank_of_unit_(std::move(rank_of_unit)),
        rank_(rank),
        state_(Entities(), 0) {
    if (Entities() >= (1u << kTargetBits) || cfg.units < 2 || cfg.per_unit < 1)
      throw std::invalid_argument("token model: expected 2 or more units and under 2^20 entities");
    for (uint32_t e = 0; e < Entities(); ++e) sim_.AddEntity();
  }
  uint32_t Entities() const { return cfg_.units * cfg_.per_unit; }
  uint32_t UnitOf(uint32_t e) const { return e / cfg_.per_unit; }
  bool Mine(uint32_t e) const { return rank_of_unit_.empty() || rank_of_unit_[UnitOf(e)] == rank_; }
  uint64_t state(uint32_t e) const { return state_[e]; }
  uint64_t ties() const { return ties_; }
  void set_engine(WindowEngine* engine) { engine_ = engine; }

  void Start() {
    for (uint32_t t = 0; t < cfg_.tokens; ++t) {
      const uint32_t e = static_cast<uint32_t>((uint64_t{t} * 11) % Entities());
      if (Mine(e)) sim_.Schedule(cfg_.step * static_cast<int64_t>(t % 4), e, this, 1, Arg(e, t));
    }
  }
  void Receive(const RemoteEvent& ev) {
    sim_.ScheduleKeyed(Time::Ps(ev.time_ps), ev.key, this, ev.kind, ev.arg | kReceived);
  }

  void OnEvent(uint32_t kind, uint64_t arg) override {
    const bool remote = (arg & kReceived) != 0;
    const uint32_t e = static_cast<uint32_t>(arg & ((1u << kTargetBits) - 1));
    const uint64_t value = (arg & ~kReceived) >> kTargetBits;
    const int64_t now = sim_.Now().ps();
    if (now == last_time_ && (remote || last_remote_)) ++ties_;
    last_time_ = now;
    last_remote_ = remote;
    uint64_t& h = state_[e];
    h = sim::Mix(h, static_cast<uint64_t>(now), kind, value ^ cfg_.seed);
    const uint64_t pick = h >> 24;
    uint32_t to;
    Time delay;
    if (pick % 3 == 0) {  // to another unit
      const uint32_t u =
          static_cast<uint32_t>((UnitOf(e) + 1 + (pick >> 4) % (cfg_.units - 1)) % cfg_.units);
      to = u * cfg_.per_unit + static_cast<uint32_t>((pick >> 12) % cfg_.per_unit);
      delay = cfg_.lookahead + cfg_.step * static_cast<int64_t>(5 * ((pick >> 20) % 3));
    } else {
      to = UnitOf(e) * cfg_.per_unit + static_cast<uint32_t>((pick >> 12) % cfg_.per_unit);
      delay = cfg_.step * static_cast<int64_t>((pick >> 20) % 3);
    }
    const uint32_t next_kind = 1 + static_cast<uint32_t>((pick >> 28) % 3);
    const uint64_t next_arg = Arg(to, h & 0xFFFFFFFFFFULL);
    if (Mine(to)) {
      sim_.Schedule(sim_.Now() + delay, e, this, next_kind, next_arg);
    } else {
      engine_->Send(rank_of_unit_[UnitOf(to)], sim_.Now() + delay, e, to, next_kind, next_arg);
    }
  }

 private:
  static uint64_t Arg(uint32_t target, uint64_t value) { return value << kTargetBits | target; }

  sim::Simulator& sim_;
  TokenModelConfig cfg_;
  std::vector<int> rank_of_unit_;  // empty: serial
  int rank_;
  WindowEngine* engine_ = nullptr;
  std::vector<uint64_t> state_;
  int64_t last_time_ = -1;
  bool last_remote_ = false;
  uint64_t ties_ = 0;
};

std::string Line(uint32_t e, uint64_t state, const sim::EntityDigest& d) {
  return fmt::format("{} {:016x} {} {:016x}\n", e, state, d.events, d.sum);
}

std::string SnapshotLine(int64_t at, const std::vector<uint64_t>& state) {
  uint64_t h = 0;
  for (uint64_t s : state) h = sim::Mix(h, s, 0, 0);
  return fmt::format("snapshot {} {:016x}\n", at, h);
}

// The boundary times below `until`, in order: snapshots and the stop.
int64_t NextBoundary(const TokenModelConfig& cfg, int64_t after) {
  int64_t t = INT64_MAX;
  if (cfg.snapshot_every.ps() > 0)
    t = (after / cfg.snapshot_every.ps() + 1) * cfg.snapshot_every.ps();
  if (cfg.stop_at.ps() > after) t = std::min(t, cfg.stop_at.ps());
  return t <= cfg.until.ps() ? t : INT64_MAX;
}

}  // namespace

TokenOutcome RunTokensSerial(const TokenModelConfig& cfg) {
  sim::Simulator sim(cfg.seed);
  Model m(sim, cfg, {}, 0);
  sim.EnableDigests();
  m.Start();
  const auto t0 = std::chrono::steady_clock::now();
  TokenOutcome o;
  int64_t at = -1;
  bool stopped = false;
  while ((at = NextBoundary(cfg, at)) != INT64_MAX) {
    sim.Run(Time::Ps(at));
    if (at == cfg.stop_at.ps()) {
      stopped = true;
      break;
    }
    std::vector<uint64_t> state(m.Entities());
    for (uint32_t e = 0; e < m.Entities(); ++e) state[e] = m.state(e);
    o.text += SnapshotLine(at, state);
  }
  if (!stopped) sim.Run(cfg.until);
  o.stats.run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<sim::EntityDigest> d = sim.digests();
  d.resize(m.Entities());
  for (uint32_t e = 0; e < m.Entities(); ++e) o.text += Line(e, m.state(e), d[e]);
  o.events = sim.events_executed();
  return o;
}

TokenOutcome RunTokens(Comm& comm, const TokenModelConfig& cfg,
                       const std::vector<int>& rank_of_unit) {
  if (rank_of_unit.size() != cfg.units)
    throw std::invalid_argument("token model: expected a rank for every unit");
  sim::Simulator sim(cfg.seed);
  Model model(sim, cfg, rank_of_unit, comm.Rank());
  sim.EnableDigests();
  std::vector<int> neighbours;
  for (int r = 0; r < comm.Size(); ++r)
    if (r != comm.Rank()) neighbours.push_back(r);
  WindowEngine engine(comm, sim, cfg.lookahead, neighbours,
                      [&](const RemoteEvent& ev) { model.Receive(ev); });
  model.set_engine(&engine);
  model.Start();
  std::string snapshots;  // rank 0
  int64_t boundary = NextBoundary(cfg, -1);
  if (boundary != INT64_MAX) {
    Boundaries b;
    b.next_boundary = [&] { return boundary; };
    b.reached = [&](int64_t at, int64_t) {
      boundary = NextBoundary(cfg, at);
      if (at == cfg.stop_at.ps()) return true;
      // Each entity's state from its owner, gathered in rank order.
      std::string mine;
      for (uint32_t e = 0; e < model.Entities(); ++e)
        if (model.Mine(e)) mine += fmt::format("{} {}\n", e, model.state(e));
      const std::vector<std::string> all = comm.Gather(mine);
      if (comm.Rank() == 0) {
        std::vector<uint64_t> state(model.Entities(), 0);
        for (const std::string& part : all) {
          std::istringstream in(part);
          uint32_t e;
          uint64_t s;
          while (in >> e >> s) state[e] = s;
        }
        snapshots += SnapshotLine(at, state);
      }
      return false;
    };
    engine.set_boundaries(std::move(b));
  }
  engine.set_reduce_in_exchange(cfg.reduce_in_exchange);
  engine.Run(cfg.until);
  // Each rank reports its own entities' state; digests are summed over
  // ranks (an entity's events run on the ranks of their targets, each
  // adding its part), as are the counts.
  std::vector<sim::EntityDigest> d = sim.digests();
  d.resize(model.Entities());
  std::string mine =
      fmt::format("{} {} {}\n", engine.stats().received, model.ties(), sim.events_executed());
  for (uint32_t e = 0; e < model.Entities(); ++e)
    mine += fmt::format("{} {} {} {} {}\n", e, model.Mine(e) ? 1 : 0, model.state(e), d[e].events,
                        d[e].sum);
  const std::vector<std::string> all = comm.Gather(mine);
  TokenOutcome o;
  o.stats = engine.stats();
  if (comm.Rank() != 0) return o;
  o.text = snapshots;
  std::vector<uint64_t> state(model.Entities(), 0);
  std::vector<sim::EntityDigest> sum(model.Entities());
  for (const std::string& part : all) {
    std::istringstream in(part);
    uint64_t cross = 0, ties = 0, events = 0;
    in >> cross >> ties >> events;
    o.cross += cross;
    o.ties += ties;
    o.events += events;
    uint32_t e;
    int own;
    uint64_t s, n, h;
    while (in >> e >> own >> s >> n >> h) {
      if (own) state[e] = s;
      sum[e].events += n;
      sum[e].sum += h;
    }
  }
  for (uint32_t e = 0; e < model.Entities(); ++e) o.text += Line(e, state[e], sum[e]);
  return o;
}

std::vector<int> ContiguousPlacement(uint32_t units, int ranks) {
  std::vector<int> r(units);
  for (uint32_t u = 0; u < units; ++u)
    r[u] = static_cast<int>(uint64_t{u} * static_cast<uint64_t>(ranks) / units);
  return r;
}

std::vector<int> RandomPlacement(uint32_t units, int ranks, uint64_t seed) {
  sim::Rng rng(seed, static_cast<uint64_t>(ranks), 0x9a);
  std::vector<uint32_t> order(units);
  std::iota(order.begin(), order.end(), 0u);
  for (uint32_t i = units - 1; i > 0; --i) std::swap(order[i], order[rng.Below(i + 1)]);
  std::vector<int> r(units);
  for (uint32_t i = 0; i < units; ++i)
    r[order[i]] = i < static_cast<uint32_t>(ranks)
                      ? static_cast<int>(i)
                      : static_cast<int>(rng.Below(static_cast<uint64_t>(ranks)));
  return r;
}

}  // namespace lossless::parallel
