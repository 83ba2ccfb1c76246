// topology.*: the kind and its sizes (the link rate and delay come from
// fabric.*, read before).
#include <cmath>

#include <fmt/format.h>

#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadTopology(Fields& f, Scenario& sc) {
  sc.topology_kind = f.Choice("topology.kind");
  sc.topology_where = f.Find(f.Given("topology.gpus") ? "topology.gpus" : "topology.kind").where;
  const bool by_nodes = f.Given("topology.nodes");
  if (by_nodes && f.Given("topology.gpus")) {
    throw InputError(f.Find("topology.nodes").where,
                     "expected topology.nodes or topology.gpus, not both");
  }
  if (!by_nodes) sc.clos.gpus = f.Int("topology.gpus");
  sc.clos.radix = static_cast<int>(f.Int("topology.radix"));
  sc.clos.oversubscription = f.Number("topology.oversubscription");
  const bool clos = sc.topology_kind == "leaf-spine" || sc.topology_kind == "fat-tree" ||
                    sc.topology_kind == "rail-optimized";
  if (const topology::LeafPorts leaf = topology::SplitLeaf(sc.clos.radix, sc.clos.oversubscription);
      clos && leaf.up > 0) {
    const double o = sc.clos.oversubscription;
    const double built = static_cast<double>(leaf.down) / static_cast<double>(leaf.up);
    if (std::abs(built - o) > 0.05 * o) {
      sc.warnings.push_back(fmt::format(
          "topology.oversubscription: {:g}:1 asked, but a radix-{} leaf splits into {} down and "
          "{} up ports, so the fabric is built {:.3g}:1",
          o, sc.clos.radix, leaf.down, leaf.up, built));
    }
  }
  sc.clos.tiers = static_cast<int>(f.Int("topology.tiers"));
  sc.clos.gpus_per_node = static_cast<int>(f.Int("topology.gpus_per_node"));
  if (by_nodes) {
    // GPUs = nodes x gpus_per_node (the profiles size their topology this way).
    sc.topology_where = f.Find("topology.nodes").where;
    sc.clos.gpus = f.Int("topology.nodes") * sc.clos.gpus_per_node;
    sc.resolved.emplace_back("topology.gpus", std::to_string(sc.clos.gpus));
  }
  sc.hosts_per_leaf = static_cast<int>(f.Int("topology.hosts_per_leaf"));
  sc.spines = static_cast<int>(f.Int("topology.spines"));
  sc.topology_file = PathInScenario(f.Get("topology.file"), sc.file);
  sc.topology_file_where = f.Find("topology.file").where;
  if (sc.topology_kind == "file" && sc.topology_file.empty()) {
    throw InputError(f.Find("topology.kind").where, "expected topology.file with kind: file");
  }
}

}  // namespace lossless::scenario
