// The chosen settings of `lossless tune` as vendor configuration snippets
// (docs/tune.md#snippets). Each states the chosen ECN thresholds on the
// lossless priority's queue and the PFC settings the tuned runs used (as the
// starting fabric had them), in the syntax the QoS audit reads
// (docs/audit-qos.md#input-formats), so `lossless audit qos` and
// `lossless scenario from-qos` read them back.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "audit/qos/qos_rules.hpp"
#include "base/error.hpp"
#include "tune/tune.hpp"

namespace lossless::tune {
namespace {

using nlohmann::ordered_json;

// What the snippets state, from the chosen fabric.
struct Settings {
  int priority = 3;
  int64_t xoff = 0, headroom = 0, buffer = 0;
  int64_t xon = 0;  // the resume threshold the runs used (bytes)
  int64_t sim_headroom =
      0;  // the simulator's (MTU of the fabric); `headroom` is what the snippets state
  int64_t rate_gbps = 0;
  std::string cable_m;  // "" when the fabric gives a link delay instead
  bool watchdog = false;
  int64_t kmin = 0, kmax = 0;
  double pmax = 0;
  cc::DcqcnParams dcqcn;
};

std::string Resolved(const scenario::Scenario& s, const std::string& key) {
  for (const auto& [k, v] : s.resolved)
    if (k == key) return v;
  return "";
}

Settings Of(const scenario::Scenario& s) {
  Settings x;
  x.priority = s.net.nic.data_class;
  x.xoff = s.net.pfc.xoff.count();
  {
    std::string xon = Resolved(s, "fabric.pfc.xon");
    if (!xon.empty() && xon.back() == 'B') xon.pop_back();
    x.xon = xon.empty() ? 0 : std::stoll(xon);
  }
  x.headroom = s.net.pfc.headroom.count();
  x.buffer = s.net.sw.buffer.count();
  x.rate_gbps = s.clos.link_rate.bps() / 1'000'000'000;
  std::string cable = Resolved(s, "fabric.cable_length");
  if (!cable.empty() && cable.back() == 'm') {
    cable.pop_back();
    x.cable_m = cable;
  }
  x.watchdog = s.net.pfc.watchdog.enabled;
  // The snippets state at least the headroom the QoS audit asks for
  // (docs/audit-qos.md#headroom-formula-and-defaults: jumbo frames of 9,216 B,
  // where the simulated fabric's MTU may be smaller). More headroom changes
  // nothing in a run without lossless drops; the round trip checks it.
  x.sim_headroom = x.headroom;
  if (x.rate_gbps > 0) {
    namespace q = audit::qos;
    const double cable = x.cable_m.empty() ? 0.0 : std::stod(x.cable_m);
    const units::Time t_resp =
        units::Time::Ps(q::DefaultResponseBits(x.rate_gbps) * 1000 / x.rate_gbps);
    x.headroom =
        std::max(x.headroom, q::RequiredHeadroomBytes(x.rate_gbps, cable, q::kDefaultMtuBytes,
                                                      q::kDefaultPhyDelay, t_resp));
  }
  const auto& e = s.net.sw.ecn[static_cast<size_t>(x.priority)];
  x.kmin = e.kmin.count();
  x.kmax = e.kmax.count();
  x.pmax = e.pmax;
  x.dcqcn = s.net.dcqcn_params;
  return x;
}

std::string Pct(double fraction) {
  return fmt::format("{:g}", std::round(fraction * 100 * 1000) / 1000);
}

// The comment every snippet starts with, one line per entry, without the
// comment marker.
std::vector<std::string> Header(const Result& r, const Options& o, const Settings& x, int64_t nodes,
                                const std::string& what) {
  const Figures& b = r.points[0].f;
  const Figures& c = r.points[r.chosen].f;
  const Target& t = o.target;
  auto change = [](double from, double to) {
    return from > 0 ? fmt::format("{:+.1f} %", 100.0 * (to / from - 1)) : std::string("n/a");
  };
  std::vector<std::string> h = {
      fmt::format("lossless tune: {} for fabric {}, {} nodes ({})", what, o.fabric, nodes,
                  r.goal_met ? "goal met" : "goal not met, see tune.json"),
      fmt::format(
          "Tuned for: an incast of {} senders x {} B into one host with a victim flow beside it "
          "(PAUSE frames, victim probe p99)",
          t.incast_senders, t.incast_bytes),
      fmt::format(
          "and a {}-B all-reduce (busbw), busbw at most {:g} % below the starting settings.",
          t.allreduce_bytes, t.max_busbw_loss_pct),
      fmt::format(
          "Predicted effect (simulated, against the starting settings): PAUSE frames {} -> {}, "
          "ECN marks {} -> {},",
          b.pause_frames, c.pause_frames, b.ecn_marks, c.ecn_marks),
      fmt::format(
          "victim p99 {:.3f} -> {:.3f} us ({}), all-reduce busbw {:.2f} -> {:.2f} GB/s ({}).",
          b.victim_p99_us, c.victim_p99_us, change(b.victim_p99_us, c.victim_p99_us), b.busbw_gbs,
          c.busbw_gbs, change(b.busbw_gbs, c.busbw_gbs)),
      fmt::format(
          "ECN on the queue of priority {}: Kmin {} B, Kmax {} B, Pmax {} %. PFC on priority {} "
          "as the starting settings had it:",
          x.priority, x.kmin, x.kmax, Pct(x.pmax), x.priority),
      fmt::format("trigger (XOFF) {} B, headroom {} B (the simulated runs: {} B; this is what "
                  "9,216-B frames "
                  "need), pool {} B. NIC side: nic-dcqcn.txt.",
                  x.xoff, x.headroom, x.sim_headroom, x.buffer),
  };
  return h;
}

std::string Commented(const std::vector<std::string>& lines, const std::string& mark) {
  std::string o;
  for (const auto& l : lines) o += mark + " " + l + "\n";
  return o;
}

std::string Sonic(const std::vector<std::string>& head, const Settings& x) {
  const std::string p = std::to_string(x.priority);
  const std::string port = "Ethernet0";
  ordered_json j;
  j["BUFFER_POOL"]["ingress_lossless_pool"] = {
      {"mode", "static"}, {"size", std::to_string(x.buffer)}, {"type", "ingress"}};
  const std::string prof = "pg_lossless_tuned_profile";
  j["BUFFER_PROFILE"][prof] = {{"pool", "ingress_lossless_pool"},
                               {"xoff", std::to_string(x.headroom)},
                               {"static_th", std::to_string(x.xoff)}};
  j["BUFFER_PG"][port + "|" + p] = {{"profile", prof}};
  j["WRED_PROFILE"]["ROCE_LOSSLESS_TUNED"] = {{"wred_green_enable", "true"},
                                              {"ecn", "ecn_all"},
                                              {"green_min_threshold", std::to_string(x.kmin)},
                                              {"green_max_threshold", std::to_string(x.kmax)},
                                              {"green_drop_probability", Pct(x.pmax)}};
  j["SCHEDULER"]["scheduler.data"] = {{"type", "DWRR"}, {"weight", "50"}};
  j["SCHEDULER"]["scheduler.cnp"] = {{"type", "STRICT"}};
  j["QUEUE"][port + "|" + p] = {{"scheduler", "scheduler.data"},
                                {"wred_profile", "ROCE_LOSSLESS_TUNED"}};
  j["QUEUE"][port + "|6"] = {{"scheduler", "scheduler.cnp"}};
  ordered_json dscp = ordered_json::object();
  dscp["26"] = p;
  dscp["48"] = "6";
  j["DSCP_TO_TC_MAP"]["ROCE"] = dscp;
  ordered_json tcq = ordered_json::object();
  for (int i = 0; i < 8; ++i) tcq[std::to_string(i)] = std::to_string(i);
  j["TC_TO_QUEUE_MAP"]["ROCE"] = tcq;
  j["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"] = tcq;
  j["PORT_QOS_MAP"][port] = {{"dscp_to_tc_map", "ROCE"},
                             {"tc_to_queue_map", "ROCE"},
                             {"tc_to_pg_map", "ROCE"},
                             {"pfc_enable", p}};
  if (x.watchdog)
    j["PFC_WD"][port] = {
        {"action", "drop"}, {"detection_time", "200"}, {"restoration_time", "200"}};
  j["PORT"][port] = {{"speed", std::to_string(x.rate_gbps * 1000)}};
  if (!x.cable_m.empty()) j["CABLE_LENGTH"]["AZURE"][port] = x.cable_m + "m";
  std::vector<std::string> h = head;
  h.emplace_back(
      "SONiC config_db.json fragment for one port (Ethernet0); repeat its keys for every RoCE "
      "port.");
  h.emplace_back("Remove these '#' lines before `config load` (JSON has no comments).");
  return Commented(h, "#") + j.dump(4) + "\n";
}

std::string Nvue(const std::vector<std::string>& head, const Settings& x) {
  std::string o = Commented(head, "#");
  o += "# Cumulus Linux NVUE: `nv set qos roce` then the tuned ECN profile on traffic class " +
       std::to_string(x.priority) + ".\n";
  o += "# NVUE states the PFC profile's cable length and xoff-threshold (the headroom, as the QoS "
       "audit\n"
       "# reads it) and the port speed, but no PFC trigger in bytes (the switch derives it): the "
       "audit\n"
       "# cannot set Kmin and Kmax against the trigger (ecn.kmin-ratio, ecn.kmax-below-pfc "
       "indeterminate).\n";
  o += "nv set qos roce mode lossless\n";
  o += fmt::format("nv set qos pfc default-global switch-priority {}\n", x.priority);
  if (!x.cable_m.empty())
    o += fmt::format("nv set qos pfc default-global cable-length {}\n", x.cable_m);
  o += fmt::format("nv set qos pfc default-global xoff-threshold {}\n", x.headroom);
  const std::string tc =
      fmt::format("nv set qos congestion-control default-global traffic-class {}", x.priority);
  o += tc + " ecn enable\n";
  o += fmt::format("{} min-threshold {}\n", tc, x.kmin);
  o += fmt::format("{} max-threshold {}\n", tc, x.kmax);
  o += fmt::format("{} probability {}\n", tc, Pct(x.pmax));
  o += fmt::format("nv set interface swp1-64 link speed {}G\n", x.rate_gbps);
  if (x.watchdog) o += "nv set interface swp1-64 qos pfc-watchdog\n";
  o += "nv config apply\n";
  return o;
}

std::string Eos(const std::vector<std::string>& head, const Settings& x) {
  std::string o = Commented(head, "!");
  o += "! Arista EOS: one interface shown; apply the same block to every RoCE port.\n";
  o += "! EOS's interface QoS states no PFC trigger and no headroom in bytes (the platform sets "
       "them): the audit\n"
       "! leaves pfc.headroom, ecn.kmin-ratio and ecn.kmax-below-pfc indeterminate.\n";
  o += fmt::format("qos map dscp 26 to traffic-class {}\n", x.priority);
  o += "qos map dscp 48 to traffic-class 6\n";
  o += "!\n";
  o += "interface Ethernet1/1\n";
  o += fmt::format("   speed {}g\n", x.rate_gbps);
  o += "   priority-flow-control on\n";
  o += fmt::format("   priority-flow-control priority {} no-drop\n", x.priority);
  if (x.watchdog) o += "   priority-flow-control pause watchdog\n";
  o += "   !\n";
  o += fmt::format("   tx-queue {}\n", x.priority);
  o += fmt::format(
      "      random-detect ecn minimum-threshold {} bytes maximum-threshold {} bytes "
      "max-mark-probability {}\n",
      x.kmin, x.kmax, Pct(x.pmax));
  o += "   !\n";
  o += "   tx-queue 6\n";
  o += "      priority strict\n";
  o += "!\n";
  return o;
}

std::string Nxos(const std::vector<std::string>& head, const Settings& x) {
  std::string o = Commented(head, "!");
  o += "! Cisco NX-OS: classification, queuing (ECN) and network-qos (PFC) policies, applied "
       "system-wide.\n";
  o += "! The no-drop class states its buffer (pause-threshold = PFC trigger, resume-threshold = "
       "XON,\n"
       "! buffer-size = trigger + headroom, bytes). NX-OS states no cable length in its QoS "
       "configuration:\n";
  o += x.cable_m.empty()
           ? std::string("! give it to the audit (`lossless audit qos FILE --cable-m METRES`).\n")
           : fmt::format("! give it to the audit: `lossless audit qos FILE --cable-m {}`.\n",
                         x.cable_m);
  o += "class-map type qos match-all RoCE\n  match dscp 26\n";
  o += "class-map type qos match-all CNP\n  match dscp 48\n";
  o += "policy-map type qos QOS_CLASSIFICATION\n";
  o += fmt::format("  class RoCE\n    set qos-group {}\n", x.priority);
  o += "  class CNP\n    set qos-group 7\n";
  o += "policy-map type queuing QOS_EGRESS_PORT\n";
  o += "  class type queuing c-out-8q-q7\n    priority level 1\n";
  o += fmt::format("  class type queuing c-out-8q-q{}\n", x.priority);
  o += "    bandwidth remaining percent 50\n";
  o += fmt::format(
      "    random-detect minimum-threshold {} bytes maximum-threshold {} bytes drop-probability {} "
      "weight 0 ecn\n",
      x.kmin, x.kmax, Pct(x.pmax));
  o += "  class type queuing c-out-8q-q-default\n    bandwidth remaining percent 50\n";
  o += "policy-map type network-qos QOS_NETWORK\n";
  // The no-drop class's buffer (Nexus 9000): the trigger, the resume
  // threshold and the headroom above the trigger, in bytes.
  o += fmt::format(
      "  class type network-qos c-8q-nq{}\n    mtu 9216\n    pause buffer-size {} pause-threshold "
      "{} "
      "resume-threshold {} pfc-cos {}\n",
      x.priority, x.xoff + x.headroom, x.xoff, x.xon, x.priority);
  o += "system qos\n";
  o += "  service-policy type network-qos QOS_NETWORK\n";
  o += "  service-policy type queuing output QOS_EGRESS_PORT\n";
  o += "  service-policy type qos input QOS_CLASSIFICATION\n\n";
  o += "interface Ethernet1/1\n";
  o += "  priority-flow-control mode on\n";
  if (x.watchdog) o += "  priority-flow-control watch-dog-interval on\n";
  o += fmt::format("  speed {}\n", x.rate_gbps * 1000);
  return o;
}

std::string Junos(const std::vector<std::string>& head, const Settings& x) {
  std::string o = Commented(head, "#");
  // Junos states ECN thresholds as fill levels: percentages of the queue's
  // buffer. They are written as shares of the PFC trigger (the buffer the
  // audit and from-qos take for the queue, docs/audit-qos.md), with as many
  // decimals as it takes to give the same bytes back.
  auto fill = [&](int64_t bytes) {
    const double exact = 100.0 * static_cast<double>(bytes) / static_cast<double>(x.xoff);
    for (int d = 0; d < 6; ++d) {
      const double scale = std::pow(10.0, d);
      const double v = std::round(exact * scale) / scale;
      if (std::llround(v / 100.0 * static_cast<double>(x.xoff)) == bytes) return v;
    }
    return exact;
  };
  const double kmin_pct = fill(x.kmin);
  const double kmax_pct = fill(x.kmax);
  o += fmt::format(
      "# Junos states ECN thresholds as fill levels, percentages of the queue's buffer (Juniper, "
      "\"RED Drop\n"
      "# Profiles Overview\"): {:g} % and {:g} % below are Kmin ({} B) and Kmax ({} B) as shares "
      "of the PFC\n"
      "# trigger ({} B), the buffer lossless takes for the queue (audit qos, scenario from-qos).\n"
      "# Check the lossless queue's buffer on your platform (`show class-of-service "
      "shared-buffer`) and scale.\n"
      "# Junos states no headroom in bytes (the switch derives it): the audit leaves pfc.headroom "
      "and\n"
      "# ecn.kmax-below-pfc (fill levels are shares, not bytes) indeterminate.\n",
      kmin_pct, kmax_pct, x.kmin, x.kmax, x.xoff);
  const int p = x.priority;
  o += fmt::format(
      "set class-of-service forwarding-classes class NO-LOSS queue-num {} no-loss pfc-priority "
      "{}\n",
      p, p);
  o += "set class-of-service forwarding-classes class CNP queue-num 6\n";
  o += fmt::format(
      "set class-of-service classifiers dscp ROCE forwarding-class NO-LOSS loss-priority low "
      "code-points 011010\n");
  o += "set class-of-service classifiers dscp ROCE forwarding-class CNP loss-priority low "
       "code-points 110000\n";
  o += fmt::format(
      "set class-of-service congestion-notification-profile ROCE-CNP input dscp code-point 011010 "
      "pfc\n");
  o += fmt::format(
      "set class-of-service drop-profiles DP-TUNED interpolate fill-level [ {:g} {:g} ]\n",
      kmin_pct, kmax_pct);
  o += fmt::format(
      "set class-of-service drop-profiles DP-TUNED interpolate drop-probability [ 0 {} ]\n",
      Pct(x.pmax));
  o += "set class-of-service schedulers S-NO-LOSS drop-profile-map loss-priority any protocol any "
       "drop-profile "
       "DP-TUNED\n";
  o += "set class-of-service schedulers S-NO-LOSS explicit-congestion-notification\n";
  o += "set class-of-service schedulers S-CNP priority strict-high\n";
  o += "set class-of-service scheduler-maps SM-ROCE forwarding-class NO-LOSS scheduler S-NO-LOSS\n";
  o += "set class-of-service scheduler-maps SM-ROCE forwarding-class CNP scheduler S-CNP\n";
  o += "set class-of-service interfaces et-0/0/0 congestion-notification-profile ROCE-CNP\n";
  o += "set class-of-service interfaces et-0/0/0 scheduler-map SM-ROCE\n";
  o += "set class-of-service interfaces et-0/0/0 classifiers dscp ROCE\n";
  if (x.watchdog)
    o += "set class-of-service congestion-notification-profile ROCE-CNP pfc-watchdog\n";
  return o;
}

// mlxconfig's DCQCN parameters (NVIDIA, "DCQCN CC Parameters"; docs/model/dcqcn.md#presets).
std::string Nic(const std::vector<std::string>& head, const Settings& x) {
  const cc::DcqcnParams& d = x.dcqcn;
  auto us = [](units::Time t) {
    return static_cast<int64_t>(std::llround(static_cast<double>(t.ps()) / 1e6));
  };
  auto mbps = [](units::Rate r) {
    return static_cast<int64_t>(std::llround(static_cast<double>(r.bps()) / 1e6));
  };
  const int64_t dce_tcp_g = 1024 - static_cast<int64_t>(std::llround(d.g * 1024));
  std::string o = Commented(head, "#");
  o += "# NIC side, NVIDIA ConnectX (DCQCN reaction and notification point): mlxconfig parameter "
       "names as\n"
       "# NVIDIA documents them (\"DCQCN CC Parameters\"); units: rates in Mb/s, times in us, "
       "DCE_TCP_G in\n"
       "# 1/1024 (g = (1024 - DCE_TCP_G) / 1024). _P1 is port 1; repeat with _P2 for a second "
       "port.\n"
       "# The new values take effect after a firmware reset (mlxfwreset) or a reboot.\n";
  o += "# Tuned here (the other DCQCN parameters keep the starting settings' values, listed "
       "after):\n";
  o += fmt::format(
      "mlxconfig -d ${{DEV:?set DEV to the mst device, e.g. /dev/mst/mt4129_pciconf0}} -y set "
      "RPG_TIME_RESET_P1={} DCE_TCP_G_P1={} RPG_AI_RATE_P1={} RPG_HAI_RATE_P1={} DCE_TCP_RTT_P1={} "
      "MIN_TIME_BETWEEN_CNPS_P1={}{}\n",
      us(d.rate_increase_period), dce_tcp_g, mbps(d.rate_ai), mbps(d.rate_hai), us(d.alpha_period),
      us(d.cnp_interval),
      d.variant == cc::DcqcnVariant::kFirmware
          ? fmt::format(" RATE_TO_SET_ON_FIRST_CNP_P1={} RATE_REDUCE_MONITOR_PERIOD_P1={}",
                        mbps(d.rate_on_first_cnp), us(d.rate_reduce_period))
          : std::string());
  o += fmt::format("# unchanged: RPG_THRESHOLD_P1={} RPG_MIN_RATE_P1={} RPG_MIN_DEC_FAC_P1={}\n",
                   d.fast_recovery_steps, mbps(d.min_rate), std::llround(d.min_dec_factor * 100));
  o += fmt::format("# Host side, lossless priority {} and DSCP trust (MLNX_OFED mlnx_qos):\n",
                   x.priority);
  std::string pfc;
  for (int i = 0; i < 8; ++i) {
    if (i > 0) pfc.push_back(',');
    pfc.push_back(i == x.priority ? '1' : '0');
  }
  o += fmt::format("# mlnx_qos -i $IFACE --trust dscp --pfc {}\n", pfc);
  return o;
}

// Sets `value` at the dotted `key` of `y` ("fabric.ecn.kmin").
void SetPath(YAML::Node y, const std::string& key, const std::string& value) {
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      y[part] = value;
      return;
    }
    YAML::Node next = y[part];
    y.reset(next);  // rebinds (operator= would overwrite the node's value)
    start = dot + 1;
  }
}

