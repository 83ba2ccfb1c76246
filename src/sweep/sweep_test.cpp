// lossless sweep: the plan, its checks, and the table over 1..4 loopback
// ranks and forked workers against the serial one.
#include "sweep/sweep.hpp"

#include <mutex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parallel/loopback.hpp"
#include "run/runner.hpp"

namespace lossless::sweep {
namespace {

using ::testing::HasSubstr;

// An 8:1 incast with PFC and ECN on a 32-GPU leaf-spine: small, and both
// varied fields change what happens.
constexpr const char* kIncast = R"(name: sweep-incast
seed: 5
fabric:
  preset: roce
  link_rate: 400Gbps
  ecn: {enabled: true, kmin: 20KB, kmax: 200KB, pmax: 0.2}
topology: {kind: leaf-spine, gpus: 32, radix: 16}
traffic:
  - {pattern: incast, target: 0, senders: 8, bytes: 256KiB}
)";

Plan IncastPlan() {
  Plan p;
  p.file = "incast.yaml";
  p.text = kIncast;
  p.vary = {ParseVary("fabric.cc=none,dcqcn-paper"), ParseVary("fabric.ecn.kmin=20KB,100KB")};
  return p;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
    return "no error";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(SweepPlan, NotesSayWhenNothingReactsToTheVariedEcnThreshold) {
  Plan p = IncastPlan();
  EXPECT_TRUE(PlanNotes(p).empty());  // dcqcn-paper in half the cases reacts to marks
  p.vary = {ParseVary("fabric.ecn.kmin=20KB,100KB")};
  std::vector<std::string> notes = PlanNotes(p);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0],
              HasSubstr("fabric.ecn.kmin is varied, but fabric.cc is none in every case"));
  // A scenario warning of the cases comes once, however many cases have it.
  p.sets = {"fabric.ecn.enabled=false"};
  p.vary = {ParseVary("fabric.ecn.kmax=300KB,400KB"), ParseVary("seed=1,2")};
  notes = PlanNotes(p);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "fabric.ecn.kmin: given, but fabric.ecn.enabled is false: no packet is marked");
  EXPECT_THAT(notes[1], HasSubstr("fabric.ecn.kmax is varied"));
}

TEST(SweepPlan, ParseVaryTakesTheListAndRejectsWhatCannotBeAList) {
  const Vary v = ParseVary("fabric.ecn.kmin=50KB, 100KB ,200KB");
  EXPECT_EQ(v.key, "fabric.ecn.kmin");
  EXPECT_EQ(v.values, (std::vector<std::string>{"50KB", "100KB", "200KB"}));
  EXPECT_EQ(ErrorOf([] { ParseVary("fabric.ecn.kmin"); }),
            "<--vary>: expected key=value1,value2,..., got \"fabric.ecn.kmin\"");
  EXPECT_EQ(ErrorOf([] { ParseVary("=1,2"); }),
            "<--vary>: expected key=value1,value2,..., got \"=1,2\"");
  EXPECT_EQ(ErrorOf([] { ParseVary("seed="); }),
            "<--vary>: seed: expected a list of values after '=', got none");
  EXPECT_EQ(ErrorOf([] { ParseVary("seed=1,,2"); }),
            "<--vary>: seed: expected a value at position 2 of the list, got an empty one");
  EXPECT_EQ(ErrorOf([] { ParseVary("seed=1,2,1"); }), "<--vary>: seed: value \"1\" given twice");
}

TEST(SweepPlan, CasesAreTheCrossProductFirstVarySlowest) {
  const Plan p = IncastPlan();
  ASSERT_EQ(p.Cases(), 4u);
  EXPECT_EQ(p.Values(0), (std::vector<std::string>{"none", "20KB"}));
  EXPECT_EQ(p.Values(1), (std::vector<std::string>{"none", "100KB"}));
  EXPECT_EQ(p.Values(2), (std::vector<std::string>{"dcqcn-paper", "20KB"}));
  EXPECT_EQ(p.Values(3), (std::vector<std::string>{"dcqcn-paper", "100KB"}));
  EXPECT_EQ(p.CaseSets(3),
            (std::vector<std::string>{"fabric.cc=dcqcn-paper", "fabric.ecn.kmin=100KB"}));
  EXPECT_EQ(Share(7, 1, 3), (std::vector<size_t>{1, 4}));
  EXPECT_EQ(Columns(p)[1], "fabric.cc");
  EXPECT_EQ(Columns(p)[2], "fabric.ecn.kmin");
}

