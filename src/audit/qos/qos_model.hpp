#pragma once
// Typed model of a switch's RoCE QoS configuration, shared by every input
// format (SONiC config_db.json and show text, Cumulus NVUE, Onyx, Arista EOS,
// Cisco NX-OS, Dell Enterprise SONiC sonic-cli, Junos). Parsers fill it; rules
// (qos_rules.hpp) read it.
//
// Numbering: "priority" is the 802.1p / switch priority that PFC acts on;
// "queue" is the egress queue (traffic class) that ECN and the scheduler act
// on. Parsers record the mapping between them in QosConfig::priority_to_queue
// when the input states it; a missing entry means the identity mapping.
//
// Buffer amounts keep the unit the input used (bytes or ASIC cells) so the
// rules can say "indeterminate" when a cell size is needed but not known.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace lossless::audit::qos {

enum class QosFormat {
  kSonicJson,
  kSonicShow,
  kNvue,
  kOnyx,
  kEos,
  kNxos,
  kDellSonic,
  kJunos,
  kTrafficConf,
  // A switch configuration (interfaces, hostname) in which no QoS reader
  // found a statement: no PFC, no ECN, no buffers.
  kSwitchConfig
};

// "sonic-json", "sonic-show", "nvue", "onyx", "eos", "nxos", "dell-sonic", "junos",
// "cumulus-traffic", "switch-config".
std::string_view QosFormatName(QosFormat f);
// Inverse of QosFormatName; nullopt for an unknown name.
std::optional<QosFormat> QosFormatFromName(std::string_view name);

// A buffer size or threshold as the input states it.
struct BufferAmount {
  enum class Unit { kBytes, kCells };
  int64_t value = 0;  // >= 0
  Unit unit = Unit::kBytes;

  static BufferAmount Bytes(int64_t v) { return {v, Unit::kBytes}; }
  static BufferAmount Cells(int64_t v) { return {v, Unit::kCells}; }
  // Value in bytes; nullopt when in cells and cell_bytes <= 0.
  std::optional<int64_t> ToBytes(int64_t cell_bytes) const;
  // "150KB" style for bytes (units::FormatBytes), "1200 cells" for cells.
  std::string ToString() const;
};

// A buffer limit: either a static size, or a dynamic threshold
// alpha * free shared pool (docs/model/switch-buffers.md#dynamic-thresholds). Resolved for the case
// of one congested queue on an otherwise empty pool: alpha * pool / (1 + alpha).
struct BufferLimit {
  std::optional<BufferAmount> static_size;
  std::optional<double> alpha;       // dynamic threshold factor, > 0
  std::optional<BufferAmount> pool;  // shared pool the alpha applies to
  std::string pool_name;

  bool Stated() const { return static_size.has_value() || alpha.has_value(); }
  // Bytes; nullopt when not stated, when the pool size is unknown for a
  // dynamic limit, or when cells are involved and cell_bytes <= 0.
  std::optional<int64_t> ResolveBytes(int64_t cell_bytes) const;
  // Human description, e.g. "static 1MB" or "alpha 1 of pool ingress_lossless_pool 12MiB".
  std::string Describe() const;
};

// Ingress buffer of one lossless priority (priority group).
struct LosslessPg {
  BufferLimit pfc_trigger;               // occupancy at which XOFF is sent
  std::optional<BufferAmount> xon;       // resume threshold / reserve, if stated
  std::optional<BufferAmount> headroom;  // bytes kept free for in-flight data (SONiC/Onyx xoff)
  // The PG's reserved buffer when it is meant to hold xon + xoff (a SONiC
  // profile without xon_offset, NVIDIA Spectrum style): xon above it cannot be
  // reached. Not set where size is only the PG's guaranteed minimum
  // (Broadcom-style profiles with xon_offset, where xon above size is normal).
  std::optional<BufferAmount> reserve;
  std::string source;  // e.g. profile name
  int64_t line = 0;
};

