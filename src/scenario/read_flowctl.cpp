// Link-level flow control: InfiniBand credits and VL arbitration
// (fabric.ib.*), PFC and its watchdog (fabric.pfc.*).
#include <charconv>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {
namespace {

// "VL:weight, VL:weight, ..." (fabric.ib.vlarb_high / vlarb_low).
std::vector<fabric::VlArbEntry> ParseVlArb(const Value& v, int vls) {
  std::vector<fabric::VlArbEntry> out;
  std::string item;
  std::stringstream in(v.text);
  const std::string what = fmt::format(
      "comma-separated VL:weight entries (VL 0..{}, weight 0..255, at most 64)", vls - 1);
  while (std::getline(in, item, ',')) {
    const std::string t(text::Trim(item));
    if (t.empty()) throw InputError(v.where, Expected(what, v.text));
    const size_t colon = t.find(':');
    int vl = -1, weight = -1;
    if (colon != std::string::npos) {
      auto [p1, e1] = std::from_chars(t.data(), t.data() + colon, vl);
      auto [p2, e2] = std::from_chars(t.data() + colon + 1, t.data() + t.size(), weight);
      if (e1 != std::errc() || p1 != t.data() + colon || e2 != std::errc() ||
          p2 != t.data() + t.size())
        vl = -1;
    }
    if (vl < 0 || vl >= vls || weight < 0 || weight > 255 || out.size() == 64)
      throw InputError(v.where, Expected(what, v.text));
    out.push_back({static_cast<uint8_t>(vl), static_cast<uint8_t>(weight)});
  }
  return out;
}

}  // namespace

void ReadIbCredits(Fields& f, Scenario& sc) {
  fabric::NetworkConfig& net = sc.net;
  const int64_t mtu = net.framing.mtu_payload;
  const std::string cc = f.Find("fabric.cc").text;
  fabric::IbLinkConfig& ib = net.ib;
  ib.enabled = f.Bool("fabric.ib.enabled");
  ib.credits = static_cast<int32_t>(f.Int("fabric.ib.credits"));
  ib.num_vls = static_cast<int>(f.Int("fabric.ib.vls"));
  ib.fcp_on_release = f.Bool("fabric.ib.fcp_on_release");
  ib.fcp_period = f.Time("fabric.ib.fcp_period");
  ib.rx_free_delay = f.Time("fabric.ib.rx_delay");
  ib.credit_delay = f.Time("fabric.ib.credit_delay");
  ib.high = ParseVlArb(f.Get("fabric.ib.vlarb_high"), ib.num_vls);
  ib.low = ParseVlArb(f.Get("fabric.ib.vlarb_low"), ib.num_vls);
  ib.limit_of_high = static_cast<int>(f.Int("fabric.ib.high_limit"));
  if (ib.enabled) {
    if (sc.preset == "roce")
      f.Fail("fabric.ib.enabled", "false with the roce preset (credits are IB's link layer)");
    const int64_t mtu_blocks = (net.framing.FrameBytes(mtu) + 63) / 64;
    if (ib.credits < mtu_blocks)
      f.Fail("fabric.ib.credits",
             fmt::format("credits for at least one MTU packet ({} blocks of 64 B)", mtu_blocks));
    if (ib.fcp_period.ps() <= 0) f.Fail("fabric.ib.fcp_period", "a period above zero");
    if (net.nic.data_class >= ib.num_vls)
      f.Fail("fabric.data_class", fmt::format("an SL below fabric.ib.vls ({})", ib.num_vls));
    if (cc != "none" && cc != "ib-cc")
      f.Fail("fabric.cc", "none or ib-cc with InfiniBand credits (DCQCN is RoCE's)");
  } else if (cc == "ib-cc") {
    f.Fail("fabric.cc", "fabric.ib.enabled along with ib-cc");
  }
}

void ReadPfc(Fields& f, Scenario& sc) {
  fabric::NetworkConfig& net = sc.net;
  const int64_t mtu = net.framing.mtu_payload;
  const fabric::EcnConfig& ecn = net.sw.ecn[net.nic.data_class];
  fabric::PfcConfig& pfc = net.pfc;
  pfc.enabled = f.Bool("fabric.pfc.enabled");
  const int prio = static_cast<int>(f.Int("fabric.pfc.priority"));
  pfc.priorities = static_cast<uint8_t>(1u << prio);
  pfc.global = f.Choice("fabric.pfc.mode") == "global";
  const int64_t xoff = f.Bytes("fabric.pfc.xoff");
  pfc.xoff = units::Bytes(xoff);
  pfc.response = f.Time("fabric.pfc.response");
  pfc.quanta = static_cast<uint16_t>(f.Int("fabric.pfc.quanta"));
  const int64_t max_frame = net.framing.FrameBytes(mtu);
  const int64_t xon = f.Given("fabric.pfc.xon") ? f.Bytes("fabric.pfc.xon") : xoff - max_frame;
  pfc.xon = units::Bytes(xon);
  if (!f.Given("fabric.pfc.xon"))
    sc.resolved.emplace_back("fabric.pfc.xon", fmt::format("{}", xon));
  // The headroom waits for the topology's links (ResolvePfcHeadroom).
  if (pfc.enabled) {
    if (xon >= xoff) {
      f.Fail("fabric.pfc.xon", fmt::format("XON below XOFF ({} B)", xoff));
    }
    if (xon < 0) {
      f.Fail("fabric.pfc.xoff", fmt::format("XOFF of at least one frame ({} B)", max_frame));
    }
    if (ecn.enabled && prio == net.nic.data_class && ecn.kmin >= pfc.xoff) {
      sc.warnings.push_back(
          fmt::format("fabric.ecn.kmin: ECN starts marking an egress queue at {} B, at or above "
                      "the PFC trigger of one ingress queue ({} B): traffic that enters through "
                      "one port is paused before ECN and DCQCN can slow it (an egress fed by k "
                      "ports reaches Kmin when each holds Kmin/k)",
                      ecn.kmin.count(), xoff));
    }
  }

  fabric::PfcWatchdogConfig& wd = pfc.watchdog;
  wd.enabled = f.Bool("fabric.pfc.watchdog.enabled");
  wd.poll = f.Time("fabric.pfc.watchdog.poll");
  wd.detect_polls = static_cast<int>(f.Int("fabric.pfc.watchdog.detect_polls"));
  wd.restore = f.Time("fabric.pfc.watchdog.restore");
  wd.threshold = f.Number("fabric.pfc.watchdog.threshold");
  wd.stagger = f.Bool("fabric.pfc.watchdog.stagger");
  wd.pause_memory = f.Bool("fabric.pfc.watchdog.pause_memory");
  if (wd.poll.ps() <= 0) {
    f.Fail("fabric.pfc.watchdog.poll", "a poll period above zero");
  }
  if (wd.restore.ps() < 0) {
    f.Fail("fabric.pfc.watchdog.restore", "a restore time of zero or more");
  }
  if (wd.enabled && !pfc.enabled) {
    sc.warnings.emplace_back(
        "fabric.pfc.watchdog.enabled: the PFC watchdog is on but "
        "fabric.pfc.enabled is false: it never acts");
  }
}

