#include "train/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace lossless::train {
namespace {

units::Time Fraction(units::Time t, int64_t part, int64_t whole) {
  if (whole <= 0) return units::Time::Zero();
  // Exact for the sizes here: times below 2^53 ps (2.5 hours) round once.
  return units::Time::Ps(static_cast<int64_t>(std::llround(
      static_cast<double>(t.ps()) * static_cast<double>(part) / static_cast<double>(whole))));
}

class Builder {
 public:
  explicit Builder(std::vector<Task>& tasks) : tasks_(tasks) {}
  size_t Compute(units::Time d, units::Time tp, std::string label, std::vector<size_t> deps = {}) {
    Task t;
    t.duration = d + tp;
    t.tp = tp;
    t.label = std::move(label);
    t.deps = std::move(deps);
    tasks_.push_back(std::move(t));
    return tasks_.size() - 1;
  }
  size_t Comm(CommKind k, int64_t bytes, std::string label, std::vector<size_t> deps,
              CommGroup g = CommGroup::kData) {
    Task t;
    t.comm = true;
    t.kind = k;
    t.group = g;
    t.bytes = bytes;
    t.label = std::move(label);
    t.deps = std::move(deps);
    tasks_.push_back(std::move(t));
    return tasks_.size() - 1;
  }

 private:
  std::vector<Task>& tasks_;
};

// DDP: the backward pass of the last micro-batch produces gradients unit by
// unit in reverse; each unit's bytes appear evenly over its backward time, so
// a bucket is ready when the piece of backward holding its last byte ends.
void BuildDdp(const TrainConfig& c, const std::vector<Unit>& units, Builder& b) {
  const size_t n = units.size();
  const int64_t micro = c.Accumulation();
  for (int64_t m = 0; m < micro; ++m) {
    for (size_t u = 0; u < n; ++u)
      b.Compute(units[u].forward, units[u].tp_forward,
                fmt::format("forward {} mb {}", units[u].name, m));
    const bool sync = m + 1 == micro && c.DpRanks() >= 2;
    int64_t filled = 0;  // bytes in the open bucket
    int buckets = 0;
    size_t last = 0;
    for (size_t k = n; k-- > 0;) {
      const Unit& unit = units[k];
      const int64_t grad = c.GradBytes(unit.params);
      if (!sync || grad == 0) {
        last = b.Compute(unit.backward, unit.tp_backward,
                         fmt::format("backward {} mb {}", unit.name, m));
        continue;
      }
      int64_t done = 0;
      while (done < grad) {
        const int64_t take = std::min(grad - done, c.bucket_bytes - filled);
        const int64_t from = done;
        done += take;
        filled += take;
        last = b.Compute(
            Fraction(unit.backward, done, grad) - Fraction(unit.backward, from, grad),
            Fraction(unit.tp_backward, done, grad) - Fraction(unit.tp_backward, from, grad),
            fmt::format("backward {} mb {}", unit.name, m));
        if (filled == c.bucket_bytes) {
          b.Comm(CommKind::kAllReduce, filled, fmt::format("all-reduce bucket {}", buckets++),
                 {last});
          filled = 0;
        }
      }
    }
    if (sync && filled > 0)
      b.Comm(CommKind::kAllReduce, filled, fmt::format("all-reduce bucket {}", buckets++), {last});
  }
}

// FSDP (ZeRO-3): per micro-batch each unit's parameters are all-gathered
// before its forward and again before its backward, one unit ahead
// (forward_prefetch / BACKWARD_PRE), and its gradient reduce-scattered after
// its backward. The next unit's gather is issued when a unit's compute
// starts, so at most two units are gathered at once. HSDP gathers and
// scatters inside the node, then all-reduces the node's gradient shard with
// the other nodes (PyTorch's HYBRID_SHARD), on the same stream.
void BuildFsdp(const TrainConfig& c, const std::vector<Unit>& units, Builder& b) {
  const size_t n = units.size();
  const bool hybrid = c.strategy == Strategy::kHsdp;
  const CommGroup shard = hybrid ? CommGroup::kNode : CommGroup::kData;
  const bool comm = c.ShardRanks() >= 2;
  for (int64_t m = 0; m < c.Accumulation(); ++m) {
    std::vector<size_t> fwd(n), bwd(n), ag_f(n), ag_b(n);
    // Issue order on the one stream follows the compute that issues it, so
    // tasks are listed in that order: AG(0), AG(1), F(0), AG(2), F(1), ...
    auto gather = [&](size_t u, bool backward, std::vector<size_t> deps) {
      const int64_t bytes = 2 * units[u].params;
      if (!comm || bytes == 0) return SIZE_MAX;
      return b.Comm(CommKind::kAllGather, bytes,
                    fmt::format("all-gather {} {} mb {}", units[u].name,
                                backward ? "backward" : "forward", m),
                    std::move(deps), shard);
    };
    auto deps_of = [](size_t g) {
      return g == SIZE_MAX ? std::vector<size_t>{} : std::vector<size_t>{g};
    };
    ag_f[0] = gather(0, false, {});
    for (size_t u = 0; u < n; ++u) {
      // The prefetch of u + 1 is issued when forward u starts (after forward u - 1).
      if (u + 1 < n)
        ag_f[u + 1] =
            gather(u + 1, false, u >= 1 ? std::vector<size_t>{fwd[u - 1]} : std::vector<size_t>{});
      fwd[u] = b.Compute(units[u].forward, units[u].tp_forward,
                         fmt::format("forward {} mb {}", units[u].name, m), deps_of(ag_f[u]));
    }
    ag_b[n - 1] = gather(n - 1, true, {fwd[n - 1]});
    for (size_t k = n; k-- > 0;) {
      if (k >= 1) ag_b[k - 1] = gather(k - 1, true, {k + 1 < n ? bwd[k + 1] : fwd[n - 1]});
      bwd[k] = b.Compute(units[k].backward, units[k].tp_backward,
                         fmt::format("backward {} mb {}", units[k].name, m), deps_of(ag_b[k]));
      if (comm && units[k].params > 0) {
        const size_t rs =
            b.Comm(CommKind::kReduceScatter, c.GradBytes(units[k].params),
                   fmt::format("reduce-scatter {} mb {}", units[k].name, m), {bwd[k]}, shard);
        if (hybrid && c.nodes >= 2)
          b.Comm(CommKind::kAllReduce, c.GradBytes(units[k].params) / c.ShardRanks(),
                 fmt::format("all-reduce shard {} mb {}", units[k].name, m), {rs},
                 CommGroup::kAcross);
      }
    }
  }
}

}  // namespace

