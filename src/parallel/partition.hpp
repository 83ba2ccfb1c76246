#pragma once
// How a fabric is cut over K ranks (docs/parallel.md#partition): a pure
// function of the topology, the node size and K; no engine.
//
// Partition unit: the smallest set of switches and hosts that keeps each
// node (a server: `gpus_per_node` consecutive host ranks) together with
// every switch its NICs attach to. A leaf with its hosts is one unit; a
// rail-optimized scalable unit (every node's NICs on all G leaves of the
// SU) is one unit; a spine or core is a unit of its own. Only
// switch-to-switch links are cut; host links never.
//
// Placement: units that hold hosts or carry a group (Node::group: pod of a
// fat tree, scalable unit of a rail-optimized fabric) are laid out in
// (group, first node) order and split into K contiguous blocks of about
// equal weight (ports), at group boundaries when K is at most the number
// of groups (a group's leaf units and its other units, such as a pod's
// spines, interleaved in proportion, so a group split over ranks gives each
// a share of both); units with neither (spines of a leaf-spine or rail-optimized
// fabric, cores of a fat tree) then go one by one, in node order, to the
// rank with the least weight so far (lowest rank on a tie). Every rank gets
// at least one unit.
//
// Lookahead: the smallest one-way delay of a cut link: an event one rank
// causes on another is at least that far in its future.
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "topology/topology.hpp"
#include "units/units.hpp"

namespace lossless::parallel {

struct RankShare {
  uint32_t units = 0;
  uint32_t switches = 0;
  uint32_t hosts = 0;
  uint64_t ports = 0;  // link endpoints of its nodes: the weight balanced
};

struct Partition {
  int ranks = 1;
  uint32_t units = 0;                          // partition units of the fabric
  uint32_t host_units = 0;                     // of them, units holding hosts
  uint32_t groups = 0;                         // distinct Node::group values >= 0
  bool whole_groups = false;                   // every group on one rank
  std::vector<uint32_t> unit_of_node;          // per topology node
  std::vector<int32_t> rank_of_node;           // per topology node
  std::vector<RankShare> per_rank;             // size ranks
  std::vector<uint32_t> cut_links;             // topology link indices, ascending
  uint32_t switch_links = 0;                   // switch-to-switch links of the fabric
  units::Time lookahead = units::Time::Max();  // Max() when nothing is cut
  uint32_t lookahead_link = 0;                 // a cut link with that delay (first)
};

// Throws InputError at `where` (the rank-count option) when ranks < 1 or
// ranks > the number of units ("expected at most 12 ranks: the fabric has
// 12 partition units ..., got 16"), and naming the link when a cut link has
// no delay (a lookahead of zero). gpus_per_node >= 1 (1 = every host is its
// own node). O(nodes + links) plus a sort of the units.
Partition PartitionFabric(const topology::Topology& t, int gpus_per_node, int ranks,
                          const Location& where);

// The report `lossless partition` prints: how the fabric was cut, units and
// nodes per rank, cut links, lookahead. Several lines, each ending in '\n'.
std::string PartitionText(const topology::Topology& t, const Partition& p);

}  // namespace lossless::parallel
