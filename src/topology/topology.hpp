#pragma once
// Topology as plain data: nodes (hosts = one NIC endpoint each, switches) and
// full-duplex links. Builders size fabrics from the formulas of
// docs/model/clos-sizing.md; the fabric module turns a Topology into a
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
  std::string name;  // unique, e.g. "host12", "leaf3", "spine0", "core7"
  NodeKind kind = NodeKind::kHost;
  Tier tier = Tier::kOther;
  int32_t group = -1;  // pod (fat tree) or scalable unit (rail-optimized); -1 if none
};

// A full-duplex link between nodes a and b (indices into Topology::nodes).
// Parallel links between the same pair are allowed and are distinct ports.
struct Link {
  uint32_t a = 0;
  uint32_t b = 0;
  units::Rate rate;
  units::Time delay;  // one-way propagation, > 0
};

struct Topology {
  std::vector<Node> nodes;
  std::vector<Link> links;
  // Node index of each host in rank order: hosts[r] is GPU/NIC r.
  std::vector<uint32_t> hosts;
  std::string description;  // one line, e.g. "2-tier leaf-spine, 32 leaves, 16 spines"
};

// Counts of a fabric from the sizing formulas (docs/model/clos-sizing.md).
struct Sizing {
  int tiers = 0;  // 1 (single switch), 2 or 3
  int64_t leaves = 0;
  int64_t spines = 0;
  int64_t cores = 0;
  int64_t switches = 0;  // leaves + spines + cores
  int64_t links = 0;     // host links + switch-to-switch links
  int64_t switch_ports_used = 0;
  // Added detail; links == host_links + leaf_spine_links + spine_core_links.
  int64_t pods = 0;              // 3 tiers only: ceil(leaves / (k/2)); else 0
  int64_t down_per_leaf = 0;     // d: host ports of a leaf (k for a single switch)
  int64_t up_per_leaf = 0;       // u: uplinks of a leaf (0 for a single switch)
  int64_t host_links = 0;        // N
  int64_t leaf_spine_links = 0;  // leaves · u
  int64_t spine_core_links = 0;  // spines · k/2 (3 tiers only)
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

// Sizing per docs/model/clos-sizing.md. Throws InputError(where, ...) naming the limit when N
// cannot be hosted non-blocking at the requested tiers (e.g. "at most 2048
// GPUs fit a 2-tier non-blocking fabric of radix-64 switches, got 4096").
//
// `where` locates the parameter block (or one of its fields); an error about
// p.radix names field "<block>.radix", where <block> is where.field without a
// trailing parameter name: "topology" and "topology.gpus" both give
// "topology.radix", "" gives "radix".
// Leaf split for o:1: d = floor(k·o/(o+1)) down, u = k − d up, so the real
// ratio d:u is never above o (k = 64, o = 1 → 32/32; o = 3 → 48/16).
//   1 tier : N ≤ k, one switch, N links.
//   2 tiers: L = ceil(N/d), S = ceil(L·u/k); every leaf reaches every spine,
//            so L ≤ k: at most k·d GPUs (k²/2 non-blocking).
//   3 tiers: pods of k/2 leaves; a pod with l leaves has ceil(l·u/(k/2))
//            spines of k/2 down + k/2 up (non-blocking above the leaf; o = 1
//            gives S = L); C = ceil(S/2) cores; at most k pods: k·(k/2)·d
//            GPUs (k³/4 non-blocking).
// p.tiers = 0 picks the smallest of 1, 2, 3 that fits; 1, 2 or 3 forces it.
// Checks radix (even, 2..65536), gpus ≥ 1, oversubscription ≥ 1 (finite,
// leaving at least one uplink), tiers in 0..3. O(1).
Sizing SizeClos(const ClosParams& p, const Location& where);

// The ports of a radix-`radix` leaf for o:1: the most down ports whose ratio
// to the rest stays within o (at least 1 of each), as every builder splits a
// leaf. The ratio built is down/up, which can be far from o: a radix-8 leaf
// at 64:1 is 7:1, at 1.5:1 is 1:1. {0, 0} when radix < 2 or o < 1.
struct LeafPorts {
  int64_t down = 0;
  int64_t up = 0;
};
LeafPorts SplitLeaf(int64_t radix, double oversubscription);

// Rail-optimized sizing (docs/model/clos-sizing.md#rail-optimized), 2 tiers: nodes = N/G (N must be
// a multiple of G = p.gpus_per_node), d nodes per scalable unit, G leaves per SU (the full SU is
// provisioned), S = the smallest divisor of u that is ≥ ceil(L·u/k), so each leaf's u uplinks
// divide evenly over all S spines (k = 64: 1 SU → 4, 2 → 8, 3 → 16, 4 → 16). At most floor(k/G)
// SUs.
Sizing SizeRailOptimized(const ClosParams& p, const Location& where);

// Builders. Host r is hosts[r]; leaves fill in order.
// Nodes are laid out hosts first (node index r = host r), then leaves, spines,
// cores, named host<i>, leaf<i>, spine<i>, core<i>; links are host links in
// rank order, then leaf–spine, then spine–core. Counts equal SizeClos /
// SizeRailOptimized. Every link gets p.link_rate and p.link_delay (both must
// be > 0). Uplinks are dealt round-robin with one counter per layer, so a
// leaf's u uplinks spread over the spines as evenly as possible (parallel
// links when u > S) and no switch uses more than k ports. O(N) time and memory.
//
// Leaf-spine: host r on leaf r/d, leaf l's uplink i to spine (l·u + i) mod S.
// p.tiers 0 → single switch ("leaf0") for N ≤ k, else 2 tiers; 3 is an error.
Topology BuildLeafSpine(const ClosParams& p, const Location& where);  // 2 tiers
// Fat tree: always 3 tiers (p.tiers 0 or 3). Pod q holds leaves and spines
// q·(k/2)…; a leaf's uplinks go round-robin over its pod's spines. Spine s
// (global index, pod-major) sends uplink i to core (s·k/2 + i) mod C: with k
// full pods that is core j·k/2 + i for spine j of every pod (core group j);
// with fewer pods the groups fold onto the C = ceil(S/2) cores and every full
// pod still reaches every core. Full pods give exactly 3N links.
Topology BuildFatTree(const ClosParams& p, const Location& where);  // 3 tiers, k-ary pods
// Rail-optimized (docs/model/clos-sizing.md#rail-optimized): NIC j of every node in a scalable unit
// on leaf j of that SU. Host r = GPU j = r mod G of node n = r / G; node n is in SU s = n / d and
// its NIC j sits on leaf s·G + j. Each leaf has u/S links to every spine. Node::group = SU for
// hosts and leaves.
Topology BuildRailOptimized(const ClosParams& p, const Location& where);
// The LS-RING anchor shape (docs/model/ls-ring.md): hosts_per_leaf hosts per leaf,
// `spines` spines, one link from each leaf to each spine.
// hosts must be a positive multiple of hosts_per_leaf; spines ≥ 1; rate and
// delay > 0. Host i on leaf i / hosts_per_leaf. Errors name fields gpus (for
// `hosts`, as in ClosParams), hosts_per_leaf, spines, link_rate, link_delay.
Topology BuildLsRing(int64_t hosts, int hosts_per_leaf, int spines, units::Rate rate,
                     units::Time delay, const Location& where);

// Explicit topology file (format in docs/topology-file.md). Errors name file and line.
// Hosts are ranked in file order. Rejected with InputError: unknown keywords
// and keys (nearest one suggested), malformed names and quantities, duplicate
// names, links to unknown nodes or to themselves, a delay or length of 0, a
// host with no link or more than one, no host at all, and a disconnected
// topology (names an unreachable host pair), and a file above `limits`
// (refused at the line that crosses the limit, before any link is built).
// ParseTopologyFile reads `path` (an unreadable file is an InputError) and
// parses it with file_name = path.
struct TopologyFileLimits {
  int64_t max_nodes = 1'000'000;  // hosts and switches
  int64_t max_links = 1'000'000;  // counts included
  int64_t max_ports = 4096;       // links at one node (a director switch has 2048 ports)
};
Topology ParseTopologyFile(const std::string& path, const TopologyFileLimits& limits = {});
Topology ParseTopologyText(const std::string& text, const std::string& file_name,
                           const TopologyFileLimits& limits = {});

// First pair of hosts (by rank) with no path between them, if any.
// Returns the two hosts' ranks (indices into t.hosts, so the names are
// t.nodes[t.hosts[r]].name): 0 and the lowest rank that host 0 cannot reach.
// Fewer than 2 hosts → nullopt. BFS, O(V+E).
std::optional<std::pair<uint32_t, uint32_t>> FindUnreachableHosts(const Topology& t);

}  // namespace lossless::topology