TEST(SweepPlan, BadPlansFailBeforeAnythingRuns) {
  Plan p = IncastPlan();
  EXPECT_NO_THROW(CheckPlan(p));
  Plan none = p;
  none.vary.clear();
  EXPECT_EQ(ErrorOf([&] { CheckPlan(none); }),
            "<--vary>: expected at least one --vary key=value1,value2,...");
  Plan twice = p;
  twice.vary.push_back(ParseVary("fabric.cc=ib-cc"));
  EXPECT_EQ(ErrorOf([&] { CheckPlan(twice); }),
            "<--vary>: fabric.cc: expected each key in one --vary only, got it twice");
  Plan both = p;
  both.sets = {"fabric.cc=none"};
  EXPECT_EQ(ErrorOf([&] { CheckPlan(both); }),
            "<--vary>: fabric.cc: expected a key given by --vary or by --set, not both");
  Plan unknown = p;
  unknown.vary.push_back(ParseVary("fabric.ecn.kmn=1KB"));
  EXPECT_EQ(ErrorOf([&] { CheckPlan(unknown); }),
            "<--vary>: fabric.ecn.kmn: unknown field; did you mean 'fabric.ecn.kmin'?");
  Plan bad_value = p;
  bad_value.vary[1] = ParseVary("fabric.ecn.kmin=20KB,100");
  EXPECT_EQ(ErrorOf([&] { CheckPlan(bad_value); }),
            "<--vary>: fabric.ecn.kmin: expected a size with a unit such as 9KiB or 4096B, got "
            "\"100\"");
  // Found by the validate checks (traffic against the topology), not at run time.
  Plan traffic = p;
  traffic.vary.push_back(ParseVary("traffic.0.target=0,40"));
  EXPECT_THAT(ErrorOf([&] { CheckPlan(traffic); }), HasSubstr("(in sweep case 1 ("));
  Plan column = p;
  column.vary.push_back({"ecn_marks", {"1"}});
  EXPECT_THAT(ErrorOf([&] { CheckPlan(column); }), HasSubstr("got a result column"));
  Plan many = p;
  many.vary.push_back({"seed", std::vector<std::string>(kMaxCases, "1")});
  EXPECT_THAT(ErrorOf([&] { CheckPlan(many); }), HasSubstr("expected at most 10000 cases"));
}

// The serial table, computed once.
const Table& SerialTable() {
  static const Table t = [] {
    parallel::SerialComm serial;
    return RunOnComm(serial, IncastPlan());
  }();
  return t;
}

TEST(Sweep, RowsAreTheRunsResultsAndTheVariedFieldsTakeEffect) {
  const Plan p = IncastPlan();
  const Table& t = SerialTable();
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_FALSE(t.interrupted);
  // Case 3 against lossless run's own result for the same overrides.
  const report::RunResult r = run::RunScenario(LoadCase(p, 3));
  EXPECT_EQ(t.rows[3]["fct_p99_us"].get<double>(), static_cast<double>(r.fct.p99.ps()) / 1e6);
  EXPECT_EQ(t.rows[3]["ecn_marks"].get<uint64_t>(), r.ecn_marks);
  EXPECT_EQ(t.rows[3]["pause_frames"].get<uint64_t>(), r.pause_frames);
  EXPECT_EQ(t.rows[3]["fabric.cc"], "dcqcn-paper");
  // No CNPs without DCQCN, some with it; a higher kmin marks less.
  EXPECT_EQ(t.rows[0]["cnps"].get<uint64_t>(), 0u);
  EXPECT_GT(t.rows[2]["cnps"].get<uint64_t>(), 0u);
  EXPECT_GT(t.rows[0]["ecn_marks"].get<uint64_t>(), t.rows[1]["ecn_marks"].get<uint64_t>());
  EXPECT_GT(t.rows[0]["flows_done"].get<uint64_t>(), 0u);
  // Every row holds exactly the table's columns, in order.
  for (const auto& row : t.rows) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : row.items()) keys.push_back(k);
    EXPECT_EQ(keys, Columns(p));
  }
}

class SweepRanks : public ::testing::TestWithParam<int> {};

