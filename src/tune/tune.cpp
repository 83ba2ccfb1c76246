#include "tune/tune.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/progress.hpp"
#include "compare/cases.hpp"
#include "perf/result.hpp"
#include "sweep/sweep.hpp"

namespace lossless::tune {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A candidate value: its text (with unit) and its number in base units
// (bytes, ps, bit/s, or the fraction), for finding the base's value.
struct Candidate {
  std::string text;
  double number;
};

Axis MakeAxis(std::string key, std::string label, bool nic, const std::vector<Candidate>& c,
              std::vector<size_t> coarse, double base_value) {
  Axis a;
  a.key = std::move(key);
  a.label = std::move(label);
  a.nic = nic;
  for (const auto& v : c) a.values.push_back(v.text);
  a.coarse = std::move(coarse);
  // Grid points off this axis take the value nearest the base's.
  double best = INFINITY;
  for (size_t i = 0; i < c.size(); ++i) {
    const double d =
        std::fabs(std::log(std::max(c[i].number, 1e-12)) - std::log(std::max(base_value, 1e-12)));
    if (d < best) {
      best = d;
      a.start = i;
    }
  }
  return a;
}

// ECN thresholds as shares of the PFC trigger, rounded to 1,000 B.
std::vector<Candidate> Shares(int64_t xoff, const std::vector<double>& shares) {
  std::vector<Candidate> out;
  for (double s : shares) {
    const int64_t b =
        std::max<int64_t>(1000, std::llround(s * static_cast<double>(xoff) / 1000.0) * 1000);
    if (!out.empty() && static_cast<int64_t>(out.back().number) >= b) continue;
    out.push_back({fmt::format("{}B", b), static_cast<double>(b)});
  }
  return out;
}

double Us(const char* s) {
  return units::ParseTime(s, {"<tune>", 0, ""}).ps();
}
double Bps(const char* s) {
  return static_cast<double>(units::ParseRate(s, {"<tune>", 0, ""}).bps());
}

int64_t BytesOf(const std::string& v) {
  return units::ParseBytes(v, {"<tune>", 0, ""}).count();
}

}  // namespace

