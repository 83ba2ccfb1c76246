// node.*: the GPU node (src/node/node.hpp): the preset, then the fields that
// override it, then the NIC map (node.topo, node.nic_map).
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadNode(Fields& f, Scenario& sc) {
  node::NodeConfig& n = sc.node;
  const Value preset = f.Get("node.preset");
  n.ApplyPreset(node::FindNodePreset(preset.text, preset.where));
  if (f.Given("node.gpus_per_node"))
    n.gpus_per_node = static_cast<int>(f.Int("node.gpus_per_node"));
  if (f.Given("node.nvlink_rate")) n.nvlink_rate = f.Rate("node.nvlink_rate");
  if (f.Given("node.nvlink_latency")) n.nvlink_latency = f.Time("node.nvlink_latency");
  if (f.Given("node.pcie_gen")) n.pcie_gen = static_cast<int>(f.Int("node.pcie_gen"));
  if (f.Given("node.pcie_lanes")) n.pcie_lanes = static_cast<int>(f.Int("node.pcie_lanes"));
  if (n.nvlink_rate.bps() <= 0) f.Fail("node.nvlink_rate", "a rate above 0");
  if (n.nvlink_latency.ps() <= 0)
    f.Fail("node.nvlink_latency", "a time above 0 (components talk over links with latency)");
  n.gdr = f.Bool("node.gdr");
  const Value level = f.Get("node.gdr_level");
  n.gdr_level = node::ParseHop(level.text, level.where);
  n.host_bounce_latency = f.Time("node.host_bounce_latency");
  n.cross_socket_rate = f.Rate("node.cross_socket_rate");
  n.cross_socket_latency = f.Time("node.cross_socket_latency");
  if (n.cross_socket_rate.bps() <= 0) f.Fail("node.cross_socket_rate", "a rate above 0");
  const Value topo = f.Get("node.topo");
  if (!topo.text.empty()) {
    const std::string path = PathInScenario(topo, sc.file);
    try {
      node::MapFromTopoFile(path, n);
    } catch (const InputError& e) {
      // The matrix's own errors name its file and line; a file that cannot
      // be read is named at the field.
      if (e.where().file == path && e.where().line > 0) throw;
      throw InputError(topo.where, e.message());
    }
  }
  const Value map = f.Get("node.nic_map");
  if (!map.text.empty()) node::SetNicMap(map.text, n, map.where);
}

}  // namespace lossless::scenario
