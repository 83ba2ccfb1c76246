#include "deadlock/wait_join.hpp"

namespace lossless::deadlock {

WaitJoin::WaitJoin(const fabric::Network& net, WaitSink& sink)
    : net_(net), sink_(sink), local_index_(net.num_ports(), 0) {
  for (uint32_t p = 0; p < net.num_ports(); ++p) {
    const auto& ports = net.NodePorts(net.PortNode(p));
    for (size_t i = 0; i < ports.size(); ++i)
      if (ports[i] == p) local_index_[p] = static_cast<uint16_t>(i);
  }
}

void WaitJoin::OnHold(uint32_t ingress, int in_class, uint32_t egress, int out_class, bool holding,
                      units::Time at) {
  auto& held = holds_[Key(egress, out_class)];
  const auto entry = std::make_tuple(local_index_[ingress], in_class, ingress);
  if (holding) {
    held.insert(entry);
  } else {
    held.erase(entry);
  }
  const uint32_t to = net_.PortPeer(egress);
  if (xoff_.contains(Key(to, out_class))) sink_.OnWait(ingress, in_class, to, out_class, holding, at);
}

void WaitJoin::OnXoff(uint32_t port, int tclass, bool asserted, units::Time at) {
  if (asserted) {
    xoff_.insert(Key(port, tclass));
  } else {
    xoff_.erase(Key(port, tclass));
  }
  const auto it = holds_.find(Key(net_.PortPeer(port), tclass));
  if (it == holds_.end()) return;
  for (const auto& [local, in_class, ingress] : it->second)
    sink_.OnWait(ingress, in_class, port, tclass, asserted, at);
}

}  // namespace lossless::deadlock