std::vector<Axis> SearchSpace(const scenario::Scenario& base) {
  const Location at{"<cli>", 0, "--fabric"};
  if (base.net.ib.enabled)
    throw InputError(at,
                     "expected a RoCE fabric (ECN and DCQCN are what tune searches), got an "
                     "InfiniBand one");
  if (!base.net.pfc.enabled)
    throw InputError(at,
                     "expected a fabric with PFC on (tune cuts PAUSE frames), got "
                     "fabric.pfc.enabled false");
  if (!base.net.dcqcn)
    throw InputError(at,
                     "expected a fabric running DCQCN (fabric.cc dcqcn-paper or "
                     "dcqcn-firmware), got none");
  const int64_t xoff = base.net.pfc.xoff.count();
  const auto& e = base.net.sw.ecn[base.net.nic.data_class];
  const cc::DcqcnParams& d = base.net.dcqcn_params;
  std::vector<Axis> axes;
  // Kmin 5-50 % and Kmax 30-95 % of the PFC trigger: marks before PAUSE
  // (the commissioning checklist's 20-30 % rule in the middle).
  const auto kmin = Shares(xoff, {0.05, 0.10, 0.15, 0.25, 0.35, 0.50});
  const auto kmax = Shares(xoff, {0.30, 0.50, 0.75, 0.95});
  if (kmin.size() < 3 || kmax.size() < 3)
    throw InputError(at, fmt::format("expected a PFC trigger of at least 20KB to place ECN "
                                     "thresholds below it, got {}B",
                                     xoff));
  axes.push_back(MakeAxis("fabric.ecn.kmin", "kmin", false, kmin,
                          {size_t{1}, kmin.size() > 4 ? size_t{3} : size_t{2}, kmin.size() - 1},
                          static_cast<double>(e.kmin.count())));
  axes.push_back(MakeAxis("fabric.ecn.kmax", "kmax", false, kmax,
                          {0, kmax.size() - 2, kmax.size() - 1},
                          static_cast<double>(e.kmax.count())));
  axes.push_back(
      MakeAxis("fabric.ecn.pmax", "pmax", false,
               {{"0.01", 0.01}, {"0.05", 0.05}, {"0.1", 0.1}, {"0.2", 0.2}, {"0.5", 0.5}, {"1", 1}},
               {1, 3, 5}, e.pmax));
  // DCQCN: the parameters ConnectX exposes (docs/model/dcqcn.md#presets).
  axes.push_back(MakeAxis(
      "fabric.dcqcn.rate_increase_period", "t_inc", true,
      {{"20us", Us("20us")}, {"55us", Us("55us")}, {"100us", Us("100us")}, {"300us", Us("300us")}},
      {0, 1, 3}, static_cast<double>(d.rate_increase_period.ps())));
  if (d.variant == cc::DcqcnVariant::kFirmware) {
    // RATE_TO_SET_ON_FIRST_CNP (0 = off) and RATE_REDUCE_MONITOR_PERIOD: the
    // firmware reaction point's first cut and the spacing of the others.
    axes.push_back(MakeAxis("fabric.dcqcn.rate_on_first_cnp", "r_first", true,
                            {{"0", 0},
                             {"10Gbps", Bps("10Gbps")},
                             {"40Gbps", Bps("40Gbps")},
                             {"100Gbps", Bps("100Gbps")}},
                            {0, 1, 2}, static_cast<double>(d.rate_on_first_cnp.bps())));
    axes.push_back(MakeAxis("fabric.dcqcn.rate_reduce_period", "t_cut", true,
                            {{"1us", Us("1us")}, {"4us", Us("4us")}, {"10us", Us("10us")}}, {},
                            static_cast<double>(d.rate_reduce_period.ps())));
  }
  axes.push_back(MakeAxis("fabric.dcqcn.g", "g", true,
                          {{"1/1024", 1.0 / 1024},
                           {"5/1024", 5.0 / 1024},
                           {"16/1024", 16.0 / 1024},
                           {"64/1024", 64.0 / 1024},
                           {"256/1024", 256.0 / 1024}},
                          {}, d.g));
  axes.push_back(MakeAxis("fabric.dcqcn.rate_ai", "r_ai", true,
                          {{"5Mbps", Bps("5Mbps")},
                           {"20Mbps", Bps("20Mbps")},
                           {"50Mbps", Bps("50Mbps")},
                           {"200Mbps", Bps("200Mbps")},
                           {"1Gbps", Bps("1Gbps")}},
                          {}, static_cast<double>(d.rate_ai.bps())));
  axes.push_back(MakeAxis("fabric.dcqcn.rate_hai", "r_hai", true,
                          {{"50Mbps", Bps("50Mbps")},
                           {"200Mbps", Bps("200Mbps")},
                           {"1Gbps", Bps("1Gbps")},
                           {"4Gbps", Bps("4Gbps")}},
                          {}, static_cast<double>(d.rate_hai.bps())));
  axes.push_back(MakeAxis("fabric.dcqcn.alpha_period", "t_alpha", true,
                          {{"1us", Us("1us")}, {"10us", Us("10us")}, {"55us", Us("55us")}}, {},
                          static_cast<double>(d.alpha_period.ps())));
  axes.push_back(
      MakeAxis("fabric.dcqcn.cnp_interval", "t_cnp", true,
               {{"2us", Us("2us")}, {"4us", Us("4us")}, {"20us", Us("20us")}, {"50us", Us("50us")}},
               {}, static_cast<double>(d.cnp_interval.ps())));
  return axes;
}

bool Valid(const std::vector<Axis>& axes, const Index& i) {
  int64_t kmin = -1, kmax = -1;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].key == "fabric.ecn.kmin") kmin = BytesOf(axes[a].values[i[a]]);
    if (axes[a].key == "fabric.ecn.kmax") kmax = BytesOf(axes[a].values[i[a]]);
  }
  return kmin < 0 || kmax < 0 || kmin < kmax;
}

