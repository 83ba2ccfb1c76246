// transport.*: the RDMA RC transport of the flows (src/rdma/rc.hpp), and
// fabric.ber, the post-FEC bit error rate of every link.
#include <stdexcept>
#include <string>
#include <vector>

#include "rdma/rc_params.hpp"

#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadTransport(Fields& f, Scenario& sc) {
  sc.ber = f.Number("fabric.ber");
  sc.rc = f.Choice("transport.kind") == "rc";
  rdma::RcConfig& rc = sc.net.rc;
  const bool per_packet = sc.net.routing == fabric::RoutingMode::kAdaptive ||
                          sc.net.routing == fabric::RoutingMode::kSpray;
  // Every transport.<name> of the RC slice (rdma/rc_params.hpp).
  std::vector<std::string> fields;
  for (const rdma::RcParamInfo& info : rdma::RcParamInfos()) {
    const std::string field = std::string("transport.") + info.name;
    rdma::RcParamValue v;
    switch (info.type) {
      case rdma::RcParamType::kInt: v.number = f.Int(field.c_str()); break;
      case rdma::RcParamType::kEnum: v.choice = f.Choice(field.c_str()); break;
      case rdma::RcParamType::kTime: v.time = f.Time(field.c_str()); break;
    }
    rdma::SetRcParam(rc, info.name, v, per_packet);
    fields.push_back(field);
  }
  const std::string ooo = f.Choice("transport.ooo");
  if (rc.go_back_0 && rc.ooo) {
    f.Fail("transport.go_back",
           ooo == "on" ? "n with transport.ooo on (go-back-0 places nothing out of order)"
                       : "n with per-packet routing (adaptive or spray reorders packets; set "
                         "transport.ooo off to force in-order reception)");
  }
  try {
    rc.Check();
  } catch (const std::invalid_argument& e) {
    // The registry bounds catch what Check does; this keeps the two in step.
    throw InputError(f.Find("transport.kind").where, e.what());
  }
  // Only `run` honours transport.kind: a fabric loaded for perf, compare,
  // train or tune (traffic optional) always runs RC queue pairs, so there its
  // transport.* values do take effect.
  if (!sc.rc && !f.loader().traffic_optional()) {
    for (const std::string& field : fields) {
      if (f.Given(field))
        sc.warnings.push_back(field + " has no effect with transport.kind raw (no transport)");
    }
  }
}

}  // namespace lossless::scenario
