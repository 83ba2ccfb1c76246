// A port's counters as reports read them: open intervals (paused,
// credit-starved, a frame in progress) closed at the current time, class
// counters summed into the port's, and a distributed run's merged record.
#include <algorithm>
#include <array>

#include "fabric/network.hpp"

namespace lossless::fabric {

int64_t Network::BusyPsUntilNow(uint32_t port) const {
  if (merged_) return merged_ports_[port].busy_ps;
  const Port& p = ports_[port];
  return std::max<int64_t>(0,
                           p.stats.busy_ps - std::max<int64_t>(0, p.busy_until - sim_.Now().ps()));
}

PortStats Network::port_stats(uint32_t port) const {
  if (merged_) return merged_ports_[port].stats;
  PortStats st = ports_[port].stats;
  if (ib_on_) {
    // A credit-starved interval still open counts up to now.
    // FCPs that took effect but are not yet settled count as IbSettle would.
    const IbPort& s = ib_[port];
    const int64_t now = sim_.Now().ps();
    std::array<int64_t, kMaxClasses> since{};
    for (int v = 0; v < kMaxClasses; ++v) since[v] = s.vls[v].starved_since;
    for (uint32_t i = 0; i < s.inbox.size && IbFcpDue(s.inbox.at(i)); ++i) {
      const flowctl::FcpInbound& f = s.inbox.at(i);
      if (!IbFcpValid(port, f)) continue;
      ++st.classes[f.vl].fcp_rx;
      if (since[f.vl] >= 0) st.classes[f.vl].credit_starved_ps += f.at - since[f.vl];
      since[f.vl] = -1;
    }
    for (int v = 0; v < kMaxClasses; ++v)
      if (since[v] >= 0) st.classes[v].credit_starved_ps += now - since[v];
  }
  // The port totals of the per-class counters are their sums; paused time
  // under global pause is the time the port was held (PausedTotal).
  for (const ClassStats& c : st.classes) {
    st.ecn_marks += c.ecn_marks;
    st.cnp_tx += c.cnp_tx;
    st.drops += c.drops;
    st.lossless_drops += c.lossless_drops;
    st.lossless_drops_after_restore += c.lossless_drops_after_restore;
    st.wd_drops += c.wd_drops;
    st.fcp_tx += c.fcp_tx;
    st.fcp_rx += c.fcp_rx;
    st.credit_starved_ps += c.credit_starved_ps;
  }
  st.paused_ps = PausedTotal([&](int c) { return st.classes[static_cast<size_t>(c)].paused_ps; });
  return st;
}

}  // namespace lossless::fabric
