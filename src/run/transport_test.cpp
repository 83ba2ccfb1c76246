// The transport.* fields and faults.link_loss through a scenario run: RC
// flows recover what a lossy link drops, raw flows do not, a QP out of
// retries ends the run with its name, and bad values are refused with the
// field (docs/model/transport.md).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "scenario/scenario_test_util.hpp"

namespace lossless::run {
namespace {

using scenario::LoadScenarioText;
using scenario::testing::ErrorOf;
using scenario::testing::kGood;

report::RunResult RunGood(const std::vector<std::string>& sets) {
  return RunScenario(LoadScenarioText(kGood, "s.yaml", sets));
}

TEST(TransportRunTest, RcFlowsRecoverWhatALossyLinkDrops) {
  const std::vector<std::string> lossy = {"faults.link_loss.0.link=host0->leaf0",
                                          "faults.link_loss.0.every=5"};
  std::vector<std::string> rc = lossy;
  rc.push_back("transport.kind=rc");
  const report::RunResult r = RunGood(rc);
  EXPECT_EQ(r.stop_reason, "completed");
  EXPECT_EQ(r.flows_done, r.flows);
  EXPECT_GT(r.link_losses, 0u);
  // A 16-packet flow fits in one round trip: losses among packets the
  // responder discards anyway draw no NAK of their own.
  EXPECT_GT(r.naks, 0u);
  EXPECT_LE(r.naks, r.link_losses);
  EXPECT_GT(r.retx_packets, r.link_losses);  // go-back-N resends the window behind each
  EXPECT_EQ(r.transport, "rc");
  // Raw flows lose the bytes: the flow from host 0 never completes.
  const report::RunResult raw = RunGood(lossy);
  EXPECT_EQ(raw.flows_done, raw.flows - 1);
  EXPECT_EQ(raw.link_losses, 3u);  // data packets 5, 10 and 15 of host 0's 16
  EXPECT_EQ(raw.retx_packets, 0u);
}

TEST(TransportRunTest, RcWithoutLossCompletesLikeRawWithAcks) {
  const report::RunResult raw = RunGood({});
  const report::RunResult rc = RunGood({"transport.kind=rc", "transport.ack_every=1"});
  EXPECT_EQ(rc.flows_done, rc.flows);
  EXPECT_EQ(rc.retx_packets, 0u);
  EXPECT_EQ(rc.naks, 0u);
  // One ACK per data packet (ack_every 1) rides back over as many hops: up to
  // twice the packet-hops for the same data (the run ends when the last byte
  // arrives, with the last ACKs still on their way).
  EXPECT_EQ(rc.packets, raw.packets);
  EXPECT_LE(rc.packet_hops, 2 * raw.packet_hops);
  EXPECT_GT(rc.packet_hops, 2 * raw.packet_hops - raw.packet_hops / 10);
  // The default coalesces (docs/model/transport.md#ack-coalescing): each
  // flow here is one 16-packet message, acknowledged once, by its last packet.
  const report::RunResult dflt = RunGood({"transport.kind=rc"});
  EXPECT_GT(dflt.packet_hops, raw.packet_hops);
  EXPECT_LE(dflt.packet_hops, raw.packet_hops + raw.packet_hops / 16);
  const report::RunResult coalesced = RunGood({"transport.kind=rc", "transport.ack_every=4"});
  EXPECT_LE(coalesced.packet_hops, raw.packet_hops + raw.packet_hops / 4);
  EXPECT_GT(coalesced.packet_hops, raw.packet_hops + raw.packet_hops / 5);
}

TEST(TransportRunTest, AQpOutOfRetriesEndsTheRunAndNamesIt) {
  const report::RunResult r =
      RunGood({"transport.kind=rc", "transport.retry_cnt=0", "faults.link_loss.0.link=host3->leaf0",
               "faults.link_loss.0.every=3"});
  EXPECT_EQ(r.stop_reason, "QP failed");
  EXPECT_NE(r.qp_failure.find("host 3 ->"), std::string::npos) << r.qp_failure;
  EXPECT_NE(r.qp_failure.find("last loss on link host3->leaf0"), std::string::npos)
      << r.qp_failure;
  EXPECT_NE(r.qp_failure.find("retry count 0 exhausted"), std::string::npos) << r.qp_failure;
}

TEST(TransportRunTest, FabricBerLosesFramesEverywhereAndTheTransportRecovers) {
  const report::RunResult r = RunGood({"transport.kind=rc", "fabric.ber=1e-6"});
  EXPECT_EQ(r.flows_done, r.flows);
  EXPECT_GT(r.link_losses, 10u);
  EXPECT_GT(r.retx_packets, 0u);
  // Same seed, same losses.
  EXPECT_EQ(RunGood({"transport.kind=rc", "fabric.ber=1e-6"}).link_losses, r.link_losses);
}

TEST(TransportRunTest, BadTransportAndLinkLossFieldsAreRefusedWithTheField) {
  EXPECT_NE(ErrorOf(kGood, {"transport.retry_cnt=8"}).find("transport.retry_cnt"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"transport.timeout=32"}).find("transport.timeout"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"transport.kind=tcp"}).find("transport.kind"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"transport.kind=rc", "transport.go_back=0", "fabric.routing=spray"})
                .find("transport.go_back"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"fabric.ber=0.5"}).find("fabric.ber"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"faults.link_loss.0.link=host0->leaf0"}).find("'ber', 'every'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"faults.link_loss.0.link=host0->leaf0", "faults.link_loss.0.ber=2"})
                .find("faults.link_loss.0.ber"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"faults.link_loss.0.every=3"}).find("'link'"), std::string::npos);
  // A link the topology does not have: refused when the run resolves it.
  EXPECT_THROW(RunGood({"faults.link_loss.0.link=host0->spine9", "faults.link_loss.0.every=3"}),
               InputError);
  // Both directions of a link (one of the leaf's parallel links to spine0).
  const report::RunResult both =
      RunGood({"transport.kind=rc", "faults.link_loss.0.link=leaf0-spine0#0",
               "faults.link_loss.0.probability=0.05"});
  EXPECT_EQ(both.flows_done, both.flows);
}

TEST(TransportRunTest, TransportFieldsWithRawFlowsWarn) {
  const scenario::Scenario s = LoadScenarioText(kGood, "s.yaml", {"transport.retry_cnt=3"});
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("transport.retry_cnt has no effect"), std::string::npos);
  // Loaded as a fabric (perf, compare, train, tune run RC queue pairs
  // whatever transport.kind says), the same field takes effect: no warning.
  const scenario::Scenario fabric =
      scenario::LoadFabricText(kGood, "s.yaml", {"transport.retry_cnt=3"});
  EXPECT_TRUE(fabric.warnings.empty());
  EXPECT_EQ(fabric.net.rc.retry_cnt, 3);
}

}  // namespace
}  // namespace lossless::run
