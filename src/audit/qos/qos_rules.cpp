#include "audit/qos/qos_rules.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "base/text.hpp"

namespace lossless::audit::qos {

namespace {

using units::Time;

// Sources (docs/audit-qos.md#cell-sizes): the Linux mlxsw driver (4.x trees,
// drivers/net/ethernet/mellanox/mlxsw/spectrum.h, MLXSW_SP_BYTES_PER_CELL 96) and
// SONiC's ASIC table for NVIDIA Spectrum switches (files/build_templates/asic_table.j2,
// cell_size 96 / 144 / 144); Meta's FBOSS platform classes for Broadcom
// (getMMUCellBytes(): Trident2 and Tomahawk 208, Tomahawk3 254).
constexpr std::array<CellSizePreset, 10> kCellPresets{{
    {"spectrum", 96, true, "Linux mlxsw spectrum.h MLXSW_SP_BYTES_PER_CELL; SONiC asic_table.j2"},
    {"spectrum2", 144, true, "SONiC asic_table.j2 (MELLANOX-SPECTRUM-2 cell_size)"},
    {"spectrum3", 144, true, "SONiC asic_table.j2 (MELLANOX-SPECTRUM-3 cell_size)"},
    {"spectrum4", 192, false, "commonly quoted for Spectrum-4; no primary source found"},
    {"trident2", 208, true, "FBOSS Wedge40Platform.h getMMUCellBytes (Trident2)"},
    {"trident3", 256, false, "commonly quoted for Trident3; no primary source found"},
    {"tomahawk", 208, true, "FBOSS WedgeTomahawkPlatform.h getMMUCellBytes"},
    {"tomahawk2", 208, false, "commonly quoted for Tomahawk2; no primary source found"},
    {"tomahawk3", 254, true, "FBOSS BcmTestWedgeTomahawk3Platform.h getMMUCellBytes"},
    {"tomahawk4", 254, false, "commonly quoted for Tomahawk4; no primary source found"},
}};

// Order of checks in the report.
constexpr std::array<std::string_view, 14> kCheckOrder{"pfc.roce-priority",  "pfc.other-priorities",
                                                       "pfc.headroom",       "pfc.xon",
                                                       "pfc.watchdog",       "pfc.watchdog-events",
                                                       "pause.global",       "ecn.roce-queue",
                                                       "ecn.kmin-kmax",      "ecn.kmin-ratio",
                                                       "ecn.kmax-below-pfc", "cnp.priority",
                                                       "drops.lossless",     "pfc.frames"};

std::string Bytes(int64_t b) {
  return units::FormatBytes(units::Bytes(b));
}

std::string PrioList(const std::set<int>& s) {
  if (s.empty()) return "none";
  std::string out;
  for (int p : s) {
    if (!out.empty()) out += ',';
    out += std::to_string(p);
  }
  return out;
}

std::string Percent(double x) {
  return fmt::format("{:.1f}%", x);
}

struct Collector {
  // (order index, id, verdict, message) -> ports, insertion ordered.
  std::vector<QosCheck> checks;
  void Add(const std::string& id, Verdict v, const std::string& message, const std::string& port) {
    for (QosCheck& c : checks) {
      if (c.id == id && c.verdict == v && c.message == message) {
        if (!port.empty()) c.ports.push_back(port);
        return;
      }
    }
    QosCheck c{id, v, message, {}};
    if (!port.empty()) c.ports.push_back(port);
    checks.push_back(c);
  }
};

class Auditor {
 public:
  Auditor(const QosConfig& cfg, const QosAuditOptions& opts) : cfg_(cfg), opts_(opts) {}
  QosAudit Run();

 private:
  void CheckPfc(const PortQos& p);
  void CheckHeadroom(const PortQos& p);
  void CheckXon(const PortQos& p);
  void CheckWatchdogStatus(const PortQos& p);
  void CheckEcn(const PortQos& p);
  void CheckCnp();
  void CheckDrops(const PortQos& p);
  void CheckPfcFrames(const PortQos& p);
  void CheckPgDrops(const PortQos& p);
  void CheckRelativeEcn(const PortQos& p, const EcnQueue& e, int q);
  // The first line the reader could not interpret that names ECN or WRED, or
  // nullptr.
  const SkippedLine* SkippedEcnLine() const;
  std::optional<int64_t> ToBytes(const BufferAmount& a) const {
    return a.ToBytes(opts_.cell_bytes);
  }
  std::string CellHint() const {
    return "thresholds are in cells and no cell size is known: pass --cell-bytes N or --platform "
           "NAME";
  }
  void Note(const std::string& n) {
    if (std::find(notes_.begin(), notes_.end(), n) == notes_.end()) notes_.push_back(n);
  }

