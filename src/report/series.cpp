#include "report/series.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace lossless::report {

SeriesSampler::SeriesSampler(sim::Simulator& sim, const fabric::Network& net,
                             const SamplerConfig& config)
    : sim_(sim), net_(net), config_(config), entity_(sim.AddEntity()) {}

void SeriesSampler::AddPort(uint32_t p) {
  for (Kind k : {Kind::kQueue, Kind::kUtil, Kind::kPause, Kind::kCnp})
    sources_.push_back({k, p, 0, {}});
}

void SeriesSampler::AddFlow(uint32_t f, bool dcqcn) {
  sources_.push_back({Kind::kGoodput, f, 0, {}});
  if (dcqcn)
    for (Kind k : {Kind::kRate, Kind::kTarget, Kind::kAlpha}) sources_.push_back({k, f, 0, {}});
}

void SeriesSampler::Start() {
  if (config_.interval <= config_.stop) sim_.Schedule(config_.interval, entity_, this, 0, 0);
}

void SeriesSampler::OnEvent(uint32_t, uint64_t) {
  Sample();
  // Never keep an otherwise finished run alive: stop when nothing else is pending.
  const int64_t next = (k_ + 1) * config_.interval.ps();
  if (next <= config_.stop.ps() && sim_.pending() > 0)
    sim_.Schedule(units::Time::Ps(next), entity_, this, 0, 0);
}

void SeriesSampler::StartExternal(bool count_events) {
  count_events_ = count_events;
  if (config_.interval <= config_.stop) {
    next_ps_ = config_.interval.ps();
    next_key_ = sim_.DrawKey(entity_);
  }
}

void SeriesSampler::TakeSample(bool pending) {
  const int64_t at = next_ps_;
  Sample();
  if (count_events_) sim_.CountEvent(units::Time::Ps(at), next_key_, 0);
  const int64_t next = (k_ + 1) * config_.interval.ps();
  next_ps_ = INT64_MAX;
  if (next <= config_.stop.ps() && pending) {
    next_ps_ = next;
    next_key_ = sim_.DrawKey(entity_);
  }
}

SeriesSampler::SourceRef SeriesSampler::source(size_t i) const {
  const Source& s = sources_[i];
  const bool port = s.kind == Kind::kQueue || s.kind == Kind::kUtil || s.kind == Kind::kPause ||
                    s.kind == Kind::kCnp;
  const bool at_sender = s.kind == Kind::kRate || s.kind == Kind::kTarget || s.kind == Kind::kAlpha;
  return {port, at_sender, s.index};
}

std::string SeriesSampler::ExportValues() const {
  std::string out;
  for (const Source& s : sources_) {
    const uint64_t n = s.values.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    if (n > 0) out.append(reinterpret_cast<const char*>(s.values.data()), n * sizeof(double));
  }
  return out;
}

void SeriesSampler::ImportValues(const std::vector<std::string>& per_rank,
                                 const std::vector<int32_t>& owner) {
  std::vector<size_t> at(per_rank.size(), 0);
  for (size_t i = 0; i < sources_.size(); ++i) {
    for (size_t r = 0; r < per_rank.size(); ++r) {
      const std::string& b = per_rank[r];
      uint64_t n = 0;
      if (at[r] + sizeof n > b.size()) throw std::runtime_error("series: short gather");
      std::memcpy(&n, b.data() + at[r], sizeof n);
      at[r] += sizeof n;
      if (at[r] + n * sizeof(double) > b.size()) throw std::runtime_error("series: short gather");
      if (static_cast<int32_t>(r) == owner[i]) {
        sources_[i].values.resize(n);
        if (n > 0) std::memcpy(sources_[i].values.data(), b.data() + at[r], n * sizeof(double));
      }
      at[r] += n * sizeof(double);
    }
  }
}

