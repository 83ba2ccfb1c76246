#include "train/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
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
  // Tasks go to pipeline stage `stage`'s streams (0 without pipeline).
  void set_stage(int s) { stage_ = s; }
  size_t Compute(units::Time d, units::Time tp, std::string label, std::vector<size_t> deps = {}) {
    Task t;
    t.duration = d + tp;
    t.tp = tp;
    t.label = std::move(label);
    t.deps = std::move(deps);
    t.stage = stage_;
    t.stream = 4 * stage_;
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
    t.stage = stage_;
    t.stream = 4 * stage_ + 1;
    tasks_.push_back(std::move(t));
    return tasks_.size() - 1;
  }
  // A pipeline send to stage `to` (stream 2: forward sends, 3: backward).
  size_t Send(int to, int64_t bytes, std::string label, std::vector<size_t> deps) {
    Task t;
    t.comm = true;
    t.p2p = true;
    t.peer = to;
    t.bytes = bytes;
    t.label = std::move(label);
    t.deps = std::move(deps);
    t.stage = stage_;
    t.stream = 4 * stage_ + (to > stage_ ? 2 : 3);
    tasks_.push_back(std::move(t));
    return tasks_.size() - 1;
  }
  std::vector<size_t>& deps(size_t i) { return tasks_[i].deps; }

 private:
  std::vector<Task>& tasks_;
  int stage_ = 0;
};

// The backward pass of `units` (in reverse) that synchronises: each unit's
// gradient bytes appear evenly over its backward; a bucket of
// c.bucket_bytes is all-reduced when the piece of backward holding its last
// byte ends. Returns the last piece; `first` gets the first piece.
size_t BucketedBackward(const TrainConfig& c, const std::vector<Unit>& units,
                        const std::vector<size_t>& which, int64_t m, Builder& b, size_t* first) {
  int64_t filled = 0;  // bytes in the open bucket
  int buckets = 0;
  size_t last = SIZE_MAX;
  auto piece = [&](size_t i) {
    if (last == SIZE_MAX) *first = i;
    last = i;
  };
  for (size_t k = which.size(); k-- > 0;) {
    const Unit& unit = units[which[k]];
    const int64_t grad = c.GradBytes(unit.params);
    if (grad == 0) {
      piece(b.Compute(unit.backward, unit.tp_backward,
                      fmt::format("backward {} mb {}", unit.name, m)));
      continue;
    }
    int64_t done = 0;
    while (done < grad) {
      const int64_t take = std::min(grad - done, c.bucket_bytes - filled);
      const int64_t from = done;
      done += take;
      filled += take;
      piece(
          b.Compute(Fraction(unit.backward, done, grad) - Fraction(unit.backward, from, grad),
                    Fraction(unit.tp_backward, done, grad) - Fraction(unit.tp_backward, from, grad),
                    fmt::format("backward {} mb {}", unit.name, m)));
      if (filled == c.bucket_bytes) {
        b.Comm(CommKind::kAllReduce, filled, fmt::format("all-reduce bucket {}", buckets++),
               {last});
        filled = 0;
      }
    }
  }
  if (filled > 0)
    b.Comm(CommKind::kAllReduce, filled, fmt::format("all-reduce bucket {}", buckets++), {last});
  return last;
}

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
    if (sync) {
      std::vector<size_t> all(n);
      for (size_t u = 0; u < n; ++u) all[u] = u;
      size_t first = 0;
      BucketedBackward(c, units, all, m, b, &first);
      continue;
    }
    for (size_t k = n; k-- > 0;)
      b.Compute(units[k].backward, units[k].tp_backward,
                fmt::format("backward {} mb {}", units[k].name, m));
  }
}