std::vector<Index> CoarseGrid(const std::vector<Axis>& axes, int levels) {
  // Per axis the indices it takes.
  std::vector<std::vector<size_t>> take(axes.size());
  for (size_t a = 0; a < axes.size(); ++a) {
    const auto& c = axes[a].coarse;
    if (c.empty())
      take[a] = {axes[a].start};
    else if (levels <= 1)
      take[a] = {c[1]};
    else if (levels == 2)
      take[a] = {c[0], c[2]};
    else
      take[a] = {c[0], c[1], c[2]};
  }
  std::vector<Index> out;
  Index cur(axes.size(), 0);
  std::function<void(size_t)> walk = [&](size_t a) {
    if (a == axes.size()) {
      if (Valid(axes, cur)) out.push_back(cur);
      return;
    }
    for (size_t v : take[a]) {
      cur[a] = v;
      walk(a + 1);
    }
  };
  walk(0);
  return out;
}

std::vector<std::string> Sets(const std::vector<Axis>& axes, const Index& i) {
  std::vector<std::string> out;
  for (size_t a = 0; a < axes.size(); ++a) out.push_back(axes[a].key + "=" + axes[a].values[i[a]]);
  return out;
}

ordered_json ToJson(const Figures& f) {
  ordered_json j;
  j["busbw_gbs"] = f.busbw_gbs;
  j["victim_p99_us"] = f.victim_p99_us;
  j["victim_gbps"] = f.victim_gbps;
  j["incast_us"] = f.incast_us;
  j["pause_frames"] = f.pause_frames;
  j["ecn_marks"] = f.ecn_marks;
  j["cnps"] = f.cnps;
  j["drops"] = f.drops;
  j["failure"] = f.failure.empty() ? ordered_json(nullptr) : ordered_json(f.failure);
  return j;
}

Figures FiguresFromJson(const json& j) {
  Figures f;
  f.busbw_gbs = j.at("busbw_gbs").get<double>();
  f.victim_p99_us = j.at("victim_p99_us").get<double>();
  f.victim_gbps = j.at("victim_gbps").get<double>();
  f.incast_us = j.at("incast_us").get<double>();
  f.pause_frames = j.at("pause_frames").get<int64_t>();
  f.ecn_marks = j.at("ecn_marks").get<int64_t>();
  f.cnps = j.at("cnps").get<int64_t>();
  f.drops = j.at("drops").get<int64_t>();
  if (!j.at("failure").is_null()) f.failure = j.at("failure").get<std::string>();
  return f;
}

Figures Evaluate(const scenario::Scenario& s, const Target& t) {
  Figures f;
  try {
    const compare::IncastResult inc =
        compare::RunIncast(s, t.incast_senders, t.incast_bytes, t.probe_every);
    f.victim_p99_us = inc.probe_p99_us;
    f.victim_gbps = inc.victim_gbps;
    f.incast_us = inc.duration_us;
    f.pause_frames = inc.pause_frames;
    f.ecn_marks = inc.ecn_marks;
    f.cnps = inc.cnps;
    f.drops = inc.drops;
    const int64_t g = s.clos.gpus_per_node;
    const int64_t nodes = g > 0 ? s.clos.gpus / g : 0;
    const compare::CollectiveRun c =
        compare::RunRepeated(s, s.name, nodes, g, t.allreduce_bytes, t.iterations);
    for (const auto& l : c.perf.links) {
      f.pause_frames += l.pause_frames;
      f.ecn_marks += l.ecn_marks;
      f.cnps += l.cnps;
      f.drops += l.drops;
    }
    if (!c.failure.empty()) {
      f.failure = c.failure;
    } else if (c.perf.sizes.empty()) {
      f.failure = "the all-reduce gave no result";
    } else {
      f.busbw_gbs = perf::ToRow(c.perf.sizes[0], collective::Collective::kAllReduce, nodes * g)
                        .out_of_place.busbw_gbs;
    }
  } catch (const std::exception& e) {
    f.failure = e.what();
  }
  return f;
}