TEST_P(SweepRanks, LoopbackRanksGiveTheSerialTableByteForByte) {
  const Plan p = IncastPlan();
  const int k = GetParam();
  std::mutex m;
  Table root;
  std::vector<size_t> rows_elsewhere;
  parallel::RunLoopback(
      k,
      [&](parallel::Comm& c) {
        Table t = RunOnComm(c, p);
        std::lock_guard<std::mutex> lock(m);
        if (c.Rank() == 0) {
          root = std::move(t);
        } else {
          rows_elsewhere.push_back(t.rows.size());
        }
      },
      parallel::LoopbackOptions{static_cast<uint64_t>(k)});
  EXPECT_EQ(TableCsv(p, root), TableCsv(p, SerialTable()));
  EXPECT_EQ(TableJson(p, root).dump(2), TableJson(p, SerialTable()).dump(2));
  for (size_t n : rows_elsewhere) EXPECT_EQ(n, 0u);  // only rank 0 holds the table
}

INSTANTIATE_TEST_SUITE_P(Ranks, SweepRanks, ::testing::Values(1, 2, 3, 4));

TEST(Sweep, ForkedWorkersGiveTheSerialTableByteForByte) {
  const Plan p = IncastPlan();
  for (int jobs : {2, 3, 8}) {
    size_t last = 0;
    const Table t = RunForked(p, jobs, {}, [&](size_t done) { last = done; });
    EXPECT_EQ(TableCsv(p, t), TableCsv(p, SerialTable())) << jobs << " jobs";
    EXPECT_EQ(TableJson(p, t).dump(2), TableJson(p, SerialTable()).dump(2)) << jobs << " jobs";
    EXPECT_EQ(last, 4u);
  }
}

TEST(Sweep, AFailingCaseFailsEveryRankWithTheFirstFailingCase) {
  // Not checked first (CheckPlan would refuse it): case 1 and 3 fail at run time.
  Plan p = IncastPlan();
  p.vary[1] = ParseVary("faults.nic_stall.host=1,99");
  const std::string expected =
      "<--vary>: case 1 (fabric.cc=none, faults.nic_stall.host=99): <--set>: "
      "faults.nic_stall.host: expected a host rank below 32, got 99";
  std::mutex m;
  std::vector<std::string> errors;
  parallel::RunLoopback(3, [&](parallel::Comm& c) {
    const std::string e = ErrorOf([&] { RunOnComm(c, p); });
    std::lock_guard<std::mutex> lock(m);
    errors.push_back(e);
  });
  ASSERT_EQ(errors.size(), 3u);
  for (const auto& e : errors) EXPECT_EQ(e, expected);
  EXPECT_EQ(ErrorOf([&] { RunForked(p, 2, {}); }), expected);
}

TEST(Sweep, StoppingBetweenCasesGivesAPartialTableMarkedInterrupted) {
  const Plan p = IncastPlan();
  parallel::SerialComm serial;
  Hooks hooks;
  size_t started = 0;
  hooks.keep_going = [&] { return started++ < 2; };
  const Table t = RunOnComm(serial, p, hooks);
  EXPECT_TRUE(t.interrupted);
  EXPECT_FALSE(t.rows[0].is_null());
  EXPECT_FALSE(t.rows[1].is_null());
  EXPECT_TRUE(t.rows[2].is_null());
  const std::string csv = TableCsv(p, t);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);  // header and two rows
  const auto j = TableJson(p, t);
  EXPECT_EQ(j["cases_done"], 2);
  EXPECT_EQ(j["interrupted"], true);
  // A run stopped between slices (every 65,536 events: a bigger incast) gives no row either.
  Plan big = p;
  big.sets = {"traffic.0.bytes=8MiB"};
  Hooks stop_inside;
  size_t slices = 0;
  stop_inside.between_slices = [&](const CaseStatus& st) {
    EXPECT_EQ(st.index, 0u);
    ++slices;
    return false;
  };
  EXPECT_EQ(RunCase(big, 0, stop_inside).kind, CaseOutcome::Kind::kInterrupted);
  EXPECT_EQ(slices, 1u);
}

TEST(Sweep, CsvQuotesTextThatHoldsACommaOrAQuote) {
  Plan p = IncastPlan();
  p.vary = {{"name", {"a\"b", "plain"}}};
  Table t;
  nlohmann::ordered_json row;
  for (const auto& c : Columns(p)) row[c] = nullptr;
  row["case"] = 0;
  row["name"] = "a\"b,c";
  row["flows"] = 3;
  t.rows = {row};
  const std::string csv = TableCsv(p, t);
  EXPECT_THAT(csv, HasSubstr("\n0,\"a\"\"b,c\",,"));
}

}  // namespace
}  // namespace lossless::sweep