  const QosConfig& cfg_;
  const QosAuditOptions& opts_;
  Collector out_;
  std::vector<std::string> notes_;
};

void Auditor::CheckPfc(const PortQos& p) {
  const int r = opts_.roce_priority;
  if (!p.pfc_stated) {
    out_.Add("pfc.roce-priority", Verdict::kIndeterminate,
             "the input does not say which priorities have PFC", p.name);
    return;
  }
  if (p.pfc_priorities.count(r)) {
    out_.Add("pfc.roce-priority", Verdict::kPass,
             fmt::format("PFC enabled on RoCE priority {} (PFC priorities: {})", r,
                         PrioList(p.pfc_priorities)),
             p.name);
  } else {
    out_.Add("pfc.roce-priority", Verdict::kFail,
             fmt::format("PFC not enabled on RoCE priority {} (PFC priorities: {}): RoCE traffic "
                         "is dropped under congestion",
                         r, PrioList(p.pfc_priorities)),
             p.name);
  }
  std::set<int> others = p.pfc_priorities;
  others.erase(r);
  if (others.empty()) {
    out_.Add("pfc.other-priorities", Verdict::kPass,
             fmt::format("no PFC on priorities other than {}", r), p.name);
  } else if (others.count(0)) {
    out_.Add("pfc.other-priorities", Verdict::kFail,
             fmt::format("PFC also enabled on priorities {}, including 0: default best-effort "
                         "traffic becomes lossless, so its congestion pauses links and can "
                         "spread (pause storms, deadlock risk)",
                         PrioList(others)),
             p.name);
  } else {
    out_.Add("pfc.other-priorities", Verdict::kWarn,
             fmt::format("PFC also enabled on priorities {}: each extra lossless priority needs "
                         "its own headroom and widens the reach of pauses",
                         PrioList(others)),
             p.name);
  }
  if (p.link_pause && *p.link_pause) {
    out_.Add("pause.global", Verdict::kFail,
             "802.3x link-level pause is enabled: it stops every priority on the link, not just "
             "RoCE; use PFC instead",
             p.name);
  } else {
    out_.Add(
        "pause.global", Verdict::kPass,
        p.link_pause ? "802.3x link-level pause is off" : "no 802.3x link-level pause in the input",
        p.name);
  }
  if (p.pfc_watchdog && !p.pfc_priorities.empty()) {
    if (*p.pfc_watchdog) {
      out_.Add("pfc.watchdog", Verdict::kPass, "PFC watchdog enabled", p.name);
    } else {
      out_.Add("pfc.watchdog", Verdict::kWarn,
               "no PFC watchdog on a PFC-enabled port: a stuck receiver can pause the fabric "
               "indefinitely (pause storm)",
               p.name);
    }
  }
}

void Auditor::CheckHeadroom(const PortQos& p) {
  const int r = opts_.roce_priority;
  auto pg = p.pgs.find(r);
  if (pg == p.pgs.end() || !pg->second.headroom) {
    std::string why = fmt::format("the input states no headroom for priority {}", r);
    if (p.cable_m)
      why += fmt::format(" (cable length {:g} m is stated; the switch may derive headroom from it)",
                         *p.cable_m);
    out_.Add("pfc.headroom", Verdict::kIndeterminate, why, p.name);
    return;
  }
  std::optional<int64_t> gbps = opts_.port_gbps ? opts_.port_gbps : p.speed_gbps;
  std::optional<double> cable = opts_.cable_m ? opts_.cable_m : p.cable_m;
  const BufferAmount& h = *pg->second.headroom;
  if (!gbps) {
    out_.Add(
        "pfc.headroom", Verdict::kIndeterminate,
        fmt::format("headroom {}, but the port speed is unknown: pass --port-gbps", h.ToString()),
        p.name);
    return;
  }
  if (!cable) {
    out_.Add(
        "pfc.headroom", Verdict::kIndeterminate,
        fmt::format("headroom {}, but the cable length is unknown: pass --cable-m", h.ToString()),
        p.name);
    return;
  }
  if (*gbps <= 0 || *gbps > 10'000 || !(*cable >= 0) || *cable > 100'000) {
    out_.Add("pfc.headroom", Verdict::kIndeterminate,
             fmt::format("implausible port speed {} Gb/s or cable length {:g} m", *gbps, *cable),
             p.name);
    return;
  }
  std::optional<int64_t> hb = ToBytes(h);
  if (!hb) {
    out_.Add("pfc.headroom", Verdict::kIndeterminate,
             fmt::format("headroom {}: {}", h.ToString(), CellHint()), p.name);
    return;
  }
  int64_t mtu = opts_.mtu_bytes.value_or(kDefaultMtuBytes);
  Time t_phy = opts_.t_phy.value_or(kDefaultPhyDelay);
  int64_t rate_bps = *gbps * 1000'000'000;
  Time t_resp = opts_.t_resp.value_or(
      Time::Ps((DefaultResponseBits(*gbps) * 1000'000'000'000 + rate_bps - 1) / rate_bps));
  int64_t need = RequiredHeadroomBytes(*gbps, *cable, mtu, t_phy, t_resp);
  Note(fmt::format(
      "headroom formula: MTU {} B{}, t_PHY {}{}, t_resp {}{}", mtu,
      opts_.mtu_bytes ? "" : " (default)", units::FormatTime(t_phy),
      opts_.t_phy ? "" : " (default, assumed)",
      opts_.t_resp ? units::FormatTime(t_resp)
                   : fmt::format("802.3 D-Resp {} bit times", DefaultResponseBits(*gbps)),
      opts_.t_resp  ? ""
      : *gbps <= 40 ? " (default; the 10G/40G figure is unverified, --t-resp overrides)"
                    : " (default)"));
  std::string ctx = fmt::format("{} Gb/s, {:g} m cable", *gbps, *cable);
  if (*hb >= need) {
    out_.Add("pfc.headroom", Verdict::kPass,
             fmt::format("headroom {} >= {} needed for priority {} at {}", Bytes(*hb), Bytes(need),
                         r, ctx),
             p.name);
  } else {
    out_.Add("pfc.headroom", Verdict::kFail,
             fmt::format("headroom {} < {} needed for priority {} at {}: in-flight data after XOFF "
                         "overflows and lossless packets are dropped",
                         Bytes(*hb), Bytes(need), r, ctx),
             p.name);
  }
}

// A profile whose size is meant to hold xon + xoff (SONiC without
// xon_offset, NVIDIA Spectrum style: sonic-utilities'
// scripts/mellanox_buffer_migrator.py derives xoff = size - xon) cannot have
// xon above its size: the resume level would lie outside the buffer the PG
// owns. xon is not compared with xoff: in that model xon is a reserve, not a
// level below the pause level, and the vendor defaults have xon above xoff
// (Spectrum-1 pg_lossless_25000_5m_profile: size 34816, xon 18432, so xoff
// 16384; with a shared headroom pool size == xon and xoff is 0). Reported
// only when the input states both xon and such a size.
void Auditor::CheckXon(const PortQos& p) {
  const int r = opts_.roce_priority;
  auto it = p.pgs.find(r);
  if (it == p.pgs.end() || !it->second.xon || !it->second.reserve) return;
  const LosslessPg& pg = it->second;
  const BufferAmount& xon = *pg.xon;
  const BufferAmount& size = *pg.reserve;
  std::optional<bool> above;
  if (xon.unit == size.unit) {
    above = xon.value > size.value;
  } else if (auto a = ToBytes(xon), b = ToBytes(size); a && b) {
    above = *a > *b;
  }
  if (!above) return;
  const std::string src = pg.source.empty() ? "" : fmt::format(" ({})", pg.source);
  if (*above) {
    out_.Add("pfc.xon", Verdict::kFail,
             fmt::format("xon {} above the profile size {} for priority {}{}: the size is meant "
                         "to hold xon + xoff, so the profile is inconsistent and the PG cannot "
                         "hold its resume level",
                         xon.ToString(), size.ToString(), r, src),
             p.name);
  } else {
    out_.Add("pfc.xon", Verdict::kPass,
             fmt::format("xon {} within the profile size {}", xon.ToString(), size.ToString()),
             p.name);
  }
}

// The watchdog's own status (NVUE `nv show interface X qos pfc-watchdog`): a
// class in DEADLOCK is in a pause storm the watchdog is breaking by dropping
// that class's traffic (on the RoCE class: lossless traffic is being
// dropped now); deadlock counts are storms that happened.
void Auditor::CheckWatchdogStatus(const PortQos& p) {
  if (!p.pfc_wd_status) return;
  if (!p.pfc_stated && p.pfc_watchdog) {
    out_.Add("pfc.watchdog", *p.pfc_watchdog ? Verdict::kPass : Verdict::kWarn,
             *p.pfc_watchdog ? "PFC watchdog enabled"
                             : "PFC watchdog disabled: a stuck receiver can pause the fabric "
                               "indefinitely (pause storm)",
             p.name);
  }
  const int tc = cfg_.QueueOf(opts_.roce_priority);
  std::string counted;
  for (const auto& [k, n] : p.pfc_wd_deadlocks)
    if (n > 0) counted += fmt::format("{}{} ({})", counted.empty() ? "" : ", ", k, n);
  const std::string tail = counted.empty() ? "" : "; deadlocks counted on classes " + counted;
  if (p.pfc_wd_deadlocked.count(tc)) {
    out_.Add("pfc.watchdog-events", Verdict::kFail,
             fmt::format("PFC watchdog in DEADLOCK on traffic class {} (RoCE priority {}): a "
                         "pause storm, which the watchdog breaks by dropping the lossless "
                         "traffic{}",
                         tc, opts_.roce_priority, tail),
             p.name);
  } else if (!p.pfc_wd_deadlocked.empty()) {
    out_.Add("pfc.watchdog-events", Verdict::kWarn,
             fmt::format("PFC watchdog in DEADLOCK on traffic classes {} (pause storms there, "
                         "broken by dropping their traffic; the RoCE class {} is not){}",
                         PrioList(p.pfc_wd_deadlocked), tc, tail),
             p.name);
  } else if (!counted.empty()) {
    out_.Add("pfc.watchdog-events", Verdict::kWarn,
             fmt::format("no class in DEADLOCK now, but pause storms happened: deadlocks counted "
                         "on classes {}",
                         counted),
             p.name);
  } else {
    out_.Add("pfc.watchdog-events", Verdict::kPass, "no PFC watchdog deadlock on any traffic class",
             p.name);
  }
}

const SkippedLine* Auditor::SkippedEcnLine() const {
  static constexpr std::string_view kEcnWords[] = {"ecn",
                                                   "random-detect",
                                                   "wred",
                                                   "congestion-control",
                                                   "explicit-congestion-notification",
                                                   "min_threshold",
                                                   "drop-profile"};
  for (const SkippedLine& s : cfg_.skipped) {
    if (!s.unreadable) continue;
    std::string lower = text::ToLower(s.text);
    for (std::string_view w : kEcnWords)
      if (lower.find(w) != std::string::npos) return &s;
  }
  return nullptr;
}

// Thresholds stated as shares of the queue's buffer: Kmin vs Kmax compare
// directly, and Kmin's share is the ratio the rule of thumb speaks of; Kmax
// against the PFC trigger needs the queue's buffer in bytes, which such
// inputs do not give.
void Auditor::CheckRelativeEcn(const PortQos& p, const EcnQueue& e, int q) {
  if (!e.kmin_percent || !e.kmax_percent) {
    out_.Add("ecn.kmin-kmax", Verdict::kIndeterminate,
             "the input does not state both Kmin and Kmax", p.name);
  } else {
    std::string nums = fmt::format("Kmin {:g}% vs Kmax {:g}% of the queue buffer on queue {}",
                                   *e.kmin_percent, *e.kmax_percent, q);
    if (*e.kmin_percent > *e.kmax_percent) {
      out_.Add("ecn.kmin-kmax", Verdict::kFail, nums + ": Kmin above Kmax, marking jumps to 100%",
               p.name);
    } else if (*e.kmin_percent == *e.kmax_percent) {
      out_.Add("ecn.kmin-kmax", Verdict::kWarn,
               nums + ": Kmin equals Kmax, marking is a step from 0 to 100%", p.name);
    } else {
      out_.Add("ecn.kmin-kmax", Verdict::kPass, nums, p.name);
    }
  }
  if (!e.kmin_percent) {
    out_.Add("ecn.kmin-ratio", Verdict::kIndeterminate, "the input does not state Kmin", p.name);
  } else {
    const double pct = *e.kmin_percent;
    std::string nums =
        fmt::format("Kmin is {} of the queue's buffer (stated as a share)", Percent(pct));
    if (pct >= 100.0) {
      out_.Add("ecn.kmin-ratio", Verdict::kFail,
               nums + ": marking never starts before the buffer is full", p.name);
    } else if (pct < 15.0 || pct > 35.0) {
      out_.Add("ecn.kmin-ratio", Verdict::kWarn, nums + "; expected about 20-30%", p.name);
    } else {
      out_.Add("ecn.kmin-ratio", Verdict::kPass, nums + " (about 20-30% expected)", p.name);
    }
  }
  out_.Add("ecn.kmax-below-pfc", Verdict::kIndeterminate,
           e.kmax_percent
               ? fmt::format("Kmax is {:g}% of the queue's buffer; the input gives that buffer no "
                             "size, so it cannot be compared with the PFC trigger",
                             *e.kmax_percent)
               : std::string("the input does not state Kmax"),
           p.name);
}

void Auditor::CheckEcn(const PortQos& p) {
  const int r = opts_.roce_priority;
  const int q = cfg_.QueueOf(r);
  auto it = p.ecn.find(q);
  if ((it == p.ecn.end() || !it->second.enabled) && !cfg_.ecn_stated) {
    out_.Add("ecn.roce-queue", Verdict::kIndeterminate,
             fmt::format("the input states no ECN / WRED configuration, so ECN on queue {} (RoCE "
                         "priority {}) cannot be checked",
                         q, r),
             p.name);
    return;
  }
  if (it == p.ecn.end() || !it->second.enabled) {
    if (const SkippedLine* s = SkippedEcnLine()) {
      out_.Add("ecn.roce-queue", Verdict::kIndeterminate,
               fmt::format("ECN on queue {} (RoCE priority {}) is not established: line {} looks "
                           "like an ECN / WRED setting but was skipped ({}); --verbose lists "
                           "every skipped line",
                           q, r, s->line, s->reason),
               p.name);
      return;
    }
    out_.Add("ecn.roce-queue", Verdict::kFail,
             fmt::format("ECN marking not enabled on queue {} (RoCE priority {}): DCQCN gets no "
                         "congestion signal and PFC does all the work",
                         q, r),
             p.name);
    return;
  }
  const EcnQueue& e = it->second;
  if (e.pmax_percent && !(*e.pmax_percent >= 0 && *e.pmax_percent <= 100)) {
    // A switch refuses such a setting (EOS max-mark-probability takes 1-100,
    // SONiC's WRED drop probability 0-100): the text is not what runs.
    out_.Add("ecn.roce-queue", Verdict::kFail,
             fmt::format("ECN on queue {}: marking probability {:g}% is outside 0-100%{}; the "
                         "switch would refuse it, so the marking that runs is not the one "
                         "written here",
                         q, *e.pmax_percent, e.line > 0 ? fmt::format(" (line {})", e.line) : ""),
             p.name);
    return;
  }
  std::string pmax = e.pmax_percent ? fmt::format(", Pmax {:g}%", *e.pmax_percent) : "";
  auto pct_text = [](const std::optional<double>& v) {
    return v ? fmt::format("{:g}% of the queue buffer", *v) : std::string("?");
  };
  const bool relative = !e.kmin && !e.kmax && (e.kmin_percent || e.kmax_percent);
  out_.Add("ecn.roce-queue", Verdict::kPass,
           relative ? fmt::format("ECN marking enabled on queue {} (Kmin {}, Kmax {}{})", q,
                                  pct_text(e.kmin_percent), pct_text(e.kmax_percent), pmax)
                    : fmt::format("ECN marking enabled on queue {} (Kmin {}, Kmax {}{})", q,
                                  e.kmin ? e.kmin->ToString() : "?",
                                  e.kmax ? e.kmax->ToString() : "?", pmax),
           p.name);
  if (relative) {
    CheckRelativeEcn(p, e, q);
    return;
  }

  std::optional<int64_t> kmin = e.kmin ? ToBytes(*e.kmin) : std::nullopt;
  std::optional<int64_t> kmax = e.kmax ? ToBytes(*e.kmax) : std::nullopt;
  // Kmin vs Kmax: comparable without a cell size when both use the same unit.
  if (!e.kmin || !e.kmax) {
    out_.Add("ecn.kmin-kmax", Verdict::kIndeterminate,
             "the input does not state both Kmin and Kmax", p.name);
  } else {
    std::optional<int64_t> a = kmin;
    std::optional<int64_t> b = kmax;
    if (e.kmin->unit == e.kmax->unit) {
      a = e.kmin->value;
      b = e.kmax->value;
    }
    std::string nums =
        fmt::format("Kmin {} vs Kmax {} on queue {}", e.kmin->ToString(), e.kmax->ToString(), q);
    if (!a || !b) {
      out_.Add("ecn.kmin-kmax", Verdict::kIndeterminate, nums + ": " + CellHint(), p.name);
    } else if (*a > *b) {
      out_.Add("ecn.kmin-kmax", Verdict::kFail, nums + ": Kmin above Kmax, marking jumps to 100%",
               p.name);
    } else if (*a == *b) {
      out_.Add("ecn.kmin-kmax", Verdict::kWarn,
               nums + ": Kmin equals Kmax, marking is a step from 0 to 100%", p.name);
    } else {
      out_.Add("ecn.kmin-kmax", Verdict::kPass, nums, p.name);
    }
  }

  // Buffer available to the queue: its egress limit when stated, else the PFC trigger.
  auto pg = p.pgs.find(r);
  std::optional<int64_t> trigger;
  std::string trigger_desc;
  bool trigger_stated = false;
  if (pg != p.pgs.end() && pg->second.pfc_trigger.Stated()) {
    trigger_stated = true;
    trigger = pg->second.pfc_trigger.ResolveBytes(opts_.cell_bytes);
    trigger_desc = pg->second.pfc_trigger.Describe();
  }
  std::optional<int64_t> avail;
  std::string avail_desc;
  bool avail_stated = false;
  if (auto ql = p.queue_limit.find(q); ql != p.queue_limit.end() && ql->second.Stated()) {
    avail_stated = true;
    avail = ql->second.ResolveBytes(opts_.cell_bytes);
    avail_desc = "egress limit of queue " + std::to_string(q) + ", " + ql->second.Describe();
  } else if (trigger_stated) {
    avail_stated = true;
    avail = trigger;
    avail_desc = "PFC trigger of priority " + std::to_string(r) + ", " + trigger_desc;
  } else if (cfg_.lossless_pool) {
    avail_stated = true;
    avail = ToBytes(*cfg_.lossless_pool);
    avail_desc = "lossless pool " + cfg_.lossless_pool_name + " " + cfg_.lossless_pool->ToString() +
                 ", the whole pool for one queue";
  }
  if (!e.kmin) {
    out_.Add("ecn.kmin-ratio", Verdict::kIndeterminate, "the input does not state Kmin", p.name);
  } else if (!avail_stated) {
    out_.Add("ecn.kmin-ratio", Verdict::kIndeterminate,
             fmt::format("Kmin {}, but the input states no buffer limit for queue {}, PFC "
                         "trigger for priority {} or lossless pool size",
                         e.kmin->ToString(), q, r),
             p.name);
  } else if (!kmin || !avail) {
    out_.Add("ecn.kmin-ratio", Verdict::kIndeterminate,
             fmt::format("Kmin {} against {}: {}", e.kmin->ToString(), avail_desc,
                         (kmin ? "the pool size is unknown or " : "") + CellHint()),
             p.name);
  } else if (*avail <= 0) {
    out_.Add("ecn.kmin-ratio", Verdict::kFail,
             fmt::format("no buffer available to queue {} ({})", q, avail_desc), p.name);
  } else {
    double pct = 100.0 * static_cast<double>(*kmin) / static_cast<double>(*avail);
    std::string nums = fmt::format("Kmin {} is {} of {} available ({})", Bytes(*kmin), Percent(pct),
                                   Bytes(*avail), avail_desc);
    if (*kmin >= *avail) {
      out_.Add("ecn.kmin-ratio", Verdict::kFail,
               nums + ": marking never starts before the buffer is full", p.name);
    } else if (pct < 15.0) {
      out_.Add("ecn.kmin-ratio", Verdict::kWarn,
               nums + "; expected about 20-30%: marking starts early and costs throughput", p.name);
    } else if (pct > 35.0) {
      out_.Add("ecn.kmin-ratio", Verdict::kWarn,
               nums + "; expected about 20-30%: little room between first mark and full buffer",
               p.name);
    } else {
      out_.Add("ecn.kmin-ratio", Verdict::kPass, nums + " (about 20-30% expected)", p.name);
    }
  }

  if (!e.kmax) {
    out_.Add("ecn.kmax-below-pfc", Verdict::kIndeterminate, "the input does not state Kmax",
             p.name);
  } else if (!trigger_stated) {
    out_.Add("ecn.kmax-below-pfc", Verdict::kIndeterminate,
             fmt::format("Kmax {}, but the input states no PFC trigger (XOFF or dynamic threshold) "
                         "for priority {}",
                         e.kmax->ToString(), r),
             p.name);
  } else if (!kmax || !trigger) {
    out_.Add("ecn.kmax-below-pfc", Verdict::kIndeterminate,
             fmt::format("Kmax {} against PFC trigger {}: {}", e.kmax->ToString(), trigger_desc,
                         (kmax ? "the pool size is unknown or " : "") + CellHint()),
             p.name);
  } else {
    std::string nums =
        fmt::format("Kmax {} vs PFC trigger {} ({})", Bytes(*kmax), Bytes(*trigger), trigger_desc);
    if (*kmax >= *trigger) {
      out_.Add("ecn.kmax-below-pfc", Verdict::kFail,
               nums + ": PFC pauses the sender before ECN reaches full marking", p.name);
    } else {
      out_.Add("ecn.kmax-below-pfc", Verdict::kPass, nums, p.name);
    }
  }
}

void Auditor::CheckCnp() {
  const int dscp = opts_.cnp_dscp;
  auto it = cfg_.dscp_to_queue.find(dscp);
  if (it == cfg_.dscp_to_queue.end()) {
    out_.Add("cnp.priority", Verdict::kIndeterminate,
             fmt::format("the input does not map DSCP {} (CNP) to a queue", dscp), "");
    return;
  }
  int q = it->second;
  int roce_q = cfg_.QueueOf(opts_.roce_priority);
  auto s = cfg_.scheduling.find(q);
  std::string head = fmt::format("CNP (DSCP {}) goes to queue {}", dscp, q);
  if (q == roce_q) {
    out_.Add("cnp.priority", Verdict::kFail,
             head + ", the RoCE data queue: CNPs wait behind the congestion they report", "");
  } else if (s == cfg_.scheduling.end()) {
    out_.Add("cnp.priority", Verdict::kIndeterminate,
             head + ", but the input does not state how that queue is scheduled", "");
  } else if (s->second == Scheduling::kStrict) {
    out_.Add("cnp.priority", Verdict::kPass, head + ", strict priority", "");
  } else {
    out_.Add("cnp.priority", Verdict::kWarn,
             head + ", scheduled by weight, not strict priority: CNPs can be delayed", "");
  }
}

void Auditor::CheckPgDrops(const PortQos& p) {
  if (p.pg_drops.empty()) return;
  // PG n is read as priority n (SONiC's default TC_TO_PRIORITY_GROUP_MAP puts the
  // lossless traffic classes 3 and 4 in PGs 3 and 4).
  std::set<int> lossless = p.pfc_priorities;
  const bool assumed = lossless.empty() && !p.pfc_stated;
  if (assumed) lossless.insert(opts_.roce_priority);
  if (lossless.empty()) return;
  std::string bad;
  for (int g : lossless)
    if (auto it = p.pg_drops.find(g); it != p.pg_drops.end() && it->second > 0)
      bad += fmt::format("{}PG {}: {} dropped", bad.empty() ? "" : ", ", g, it->second);
  std::string pgs = PrioList(lossless);
  if (bad.empty()) {
    bool counted = std::any_of(lossless.begin(), lossless.end(),
                               [&](int g) { return p.pg_drops.count(g) > 0; });
    if (counted)
      out_.Add("drops.lossless", Verdict::kPass,
               fmt::format("no ingress discards on lossless priority groups {}{}", pgs,
                           assumed ? " (assumed lossless: the RoCE priority's PG)" : ""),
               p.name);
    return;
  }
  if (assumed) {
    out_.Add("drops.lossless", Verdict::kWarn,
             fmt::format("ingress discards on the RoCE priority's PG ({}); the input does not say "
                         "which priorities are lossless: if priority {} is, its headroom "
                         "overflowed and the lossless class is dropping",
                         bad, opts_.roce_priority),
             p.name);
  } else {
    out_.Add("drops.lossless", Verdict::kFail,
             fmt::format("ingress discards on lossless priority groups ({}): the PG headroom "
                         "overflowed (too small for cable and speed, or PFC not honoured upstream)",
                         bad),
             p.name);
  }
}

void Auditor::CheckDrops(const PortQos& p) {
  CheckPgDrops(p);
  if (p.queue_drops.empty()) return;
  std::set<int> lossless;
  for (int prio : p.pfc_priorities) lossless.insert(cfg_.QueueOf(prio));
  // Which queues are lossless: the stated PFC priorities; queues the device
  // labels as RoCE traffic; else (no PFC stated) the RoCE priority's queue, assumed.
  bool assumed = false;
  if (p.drops_are_roce) {
    for (const auto& [q, n] : p.queue_drops) lossless.insert(q);
  } else if (!p.pfc_stated && lossless.empty()) {
    lossless.insert(cfg_.QueueOf(opts_.roce_priority));
    assumed = true;
  }
  std::string bad;
  int64_t total = 0;
  for (int q : lossless) {
    auto it = p.queue_drops.find(q);
    if (it != p.queue_drops.end() && it->second > 0) {
      bad += fmt::format("{}queue {}: {} dropped", bad.empty() ? "" : ", ", q, it->second);
      total += it->second;
    }
  }
  if (lossless.empty()) return;
  if (total > 0 && assumed) {
    out_.Add("drops.lossless", Verdict::kWarn,
             fmt::format("discards on the RoCE priority's queue ({}); the input does not say "
                         "which priorities are lossless: if priority {} is (the usual RoCE "
                         "setting), the lossless class is dropping",
                         bad, opts_.roce_priority),
             p.name);
  } else if (total > 0) {
    out_.Add("drops.lossless", Verdict::kFail,
             fmt::format("lossless queues report discards ({}): the lossless class is dropping "
                         "(headroom, watchdog or configuration mismatch)",
                         bad),
             p.name);
  } else {
    out_.Add("drops.lossless", Verdict::kPass,
             fmt::format("no discards on lossless queues {}{}", PrioList(lossless),
                         assumed ? " (assumed lossless: the RoCE priority's queue)" : ""),
             p.name);
  }
}

void Auditor::CheckPfcFrames(const PortQos& p) {
  if (p.pfc_rx_frames.empty() && p.pfc_tx_frames.empty()) return;
  std::set<int> lossless = p.pfc_priorities;
  if (!p.pfc_stated || lossless.empty()) lossless.insert(opts_.roce_priority);
  std::set<int> active;
  std::set<int> outside;
  int64_t total = 0;
  for (const auto* m : {&p.pfc_rx_frames, &p.pfc_tx_frames})
    for (const auto& [prio, n] : *m)
      if (n > 0) {
        active.insert(prio);
        total += n;
        if (!lossless.count(prio)) outside.insert(prio);
      }
  if (active.empty()) {
    out_.Add("pfc.frames", Verdict::kPass, "no PFC frames sent or received", p.name);
  } else if (outside.empty()) {
    out_.Add("pfc.frames", Verdict::kPass,
             fmt::format("PFC frames only on lossless priorities {} ({} frames)", PrioList(active),
                         total),
             p.name);
  } else {
    out_.Add("pfc.frames", Verdict::kWarn,
             fmt::format("PFC frames on priorities {}, outside the lossless priorities {}{}: "
                         "those classes are paused too (PFC enabled beyond RoCE, or a peer with "
                         "a different priority map)",
                         PrioList(outside), PrioList(lossless),
                         p.pfc_stated ? "" : " (assumed: the RoCE priority)"),
             p.name);
  }
}

QosAudit Auditor::Run() {
  for (const PortQos& p : cfg_.ports) {
    CheckPfc(p);
    CheckHeadroom(p);
    CheckXon(p);
    CheckWatchdogStatus(p);
    CheckEcn(p);
    CheckDrops(p);
    CheckPfcFrames(p);
  }
  CheckCnp();
  if (opts_.cell_bytes > 0 && !opts_.cell_source.empty())
    Note("cell size " + std::to_string(opts_.cell_bytes) + " B from " + opts_.cell_source);

  QosAudit a;
  a.format = cfg_.format;
  a.formats = cfg_.formats;
  a.skipped_lines = cfg_.skipped.size();
  a.file = cfg_.file;
  a.port_count = cfg_.ports.size();
  a.checks = out_.checks;
  auto rank = [](const QosCheck& c) {
    auto it = std::find(kCheckOrder.begin(), kCheckOrder.end(), c.id);
    return static_cast<size_t>(it - kCheckOrder.begin());
  };
  std::stable_sort(a.checks.begin(), a.checks.end(),
                   [&](const QosCheck& x, const QosCheck& y) { return rank(x) < rank(y); });
  a.notes = cfg_.notes;
  for (const std::string& n : notes_) a.notes.push_back(n);
  a.verdict = Verdict::kPass;
  for (const QosCheck& c : a.checks) a.verdict = std::max(a.verdict, c.verdict);
  return a;
}

}  // namespace

std::span<const CellSizePreset> CellSizePresets() {
  return kCellPresets;
}

std::optional<CellSizePreset> FindCellSizePreset(std::string_view name) {
  for (const CellSizePreset& p : kCellPresets)
    if (p.name == name) return p;
  return std::nullopt;
}

int64_t DefaultResponseBits(int64_t gbps) {
  // IEEE 802.3 Annex 31B, Table 31B-1 (pause_quanta x 512 bit times): 10G 60,
  // 40G 118, 100G 394, 200G/400G 905 quanta. 25G and 50G take the next listed
  // speed up (conservative); above 400G the 400G figure. The 10G and 40G
  // figures could not be checked against a public copy of the table (unverified,
  // said in the report's note).
  if (gbps <= 10) return 30'720;
  if (gbps <= 40) return 60'416;
  if (gbps <= 100) return 201'728;
  return 463'360;
}

int64_t RequiredHeadroomBytes(int64_t gbps, double cable_m, int64_t mtu_bytes, Time t_phy,
                              Time t_resp) {
  Time cable_rtt = units::CableDelay(cable_m) * 2;
  Time in_flight = cable_rtt + t_phy * 4 + t_resp;
  // bytes = rate[b/s] * t[ps] / 8e12 = gbps * t[ps] / 8000, rounded up; exact in int64
  // for any realistic rate and delay (1600 Gb/s * 1 s is 1.6e15).
  int64_t wire = (gbps * in_flight.ps() + 7999) / 8000;
  return 2 * (mtu_bytes + 20) + 84 + wire;
}

QosAudit AuditQos(const QosConfig& cfg, const QosAuditOptions& opts) {
  Auditor a(cfg, opts);
  return a.Run();
}

}  // namespace lossless::audit::qos