// The starting profile with the user's --set, the chosen NIC settings and the node count.
std::string NicProfile(const Result& r, const std::string& base_text,
                       const std::vector<std::string>& user_sets, int64_t nodes, const Options& o) {
  YAML::Node y = YAML::Load(base_text);
  for (const std::string& s : user_sets) {
    const size_t eq = s.find('=');
    if (eq != std::string::npos) SetPath(y, s.substr(0, eq), s.substr(eq + 1));
  }
  y["name"] = "tuned-nic";
  y["description"] = fmt::format(
      "{} with the DCQCN settings lossless tune chose (switch side as the start)", o.fabric);
  const Point& c = r.points[r.chosen];
  for (size_t a = 0; a < r.axes.size(); ++a) {
    if (!r.axes[a].nic) continue;
    SetPath(y, r.axes[a].key, r.axes[a].values[c.index[a]]);
  }
  if (y["topology"] && y["topology"]["nodes"]) y["topology"]["nodes"] = nodes;
  YAML::Emitter e;
  e << y;
  return fmt::format(
             "# lossless tune: the starting fabric ({}) with the NIC (DCQCN) settings it chose, "
             "for\n"
             "#   lossless scenario from-qos SWITCH-SNIPPET --profile THIS-FILE\n"
             "# which takes the switch side from the snippet and everything else from here: the "
             "tuned fabric.\n",
             o.fabric) +
         e.c_str() + "\n";
}

}  // namespace

std::vector<Snippet> Snippets(const Result& r, const scenario::Scenario& chosen, const Options& o,
                              const std::string& base_profile_text,
                              const std::vector<std::string>& user_sets, int64_t nodes) {
  const Settings x = Of(chosen);
  std::vector<Snippet> out;
  out.push_back({"sonic-config_db.json", Sonic(Header(r, o, x, nodes, "SONiC switch QoS"), x)});
  out.push_back(
      {"cumulus-nvue.txt", Nvue(Header(r, o, x, nodes, "Cumulus Linux NVUE switch QoS"), x)});
  out.push_back({"arista-eos.txt", Eos(Header(r, o, x, nodes, "Arista EOS switch QoS"), x)});
  out.push_back({"cisco-nxos.txt", Nxos(Header(r, o, x, nodes, "Cisco NX-OS switch QoS"), x)});
  out.push_back({"junos.txt", Junos(Header(r, o, x, nodes, "Junos switch QoS"), x)});
  out.push_back({"nic-dcqcn.txt", Nic(Header(r, o, x, nodes, "NIC DCQCN settings"), x)});
  out.push_back({"nic-profile.yaml", NicProfile(r, base_profile_text, user_sets, nodes, o)});
  return out;
}

}  // namespace lossless::tune
