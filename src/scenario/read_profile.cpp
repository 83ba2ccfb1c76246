// tenants.*, virtualization.*, cost.*: fields of fabric profiles
// (docs/profiles.md) that run, perf, compare and tco use.
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadProfileFields(Fields& f, Scenario& sc) {
  sc.shared.tenant_load = f.Number("tenants.load");
  sc.shared.tenant_burst = f.Bytes("tenants.burst");
  if (sc.shared.tenant_burst <= 0) f.Fail("tenants.burst", "a size above zero");
  sc.shared.virt_latency = f.Time("virtualization.latency");
  sc.shared.virt_jitter = f.Time("virtualization.jitter");
  sc.net.virt.latency = sc.shared.virt_latency;
  sc.net.virt.jitter = sc.shared.virt_jitter;
  sc.cost_model = f.Choice("cost.model");
}

}  // namespace lossless::scenario
