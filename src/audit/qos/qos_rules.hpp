#pragma once
// Checks of a parsed RoCE QoS configuration (QosConfig), each with an id, a
// verdict and a message with numbers. Pure: no I/O.
//
// Check ids (docs/audit-qos.md has the full table):
//   pfc.roce-priority    PFC enabled on the RoCE priority
//   pfc.other-priorities PFC enabled on no other priority (0 = fail, others = warn)
//   pfc.headroom         headroom >= H = 2(MTU+20) + 84 + B(2·L·5 ns/m + 4·t_PHY + t_resp)
//   pfc.xon              xon not above a profile size meant to hold xon + xoff
//                        (only when the input states both)
//   pfc.watchdog         PFC watchdog on lossless ports (when the input can say)
//   pfc.watchdog-events  no traffic class in watchdog DEADLOCK and no deadlocks
//                        counted (only with the watchdog's status table)
//   pause.global         no 802.3x link pause
//   ecn.roce-queue       ECN marking on the RoCE priority's queue, with a marking
//                        probability inside 0-100 %
//   ecn.kmin-kmax        Kmin < Kmax
//   ecn.kmin-ratio       Kmin about 20-30 % of the buffer available to the queue
//   ecn.kmax-below-pfc   Kmax below the PFC trigger (XOFF or dynamic threshold)
//   cnp.priority         CNP (DSCP 48) in its own strict-priority queue
//   drops.lossless       no discards on lossless queues (when the input has counters)
//
// Identical results on several ports are merged into one check listing the ports.
// Overall verdict: fail > warn > indeterminate > pass.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "audit/qos/qos_model.hpp"
#include "audit/verdict.hpp"
#include "units/units.hpp"

namespace lossless::audit::qos {

// Buffer cell ("segment") size of a switch ASIC family.
struct CellSizePreset {
  std::string_view name;  // --platform value, e.g. "spectrum2"
  int64_t bytes;
  bool verified;  // false: value from secondary sources, marked [unverified]
  std::string_view source;
};
std::span<const CellSizePreset> CellSizePresets();
std::optional<CellSizePreset> FindCellSizePreset(std::string_view name);

struct QosAuditOptions {
  int roce_priority = 3;              // 0..7
  int cnp_dscp = 48;                  // 0..63
  int64_t cell_bytes = 0;             // 0 = unknown
  std::string cell_source;            // how cell_bytes was chosen, for messages
  std::optional<double> cable_m;      // overrides the config's cable length
  std::optional<int64_t> port_gbps;   // overrides the config's port speed
  std::optional<int64_t> mtu_bytes;   // largest frame; default kDefaultMtuBytes
  std::optional<units::Time> t_phy;   // one PHY traversal; default kDefaultPhyDelay
  std::optional<units::Time> t_resp;  // sender response; default DefaultResponseBits / rate
};

inline constexpr int64_t kDefaultMtuBytes = 9216;
inline constexpr units::Time kDefaultPhyDelay = units::Time::Ns(150);
// 802.3 D-Resp in bit times (Annex 31B, Table 31B-1): 30,720 up to 10GbE,
// 60,416 up to 40GbE, 201,728 up to 100GbE, 463,360 above (the 200/400GbE
// figure; no 800G figure is published, docs/audit-qos.md).
int64_t DefaultResponseBits(int64_t gbps);

// H in bytes (docs/model/pfc.md#headroom), rounded up. gbps > 0, cable_m >= 0.
int64_t RequiredHeadroomBytes(int64_t gbps, double cable_m, int64_t mtu_bytes, units::Time t_phy,
                              units::Time t_resp);

struct QosCheck {
  std::string id;
  Verdict verdict = Verdict::kPass;
  std::string message;
  std::vector<std::string> ports;  // empty for switch-wide checks; "*" = all ports
};

struct QosAudit {
  QosFormat format = QosFormat::kSonicJson;
  std::string file;
  std::vector<QosFormat> formats;  // every format read, as in QosConfig::formats
  size_t port_count = 0;
  size_t skipped_lines = 0;  // input lines not used (QosConfig::skipped)
  std::vector<QosCheck> checks;
  std::vector<std::string> notes;  // assumptions (parser and rules)
  Verdict verdict = Verdict::kPass;
};

QosAudit AuditQos(const QosConfig& cfg, const QosAuditOptions& opts);

}  // namespace lossless::audit::qos
