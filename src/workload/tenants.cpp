#include "workload/tenants.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace lossless::workload {
namespace {

constexpr uint64_t kPurpose = 0x74656e616e74ULL;  // "tenant"

// Exponential with mean `mean` (> 0), from one uniform draw.
double Exponential(sim::Rng& rng, double mean) {
  return -mean * std::log1p(-rng.Uniform());
}

}  // namespace

TenantTraffic::TenantTraffic(sim::Simulator& sim, fabric::Network& net, const TenantConfig& cfg)
    : sim_(sim), net_(net), cfg_(cfg) {
  if (!(cfg.load >= 0 && cfg.load <= 1))
    throw std::invalid_argument(fmt::format("tenants.load: expected 0 to 1, got {}", cfg.load));
  if (cfg.mean_burst <= 0)
    throw std::invalid_argument(
        fmt::format("tenants.burst: expected a size above zero, got {}", cfg.mean_burst));
  const uint32_t n = net.num_hosts();
  if (cfg.load == 0 || n < 2) return;
  const fabric::Framing& fr = net.config().framing;
  const double wire_per_payload =
      static_cast<double>(fr.WireBytes(fr.mtu_payload)) / static_cast<double>(fr.mtu_payload);
  hosts_.resize(n);
  for (uint32_t h = 0; h < n; ++h) {
    Host& host = hosts_[h];
    host.entity = sim.AddEntity();
    host.rng = sim.MakeRng(h, kPurpose);
    const double rate = static_cast<double>(net.topology().links[net.HostPort(h) / 2].rate.bps());
    // Offered payload per second = load x rate / 8 / wire_per_payload = mean_burst / gap.
    host.gap_ps = std::llround(static_cast<double>(cfg.mean_burst) * 8 * wire_per_payload /
                               (cfg.load * rate) * 1e12);
  }
  for (uint32_t h = 0; h < n; ++h) ScheduleNext(h);
}

void TenantTraffic::ScheduleNext(uint32_t h) {
  Host& host = hosts_[h];
  const int64_t gap = std::llround(Exponential(host.rng, static_cast<double>(host.gap_ps)));
  const units::Time at = sim_.Now() + units::Time::Ps(gap);
  if (at >= cfg_.until) return;
  sim_.Schedule(at, host.entity, this, 0, h);
}

void TenantTraffic::OnEvent(uint32_t /*kind*/, uint64_t arg) {
  const auto h = static_cast<uint32_t>(arg);
  Host& host = hosts_[h];
  auto dst = static_cast<uint32_t>(host.rng.Below(hosts_.size() - 1));
  if (dst >= h) ++dst;
  const int64_t bytes = std::max<int64_t>(
      1, std::llround(Exponential(host.rng, static_cast<double>(cfg_.mean_burst))));
  auto [it, fresh] = qps_.try_emplace(uint64_t{h} << 32 | dst, 0);
  if (fresh) {
    it->second = net_.AddQp(fabric::FlowSpec::Of(h, dst, 0));
    if (own_.size() <= it->second) own_.resize(it->second + 1, false);
    own_[it->second] = true;
  }
  if (!owned_.empty() && owned_[h] == 0) {
    ++replicated_events_;  // another rank's host: drawn and opened, not posted
  } else if (net_.Requester(it->second).messages_outstanding() >= cfg_.max_outstanding) {
    ++refused_;
  } else {
    net_.PostSend(it->second, bytes, 0);
    host.bytes += bytes;
    ++host.bursts;
  }
  ScheduleNext(h);
}

std::string TenantTraffic::ExportCounters() const {
  std::vector<int64_t> v;
  v.reserve(2 * hosts_.size() + 1);
  for (const Host& h : hosts_) {
    v.push_back(h.bytes);
    v.push_back(h.bursts);
  }
  v.push_back(refused_);
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
}

void TenantTraffic::ImportCounters(const std::vector<std::string>& per_rank) {
  const size_t n = 2 * hosts_.size() + 1;
  std::vector<int64_t> sum(n, 0);
  for (const std::string& b : per_rank) {
    if (b.size() != n * sizeof(int64_t))
      throw std::runtime_error("tenants: ranks exported counters of different sizes");
    std::vector<int64_t> v(n);
    std::memcpy(v.data(), b.data(), b.size());
    for (size_t i = 0; i < n; ++i) sum[i] += v[i];
  }
  for (size_t h = 0; h < hosts_.size(); ++h) {
    hosts_[h].bytes = sum[2 * h];
    hosts_[h].bursts = sum[2 * h + 1];
  }
  refused_ = sum[n - 1];
}

int64_t TenantTraffic::bytes_posted() const {
  int64_t total = 0;
  for (const Host& h : hosts_) total += h.bytes;
  return total;
}

int64_t TenantTraffic::bursts() const {
  int64_t total = 0;
  for (const Host& h : hosts_) total += h.bursts;
  return total;
}

}  // namespace lossless::workload
