// transport.*: the RDMA RC transport of the flows (src/rdma/rc.hpp), and
// fabric.ber, the post-FEC bit error rate of every link.
#include <stdexcept>

#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadTransport(Fields& f, Scenario& sc) {
  sc.ber = f.Number("fabric.ber");
  sc.rc = f.Choice("transport.kind") == "rc";
  rdma::RcConfig& rc = sc.net.rc;
  rc.timeout_exp = static_cast<int>(f.Int("transport.timeout"));
  rc.retry_cnt = static_cast<int>(f.Int("transport.retry_cnt"));
  rc.go_back_0 = f.Choice("transport.go_back") == "0";
  rc.ack_every = static_cast<int>(f.Int("transport.ack_every"));
  const std::string ooo = f.Choice("transport.ooo");
  const bool per_packet = sc.net.routing == fabric::RoutingMode::kAdaptive ||
                          sc.net.routing == fabric::RoutingMode::kSpray;
  rc.ooo = ooo == "on" || (ooo == "auto" && per_packet);
  rc.reorder_window = f.Time("transport.reorder_window");
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
  if (!sc.rc) {
    for (const char* field : {"transport.timeout", "transport.retry_cnt", "transport.go_back",
                              "transport.ack_every", "transport.ooo",
                              "transport.reorder_window"}) {
      if (f.Given(field))
        sc.warnings.push_back(std::string(field) +
                              " has no effect with transport.kind raw (no transport)");
    }
  }
}

}  // namespace lossless::scenario