// ECN / WRED marking on one egress queue.
struct EcnQueue {
  bool enabled = false;
  std::optional<BufferAmount> kmin;
  std::optional<BufferAmount> kmax;
  std::optional<double> pmax_percent;  // marking probability at Kmax, 0..100
  // Thresholds stated as a share of the queue's buffer (Junos drop-profile fill
  // levels, Onyx minimum/maximum-relative), 0..100, when not in bytes or cells.
  std::optional<double> kmin_percent;
  std::optional<double> kmax_percent;
  std::string source;
  int64_t line = 0;
};

// Settings of one port, or of all ports when name == "*".
struct PortQos {
  std::string name;
  int64_t line = 0;
  bool pfc_stated = false;                 // the input says which priorities have PFC
  std::set<int> pfc_priorities;            // 0..7
  std::optional<bool> link_pause;          // 802.3x global pause rx or tx on
  std::optional<bool> pfc_watchdog;        // nullopt when the format cannot say
  std::map<int, EcnQueue> ecn;             // by queue
  std::map<int, LosslessPg> pgs;           // by priority
  std::map<int, BufferLimit> queue_limit;  // egress limit by queue
  std::optional<int64_t> speed_gbps;
  std::optional<double> cable_m;
  std::map<int, int64_t> queue_drops;  // dropped packets by queue, when the input has counters
  // The device labels queue_drops as drops of RoCE (lossless) traffic, e.g. NVUE
  // "Tx buffer discards for RoCE traffic": those queues are lossless even when the
  // input does not state the PFC priorities.
  bool drops_are_roce = false;
  // Ingress discards by priority group (SONiC `show priority-group drop counters`):
  // on a lossless PG they mean the headroom overflowed.
  std::map<int, int64_t> pg_drops;
  // PFC watchdog status per traffic class (NVUE `nv show interface X qos
  // pfc-watchdog`), when the input has it: deadlocks counted, and the classes
  // the watchdog reports in DEADLOCK now (a pause storm it is breaking by
  // dropping that class's traffic).
  std::map<int, int64_t> pfc_wd_deadlocks;
  std::set<int> pfc_wd_deadlocked;
  bool pfc_wd_status = false;  // the input has the per-class watchdog status
  // PFC frames received / sent per priority, when the input has PFC counters.
  std::map<int, int64_t> pfc_rx_frames;
  std::map<int, int64_t> pfc_tx_frames;
};

// An input line that no parser used, with the reason (shown by --verbose).
struct SkippedLine {
  int64_t line = 0;  // 1-based
  std::string text;
  std::string reason;
  // True when the parser raised an error on this line (a value or unit it could
  // not interpret): a setting there is unknown, not absent, and the rules say
  // indeterminate. False for prose, prompts, separators and statements outside
  // the parser's model (read as not configuring anything it checks).
  bool unreadable = false;
};

enum class Scheduling { kStrict, kWeighted };

struct QosConfig {
  QosFormat format = QosFormat::kSonicJson;
  std::string file;
  std::vector<PortQos> ports;            // never empty after a successful parse
  std::map<int, int> dscp_to_queue;      // DSCP -> egress queue, as stated
  std::map<int, int> priority_to_queue;  // switch priority -> queue, as stated
  std::map<int, Scheduling> scheduling;  // by queue, as stated
  // The input carries ECN / WRED configuration (a WRED table, a queuing
  // policy, NVUE congestion-control): a queue without ECN then has it off.
  // False for outputs that cannot show ECN (counters, PFC tables).
  bool ecn_stated = false;
  // Size of the shared pool that lossless (PFC) traffic uses, when the input
  // gives it (SONiC ingress_lossless_pool, Onyx pool of a lossless PG, NVUE
  // roce-reserved-ingress).
  std::optional<BufferAmount> lossless_pool;
  std::string lossless_pool_name;
  std::vector<std::string> notes;    // assumptions the parser made
  std::vector<QosFormat> formats;    // every format read from the input, first = `format`
  std::vector<SkippedLine> skipped;  // lines not used, in line order

  // Queue of a priority: the stated mapping, else the identity.
  int QueueOf(int priority) const;
};

}  // namespace lossless::audit::qos
