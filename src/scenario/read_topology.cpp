// topology.*: the kind and its sizes (the link rate and delay come from
// fabric.*, read before).
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadTopology(Fields& f, Scenario& sc) {
  sc.topology_kind = f.Choice("topology.kind");
  sc.topology_where = f.Find(f.Given("topology.gpus") ? "topology.gpus" : "topology.kind").where;
  sc.clos.gpus = f.Int("topology.gpus");
  sc.clos.radix = static_cast<int>(f.Int("topology.radix"));
  sc.clos.oversubscription = f.Number("topology.oversubscription");
  sc.clos.tiers = static_cast<int>(f.Int("topology.tiers"));
  sc.clos.gpus_per_node = static_cast<int>(f.Int("topology.gpus_per_node"));
  sc.hosts_per_leaf = static_cast<int>(f.Int("topology.hosts_per_leaf"));
  sc.spines = static_cast<int>(f.Int("topology.spines"));
  sc.topology_file = f.Get("topology.file").text;
  if (sc.topology_kind == "file" && sc.topology_file.empty()) {
    throw InputError(f.Find("topology.kind").where, "expected topology.file with kind: file");
  }
}

}  // namespace lossless::scenario