// Pipeline parallelism with DDP inside each stage (BuildStep's comment).
void BuildPipeline(const TrainConfig& c, const std::vector<Unit>& units, Builder& b) {
  const int pp = c.pp;
  const int64_t mb = c.Accumulation();
  const bool sync = c.DpRanks() >= 2;
  const int64_t act = c.PipeBytes();
  std::vector<std::vector<size_t>> mine(static_cast<size_t>(pp));
  for (size_t u = 0; u < units.size(); ++u) mine[static_cast<size_t>(UnitStage(c, u))].push_back(u);
  // Per stage and micro-batch: first and last task of its forward and of its
  // backward, and the sends after them.
  const size_t none = SIZE_MAX;
  auto grid = [&] {
    return std::vector<std::vector<size_t>>(static_cast<size_t>(pp),
                                            std::vector<size_t>(static_cast<size_t>(mb), none));
  };
  std::vector<std::vector<size_t>> fwd = grid(), bwd_first = grid(), bwd_last = grid(),
                                   send_f = grid(), send_b = grid();
  for (int s = 0; s < pp; ++s) {
    b.set_stage(s);
    const std::vector<size_t>& us = mine[static_cast<size_t>(s)];
    units::Time f, f_tp, bw, bw_tp;
    for (size_t u : us) {
      f = f + units[u].forward;
      f_tp = f_tp + units[u].tp_forward;
      bw = bw + units[u].backward;
      bw_tp = bw_tp + units[u].tp_backward;
    }
    size_t prev_send = none;  // the send after this stage's previous pass
    for (int64_t op : OneFOneB(pp, s, mb)) {
      const size_t j = static_cast<size_t>(std::abs(op) - 1);
      size_t first = 0, last = 0;
      if (op > 0) {
        first = last = b.Compute(f, f_tp, fmt::format("forward stage {} mb {}", s, j));
        fwd[static_cast<size_t>(s)][j] = last;
      } else if (sync && j + 1 == static_cast<size_t>(mb)) {
        last = BucketedBackward(c, units, us, static_cast<int64_t>(j), b, &first);
      } else {
        first = last = b.Compute(bw, bw_tp, fmt::format("backward stage {} mb {}", s, j));
      }
      if (prev_send != none) b.deps(first).push_back(prev_send);
      prev_send = none;
      if (op > 0 && s + 1 < pp) {
        prev_send =
            b.Send(s + 1, act, fmt::format("send activation {}->{} mb {}", s, s + 1, j), {last});
        send_f[static_cast<size_t>(s)][j] = prev_send;
      }
      if (op < 0) {
        bwd_first[static_cast<size_t>(s)][j] = first;
        bwd_last[static_cast<size_t>(s)][j] = last;
        if (s > 0) {
          prev_send =
              b.Send(s - 1, act, fmt::format("send gradient {}->{} mb {}", s, s - 1, j), {last});
          send_b[static_cast<size_t>(s)][j] = prev_send;
        }
      }
    }
  }
  // What each pass receives: the previous stage's activation, the next
  // stage's gradient.
  for (int s = 0; s < pp; ++s) {
    const size_t k = static_cast<size_t>(s);
    for (size_t j = 0; j < static_cast<size_t>(mb); ++j) {
      if (s > 0) b.deps(fwd[k][j]).push_back(send_f[k - 1][j]);
      if (s + 1 < pp) b.deps(bwd_first[k][j]).push_back(send_b[k + 1][j]);
    }
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

CommCost CommBackend::Send(int /*from*/, int /*to*/, int64_t bytes, units::Time /*start*/) {
  CommCost c;
  c.bytes_sent = bytes;
  return c;
}

std::vector<int64_t> OneFOneB(int pp, int stage, int64_t m) {
  std::vector<int64_t> ops;
  const int64_t warmup = std::min<int64_t>(pp - stage - 1, m);
  for (int64_t j = 0; j < warmup; ++j) ops.push_back(j + 1);
  for (int64_t j = 0; j < m - warmup; ++j) {
    ops.push_back(warmup + j + 1);
    ops.push_back(-(j + 1));
  }
  for (int64_t j = m - warmup; j < m; ++j) ops.push_back(-(j + 1));
  return ops;
}

std::vector<Task> BuildStep(const TrainConfig& c, const std::vector<Unit>& units) {
  std::vector<Task> tasks;
  Builder b(tasks);
  if (c.pp > 1)
    BuildPipeline(c, units, b);
  else if (c.strategy == Strategy::kDdp)
    BuildDdp(c, units, b);
  else
    BuildFsdp(c, units, b);
  return tasks;
}

StepTimes Schedule(std::vector<Task>& tasks, CommBackend& comm, units::Time at) {
  std::map<int, std::vector<size_t>> order;  // per stream, in listed order
  int stages = 1;
  for (size_t i = 0; i < tasks.size(); ++i) {
    order[tasks[i].stream].push_back(i);
    stages = std::max(stages, tasks[i].stage + 1);
  }
  struct Stream {
    std::vector<size_t> tasks;
    size_t next = 0;
    units::Time free;
  };
  std::vector<Stream> streams;
  streams.reserve(order.size());
  for (auto& [id, list] : order) streams.push_back({std::move(list), 0, at});
  std::vector<bool> scheduled(tasks.size(), false);
  // Per stage: compute, TP, DP stream busy, DP bytes.
  std::vector<units::Time> compute(static_cast<size_t>(stages)), tp(compute), dp(compute);
  std::vector<int64_t> dp_bytes(static_cast<size_t>(stages), 0);
  StepTimes st;
  units::Time end = at;
  for (size_t left = tasks.size(); left > 0; --left) {
    // The stream whose next task can start first.
    size_t pick = SIZE_MAX;
    units::Time best;
    for (size_t k = 0; k < streams.size(); ++k) {
      const Stream& sm = streams[k];
      if (sm.next == sm.tasks.size()) continue;
      const Task& t = tasks[sm.tasks[sm.next]];
      units::Time start = sm.free;
      bool ready = true;
      for (size_t d : t.deps) {
        if (!scheduled[d]) {
          ready = false;
          break;
        }
        start = std::max(start, tasks[d].finish);
      }
      if (ready && (pick == SIZE_MAX || start < best)) {
        pick = k;
        best = start;
      }
    }
    if (pick == SIZE_MAX) throw std::logic_error("train schedule: tasks wait for each other");
    Stream& sm = streams[pick];
    const size_t i = sm.tasks[sm.next];
    Task& t = tasks[i];
    const size_t s = static_cast<size_t>(t.stage);
    t.start = best;
    if (t.p2p) {
      t.cost = comm.Send(t.stage, t.peer, t.bytes, t.start);
      t.finish = t.start + t.cost.time;
      st.pp_comm = st.pp_comm + t.cost.time;
      st.pp_bytes += t.cost.bytes_sent;
      ++st.collectives;
      st.reused += t.cost.reused ? 1 : 0;
    } else if (t.comm) {
      t.cost = comm.Run(t.kind, t.group, t.bytes, t.start);
      t.finish = t.start + t.cost.time;
      dp[s] = dp[s] + t.cost.time;
      dp_bytes[s] += t.cost.bytes_sent;
      ++st.collectives;
      st.reused += t.cost.reused ? 1 : 0;
    } else {
      t.finish = t.start + t.duration;
      compute[s] = compute[s] + (t.duration - t.tp);
      tp[s] = tp[s] + t.tp;
    }
    sm.free = t.finish;
    ++sm.next;
    end = std::max(end, t.finish);
    scheduled[i] = true;
  }
  for (size_t s = 0; s < compute.size(); ++s) {
    if (compute[s] + tp[s] > st.compute + st.tp) {
      st.compute = compute[s];
      st.tp = tp[s];
      st.busiest_stage = static_cast<int>(s);
    }
    st.dp_comm = std::max(st.dp_comm, dp[s]);
    st.dp_bytes = std::max(st.dp_bytes, dp_bytes[s]);
  }
  st.step = end - at;
  st.exposed = st.step - st.compute;
  return st;
}

StepTimes WithBubble(StepTimes st, units::Time ideal, int pp) {
  if (pp > 1) st.bubble = std::max(units::Time::Zero(), ideal - st.compute - st.tp);
  st.exposed = st.step - st.compute - st.bubble;
  return st;
}

}  // namespace lossless::train