void SeriesSampler::Sample() {
  const int64_t interval_ps = config_.interval.ps();
  const int64_t held = static_cast<int64_t>(sources_.size()) * (k_ + 1);
  if (held > config_.max_values) {
    // Bounded memory: end the run with an error rather than grow without limit.
    throw InputError(
        config_.where,
        fmt::format("expected at most {} series values in memory (series x samples), got {} "
                    "series x {} samples by {}: raise the interval, lower stop_time, or select "
                    "fewer with outputs.series.ports / outputs.series.flows",
                    config_.max_values, sources_.size(), k_ + 1,
                    units::FormatTime(units::Time::Ps((k_ + 1) * interval_ps))));
  }
  ++k_;
  const double iv = static_cast<double>(interval_ps);
  for (auto& src : sources_) {
    int64_t now_value = 0;
    double v = 0;
    switch (src.kind) {
      case Kind::kQueue:
        v = static_cast<double>(net_.QueueBytes(src.index, config_.data_class));
        break;
      case Kind::kUtil:
        now_value = net_.port_stats(src.index).busy_ps;
        v = static_cast<double>(now_value - src.prev) / iv;
        break;
      case Kind::kPause:
        now_value = static_cast<int64_t>(net_.port_stats(src.index).pause_tx);
        v = static_cast<double>(now_value - src.prev);
        break;
      case Kind::kCnp:
        now_value = static_cast<int64_t>(net_.port_stats(src.index).cnp_tx);
        v = static_cast<double>(now_value - src.prev);
        break;
      case Kind::kGoodput:
        // bytes x 8 / ps x 1000 = Gb/s
        now_value = net_.flows()[src.index].recv_bytes;
        v = static_cast<double>(now_value - src.prev) * 8000.0 / iv;
        break;
      case Kind::kRate:
        v = net_.ReactionPoint(src.index).rate_bps() / 1e9;
        break;
      case Kind::kTarget:
        v = net_.ReactionPoint(src.index).target_rate_bps() / 1e9;
        break;
      case Kind::kAlpha:
        v = net_.ReactionPoint(src.index).alpha();
        break;
    }
    src.prev = now_value;
    src.values.push_back(v);
  }
}

namespace {

// Name, unit and shape of each SeriesSampler::Kind, in enum order.
struct KindInfo {
  const char* name;
  const char* unit;
  bool integral;  // whole numbers
  bool port;      // of a port (else of a flow)
};
constexpr KindInfo kKinds[] = {{"queue_bytes", "B", true, true},
                               {"utilization", "fraction", false, true},
                               {"pause_frames", "frames", true, true},
                               {"cnps", "CNPs", true, true},
                               {"goodput_gbps", "Gb/s", false, false},
                               {"dcqcn_rate_gbps", "Gb/s", false, false},
                               {"dcqcn_target_gbps", "Gb/s", false, false},
                               {"dcqcn_alpha", "fraction", false, false}};

void Summarize(Series& x) {
  if (x.values.empty()) return;
  x.min = *std::min_element(x.values.begin(), x.values.end());
  x.max = *std::max_element(x.values.begin(), x.values.end());
  double sum = 0;
  for (double v : x.values) sum += v;
  x.mean = sum / static_cast<double>(x.values.size());
}
}  // namespace

SeriesResult SeriesSampler::Collect(const topology::Topology& topo, bool busy_only) {
  SeriesResult out;
  out.interval = config_.interval;
  out.samples = k_;
  std::vector<bool> quiet(net_.num_ports(), false);
  if (busy_only) {
    for (uint32_t p = 0; p < net_.num_ports(); ++p) {
      const auto& st = net_.port_stats(p);
      quiet[p] = st.tx_packets == 0 && st.pause_tx == 0;
      out.quiet_ports += quiet[p] ? 1 : 0;
    }
  }
  auto host_name = [&](uint32_t rank) { return topo.nodes[topo.hosts[rank]].name; };
  for (auto& src : sources_) {
    const KindInfo& info = kKinds[static_cast<size_t>(src.kind)];
    if (info.port && quiet[src.index]) continue;
    Series x;
    x.kind = info.name;
    x.unit = info.unit;
    x.integral = info.integral;
    if (info.port) {
      x.subject = net_.PortName(src.index);
    } else {
      const auto& f = net_.flows()[src.index].spec;
      x.subject = fmt::format("flow {} {}->{}", src.index, host_name(f.src), host_name(f.dst));
    }
    x.values = std::move(src.values);
    Summarize(x);
    out.list.push_back(std::move(x));
  }
  return out;
}

}  // namespace lossless::report