namespace {

bool Feasible(const Figures& f, const Figures& baseline, const Target& t) {
  return f.failure.empty() && f.busbw_gbs >= baseline.busbw_gbs * (1 - t.max_busbw_loss_pct / 100);
}

// Runs `sets_list` over the ranks (sweep::Share), every rank gets every figure.
// After Ctrl-C (InterruptRequested) a rank runs no further point, and a point
// whose run the interrupt cut short is dropped: its entry is empty.
// `on_point` (rank 0) is told after each of its own points.
std::vector<std::optional<Figures>> EvaluateBatch(
    parallel::Comm& comm, const Loader& load,
    const std::vector<std::vector<std::string>>& sets_list, const Target& t,
    const std::function<void(size_t)>& on_point) {
  json mine = json::array();
  size_t mine_done = 0;
  for (size_t i : sweep::Share(sets_list.size(), comm.Rank(), comm.Size())) {
    if (InterruptRequested()) break;
    Figures f;
    try {
      f = Evaluate(load(sets_list[i]), t);
    } catch (const std::exception& e) {
      f.failure = e.what();
    }
    if (InterruptRequested()) break;  // the run may have been cut short
    mine.push_back({i, ToJson(f)});
    ++mine_done;
    if (on_point) on_point(mine_done);
  }
  const std::vector<std::string> all = comm.Gather(mine.dump());
  std::string merged;
  if (comm.Rank() == 0) {
    json m = json::array();
    for (const auto& bytes : all)
      for (const auto& e : json::parse(bytes)) m.push_back(e);
    merged = m.dump();
  }
  merged = comm.Broadcast(merged);
  std::vector<std::optional<Figures>> out(sets_list.size());
  for (const auto& e : json::parse(merged))
    out.at(e.at(0).get<size_t>()) = FiguresFromJson(e.at(1));
  return out;
}

}  // namespace

bool Better(const Figures& a, const Figures& b, const Figures& baseline, const Target& t) {
  const bool fa = Feasible(a, baseline, t), fb = Feasible(b, baseline, t);
  if (fa != fb) return fa;
  if (!fa) {  // neither meets the busbw bound: the higher busbw is closer
    if (a.failure.empty() != b.failure.empty()) return a.failure.empty();
    if (a.busbw_gbs != b.busbw_gbs) return a.busbw_gbs > b.busbw_gbs;
  }
  if (a.pause_frames != b.pause_frames) return a.pause_frames < b.pause_frames;
  if (a.victim_p99_us != b.victim_p99_us) return a.victim_p99_us < b.victim_p99_us;
  if (a.busbw_gbs != b.busbw_gbs) return a.busbw_gbs > b.busbw_gbs;
  return a.ecn_marks < b.ecn_marks;
}

int64_t MinimumBudget(const std::vector<Axis>& axes, int levels) {
  return 1 + static_cast<int64_t>(CoarseGrid(axes, levels).size());
}

void Check(const std::vector<Axis>& axes, const Options& o) {
  if (o.levels < 1 || o.levels > 3)
    throw InputError({"<cli>", 0, "--levels"}, Expected("1, 2 or 3", std::to_string(o.levels)));
  const int64_t min = MinimumBudget(axes, o.levels);
  if (o.budget < min) {
    throw InputError({"<cli>", 0, "--budget"},
                     fmt::format("expected at least {} runs (the baseline and the {} points of the "
                                 "coarse grid at --levels {}), got {}",
                                 min, min - 1, o.levels, o.budget));
  }
  const Target& t = o.target;
  if (t.incast_senders < 1)
    throw InputError({"<cli>", 0, "--incast-senders"},
                     Expected("at least 1", std::to_string(t.incast_senders)));
  if (t.incast_bytes < 1)
    throw InputError({"<cli>", 0, "--incast-bytes"},
                     Expected("at least 1 byte", std::to_string(t.incast_bytes)));
  if (t.allreduce_bytes < 1)
    throw InputError({"<cli>", 0, "--allreduce-bytes"},
                     Expected("at least 1 byte", std::to_string(t.allreduce_bytes)));
  if (t.iterations < 1)
    throw InputError({"<cli>", 0, "--iterations"},
                     Expected("at least 1", std::to_string(t.iterations)));
  if (!(t.max_busbw_loss_pct >= 0 && t.max_busbw_loss_pct < 100))
    throw InputError(
        {"<cli>", 0, "--max-busbw-loss"},
        Expected("a percentage in [0, 100)", fmt::format("{:g}", t.max_busbw_loss_pct)));
}

