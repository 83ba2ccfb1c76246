#include "scenario/params.hpp"

#include <set>

#include <fmt/format.h>

namespace lossless::scenario {

const std::vector<ParamInfo>& Params() {
  using T = ParamType;
  static const std::vector<ParamInfo> kParams = {
      {"name", T::kString, "scenario", "Scenario name, echoed in the output.", ""},
      {"seed", T::kInt, "1", "Seed of every random stream (ECMP salt, spraying, RED marking).", "",
       0, 9.2e18},
      {"fabric.preset", T::kEnum, "roce",
       "Fabric preset: infiniband (NDR-like: per-VL credits, adaptive routing, 130 ns switches), "
       "roce (400GbE, "
       "ECMP, 300 ns switches) or raw (generic framing, for anchors).",
       "infiniband|roce|raw"},
      {"fabric.link_rate", T::kRate, "400Gbps", "Rate of every link, each direction.", ""},
      {"fabric.link_delay", T::kTime, "",
       "One-way propagation delay of every link. Default: from fabric.cable_length at 5 ns/m.", ""},
      {"fabric.cable_length", T::kDouble, "10",
       "Cable length in metres, used when link_delay is not given.", "", 0.001, 1e6},
      {"fabric.mtu", T::kInt, "4096",
       "Largest payload per packet in bytes (RDMA path MTU 256..4096; raw: any).", "", 64, 65536},
      {"fabric.frame_overhead", T::kInt, "",
       "Bytes of headers and trailers per packet. Default from the preset: IB 26, RoCE v2 62 (+20 "
       "preamble/IFG "
       "on the wire), raw 30.",
       "", 0, 4096},
      {"fabric.vlan_tag", T::kBool, "false", "RoCE: add a 4-byte 802.1Q tag to every frame.", ""},
      {"fabric.switch_latency", T::kTime, "300ns", "Switch port-to-port pipeline latency.", ""},
      {"fabric.cut_through", T::kBool, "false",
       "Cut-through switching (default store-and-forward).", ""},
      {"fabric.buffer", T::kBytes, "32MiB", "Shared packet buffer per switch.", ""},
      {"fabric.alpha", T::kDouble, "0.125",
       "Dynamic-threshold alpha for lossy classes (q <= alpha * free).", "", 1.0 / 64, 64},
      {"fabric.routing", T::kEnum, "ecmp",
       "ecmp (hash of the 5-tuple), dest-table (IB-style per-destination tables), adaptive "
       "(least-loaded "
       "minimal next hop, per packet) or spray (random minimal next hop, per packet).",
       "ecmp|dest-table|adaptive|spray"},
      {"fabric.data_class", T::kInt, "3", "Traffic class of data packets: RoCE priority or IB SL.",
       "", 0, 7},
      {"fabric.pcie_rate", T::kRate, "", "PCIe cap on each NIC's injection rate. Default: none.",
       ""},
      {"fabric.ib.enabled", T::kBool, "false",
       "InfiniBand credit-based link-level flow control: every receiving port grants "
       "fabric.ib.credits 64-byte blocks per data VL and a sender starts a packet only when the "
       "whole packet fits (fabric.md 1.3). Not with the roce preset; excludes PFC and DCQCN.",
       ""},
      {"fabric.ib.credits", T::kInt, "2048",
       "Credits (64-byte blocks) per data VL per receiving port; at most 2048 (12-bit counters) "
       "and at least one MTU packet.",
       "", 1, 2048},
      {"fabric.ib.vls", T::kInt, "4", "Data VLs (ConnectX-5 default 4); SL n uses VL n.", "", 1, 7},
      {"fabric.ib.fcp_on_release", T::kBool, "true",
       "Send a flow-control packet as soon as blocks are freed (else only on the fcp_period grid).",
       ""},
      {"fabric.ib.fcp_period", T::kTime, "4.096us",
       "Flow-control packets also go out on this grid while the sender's credit view is stale "
       "(heals lost FCPs).",
       ""},
      {"fabric.ib.rx_delay", T::kTime, "100ns",
       "HCA: from a packet's last byte in to its blocks being free (t_rx; fabric.md 1.3 example).",
       ""},
      {"fabric.ib.credit_delay", T::kTime, "100ns",
       "From an FCP's last byte in to its credits being usable (t_tx; fabric.md 1.3 example).", ""},
      {"fabric.ib.vlarb_high", T::kString, "",
       "VL arbitration High table: 'VL:weight' entries (weight 0..255 in 64-byte units), comma "
       "separated. Default: empty.",
       ""},
      {"fabric.ib.vlarb_low", T::kString, "",
       "VL arbitration Low table, same form. Default (with an empty High table): every data VL at "
       "weight 64.",
       ""},
      {"fabric.ib.high_limit", T::kInt, "16",
       "LimitOfHighPriority in 4096-byte units (255 = no limit; ib_model example 16).", "", 0, 255},
      {"fabric.ecn.enabled", T::kBool, "false",
       "RED/ECN marking on the data class's egress queues.", ""},
      {"fabric.ecn.kmin", T::kBytes, "150KB", "RED Kmin (instantaneous queue).", ""},
      {"fabric.ecn.kmax", T::kBytes, "1500KB", "RED Kmax.", ""},
      {"fabric.ecn.pmax", T::kDouble, "0.01", "RED marking probability at Kmax.", "", 0, 1},
      {"fabric.pfc.enabled", T::kBool, "false",
       "Priority flow control (802.1Qbb) on fabric.pfc.priority: switches pause the upstream port "
       "when an "
       "(ingress port, priority) holds more than xoff.",
       ""},
      {"fabric.pfc.priority", T::kInt, "3", "The lossless priority (RoCE: 3).", "", 0, 7},
      {"fabric.pfc.xoff", T::kBytes, "200KB",
       "Bytes an (ingress port, priority) may hold before it sends XOFF.", ""},
      {"fabric.pfc.xon", T::kBytes, "",
       "Resume at or below this. Default: xoff minus one maximum frame.", ""},
      {"fabric.pfc.headroom", T::kBytes, "",
       "Buffer above xoff for what arrives after XOFF; a frame beyond it is dropped and reported "
       "as a "
       "misconfiguration. Default: 3 max frames + 84 + rate x (2 x cable delay + response + switch "
       "latency): "
       "fabric.md 2.4 without its PHY term, plus the frame that crosses XOFF and the switch "
       "pipeline.",
       ""},
      {"fabric.pfc.response", T::kTime, "1158.4ns",
       "Sender response time to a PAUSE (802.3 D-Resp bound at 400GbE: 905 quanta).", ""},
      {"fabric.pfc.quanta", T::kInt, "65535",
       "Pause time carried by XOFF frames, in 512-bit quanta.", "", 1, 65535},
      {"fabric.cc", T::kEnum, "none",
       "End-to-end congestion control: none (PFC alone, Meta style), dcqcn-paper or dcqcn-firmware "
       "(the two "
       "presets of fabric.md 3.5; needs fabric.ecn.enabled).",
       "none|dcqcn-paper|dcqcn-firmware"},
      {"topology.kind", T::kEnum, "leaf-spine",
       "leaf-spine (2 tiers), fat-tree (3 tiers), rail-optimized, ls-ring (anchor shape) or file.",
       "leaf-spine|fat-tree|rail-optimized|ls-ring|file"},
      {"topology.gpus", T::kInt, "64", "GPUs = NICs = hosts.", "", 2, 1e7},
      {"topology.radix", T::kInt, "64", "Switch ports at the host link speed.", "", 2, 4096},
      {"topology.oversubscription", T::kDouble, "1",
       "Leaf down:up ratio o in o:1 (1 = non-blocking).", "", 1, 64},
      {"topology.tiers", T::kInt, "0", "Tiers for leaf-spine/fat-tree; 0 = smallest that fits.", "",
       0, 3},
      {"topology.gpus_per_node", T::kInt, "8", "GPUs per node (rail-optimized).", "", 1, 64},
      {"topology.hosts_per_leaf", T::kInt, "8", "ls-ring: hosts per leaf.", "", 1, 4096},
      {"topology.spines", T::kInt, "8", "ls-ring: spines (each leaf has one link to each).", "", 1,
       4096},
      {"topology.file", T::kString, "",
       "file: path of an explicit topology file (docs/topology-file.md).", ""},
      {"outputs.json", T::kString, "", "Write the results as JSON to this path.", ""},
      {"stop_time", T::kTime, "10s", "Safety limit on simulated time.", ""},
  };
  return kParams;
}

const ParamInfo* FindParam(const std::string& name) {
  for (const auto& p : Params())
    if (name == p.name) return &p;
  return nullptr;
}

const std::vector<PresetValue>& PresetValues() {
  static const std::vector<PresetValue> kValues = {
      {"infiniband", "fabric.switch_latency", "130ns"},
      {"infiniband", "fabric.routing", "adaptive"},
      {"infiniband", "fabric.data_class", "0"},
      {"infiniband", "fabric.ib.enabled", "true"},
      {"roce", "fabric.switch_latency", "300ns"},
      {"roce", "fabric.routing", "ecmp"},
      {"roce", "fabric.pfc.enabled", "true"},
      {"raw", "fabric.switch_latency", "0ns"},
      {"raw", "fabric.mtu", "3972"},
      {"raw", "fabric.routing", "spray"},
  };
  return kValues;
}

std::vector<std::string> PresetNames() {
  return {"infiniband", "roce", "raw"};
}

namespace {
const char* TypeName(ParamType t) {
  switch (t) {
    case ParamType::kTime:
      return "time";
    case ParamType::kRate:
      return "rate";
    case ParamType::kBytes:
      return "size";
    case ParamType::kInt:
      return "integer";
    case ParamType::kDouble:
      return "number";
    case ParamType::kBool:
      return "bool";
    case ParamType::kEnum:
      return "choice";
    case ParamType::kString:
      return "text";
  }
  return "?";
}
}  // namespace

std::string ParamsMarkdown() {
  std::string out =
      "# Scenario fields\n\n"
      "Generated by `lossless params --markdown` from the parameter registry\n"
      "(src/scenario/params.cpp); a test keeps this file in step with it.\n\n"
      "Every value takes its unit (`400Gbps`, `1.5us`, `9KiB`). Any field can be\n"
      "overridden on the command line with `--set name=value`.\n\n"
      "| field | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& p : Params()) {
    std::string type = TypeName(p.type);
    if (p.type == ParamType::kEnum) type += fmt::format(" ({})", p.choices);
    if ((p.type == ParamType::kInt || p.type == ParamType::kDouble) && p.min <= p.max)
      type += fmt::format(", {:g}..{:g}", p.min, p.max);
    std::string help = p.help;
    for (auto& c : help)
      if (c == '|') c = '/';
    for (size_t i = 0; (i = type.find('|', i)) != std::string::npos;)
      type.replace(i, 1, " \\| "), i += 4;
    out += fmt::format("| `{}` | {} | {} | {} |\n", p.name, type,
                       *p.def ? fmt::format("`{}`", p.def) : "—", help);
  }
  out +=
      "\n## Preset values\n\n`fabric.preset` replaces these defaults (values given in the file "
      "still win):\n\n"
      "| preset | field | value |\n|---|---|---|\n";
  for (const auto& v : PresetValues())
    out += fmt::format("| {} | `{}` | `{}` |\n", v.preset, v.name, v.value);
  out +=
      "\n## Traffic\n\n`traffic` is a list; each entry has a `pattern` and the fields below.\n\n"
      "| field | patterns | default | meaning |\n|---|---|---|---|\n"
      "| `pattern` | all | — | `ring` (host i to i+stride), `permutation` (same, stride required), "
      "`incast` "
      "(senders to one target), `all-to-all`, `flow` (one explicit flow) |\n"
      "| `bytes` | all | — | bytes per flow (required) |\n"
      "| `start` | all | `0s` | start time |\n"
      "| `stride` | ring, permutation | `1` | destination offset |\n"
      "| `target` | incast | `0` | receiving host rank |\n"
      "| `senders` | incast | all other hosts | number of senders (ranks target+1, target+2, ...) "
      "|\n"
      "| `hosts` | ring, permutation, all-to-all | all | use only hosts 0..hosts-1 |\n"
      "| `src`, `dst` | flow | — | host ranks |\n"
      "| `class` | all | `fabric.data_class` | traffic class |\n";
  return out;
}

}  // namespace lossless::scenario
