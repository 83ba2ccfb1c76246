#pragma once
// Topology as plain data: nodes (hosts = one NIC endpoint each, switches) and
// full-duplex links. Builders size fabrics from the formulas of
// shared/reference/tco.md §1; the fabric module turns a Topology into a
// running network. Nothing here knows about packets or the engine.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "units/units.hpp"

namespace lossless::topology {

enum class NodeKind : uint8_t { kHost, kSwitch };
// Role of a node in a Clos; kOther for explicit topologies that do not say.
enum class Tier : uint8_t { kHost, kLeaf, kSpine, kCore, kOther };

struct Node {
  std::string name;      // unique, e.g. "host12", "leaf3", "spine0", "core7"
  NodeKind kind = NodeKind::kHost;
  Tier tier = Tier::kOther;
  int32_t group = -1;    // pod (fat tree) or scalable unit (rail-optimized); -1 if none
};

// A full-duplex link between nodes a and b (indices into Topology::nodes).
// Parallel links between the same pair are allowed and are distinct ports.
struct Link {
  uint32_t a = 0;
  uint32_t b = 0;
  units::Rate rate;
  units::Time delay;     // one-way propagation, > 0
};

struct Topology {
  std::vector<Node> nodes;
  std::vector<Link> links;
  // Node index of each host in rank order: hosts[r] is GPU/NIC r.
  std::vector<uint32_t> hosts;
  std::string description;  // one line, e.g. "2-tier leaf-spine, 32 leaves, 16 spines"
};

// Counts of a fabric from the sizing formulas (tco.md §1.3-§1.5, §1.9).
struct Sizing {
  int tiers = 0;          // 1 (single switch), 2 or 3
  int64_t leaves = 0;
  int64_t spines = 0;
  int64_t cores = 0;
  int64_t switches = 0;   // leaves + spines + cores
  int64_t links = 0;      // host links + switch-to-switch links
  int64_t switch_ports_used = 0;
};

struct ClosParams {
  int64_t gpus = 0;               // N, one NIC (host endpoint) per GPU
  int radix = 64;                 // k, ports of the host link speed
  double oversubscription = 1.0;  // o in o:1 (down:up) at the leaf; 1 = non-blocking
  int tiers = 0;                  // 0 = smallest that fits; else 2 or 3
  int gpus_per_node = 8;          // G, for rail-optimized placement
  units::Rate link_rate = units::Rate::Gbps(400);
  units::Time link_delay = units::Time::Ns(1000);
};

// Sizing per tco.md. Throws InputError(where, ...) naming the limit when N
// cannot be hosted non-blocking at the requested tiers (e.g. "at most 2048
// GPUs fit a 2-tier non-blocking fabric of radix-64 switches, got 4096").
Sizing SizeClos(const ClosParams& p, const Location& where);

// Builders. Host r is hosts[r]; leaves fill in order.
Topology BuildLeafSpine(const ClosParams& p, const Location& where);   // 2 tiers
Topology BuildFatTree(const ClosParams& p, const Location& where);     // 3 tiers, k-ary pods
// Rail-optimized (tco.md §1.7): NIC j of every node in a scalable unit on leaf j of that SU.
Topology BuildRailOptimized(const ClosParams& p, const Location& where);
// The LS-RING anchor shape (anchors/README.md): hosts_per_leaf hosts per leaf,
// `spines` spines, one link from each leaf to each spine.
Topology BuildLsRing(int64_t hosts, int hosts_per_leaf, int spines, units::Rate rate,
                     units::Time delay, const Location& where);

// Explicit topology file (format in docs/topology-file.md). Errors name file and line.
Topology ParseTopologyFile(const std::string& path);
Topology ParseTopologyText(const std::string& text, const std::string& file_name);

// First pair of hosts (by rank) with no path between them, if any.
std::optional<std::pair<uint32_t, uint32_t>> FindUnreachableHosts(const Topology& t);

}  // namespace lossless::topology