const char* CommKindName(CommKind k) {
  switch (k) {
    case CommKind::kAllGather:
      return "all_gather";
    case CommKind::kReduceScatter:
      return "reduce_scatter";
    default:
      return "all_reduce";
  }
}

int GroupRanks(const TrainConfig& c, CommGroup g) {
  switch (g) {
    case CommGroup::kNode:
      return c.gpus_per_node / c.tp;
    case CommGroup::kAcross:
      return c.nodes;
    default:
      return c.DpRanks();
  }
}

CommCost InstantComm::Run(CommKind kind, CommGroup group, int64_t bytes, units::Time /*start*/) {
  CommCost c;
  const double n = GroupRanks(c_, group);
  const double f = kind == CommKind::kAllReduce ? 2.0 * (n - 1) / n : (n - 1) / n;
  c.bytes_sent = static_cast<int64_t>(f * static_cast<double>(bytes));
  return c;
}

std::vector<Task> BuildStep(const TrainConfig& c, const std::vector<Unit>& units) {
  std::vector<Task> tasks;
  Builder b(tasks);
  if (c.strategy == Strategy::kDdp)
    BuildDdp(c, units, b);
  else
    BuildFsdp(c, units, b);
  return tasks;
}

StepTimes Schedule(std::vector<Task>& tasks, CommBackend& comm, units::Time at) {
  std::vector<size_t> order[2];
  for (size_t i = 0; i < tasks.size(); ++i) order[tasks[i].comm ? 1 : 0].push_back(i);
  std::vector<bool> scheduled(tasks.size(), false);
  size_t next[2] = {0, 0};
  units::Time free[2] = {at, at};
  StepTimes st;
  units::Time end = at;
  while (next[0] < order[0].size() || next[1] < order[1].size()) {
    bool progressed = false;
    for (int s = 0; s < 2; ++s) {
      while (next[s] < order[s].size()) {
        Task& t = tasks[order[s][next[s]]];
        units::Time start = free[s];
        bool ready = true;
        for (size_t d : t.deps) {
          if (!scheduled[d]) {
            ready = false;
            break;
          }
          start = std::max(start, tasks[d].finish);
        }
        if (!ready) break;
        t.start = start;
        if (t.comm) {
          t.cost = comm.Run(t.kind, t.group, t.bytes, start);
          t.finish = start + t.cost.time;
          st.dp_comm = st.dp_comm + t.cost.time;
          st.dp_bytes += t.cost.bytes_sent;
          ++st.collectives;
          st.reused += t.cost.reused ? 1 : 0;
        } else {
          t.finish = start + t.duration;
          st.compute = st.compute + (t.duration - t.tp);
          st.tp = st.tp + t.tp;
        }
        free[s] = t.finish;
        end = std::max(end, t.finish);
        scheduled[order[s][next[s]]] = true;
        ++next[s];
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("train schedule: tasks wait for each other");
  }
  st.step = end - at;
  st.exposed = st.step - st.compute;
  return st;
}

}  // namespace lossless::train
