// fabric.*: links and framing, switches, ECN, congestion control and the
// NIC; link-level flow control (IB credits, PFC) is in read_flowctl.cpp.
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cc/dcqcn_params.hpp"
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {
namespace {

// fabric.link_rate, link_delay / cable_length, mtu, framing.
void ReadLink(Fields& f, Scenario& sc) {
  fabric::NetworkConfig& net = sc.net;
  units::Rate link_rate = f.Rate("fabric.link_rate");
  units::Time link_delay;
  if (f.Given("fabric.link_delay")) {
    Value v = f.Get("fabric.link_delay");
    link_delay = units::ParseTime(v.text, v.where);
    if (link_delay.ps() <= 0) {
      throw InputError(
          v.where,
          Expected("a delay above zero (components talk only through links with latency)", v.text));
    }
  } else {
    const double metres = f.Number("fabric.cable_length");
    link_delay = units::CableDelay(metres);
    sc.resolved.emplace_back("fabric.link_delay", units::FormatTime(link_delay));
    if (metres > 10'000) {
      sc.warnings.push_back(fmt::format(
          "fabric.cable_length: {:g} m is longer than any data-center link (10 km, the reach of "
          "LR optics): every link's delay is {}",
          metres, units::FormatTime(link_delay)));
    }
  }
  int64_t mtu = f.Int("fabric.mtu");
  bool vlan = f.Bool("fabric.vlan_tag");
  if (vlan && sc.preset != "roce") {
    sc.warnings.push_back(fmt::format(
        "fabric.vlan_tag: a VLAN tag is an Ethernet (RoCE) setting; the {} preset ignores it",
        sc.preset));
  }
  if (sc.preset == "infiniband") {
    net.framing = fabric::Framing::InfiniBand(static_cast<int32_t>(mtu));
  } else if (sc.preset == "roce") {
    net.framing = fabric::Framing::RoceV2(static_cast<int32_t>(mtu), vlan);
  } else {
    net.framing = fabric::Framing::Raw(static_cast<int32_t>(mtu), 30);
  }
  if (sc.preset != "raw" && !fabric::IsRdmaMtu(mtu)) {
    f.Fail("fabric.mtu", "an RDMA path MTU: 256, 512, 1024, 2048 or 4096");
  }
  if (f.Given("fabric.frame_overhead"))
    net.framing.frame_overhead = static_cast<int32_t>(f.Int("fabric.frame_overhead"));
  // The framing's own when not given (validate --show, the run JSON).
  sc.resolved.emplace_back("fabric.frame_overhead", std::to_string(net.framing.frame_overhead));
  // The topology builders take the link rate and delay from here.
  sc.clos.link_rate = link_rate;
  sc.clos.link_delay = link_delay;
}

// The switch, routing, the NIC's data class and PCIe rate, ECN marking.
void ReadSwitch(Fields& f, Scenario& sc) {
  fabric::NetworkConfig& net = sc.net;
  const int64_t mtu = net.framing.mtu_payload;
  net.sw.latency = f.Time("fabric.switch_latency");
  net.sw.cut_through = f.Bool("fabric.cut_through");
  net.sw.buffer = units::Bytes(f.Bytes("fabric.buffer"));
  if (net.sw.buffer.count() < net.framing.FrameBytes(mtu)) {
    f.Fail("fabric.buffer",
           fmt::format("a buffer of at least one frame ({} B)", net.framing.FrameBytes(mtu)));
  }
  net.sw.alpha = f.Number("fabric.alpha");
  std::string routing = f.Choice("fabric.routing");
  net.routing = routing == "ecmp"         ? fabric::RoutingMode::kEcmp
                : routing == "dest-table" ? fabric::RoutingMode::kDestTable
                : routing == "adaptive"   ? fabric::RoutingMode::kAdaptive
                                          : fabric::RoutingMode::kSpray;
  net.nic.data_class = static_cast<uint8_t>(f.Int("fabric.data_class"));
  if (f.Given("fabric.pcie_rate")) {
    net.nic.pcie_rate = f.Rate("fabric.pcie_rate");
  } else {
    sc.resolved.emplace_back("fabric.pcie_rate", "none (line rate)");
  }
  fabric::EcnConfig ecn;
  ecn.enabled = f.Bool("fabric.ecn.enabled");
  ecn.kmin = units::Bytes(f.Bytes("fabric.ecn.kmin"));
  ecn.kmax = units::Bytes(f.Bytes("fabric.ecn.kmax"));
  ecn.pmax = f.Number("fabric.ecn.pmax");
  if (ecn.kmin >= ecn.kmax) {
    f.Fail("fabric.ecn.kmin", fmt::format("Kmin below Kmax ({} B)", ecn.kmax.count()));
  }
  net.sw.ecn[net.nic.data_class] = ecn;
}

// fabric.cc with fabric.dcqcn.* overrides or fabric.ibcc.*.
void ReadCongestionControl(Fields& f, Scenario& sc) {
  fabric::NetworkConfig& net = sc.net;
  const std::string cc = f.Choice("fabric.cc");
  // fabric.dcqcn.<name>: per-parameter overrides on top of the fabric.cc preset.
  std::vector<std::pair<std::string, Value>> dcqcn_given;
  for (const auto& info : cc::DcqcnParamInfos()) {
    const std::string full = std::string("fabric.dcqcn.") + info.name;
    if (f.Given(full)) dcqcn_given.emplace_back(info.name, f.loader().values()[full]);
  }
  if (f.Given("fabric.dcqcn.cnp_class"))
    dcqcn_given.emplace_back("cnp_class", f.loader().values()["fabric.dcqcn.cnp_class"]);
  if (cc == "none") {
    if (!dcqcn_given.empty()) {
      // Overrides of a controller that does not run are a mistake, not a no-op.
      throw InputError(dcqcn_given.front().second.where,
                       Expected("fabric.cc dcqcn-paper or dcqcn-firmware along with a DCQCN "
                                "override",
                                "none"));
    }
  } else if (cc == "ib-cc") {
    if (!dcqcn_given.empty()) {
      throw InputError(dcqcn_given.front().second.where,
                       Expected("fabric.cc dcqcn-paper or dcqcn-firmware along with a DCQCN "
                                "override",
                                cc));
    }
    net.ib_cc = true;
    net.fecn.queue_threshold = units::Bytes(f.Bytes("fabric.ibcc.threshold"));
    net.fecn.marking_rate = f.Int("fabric.ibcc.marking_rate");
    net.ib_cc_params.ccti_increase = f.Int("fabric.ibcc.ccti_increase");
    net.ib_cc_params.ccti_timer = f.Time("fabric.ibcc.ccti_timer");
    net.ib_cc_params.cct =
        cc::IbCcParams::LinearCct(f.Int("fabric.ibcc.cct_entries"), f.Time("fabric.ibcc.cct_step"));
    if (net.ib_cc_params.ccti_timer.ps() <= 0) {
      f.Fail("fabric.ibcc.ccti_timer", "a period above zero");
    }
    if (net.ib_cc_params.cct.back().ps() < 0) {
      f.Fail("fabric.ibcc.cct_step", "a step of zero or more");
    }
  } else {
    net.dcqcn = true;
    const Location cc_where = f.Find("fabric.cc").where;
    net.dcqcn_params =
        cc::DcqcnParams::Preset(cc == "dcqcn-paper" ? "paper" : "connectx-firmware", cc_where);
    for (const auto& [name, v] : dcqcn_given) {
      if (name == "cnp_class") continue;
      RequireUnit(v, FindParam("fabric.dcqcn." + name)->type);
      net.dcqcn_params.Set(name, v.text, v.where);
    }
    try {
      net.dcqcn_params.Validate(sc.clos.link_rate, {cc_where.file, cc_where.line, "fabric.dcqcn"});
    } catch (const InputError& e) {
      // Validate() names the parameter at the start of its message: point at
      // the override that set it (or at fabric.cc when the preset did).
      const std::string& msg = e.message();
      const auto colon = msg.find(": ");
      const std::string name = colon == std::string::npos ? "" : msg.substr(0, colon);
      Location where = cc_where;
      where.field = "fabric.dcqcn." + name;
      for (const auto& [n, v] : dcqcn_given)
        if (n == name) where = v.where;
      if (name == "line_rate") where = f.Find("fabric.link_rate").where;
      if (colon == std::string::npos) throw;
      throw InputError(where, msg.substr(colon + 2));
    }
    for (const auto& info : cc::DcqcnParamInfos()) {
      sc.resolved.emplace_back(std::string("fabric.dcqcn.") + info.name,
                               cc::DcqcnParamValue(net.dcqcn_params, info.name));
    }
    const int64_t cnp_class = f.Int("fabric.dcqcn.cnp_class");
    if (cnp_class == net.nic.data_class) {
      f.Fail("fabric.dcqcn.cnp_class", fmt::format("a class other than the data class {}",
                                                   static_cast<int>(net.nic.data_class)));
    }
    net.cnp_class = static_cast<uint8_t>(cnp_class);
    net.sw.strict_mask = static_cast<uint8_t>(1u << cnp_class);
    if (!net.sw.ecn[net.nic.data_class].enabled) {
      sc.warnings.emplace_back(
          "fabric.cc: DCQCN is on but fabric.ecn.enabled is false: no marks, no CNPs, no rate "
          "cuts");
    }
  }
}

// fabric.nic.pause_storm_timeout (PFC storm prevention).
void ReadNic(Fields& f, Scenario& sc) {
  fabric::NetworkConfig& net = sc.net;
  {
    Value v = f.Get("fabric.nic.pause_storm_timeout");
    if (v.text == "off") {
      net.nic.pause_storm_timeout = units::Time::Zero();
    } else if (v.text == "auto") {
      net.nic.pause_storm_timeout =
          units::Time::Ms(100);  // ConnectX "auto" (docs/model/pfc.md#watchdog)
    } else {
      units::Time t;
      try {
        t = units::ParseTime(v.text, v.where);
      } catch (const InputError&) {
        throw InputError(v.where, Expected("a time such as 100ms, auto or off", v.text));
      }
      if (t.ps() <= 0)
        throw InputError(v.where, Expected("a time above zero, auto or off", v.text));
      net.nic.pause_storm_timeout = t;
    }
  }
}

}  // namespace

void ReadFabric(Fields& f, Scenario& sc) {
  ReadLink(f, sc);
  ReadSwitch(f, sc);
  ReadCongestionControl(f, sc);
  ReadIbCredits(f, sc);
  ReadPfc(f, sc);
  ReadNic(f, sc);
  // ECN on InfiniBand is a warning (docs/errors.md); IB CC is fabric.ibcc.*.
  if (sc.net.sw.ecn[sc.net.nic.data_class].enabled &&
      (sc.preset == "infiniband" || sc.net.ib.enabled)) {
    sc.warnings.emplace_back(
        "fabric.ecn.enabled: ECN marking is an Ethernet (RoCE) mechanism; InfiniBand "
        "congestion control is fabric.cc: ib-cc with fabric.ibcc.*");
  }
  // Thresholds given with marking off take no effect: say so, not silently.
  if (!sc.net.sw.ecn[sc.net.nic.data_class].enabled) {
    for (const char* key : {"fabric.ecn.kmin", "fabric.ecn.kmax", "fabric.ecn.pmax"}) {
      if (!f.Given(key)) continue;
      sc.warnings.push_back(
          fmt::format("{}: given, but fabric.ecn.enabled is false: no packet is marked", key));
      break;
    }
  }
}

}  // namespace lossless::scenario