Result Run(parallel::Comm& comm, const Loader& load, const Options& o, const OnBatch& on_batch) {
  Result r;
  const scenario::Scenario start = load({});
  r.axes = SearchSpace(start);
  for (const auto& a : r.axes) {
    std::string v = "?";
    for (const auto& [k, text] : start.resolved)
      if (k == a.key) v = text;
    r.base_values.push_back(v);
  }
  Check(r.axes, o);
  const Target& t = o.target;
  std::set<Index> seen;
  int64_t done = 0;
  // Runs a batch; the points an interrupt left unrun are not kept (and the
  // search stops: r.interrupted).
  auto run_batch = [&](const std::string& stage, const std::vector<Index>& batch) {
    std::vector<std::vector<std::string>> sets;
    sets.reserve(batch.size());
    for (const Index& i : batch)
      sets.push_back(i.empty() ? std::vector<std::string>{} : Sets(r.axes, i));
    const int64_t before = done;
    const int ranks = comm.Size();
    const std::vector<std::optional<Figures>> figs =
        EvaluateBatch(comm, load, sets, t, [&](size_t mine) {
          if (on_batch && comm.Rank() == 0)
            on_batch(before + std::min<int64_t>(static_cast<int64_t>(batch.size()),
                                                static_cast<int64_t>(mine) * ranks),
                     o.budget);
        });
    for (size_t k = 0; k < batch.size(); ++k) {
      if (!figs[k]) {
        r.interrupted = true;
        continue;
      }
      r.points.push_back({stage, batch[k], sets[k], *figs[k]});
      seen.insert(batch[k]);
      ++done;
    }
    if (on_batch) on_batch(done, o.budget);
  };
  run_batch("baseline", {Index{}});
  if (r.interrupted) {
    r.stop = "interrupted";
    r.verdict = "interrupted (Ctrl-C) before the baseline finished: nothing to compare.";
    return r;
  }
  const Figures base = r.points[0].f;  // a copy: points grows
  if (!base.failure.empty())
    throw InputError(
        {"<cli>", 0, "--fabric"},
        fmt::format("the baseline run failed, nothing to compare against: {}", base.failure));
  run_batch("coarse", CoarseGrid(r.axes, o.levels));
  auto best_of = [&] {
    if (r.points.size() < 2) return size_t{0};
    size_t b = 1;
    for (size_t k = 2; k < r.points.size(); ++k)
      if (Better(r.points[k].f, r.points[b].f, base, t)) b = k;
    return b;
  };
  size_t best = best_of();
  r.stop = "converged";
  while (!r.interrupted) {
    std::vector<Index> next;
    const Index& at = r.points[best].index;
    for (size_t a = 0; a < r.axes.size(); ++a) {
      for (int d : {-1, +1}) {
        if ((d < 0 && at[a] == 0) || (d > 0 && at[a] + 1 >= r.axes[a].values.size())) continue;
        Index n = at;
        n[a] = static_cast<size_t>(static_cast<int64_t>(n[a]) + d);
        if (Valid(r.axes, n) && !seen.count(n)) next.push_back(n);
      }
    }
    if (next.empty()) break;
    const int64_t left = o.budget - done;
    if (left <= 0) {
      r.stop = "budget";
      break;
    }
    if (static_cast<int64_t>(next.size()) > left) next.resize(static_cast<size_t>(left));
    run_batch("refine", next);
    best = best_of();
  }
  if (r.interrupted) r.stop = "interrupted";
  r.chosen = best;
  // The Pareto front: no other point as good on all four and better on one.
  std::vector<size_t> ok;
  for (size_t k = 0; k < r.points.size(); ++k)
    if (r.points[k].f.failure.empty()) ok.push_back(k);
  for (size_t k : ok) {
    const Figures& a = r.points[k].f;
    bool dominated = false;
    for (size_t m : ok) {
      if (m == k) continue;
      const Figures& b = r.points[m].f;
      const bool geq = b.busbw_gbs >= a.busbw_gbs && b.victim_p99_us <= a.victim_p99_us &&
                       b.pause_frames <= a.pause_frames && b.ecn_marks <= a.ecn_marks;
      const bool gt = b.busbw_gbs > a.busbw_gbs || b.victim_p99_us < a.victim_p99_us ||
                      b.pause_frames < a.pause_frames || b.ecn_marks < a.ecn_marks;
      if (geq && (gt || m < k)) {  // equal figures: the first point stands for them
        dominated = true;
        break;
      }
    }
    if (!dominated) r.pareto.push_back(k);
  }
  std::stable_sort(r.pareto.begin(), r.pareto.end(), [&](size_t a, size_t b) {
    return r.points[a].f.busbw_gbs > r.points[b].f.busbw_gbs;
  });
  // The verdict.
  const Figures& c = r.points[r.chosen].f;
  const double loss = base.busbw_gbs > 0 ? 100.0 * (1 - c.busbw_gbs / base.busbw_gbs) : 0;
  const bool cut = base.pause_frames == 0 ? false
                                          : static_cast<double>(c.pause_frames) * t.pause_cut <=
                                                static_cast<double>(base.pause_frames);
  const bool feasible = Feasible(c, base, t);
  const std::string factor = c.pause_frames == 0
                                 ? "to zero"
                                 : fmt::format("{:.1f}x", static_cast<double>(base.pause_frames) /
                                                              static_cast<double>(c.pause_frames));
  const std::string goal =
      fmt::format("at least {:g}x fewer PAUSE frames at no more than {:g} % busbw loss",
                  t.pause_cut, t.max_busbw_loss_pct);
  r.goal_met = cut && feasible;
  if (r.interrupted && r.chosen == 0) {
    r.verdict =
        fmt::format("interrupted (Ctrl-C) after the baseline: no other point ran, nothing chosen.");
    r.goal_met = false;
    return r;
  }
  if (base.pause_frames == 0) {
    r.verdict = fmt::format(
        "the baseline sends no PAUSE frame on this target, so there is nothing to cut; "
        "the chosen point is the lowest victim p99 within the busbw bound.");
  } else if (r.goal_met) {
    r.verdict = fmt::format(
        "goal met ({}): PAUSE frames {} -> {} ({}), busbw {:.2f} -> {:.2f} GB/s ({:.2f} % lost).",
        goal, base.pause_frames, c.pause_frames, factor, base.busbw_gbs, c.busbw_gbs,
        std::max(0.0, loss));
  } else if (!feasible) {
    r.verdict = fmt::format(
        "goal not met ({}): no point searched keeps busbw within {:g} % of the baseline's "
        "{:.2f} GB/s; the closest gives {:.2f} GB/s. A larger --budget or --levels 3 "
        "searches further.",
        goal, t.max_busbw_loss_pct, base.busbw_gbs, c.busbw_gbs);
  } else {
    r.verdict = fmt::format(
        "goal not met ({}): the best point within the busbw bound cuts PAUSE frames {} -> {} ({}) "
        "only; no "
        "other point searched sends fewer. {}",
        goal, base.pause_frames, c.pause_frames, factor,
        r.stop == "budget"
            ? "The budget ran out before the search converged: a larger --budget (or --levels 3) "
              "may find more."
        : r.stop == "interrupted"
            ? "The search stopped before it converged."
            : "The search converged: no one-step change of any setting does better.");
  }
  if (r.interrupted)
    r.verdict =
        fmt::format("interrupted (Ctrl-C) after {} of at most {} runs, the best point so far: {}",
                    r.points.size(), o.budget, r.verdict);
  return r;
}

