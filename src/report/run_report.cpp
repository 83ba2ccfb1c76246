#include "report/run_report.hpp"

#include <fmt/format.h>

#include <cmath>

namespace lossless::report {

using units::FormatTime;

namespace {
double Us(units::Time t) {
  return static_cast<double>(t.ps()) / 1e6;
}
// Whole numbers as integers, the rest as the shortest round-trip decimal.
std::string Num(double v, bool integral) {
  if (integral) return fmt::format("{}", static_cast<int64_t>(std::llround(v)));
  return fmt::format("{}", v);
}

std::string SeriesText(const SeriesResult& s) {
  constexpr size_t kMaxLines = 16;
  std::string o = fmt::format("series     {} samples every {}; min / mean / max of each:\n",
                              s.samples, FormatTime(s.interval));
  size_t shown = 0, idle = 0;
  for (const auto& x : s.list) {
    if (x.max == 0 && x.min == 0) {
      ++idle;
      continue;
    }
    if (shown == kMaxLines) continue;
    ++shown;
    o += fmt::format("           {:<16} {:<28} {} / {} / {} {}\n", x.kind, x.subject,
                     Num(x.min, x.integral), fmt::format("{:.6g}", x.mean), Num(x.max, x.integral),
                     x.unit);
  }
  size_t active = s.list.size() - idle;
  if (active > shown) o += fmt::format("           ... {} more (JSON / CSV)\n", active - shown);
  if (idle > 0 || s.quiet_ports > 0) {
    o += fmt::format("           {} series all zero (in JSON / CSV); {} idle ports left out\n",
                     idle, s.quiet_ports);
  }
  return o;
}

// One line per (port, class) with activity, in port order, at most
// kMaxLines; the rest are counted.
std::string ClassText(const RunResult& r) {
  constexpr size_t kMaxLines = 20;
  size_t total = 0;
  for (const auto& p : r.ports) total += ActiveClasses(p.stats).size();
  if (total == 0) return {};
  std::string o =
      "per class  class  pause tx/rx  paused  credit-starved  ECN marks  CNPs  drops  lossless  "
      "watchdog  FCPs tx/rx\n";
  size_t shown = 0;
  for (const auto& p : r.ports) {
    for (int c : ActiveClasses(p.stats)) {
      if (shown == kMaxLines) break;
      ++shown;
      const fabric::ClassStats& cs = p.stats.classes[static_cast<size_t>(c)];
      o += fmt::format(
          "           {:>5}  {:>5}/{:<5}  {:>5.1f}%  {:>13.1f}%  {:>9}  {:>4}  {:>5}  {:>8}  {:>8} "
          " "
          "{:>5}/{:<5}  {}\n",
          c, cs.pause_tx, cs.pause_rx, 100 * FractionOfRun(cs.paused_ps, r),
          100 * FractionOfRun(cs.credit_starved_ps, r), cs.ecn_marks, cs.cnp_tx, cs.drops,
          cs.lossless_drops, cs.wd_drops, cs.fcp_tx, cs.fcp_rx, p.name);
    }
  }
  if (total > shown) o += fmt::format("           ... {} more (JSON)\n", total - shown);
  return o;
}

std::string Classes(uint8_t mask) {
  std::string o;
  for (unsigned m = mask; m != 0; m &= m - 1)
    o += fmt::format("{}{}", o.empty() ? "" : ",", __builtin_ctz(m));
  return o;
}

// faults.pause_inject / cnp_inject: what was injected and what it did.
std::string InjectText(const RunResult& r) {
  std::string o;
  for (const auto& p : r.pause_injections) {
    std::string paused;
    for (const auto& [c, ps] : p.receiver_paused_ps)
      paused += fmt::format("; {} class {} paused {} ({} ps) in the run", p.receiver, c,
                            FormatTime(units::Time::Ps(ps)), ps);
    o +=
        fmt::format("inject     PFC frame {} at {}: class-enable {} (0x{:02x}), quanta {} = {}{}\n",
                    p.port, FormatTime(p.at), Classes(p.class_enable), p.class_enable, p.quanta,
                    p.quanta == 0 ? "XON" : FormatTime(p.pause), paused);
  }
  for (const auto& c : r.cnp_injections) {
    o += fmt::format(
        "inject     {} CNP{} to {} from {} to {}; at the end rc {} Gb/s, rt {} Gb/s, alpha {}, "
        "cuts {}, increase events {}\n",
        c.cnps, c.cnps == 1 ? "" : "s", c.subject, FormatTime(c.first), FormatTime(c.last),
        c.rc_gbps, c.rt_gbps, c.alpha, c.cuts, c.increase_events);
  }
  return o;
}

}  // namespace

std::string SeriesCsv(const SeriesResult& s) {
  std::string o = "time_ps";
  for (const auto& x : s.list) o += fmt::format(",{}:{}", x.kind, x.subject);
  o += "\n";
  for (int64_t k = 0; k < s.samples; ++k) {
    o += fmt::format("{}", (k + 1) * s.interval.ps());
    for (const auto& x : s.list) {
      o += ',';
      o += Num(x.values[static_cast<size_t>(k)], x.integral);
    }
    o += '\n';
  }
  return o;
}

std::string RunText(const RunResult& r, bool timing) {
  std::string o;
  o += fmt::format("scenario   {} (preset {}, seed {})\n", r.name, r.preset, r.seed);
  o += fmt::format("topology   {}; {} switches; routing {}\n", r.topology, r.switches, r.routing);
  o += fmt::format("result     {}: {}/{} flows done, simulated {}\n", r.stop_reason, r.flows_done,
                   r.flows, FormatTime(r.sim_time));
  if (r.flows_done > 0) {
    o += fmt::format(
        "fct        min {:.3f} us  median {:.3f} us  p99 {:.3f} us  max {:.3f} us  mean {:.3f} "
        "us\n",
        Us(r.fct.min), Us(r.fct.median), Us(r.fct.p99), Us(r.fct.max), Us(r.fct.mean));
    o += fmt::format("latency    max one-way packet latency {:.3f} us\n", Us(r.max_packet_latency));
  } else if (r.flows > 0) {
    o += "fct        no flow finished\n";
  }
  if (r.flows_unfinished > 0) {
    o += fmt::format("unfinished {} flow{}, {} bytes not delivered\n", r.flows_unfinished,
                     r.flows_unfinished == 1 ? "" : "s", r.bytes_left);
  }
  o += fmt::format(
      "links      utilization mean {:.1f}%  max {:.1f}% (over link directions that carried "
      "traffic)\n",
      100 * r.mean_link_utilization, 100 * r.max_link_utilization);
  for (const auto& l : r.busiest) {
    o += fmt::format("           {:>6.1f}%  {}\n", 100 * l.utilization, l.name);
  }
  o += fmt::format("drops      {} (lossless class: {}); ECN marks {}\n", r.drops, r.lossless_drops,
                   r.ecn_marks);
  if (r.ib_credits) {
    o += fmt::format(
        "ib credits {} flow-control packets; most credit-starved: {:.1f}% of the time{}\n",
        r.fcp_frames, 100 * r.max_credit_starved_fraction,
        r.most_credit_starved.empty() ? "" : " (" + r.most_credit_starved + ")");
  } else {
    o += fmt::format("pfc        {} PAUSE frames; most paused: {:.1f}% of the time{}\n",
                     r.pause_frames, 100 * r.max_paused_fraction,
                     r.most_paused.empty() ? "" : " (" + r.most_paused + ")");
    if (r.pfc_headroom > 0) {
      o += fmt::format("           headroom {} B above XOFF ({})\n", r.pfc_headroom,
                       r.pfc_headroom_basis);
    }
  }
  if (r.cc != "none") {
    o += fmt::format("cc         {}: {} {} sent\n", r.cc, r.cnps,
                     r.cc == "ib-cc" ? "BECNs" : "CNPs");
  }
  if (r.transport == "rc" || r.link_losses > 0) {
    o += fmt::format(
        "transport  {}: {} frames lost on links; {} data packets resent, {} NAKs, {} "
        "ACK timeouts\n",
        r.transport, r.link_losses, r.retx_packets, r.naks, r.ack_timeouts);
  }
  if (!r.qp_failure.empty()) o += "QP FAILED  " + r.qp_failure + "\n";
  o += InjectText(r);
  if (r.watchdog_actions > 0) {
    o += fmt::format(
        "watchdog   {} PFC watchdog actions, first at {}; {} packets dropped by it; {} lossless "
        "drops after a watchdog restore\n",
        r.watchdog_actions, FormatTime(r.watchdog_first), r.watchdog_drops,
        r.lossless_drops_after_restore);
    for (const auto& p : r.ports) {
      if (p.stats.wd_actions == 0) continue;
      o += fmt::format("           {} actions (first at {}), {} drops  {}\n", p.stats.wd_actions,
                       FormatTime(units::Time::Ps(p.stats.wd_first_action_ps)), p.stats.wd_drops,
                       p.name);
    }
  }
  for (const auto& p : r.ports) {
    const fabric::PortStats& st = p.stats;
    if (st.pause_storm_warnings + st.pause_storm_errors + st.rx_stall_drops == 0) continue;
    o += fmt::format(
        "nic stall  {}: tx_pause_storm_warning_events {}  tx_pause_storm_error_events {}  "
        "stalled-receive drops {}\n",
        p.name, st.pause_storm_warnings, st.pause_storm_errors, st.rx_stall_drops);
  }
  o += ClassText(r);
  if (r.deadlock.enabled) {
    if (r.deadlock.cycle.empty()) {
      o += "deadlock   none detected\n";
    } else {
      std::string cycle;
      for (const auto& h : r.deadlock.cycle) cycle += h + " -> ";
      cycle += r.deadlock.cycle.front();
      o += fmt::format(
          "DEADLOCK   PFC deadlock formed at {} (confirmed at {}), {} in this run: {}\n",
          FormatTime(r.deadlock.formed), FormatTime(r.deadlock.detected), r.deadlock.count, cycle);
    }
  }
  if (r.lossless_drops > r.lossless_drops_after_restore) {
    o += "WARNING    lossless-class drops: PFC headroom (or the buffer) is too small for this "
         "fabric\n";
  }
  if (r.lossless_drops_after_restore > 0) {
    o += "WARNING    lossless-class drops after PFC watchdog restores: a restored queue sends "
         "until the next PAUSE refresh reaches it (docs/deadlock.md#the-watchdog-restore-hazard)\n";
  }
  for (const auto& w : r.warnings) o += "WARNING    " + w + "\n";
  if (r.series.interval.ps() > 0) o += SeriesText(r.series);
  o += fmt::format(
      "totals     packets {}  packet-hops {}  events {}  peak packets alive {} ({} B each)\n",
      r.packets, r.packet_hops, r.events, r.peak_packets_alive, r.bytes_per_packet);
  if (timing) {
    o += fmt::format(
        "timing     build {:.3f} s  run {:.3f} s  {:.3g} packet-hops per wall second  peak RSS "
        "{:.1f} MB\n",
        r.timing.build_s, r.timing.run_s, r.timing.packet_hops_per_s, r.timing.peak_rss_mb);
  }
  return o;
}

nlohmann::ordered_json RunJson(const RunResult& r, bool timing) {
  nlohmann::ordered_json j;
  j["schema"] = "lossless.run/2";
  j["scenario"] = r.name;
  j["preset"] = r.preset;
  j["seed"] = r.seed;
  j["topology"] = {{"description", r.topology},
                   {"hosts", r.hosts},
                   {"switches", r.switches},
                   {"links", r.links},
                   {"routing", r.routing}};
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.parameters) params[k] = v;
  j["parameters"] = std::move(params);
  j["result"] = r.stop_reason;
  j["interrupted"] = r.interrupted;
  j["sim_time_ps"] = r.sim_time.ps();
  j["flows"] = {{"total", r.flows},
                {"done", r.flows_done},
                {"unfinished", r.flows_unfinished},
                {"bytes_left", r.bytes_left}};
  // No finished flow, no FCT: null, never 0 (docs/errors.md).
  if (r.flows_done > 0) {
    j["fct_us"] = {{"min", Us(r.fct.min)},
                   {"median", Us(r.fct.median)},
                   {"p99", Us(r.fct.p99)},
                   {"max", Us(r.fct.max)},
                   {"mean", Us(r.fct.mean)}};
  } else {
    j["fct_us"] = nullptr;
  }
  j["max_packet_latency_us"] = Us(r.max_packet_latency);
  if (r.per_flow_listed) {
    nlohmann::ordered_json flows = nlohmann::ordered_json::array();
    for (const auto& f : r.per_flow) {
      flows.push_back({{"src", f.src},
                       {"dst", f.dst},
                       {"bytes", f.bytes},
                       {"start_ps", f.start.ps()},
                       {"fct_ps", f.done ? nlohmann::ordered_json(f.fct.ps()) : nullptr},
                       {"bytes_left", f.bytes_left}});
    }
    j["per_flow"] = std::move(flows);
  } else {
    j["per_flow"] = nullptr;  // more flows than outputs.per_flow_limit
  }
  nlohmann::ordered_json busiest = nlohmann::ordered_json::array();
  for (const auto& l : r.busiest)
    busiest.push_back({{"link", l.name}, {"utilization", l.utilization}});
  j["links"] = {{"mean_utilization", r.mean_link_utilization},
                {"max_utilization", r.max_link_utilization},
                {"busiest", busiest}};
  j["drops"] = {{"total", r.drops},
                {"lossless", r.lossless_drops},
                {"lossless_after_watchdog_restore", r.lossless_drops_after_restore}};
  j["ecn_marks"] = r.ecn_marks;
  if (r.transport == "rc" || r.link_losses > 0) {
    j["transport"] = {{"kind", r.transport},
                      {"link_losses", r.link_losses},
                      {"retransmitted_packets", r.retx_packets},
                      {"naks", r.naks},
                      {"ack_timeouts", r.ack_timeouts}};
    if (!r.qp_failure.empty()) j["transport"]["qp_failure"] = r.qp_failure;
  }
  j["cc"] = {{"kind", r.cc}, {"notifications", r.cnps}};
  j["pfc"] = {{"pause_frames", r.pause_frames},
              {"max_paused_fraction", r.max_paused_fraction},
              {"most_paused", r.most_paused}};
  if (r.pfc_headroom > 0) {
    j["pfc"]["headroom_bytes"] = r.pfc_headroom;
    j["pfc"]["headroom_basis"] = r.pfc_headroom_basis;
  } else {
    j["pfc"]["headroom_bytes"] = nullptr;
    j["pfc"]["headroom_basis"] = nullptr;
  }
  if (r.ib_credits) {
    j["ib_credits"] = {{"flow_control_packets", r.fcp_frames},
                       {"max_credit_starved_fraction", r.max_credit_starved_fraction},
                       {"most_credit_starved", r.most_credit_starved}};
  }
  j["warnings"] = r.warnings;
  nlohmann::ordered_json ports = nlohmann::ordered_json::array();
  for (const auto& p : r.ports) {
    const fabric::PortStats& st = p.stats;
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (int c : ActiveClasses(st)) {
      const fabric::ClassStats& cs = st.classes[static_cast<size_t>(c)];
      classes.push_back({{"class", c},
                         {"pause_tx", cs.pause_tx},
                         {"pause_rx", cs.pause_rx},
                         {"paused_fraction", FractionOfRun(cs.paused_ps, r)},
                         {"credit_starved_fraction", FractionOfRun(cs.credit_starved_ps, r)},
                         {"ecn_marks", cs.ecn_marks},
                         {"cnps", cs.cnp_tx},
                         {"drops", cs.drops},
                         {"lossless_drops", cs.lossless_drops},
                         {"watchdog_drops", cs.wd_drops},
                         {"fcp_tx", cs.fcp_tx},
                         {"fcp_rx", cs.fcp_rx}});
    }
    ports.push_back({{"link", p.name},
                     {"pause_tx", st.pause_tx},
                     {"pause_rx", st.pause_rx},
                     {"paused_fraction", FractionOfRun(st.paused_ps, r)},
                     {"ecn_marks", st.ecn_marks},
                     {"drops", st.drops},
                     {"lossless_drops", st.lossless_drops},
                     {"cnps", st.cnp_tx},
                     {"fcp_tx", st.fcp_tx},
                     {"fcp_rx", st.fcp_rx},
                     {"credit_starved_fraction", FractionOfRun(st.credit_starved_ps, r)},
                     {"watchdog_actions", st.wd_actions},
                     {"watchdog_drops", st.wd_drops},
                     {"watchdog_first_action_ps", st.wd_actions > 0 ? st.wd_first_action_ps : -1},
                     {"rx_stall_drops", st.rx_stall_drops},
                     {"tx_pause_storm_warning_events", st.pause_storm_warnings},
                     {"tx_pause_storm_error_events", st.pause_storm_errors},
                     {"classes", classes}});
  }
  j["ports"] = ports;
  j["pfc_watchdog"] = {
      {"actions", r.watchdog_actions},
      {"drops", r.watchdog_drops},
      {"lossless_drops_after_restore", r.lossless_drops_after_restore},
      {"first_action_ps", r.watchdog_actions > 0 ? r.watchdog_first.ps() : int64_t{-1}}};
  j["nic_stall"] = {{"pause_storm_error_events", r.pause_storm_errors},
                    {"rx_stall_drops", r.rx_stall_drops}};
  if (r.deadlock.enabled) {
    j["deadlock"] = {
        {"detected", !r.deadlock.cycle.empty()},
        {"count", r.deadlock.count},
        {"formed_ps", r.deadlock.cycle.empty() ? int64_t{-1} : r.deadlock.formed.ps()},
        {"confirmed_ps", r.deadlock.cycle.empty() ? int64_t{-1} : r.deadlock.detected.ps()},
        {"cycle", r.deadlock.cycle}};
  }
  if (!r.pause_injections.empty() || !r.cnp_injections.empty()) {
    nlohmann::ordered_json pauses = nlohmann::ordered_json::array();
    for (const auto& p : r.pause_injections) {
      nlohmann::ordered_json paused = nlohmann::ordered_json::array();
      for (const auto& [c, ps] : p.receiver_paused_ps)
        paused.push_back({{"class", c}, {"paused_ps", ps}});
      pauses.push_back({{"link", p.port},
                        {"at_ps", p.at.ps()},
                        {"class_enable", p.class_enable},
                        {"quanta", p.quanta},
                        {"pause_ps", p.pause.ps()},
                        {"receiver", p.receiver},
                        {"receiver_paused", paused}});
    }
    nlohmann::ordered_json cnps = nlohmann::ordered_json::array();
    for (const auto& c : r.cnp_injections) {
      cnps.push_back({{"flow", c.flow},
                      {"subject", c.subject},
                      {"cnps", c.cnps},
                      {"first_ps", c.first.ps()},
                      {"last_ps", c.last.ps()},
                      {"rc_gbps", c.rc_gbps},
                      {"rt_gbps", c.rt_gbps},
                      {"alpha", c.alpha},
                      {"cuts", c.cuts},
                      {"increase_events", c.increase_events}});
    }
    j["injections"] = {{"pause", pauses}, {"cnp", cnps}};
  }
  if (r.series.interval.ps() > 0) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& x : r.series.list) {
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      for (double v : x.values) {
        if (x.integral) {
          values.push_back(static_cast<int64_t>(std::llround(v)));
        } else {
          values.push_back(v);
        }
      }
      list.push_back({{"kind", x.kind},
                      {"subject", x.subject},
                      {"unit", x.unit},
                      {"min", x.min},
                      {"mean", x.mean},
                      {"max", x.max},
                      {"values", values}});
    }
    j["series"] = {{"interval_ps", r.series.interval.ps()},
                   {"samples", r.series.samples},
                   {"first_sample_ps", r.series.interval.ps()},
                   {"idle_ports_left_out", r.series.quiet_ports},
                   {"list", list}};
  }
  j["totals"] = {{"packets", r.packets},
                 {"packet_hops", r.packet_hops},
                 {"events", r.events},
                 {"peak_packets_alive", r.peak_packets_alive},
                 {"bytes_per_packet", r.bytes_per_packet}};
  if (timing) {
    j["timing"] = {{"build_s", r.timing.build_s},
                   {"run_s", r.timing.run_s},
                   {"packet_hops_per_s", r.timing.packet_hops_per_s},
                   {"peak_rss_mb", r.timing.peak_rss_mb}};
  }
  return j;
}

}  // namespace lossless::report
