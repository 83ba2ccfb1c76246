#include "tco/tco.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "profile/profile.hpp"

namespace lossless::tco {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

PriceTable Prices(const std::string& overrides = "") {
  PriceTable t = PriceTable::Defaults();
  if (!overrides.empty()) t.Override(overrides, "test.yaml");
  return t;
}

Result For(const std::string& profile, int64_t gpus, const PriceTable& t,
           const std::vector<std::string>& sets = {}, int64_t rate = 0) {
  return Compute(profile::Load(profile, 0, sets), "profiles/" + profile + ".yaml", gpus, t, rate);
}

const BomLine& Line(const Result& r, const std::string& item) {
  for (const auto& b : r.bom)
    if (b.item == item) return b;
  throw std::out_of_range(item);
}

double Annual(const Result& r, const std::string& item) {
  for (const auto& c : r.annual)
    if (c.item == item) return c.usd_per_year;
  throw std::out_of_range(item);
}

// docs/model/clos-sizing.md#worked-counts: a plain
// non-blocking Clos (topology.kind leaf-spine), all-optical, single-port NIC
// modules, no management links.
struct WorkedRow {
  int64_t gpus;
  int tiers_ib, leaf_ib, spine_ib, core_ib, total_ib;
  int tiers_eth, leaf_eth, spine_eth, core_eth, total_eth;
  int64_t modules_ib, modules_eth, links_ib, links_eth;
};

class WorkedCounts : public ::testing::TestWithParam<WorkedRow> {};

TEST_P(WorkedCounts, MatchTheFormulas) {
  const WorkedRow w = GetParam();
  const PriceTable t = Prices("mgmt_links_ib: 0\n");
  const std::vector<std::string> clos = {"topology.kind=leaf-spine"};
  const Result ib = For("ib-ndr", w.gpus, t, clos);
  const Result eth = For("roce-tuned", w.gpus, t, clos);
  EXPECT_EQ(ib.sizing.tiers, w.tiers_ib);
  EXPECT_EQ(ib.sizing.leaves, w.leaf_ib);
  EXPECT_EQ(ib.sizing.spines, w.spine_ib);
  EXPECT_EQ(ib.sizing.cores, w.core_ib);
  EXPECT_EQ(Line(ib, "switches").count, w.total_ib);
  EXPECT_EQ(eth.sizing.tiers, w.tiers_eth);
  EXPECT_EQ(eth.sizing.leaves, w.leaf_eth);
  EXPECT_EQ(eth.sizing.spines, w.spine_eth);
  EXPECT_EQ(eth.sizing.cores, w.core_eth);
  EXPECT_EQ(Line(eth, "switches").count, w.total_eth);
  EXPECT_EQ(Line(ib, "host optics").count + Line(ib, "switch optics").count, w.modules_ib);
  EXPECT_EQ(Line(eth, "host optics").count + Line(eth, "switch optics").count, w.modules_eth);
  EXPECT_EQ(Line(ib, "fibre runs").count, w.links_ib);
  EXPECT_EQ(Line(eth, "fibre runs").count, w.links_eth);
}

INSTANTIATE_TEST_SUITE_P(
    Table, WorkedCounts,
    ::testing::Values(
        WorkedRow{256, 2, 8, 4, 0, 12, 2, 4, 2, 0, 6, 640, 640, 512, 512},
        WorkedRow{1024, 2, 32, 16, 0, 48, 2, 16, 8, 0, 24, 2560, 2560, 2048, 2048},
        WorkedRow{2048, 2, 64, 32, 0, 96, 2, 32, 16, 0, 48, 5120, 5120, 4096, 4096},
        WorkedRow{4096, 3, 128, 128, 64, 320, 2, 64, 32, 0, 96, 14336, 10240, 12288, 8192},
        WorkedRow{8192, 3, 256, 256, 128, 640, 2, 128, 64, 0, 192, 28672, 20480, 24576, 16384},
        WorkedRow{16384, 3, 512, 512, 256, 1280, 3, 256, 256, 128, 640, 57344, 57344, 49152,
                  49152}));

// The profiles' rail-optimized default provisions a full scalable unit: at 256
// GPUs on radix-128 switches that is one leaf per rail (8), not the plain Clos's 4.
TEST(Tco, RailOptimizedProvisionsWholeScalableUnits) {
  const Result eth = For("roce-tuned", 256, Prices());
  EXPECT_EQ(eth.sizing.leaves, 8);
  EXPECT_EQ(eth.sizing.spines, 4);
  const Result big = For("roce-tuned", 16384, Prices());
  EXPECT_EQ(big.sizing.tiers, 3);  // beyond 8,192: the pod-based fat tree
  EXPECT_EQ(big.sizing.switches, 640);
  ASSERT_FALSE(big.notes.empty());
  EXPECT_NE(big.notes[0].find("3-tier"), std::string::npos);
}

// Two nodes on the rail-optimized default still take a whole scalable unit
// (8 leaves, 4 spines on radix 64): the result says so and names the one
// switch a non-blocking leaf-spine needs for 16 GPUs.
TEST(Tco, APartlyFilledScalableUnitSaysWhatASmallClosWouldTake) {
  const Result two = For("ib-ndr", 16, Prices());
  EXPECT_EQ(two.sizing.switches, 12);
  const auto note = std::find_if(two.notes.begin(), two.notes.end(), [](const std::string& n) {
    return n.find("whole scalable units") != std::string::npos;
  });
  ASSERT_NE(note, two.notes.end());
  EXPECT_NE(note->find("2 of 32 node positions"), std::string::npos) << *note;
  EXPECT_NE(note->find("takes 1 switch(es)"), std::string::npos) << *note;
  const Result full = For("ib-ndr", 256, Prices());  // 32 nodes fill the unit
  for (const auto& n : full.notes) EXPECT_EQ(n.find("whole scalable units"), std::string::npos) << n;
}

// NVIDIA DGX SuperPOD RA H100 (RA-11333-001 V11) Table 4: leaves, spines,
// node + UFM cables and spine-leaf cables at 1-4 SUs of 31, 63, 95, 127 nodes.
TEST(Tco, SuperPodH100ReferenceDesign) {
  struct Row {
    int64_t gpus, leaves, spines, node_ufm, spine_leaf;
  };
  for (const Row& row : {Row{248, 8, 4, 252, 256}, Row{504, 16, 8, 508, 512},
                         Row{760, 24, 16, 764, 768}, Row{1016, 32, 16, 1020, 1024}}) {
    const Result r = For("ib-ndr", row.gpus, Prices());
    SCOPED_TRACE(row.gpus);
    EXPECT_EQ(r.sizing.leaves, row.leaves);
    EXPECT_EQ(r.sizing.spines, row.spines);
    EXPECT_EQ(r.sizing.host_links + r.mgmt_links, row.node_ufm);
    EXPECT_EQ(r.sizing.leaf_spine_links, row.spine_leaf);
    EXPECT_EQ(Line(r, "fibre runs").count, row.node_ufm + row.spine_leaf);
    EXPECT_EQ(Line(r, "host optics").count, row.node_ufm);  // each UFM link has its module
    EXPECT_TRUE(r.warnings.size() > 0);  // grade-D placeholders
    for (const auto& w : r.warnings) EXPECT_EQ(w.find("free leaf ports"), std::string::npos) << w;
  }
  // A full 1,024-GPU build has no free leaf port for them: said, not hidden.
  const Result full = For("ib-ndr", 1024, Prices());
  bool warned = false;
  for (const auto& w : full.warnings) warned |= w.find("free leaf ports") != std::string::npos;
  EXPECT_TRUE(warned);
  // Ethernet fabrics have no UFM links.
  EXPECT_EQ(For("roce-tuned", 1016, Prices()).mgmt_links, 0);
}

// docs/tco.md#illustration: 1,024 GPUs with the default prices, no management links.
TEST(Tco, IllustrationWithDefaults) {
  const PriceTable t = Prices("mgmt_links_ib: 0\n");
  const Result ib = For("ib-ndr", 1024, t);
  const Result eth = For("roce-tuned", 1024, t);
  EXPECT_DOUBLE_EQ(Line(ib, "switches").total_usd, 2'400'000);
  EXPECT_DOUBLE_EQ(Line(eth, "switches").total_usd, 864'000);
  EXPECT_DOUBLE_EQ(Line(ib, "NICs").total_usd, 1'843'200);
  EXPECT_DOUBLE_EQ(Line(eth, "NICs").total_usd, 1'843'200);
  for (const Result* r : {&ib, &eth}) {
    EXPECT_EQ(Line(*r, "host optics").count, 1024);
    EXPECT_EQ(Line(*r, "switch optics").count, 1536);
    EXPECT_DOUBLE_EQ(Line(*r, "host optics").total_usd + Line(*r, "switch optics").total_usd,
                     1'843'200);
  }
  EXPECT_DOUBLE_EQ(ib.capex_usd, 6'086'400);
  EXPECT_DOUBLE_EQ(eth.capex_usd, 4'550'400);
  EXPECT_NEAR(ib.power_w, 100'032, 1e-6);
  EXPECT_NEAR(eth.power_w, 78'744, 1e-6);
  EXPECT_NEAR(Annual(ib, "energy"), 91'133, 1);
  EXPECT_NEAR(Annual(eth, "energy"), 71'739, 1);
  const double ib_no_ops = ib.annual_usd - Annual(ib, "operations");
  const double eth_no_ops = eth.annual_usd - Annual(eth, "operations");
  EXPECT_NEAR(ib_no_ops, 1'917'053, 1);
  EXPECT_NEAR(eth_no_ops, 1'436'859, 1);
  EXPECT_NEAR(ib_no_ops / (1024 * 8760.0), 0.214, 0.0005);
  EXPECT_NEAR(eth_no_ops / (1024 * 8760.0), 0.160, 0.0005);
  EXPECT_NEAR(Annual(ib, "operations"), 1'950'000, 1e-6);
  EXPECT_NEAR(Annual(ib, "operations") / (1024 * 8760.0), 0.217, 0.0005);
  EXPECT_NEAR(ib.per_gpu_year, ib.annual_usd / 1024, 1e-9);
}

// Operations scale with GPUs (6 network FTE per 1,024 at 325,000 USD by default).
TEST(Tco, OperationsScaleWithGpus) {
  EXPECT_NEAR(Annual(For("roce-tuned", 4096, Prices()), "operations"), 4 * 6 * 325'000.0, 1e-6);
  EXPECT_NEAR(Annual(For("ib-ndr", 512, Prices("ops_fte_premium_ib: 0.5\n")), "operations"),
              0.5 * 6 * 1.5 * 325'000.0, 1e-6);
  EXPECT_NEAR(Annual(For("roce-tuned", 512, Prices("ops_fte_premium_ib: 0.5\n")), "operations"),
              0.5 * 6 * 325'000.0, 1e-6);  // the premium is InfiniBand's only
}

// The lines' annual shares add up to the annual total with operations.
TEST(Tco, AnnualCostSplitsByLine) {
  for (const char* p : {"ib-ndr", "roce-tuned", "roce-800g"}) {
    const Result r = For(p, 4096, Prices());
    double sum = Annual(r, "operations");
    for (const auto& b : r.bom) sum += b.annual_usd;
    EXPECT_NEAR(sum, r.annual_usd, 1e-6 * r.annual_usd) << p;
    EXPECT_NEAR(Line(r, "switches").annual_usd,
                Line(r, "switches").total_usd * (1 / 5.0 + 0.10) +
                    Line(r, "switches").power_total_w * 1.3 * 8760 * 0.08 / 1000,
                1e-6)
        << p;
  }
}

// No fabric ratio is an input: with an Ethernet switch at twice the IB price
// the switch lines are equal (half as many switches), and the saving is gone.
TEST(Tco, SavingsComeFromTheBillOfMaterials) {
  const PriceTable t = Prices("mgmt_links_ib: 0\nprice_switch_eth_51t: 100000\n");
  const Result ib = For("ib-ndr", 1024, t);
  const Result eth = For("roce-tuned", 1024, t);
  EXPECT_DOUBLE_EQ(Line(eth, "switches").total_usd, Line(ib, "switches").total_usd);
  EXPECT_DOUBLE_EQ(eth.capex_usd, ib.capex_usd);
}

// Issue 11: "the report says under which prices the claim holds". Every
// Ethernet hardware price scaled by the window's upper factor gives exactly a
// 30 % saving, by its lower factor 50 %; the InfiniBand factors likewise.
TEST(Tco, SavingWindowIsWhereTheClaimHolds) {
  const PriceTable t = Prices();
  const Result ib = For("ib-ndr", 1024, t);
  const Result eth = For("roce-tuned", 1024, t);
  const SavingWindow w = SavingUnderPrices(ib, eth, 0.30, 0.50);
  EXPECT_NEAR(w.saving, 1 - eth.annual_usd / ib.annual_usd, 1e-12);
  ASSERT_GT(w.eth_high, w.eth_low);
  ASSERT_GT(w.ib_high, w.ib_low);
  // Scales the prices `r`'s hardware lines used.
  auto scaled = [&](const Result& r, double f) {
    PriceTable s = t;
    std::vector<std::string> done;
    for (const BomLine& b : r.bom)
      for (const std::string& in : b.inputs)
        if (in.rfind("price_", 0) == 0 && std::find(done.begin(), done.end(), in) == done.end()) {
          s.Assume(in, s.Value(in) * f);
          done.push_back(in);
        }
    return s;
  };
  auto eth_saving = [&](double f) {
    return 1 - For("roce-tuned", 1024, scaled(eth, f)).annual_usd / ib.annual_usd;
  };
  auto ib_saving = [&](double f) {
    return 1 - eth.annual_usd / For("ib-ndr", 1024, scaled(ib, f)).annual_usd;
  };
  // A bound at 0 is clipped: even free hardware does not reach the target,
  // so the saving there is still inside the window.
  auto expect_bound = [](double factor, double saving, double target) {
    if (factor > 0) {
      EXPECT_NEAR(saving, target, 1e-9);
    } else {
      EXPECT_GT(saving, 0.30);
      EXPECT_LT(saving, 0.50);
    }
  };
  EXPECT_NEAR(eth_saving(w.eth_high), 0.30, 1e-9);
  expect_bound(w.eth_low, eth_saving(w.eth_low), 0.50);
  EXPECT_NEAR(ib_saving(w.ib_low), 0.30, 1e-9);
  EXPECT_NEAR(ib_saving(w.ib_high), 0.50, 1e-9);
  // Halfway through the window, the claim holds.
  const double mid = eth_saving((w.eth_low + w.eth_high) / 2);
  EXPECT_GT(mid, 0.30);
  EXPECT_LT(mid, 0.50);
}

TEST(Tco, RateSelectsTheGenerationsParts) {
  const Result xdr = For("ib-ndr", 1024, Prices(), {}, 800);
  EXPECT_EQ(xdr.hw.switch_part, "switch_ib_xdr");
  EXPECT_EQ(xdr.hw.radix, 144);
  EXPECT_EQ(Line(xdr, "switch optics").part, "optic_1600g_switch");
  const Result e800 = For("roce-tuned", 1024, Prices(), {}, 800);
  EXPECT_EQ(e800.hw.radix, 64);
  EXPECT_EQ(e800.hw.ports_per_cage, 1);
  EXPECT_EQ(Line(e800, "NICs").part, "nic_800g");
  EXPECT_EQ(e800.sizing.switches, 48);  // k = 64 at 800G: the IB NDR counts
  EXPECT_EQ(For("roce-800g", 1024, Prices()).sizing.switches, 48);
  EXPECT_EQ(ErrorOf([] { For("ib-ndr", 64, Prices(), {}, 100); }),
            "<cli>: --rate: expected an InfiniBand rate with parts: 200G (HDR), 400G (NDR) or "
            "800G (XDR), got \"100G\"");
  Options o;
  o.gpus = 64;
  o.fabric = "ib-ndr";
  o.rate = "300g";
  EXPECT_EQ(ErrorOf([&] { tco::Run(o); }),
            "<cli>: --rate: expected 400g or 800g (also 100g, 200g), got \"300g\"");
}

TEST(Tco, GpuCountsNoTopologyCanHost) {
  EXPECT_EQ(ErrorOf([] { For("ib-ndr", 65544, Prices()); }),
            "<cli>: --gpus: expected at most 65536 GPUs for a 3-tier non-blocking fabric of "
            "radix-64 switches, got 65544");
  EXPECT_EQ(ErrorOf([] { For("ib-ndr", 1020, Prices()); }),
            "<cli>: --gpus: expected a multiple of the profile's gpus_per_node (8), got \"1020\"");
  EXPECT_EQ(ErrorOf([] { For("roce-tuned", 0, Prices()); }),
            "<cli>: --gpus: expected at least 1 GPU, got \"0\"");
  EXPECT_NO_THROW(For("ib-ndr", 65536, Prices()));
}

TEST(Tco, PriceFileErrorsNameFileLineAndField) {
  auto bad = [](const std::string& text) { return ErrorOf([&] { Prices(text); }); };
  EXPECT_EQ(bad("pue: abc\n"), "test.yaml:1: pue: expected a number, got \"abc\"");
  EXPECT_EQ(bad("pue:\n  source: mine\n"),
            "test.yaml:1: pue.value: expected a number (the field is missing)");
  EXPECT_EQ(bad("pue: 1.2\nelectricity_price:\n  value: 12c\n"),
            "test.yaml:3: electricity_price.value: expected a number, got \"12c\"");
  EXPECT_EQ(bad("utilization: 1.5\n"),
            "test.yaml:1: utilization: expected a fraction above 0, at most 1, got \"1.5\"");
  EXPECT_EQ(bad("price_switch_ib_nrd: 1\n"),
            "test.yaml:1: price_switch_ib_nrd: unknown price name (did you mean "
            "'price_switch_ib_ndr'?); the names are those of data/prices.yaml (docs/tco.md)");
  EXPECT_EQ(bad("pue: {value: 1.2, colour: red}\n"),
            "test.yaml:1: pue.colour: unknown field; expected value, low, high, unit, source, "
            "date or grade");
  EXPECT_EQ(bad("- 1\n"), "test.yaml:1: expected a mapping of price names (docs/tco.md)");
  // The full format (the defaults file) needs every field.
  EXPECT_EQ(ErrorOf([] {
              PriceTable::Parse("a:\n  value: 1\n  unit: W\n  date: 2024\n  grade: A\n", "p.yaml");
            }),
            "p.yaml:1: a.source: expected this field (it is missing)");
  EXPECT_EQ(ErrorOf([] {
              PriceTable::Parse("a: {value: 1, unit: W, source: s, date: d, grade: E}\n", "p.yaml");
            }),
            "p.yaml:1: a.grade: expected A, B, C or D, got \"E\"");
}

TEST(Tco, DefaultsCarrySourceDateAndGrade) {
  const PriceTable t = PriceTable::Defaults();
  ASSERT_GT(t.entries().size(), 30u);
  for (const auto& p : t.entries()) {
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_TRUE(p.grade >= 'A' && p.grade <= 'D') << p.name;
    if (p.grade == 'D') {
      EXPECT_NE(p.source.find("placeholder"), std::string::npos) << p.name;
    }
    EXPECT_EQ(p.where.file, "data/prices.yaml");
    EXPECT_FALSE(p.overridden);
  }
}

// Overrides are listed; a placeholder overridden stops the warning about it.
TEST(Tco, OverridesAreListedAndSilencePlaceholders) {
  auto warns_about = [](const Result& r, const std::string& name) {
    for (const auto& w : r.warnings)
      if (w.find("placeholder " + name + " ") != std::string::npos) return true;
    return false;
  };
  const Result before = For("roce-tuned", 512, Prices());
  EXPECT_TRUE(warns_about(before, "price_switch_eth_51t"));
  EXPECT_TRUE(warns_about(before, "price_nic_400g"));
  EXPECT_FALSE(warns_about(before, "price_switch_ib_ndr"));  // grade C
  EXPECT_FALSE(warns_about(before, "ops_fte_premium_ib"));   // not used on Ethernet
  EXPECT_TRUE(before.overridden.empty());
  const Result after = For("roce-tuned", 512, Prices("price_switch_eth_51t:\n  value: 30000\n"));
  EXPECT_FALSE(warns_about(after, "price_switch_eth_51t"));
  EXPECT_TRUE(warns_about(after, "price_nic_400g"));
  ASSERT_EQ(after.overridden.size(), 1u);
  EXPECT_EQ(after.overridden[0].name, "price_switch_eth_51t");
  EXPECT_EQ(after.overridden[0].default_value, 36000);
  EXPECT_EQ(after.overridden[0].where.line, 2);
  EXPECT_EQ(Line(after, "switches").unit_usd, 30000);
  EXPECT_NE(ResultText(after).find("price_switch_eth_51t = 30000 USD / switch (default 36000) "
                                   "from test.yaml:2"),
            std::string::npos);
}

TEST(Tco, SensitivityRanksTheInputsThatMatter) {
  const Result r = For("ib-ndr", 1024, Prices());
  ASSERT_EQ(r.sensitivity.size(), 5u);
  for (size_t i = 1; i < r.sensitivity.size(); ++i) {
    EXPECT_GE(std::abs(r.sensitivity[i - 1].result_high - r.sensitivity[i - 1].result_low),
              std::abs(r.sensitivity[i].result_high - r.sensitivity[i].result_low));
  }
  for (const auto& s : r.sensitivity) {
    if (s.input != "price_switch_ib_ndr") continue;
    EXPECT_EQ(s.low, 36000);  // the range of the data file
    EXPECT_FALSE(s.assumed_range);
    EXPECT_NEAR(r.per_gpu_year - s.result_low, 48 * 14000 * (1 / 5.0 + 0.10) / 1024, 1e-6);
  }
}

TEST(Tco, CloudPricesIncludeGpus) {
  const Result c = For("cloud-shared", 1024, Prices());
  EXPECT_EQ(c.comparability, "not comparable (includes GPUs)");
  EXPECT_DOUBLE_EQ(c.per_gpu_hour, 2.50);
  EXPECT_TRUE(c.bom.empty());
  EXPECT_EQ(c.notes.size(), 1u);  // provider fabric, no sizing notes
  const PriceTable with_servers = Prices("server_capex_per_gpu: 30000\n");
  EXPECT_EQ(For("cloud-shared", 1024, with_servers).comparability,
            "comparable with on-prem all-in figures (server capex given)");
  const Result ib = For("ib-ndr", 1024, with_servers);
  ASSERT_TRUE(ib.all_in_per_gpu_hour.has_value());
  EXPECT_NEAR(*ib.all_in_per_gpu_hour, (ib.annual_usd + 30000.0 * 1024 / 5) / (1024 * 8760.0),
              1e-9);
  EXPECT_NEAR(*ib.network_share, ib.capex_usd / (ib.capex_usd + 30000.0 * 1024), 1e-12);
  EXPECT_FALSE(For("ib-ndr", 1024, Prices()).all_in_per_gpu_hour.has_value());
}

TEST(Tco, JsonSchemaAndDeterminism) {
  const nlohmann::json a = ResultJson(For("ib-ndr", 2048, Prices()));
  const nlohmann::json b = ResultJson(For("ib-ndr", 2048, Prices()));
  EXPECT_EQ(a["schema"], "lossless.tco/1");
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_EQ(a["topology"]["switches"], 96);
  EXPECT_EQ(a["bom"].size(), 5u);
  EXPECT_EQ(ResultText(For("roce-tuned", 2048, Prices())),
            ResultText(For("roce-tuned", 2048, Prices())));
}

}  // namespace
}  // namespace lossless::tco