namespace {

std::string Num(double v, int digits) {
  return fmt::format("{:.{}f}", v, digits);
}

ordered_json PointJson(const Result& r, size_t k) {
  const Point& p = r.points[k];
  ordered_json j;
  j["point"] = k;
  j["stage"] = p.stage;
  ordered_json settings = ordered_json::object();
  for (size_t a = 0; a < r.axes.size() && !p.index.empty(); ++a)
    settings[r.axes[a].key] = r.axes[a].values[p.index[a]];
  j["settings"] = settings;
  j["figures"] = ToJson(p.f);
  return j;
}

}  // namespace

ordered_json ToJson(const Result& r, const scenario::Scenario& base, const Options& o) {
  ordered_json j;
  j["schema"] = "lossless.tune/1";
  j["fabric"] = o.fabric;
  const int64_t g = base.clos.gpus_per_node;
  j["nodes"] = g > 0 ? base.clos.gpus / g : 0;
  j["gpus_per_node"] = g;
  j["seed"] = base.seed;
  const Target& t = o.target;
  j["target"] = {{"incast_senders", t.incast_senders},
                 {"incast_bytes", t.incast_bytes},
                 {"probe_every_us", static_cast<double>(t.probe_every.ps()) / 1e6},
                 {"allreduce_bytes", t.allreduce_bytes},
                 {"iterations", t.iterations},
                 {"max_busbw_loss_pct", t.max_busbw_loss_pct},
                 {"pause_cut", t.pause_cut}};
  j["budget"] = o.budget;
  j["levels"] = o.levels;
  j["runs"] = r.points.size();
  j["stop"] = r.stop;
  j["interrupted"] = r.interrupted;
  ordered_json axes = ordered_json::array();
  for (const auto& a : r.axes)
    axes.push_back({{"key", a.key}, {"side", a.nic ? "nic" : "switch"}, {"values", a.values}});
  j["space"] = axes;
  ordered_json base_values = ordered_json::object();
  for (size_t a = 0; a < r.axes.size(); ++a) base_values[r.axes[a].key] = r.base_values[a];
  j["baseline"] = {{"settings", base_values},
                   {"figures", r.points.empty() ? ordered_json(nullptr) : ToJson(r.points[0].f)}};
  j["chosen"] = r.points.empty() || (r.interrupted && r.chosen == 0) ? ordered_json(nullptr)
                                                                     : PointJson(r, r.chosen);
  j["goal_met"] = r.goal_met;
  j["verdict"] = r.verdict;
  ordered_json pareto = ordered_json::array();
  for (size_t k : r.pareto) pareto.push_back(k);
  j["pareto"] = pareto;
  ordered_json pts = ordered_json::array();
  for (size_t k = 0; k < r.points.size(); ++k) pts.push_back(PointJson(r, k));
  j["points"] = pts;
  return j;
}

