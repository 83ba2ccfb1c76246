// tenants.*, virtualization.*, cost.*: fields of fabric profiles
// (docs/profiles.md) that compare, perf and tco use; `run` does not simulate
// tenants or virtualization yet and says so.
#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadProfileFields(Fields& f, Scenario& sc) {
  sc.shared.tenant_load = f.Number("tenants.load");
  sc.shared.tenant_burst = f.Bytes("tenants.burst");
  if (sc.shared.tenant_burst <= 0) f.Fail("tenants.burst", "a size above zero");
  sc.shared.virt_latency = f.Time("virtualization.latency");
  sc.shared.virt_jitter = f.Time("virtualization.jitter");
  sc.cost_model = f.Choice("cost.model");
  if (sc.shared.tenant_load > 0 || sc.shared.virt_latency.ps() > 0 ||
      sc.shared.virt_jitter.ps() > 0) {
    sc.warnings.push_back(
        "tenants.* and virtualization.* are used by compare/perf; `run` does not simulate "
        "them yet (docs/profiles.md)");
  }
}

}  // namespace lossless::scenario