units::Bytes PfcHeadroomFor(const fabric::NetworkConfig& net, units::Rate rate, units::Time delay) {
  // docs/model/pfc.md#headroom without the PHY term (two frames, the PAUSE
  // frame, the cable both ways, the sender's response time), plus what this
  // model adds: the frame that crosses XOFF (it is charged whole) and the
  // switch pipeline, since bytes are charged when they reach the egress queue.
  const int64_t max_wire = net.framing.WireBytes(net.framing.mtu_payload);
  const int64_t in_flight_ps = 2 * delay.ps() + net.pfc.response.ps() + net.sw.latency.ps();
  return units::Bytes(3 * max_wire + 84 +
                      units::BytesInTime(units::Time::Ps(in_flight_ps), rate).count());
}

units::Bytes TopologyPfcHeadroom(const Scenario& sc, std::string* basis) {
  const fabric::NetworkConfig& net = sc.net;
  // Every link of a generated topology has fabric.link_rate and
  // fabric.link_delay; a topology file declares its own, so the one that needs
  // the most headroom decides (one value for every port).
  units::Rate rate = sc.clos.link_rate;
  units::Time delay = sc.clos.link_delay;
  int64_t needed = PfcHeadroomFor(net, rate, delay).count();
  *basis = fmt::format("fabric.link_delay {} at fabric.link_rate {}", units::FormatTime(delay),
                       units::FormatRate(rate));
  if (sc.topology_kind == "file" && net.pfc.enabled) {
    const topology::Topology t = BuildTopology(sc);
    const topology::Link* worst = nullptr;
    int64_t worst_need = 0;
    for (const topology::Link& l : t.links) {
      const int64_t need = PfcHeadroomFor(net, l.rate, l.delay).count();
      if (worst == nullptr || need > worst_need) {
        worst = &l;
        worst_need = need;
      }
    }
    if (worst != nullptr) {
      needed = worst_need;
      *basis = fmt::format("the topology file's link that needs the most ({} -- {}, {} at {})",
                           t.nodes[worst->a].name, t.nodes[worst->b].name,
                           units::FormatTime(worst->delay), units::FormatRate(worst->rate));
    }
  }
  return units::Bytes(needed);
}

void ResolvePfcHeadroom(Fields& f, Scenario& sc) {
  fabric::NetworkConfig& net = sc.net;
  fabric::PfcConfig& pfc = net.pfc;
  std::string basis;
  const int64_t needed = TopologyPfcHeadroom(sc, &basis).count();
  const bool given = f.Given("fabric.pfc.headroom");
  const int64_t headroom = given ? f.Bytes("fabric.pfc.headroom") : needed;
  pfc.headroom = units::Bytes(headroom);
  sc.pfc_headroom_basis = given ? "fabric.pfc.headroom" : "default for " + basis;
  if (!given) sc.resolved.emplace_back("fabric.pfc.headroom", fmt::format("{}", needed));
  if (!pfc.enabled) return;
  const int64_t xoff = pfc.xoff.count();
  const int64_t max_frame = net.framing.FrameBytes(net.framing.mtu_payload);
  if (xoff + headroom > net.sw.buffer.count()) {
    f.Fail(given && !f.Given("fabric.pfc.xoff") ? "fabric.pfc.headroom" : "fabric.pfc.xoff",
           fmt::format("XOFF plus headroom ({} B + {} B{}) within the switch buffer "
                       "(fabric.buffer, {} B)",
                       xoff, headroom, given ? "" : ", the headroom the links need",
                       net.sw.buffer.count()));
  }
  if (headroom < max_frame) {
    f.Fail("fabric.pfc.headroom", fmt::format("headroom of at least one frame ({} B)", max_frame));
  }
  if (headroom < needed) {
    sc.warnings.push_back(
        fmt::format("fabric.pfc.headroom: {} B is below the {} B that can arrive after XOFF on {} "
                    "(docs/model/pfc.md#headroom): expect lossless drops",
                    headroom, needed, basis));
  }
}

}  // namespace lossless::scenario