std::string Text(const Result& r, const Options& o, int64_t nodes, int gpus_per_node) {
  const Target& t = o.target;
  std::string out;
  int64_t coarse = 0, refine = 0;
  for (const auto& p : r.points) {
    coarse += p.stage == "coarse";
    refine += p.stage == "refine";
  }
  out += fmt::format(
      "tune: {}, {} nodes x {} GPUs; target: incast {} x {} B (PAUSE frames, victim probe p99), "
      "all-reduce {} B busbw (at most {:g} % below the baseline)\n",
      o.fabric, nodes, gpus_per_node, t.incast_senders, t.incast_bytes, t.allreduce_bytes,
      t.max_busbw_loss_pct);
  out += fmt::format("runs: 1 baseline + {} coarse + {} refinement = {} of budget {} ({})\n\n",
                     coarse, refine, r.points.size(), o.budget,
                     r.stop == "budget"        ? "budget spent"
                     : r.stop == "interrupted" ? "interrupted (Ctrl-C)"
                                               : "converged: no one-step neighbour is better");
  if (r.points.empty()) return out + "verdict: " + r.verdict + "\n";
  auto header = [&] {
    std::string h = fmt::format("{:>6} {:>8}", "point", "stage");
    for (const auto& a : r.axes) h += fmt::format(" {:>9}", a.label);
    h += fmt::format(" {:>10} {:>10} {:>8} {:>9}\n", "busbw GB/s", "p99 us", "PAUSE", "ECN marks");
    return h;
  };
  auto row = [&](size_t k, const std::string& name) {
    const Point& p = r.points[k];
    std::string s = fmt::format("{:>6} {:>8}", name, p.stage);
    for (size_t a = 0; a < r.axes.size(); ++a)
      s += fmt::format(" {:>9}", p.index.empty() ? r.base_values[a] : r.axes[a].values[p.index[a]]);
    if (!p.f.failure.empty()) return s + "  failed: " + p.f.failure + "\n";
    s += fmt::format(" {:>10} {:>10} {:>8} {:>9}\n", Num(p.f.busbw_gbs, 2),
                     Num(p.f.victim_p99_us, 3), p.f.pause_frames, p.f.ecn_marks);
    return s;
  };
  out += "Pareto front (busbw higher, victim p99, PAUSE frames and ECN marks lower):\n";
  out += header();
  for (size_t k : r.pareto) out += row(k, std::to_string(k));
  out += "\nBaseline and chosen point:\n";
  out += header();
  out += row(0, "base");
  out += row(r.chosen, std::to_string(r.chosen));
  out += "\nverdict: " + r.verdict + "\n";
  return out;
}

}  // namespace lossless::tune
