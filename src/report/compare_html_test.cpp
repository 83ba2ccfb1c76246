// The compare report rendered from the hand-made fixture
// (tests/fixtures/compare/sample-results.json) and from small documents
// built here: escaping, determinism, the charts and their marks, nulls with
// notes, and the errors a malformed document gives.
#include "report/compare_html.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

json Fixture() {
  std::ifstream in(std::string(LOSSLESS_SOURCE_DIR) +
                   "/tests/fixtures/compare/sample-results.json");
  EXPECT_TRUE(in.good());
  return json::parse(in);
}

// The text of <svg data-chart="NAME" ...> ... </svg>, or "" if absent.
std::string Chart(const std::string& html, const std::string& name) {
  const size_t start = html.find("<svg data-chart=\"" + name + "\"");
  if (start == std::string::npos) return "";
  const size_t end = html.find("</svg>", start);
  return html.substr(start, end - start);
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The smallest valid document: one profile, one row, no series.
json Minimal() {
  return json{{"schema", "lossless.compare/1"},
              {"lossless_version", "0.1.0"},
              {"options", {{"nodes", 2}, {"gpus_per_node", 8}}},
              {"profiles", json::array({{{"name", "ib-ndr"}}})},
              {"rows", json::array({{{"section", "latency"},
                                     {"key", "latency_p50_us"},
                                     {"label", "RDMA latency p50"},
                                     {"unit", "us"},
                                     {"values", {{"ib-ndr", 1.84}}},
                                     {"better", "lower"}}})},
              {"series", json::object()},
              {"summary", json::array()},
              {"caveats", json::array()},
              {"operations", json::array()}};
}

TEST(CompareReport, EveryChartOfTheFixtureHasMarksAndNoNoDataMessage) {
  const std::string html = RenderCompareReport(Fixture());
  for (const char* name : {"busbw", "latency_cdf", "iterations", "incast", "tco"}) {
    const std::string chart = Chart(html, name);
    ASSERT_FALSE(chart.empty()) << name;
    EXPECT_GE(Count(chart, "class=\"mark"), 4u) << name;
    EXPECT_THAT(chart, Not(HasSubstr("class=\"nodata\""))) << name;
  }
  // 4 profiles x 8 sizes: a line and a marker per point.
  EXPECT_EQ(Count(Chart(html, "busbw"), "class=\"mark\""), 4u * 8 + 4);
  // Size labels of the log2 axis.
  for (const char* size : {">8M<", ">16M<", ">128M<", ">1G<"})
    EXPECT_THAT(Chart(html, "busbw"), HasSubstr(size));
  // roce-untuned's three pauses and the others' are shaded.
  EXPECT_EQ(Count(Chart(html, "incast"), "class=\"mark paused\""), 2u + 3 + 3 + 2);
  // cloud-shared has no fabric-only TCO: said with its note, not drawn.
  EXPECT_THAT(Chart(html, "tco"),
              HasSubstr("no fabric-only figure: not comparable (includes GPUs)"));
  EXPECT_THAT(html, HasSubstr("documented facts, not simulated"));
}

TEST(CompareReport, SameJsonGivesSameBytes) {
  const json j = Fixture();
  EXPECT_EQ(RenderCompareReport(j), RenderCompareReport(j));
  EXPECT_EQ(RenderCompareReport(j), RenderCompareReport(json::parse(j.dump())));
}

TEST(CompareReport, NoScriptAndNoNetwork) {
  const std::string html = RenderCompareReport(Fixture());
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http://www.w3.org/1999")));  // no xlink, no external href
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  // Links only within the page; fills only from the page's own patterns.
  for (size_t p = html.find("href=\""); p != std::string::npos; p = html.find("href=\"", p + 1))
    EXPECT_EQ(html[p + 6], '#') << html.substr(p, 40);
  for (size_t p = html.find("url("); p != std::string::npos; p = html.find("url(", p + 1))
    EXPECT_EQ(html[p + 4], '#') << html.substr(p, 40);
}

TEST(CompareReport, EscapesEveryStringFromTheJson) {
  json j = Minimal();
  const std::string evil = "<script>alert('x')</script>&\"";
  j["profiles"][0]["name"] = evil;
  j["profiles"][0]["description"] = "<img src=x onerror=alert(1)>";
  j["rows"][0]["values"] = {{evil, "<b>str</b>"}};
  j["rows"][0]["notes"] = {{evil, "note <i>"}};
  j["rows"][0]["label"] = "<u>label</u>";
  j["summary"] = {"<h1>summary</h1>"};
  j["caveats"] = {"caveat & <b>"};
  j["options"]["tenant"] = "<x>";
  j["series"]["busbw"] = {{evil, json::array({{{"bytes", 8388608}, {"busbw_gbs", 300.0}}})}};
  j["operations"] =
      json::array({{{"label", "<op>"}, {"values", {{evil, "<v>"}}}, {"source", "<src>"}}});
  const std::string html = RenderCompareReport(j);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  for (const char* tag : {"<b>str", "<i>", "<u>", "<h1>summary", "<x>", "<op>", "<v>", "<src>"})
    EXPECT_THAT(html, Not(HasSubstr(tag))) << tag;
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

TEST(CompareReport, NullIsADashWithItsNoteAsTooltipAndFootnote) {
  const std::string html = RenderCompareReport(Fixture());
  // ib-ndr's PAUSE frames: null with a note.
  EXPECT_THAT(html, HasSubstr("<td class=\"null\" title=\"InfiniBand sends no PAUSE: "
                              "credit-based flow control (credit-starved time is in the "
                              "paused-time row)\">&#8212;<sup>["));
  EXPECT_THAT(html, HasSubstr("<li><b>PAUSE frames, ib-ndr:</b> InfiniBand sends no PAUSE"));
  // A null without a note is a bare dash.
  json j = Minimal();
  j["rows"][0]["values"]["ib-ndr"] = nullptr;
  EXPECT_THAT(RenderCompareReport(j), HasSubstr("<td class=\"null\">&#8212;</td>"));
}

TEST(CompareReport, BestValueFollowsBetter) {
  const std::string html = RenderCompareReport(Fixture());
  // Lower latency is better: ib-ndr's 1.84 us; higher busbw is better: 46.10.
  EXPECT_THAT(html, HasSubstr("<td class=\"num best\">1.84</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num best\">46.10</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">2.12</td>"));
  // All equal (no drops anywhere): nothing highlighted.
  const size_t drops = html.find("<td>Drops</td>");
  ASSERT_NE(drops, std::string::npos);
  EXPECT_THAT(html.substr(drops, html.find("</tr>", drops) - drops), Not(HasSubstr("best")));
}

// The default comparison of 5 December 2026 shaded cloud-shared's -14 %
// degraded-link "slowdown" as the best of its row, a faster run the row's
// note explains away. A value with a footnote is not ranked.
TEST(CompareReport, AValueWithAFootnoteIsNotRankedBest) {
  json j = Minimal();
  j["profiles"] =
      json::array({{{"name", "ib-ndr"}}, {{"name", "roce-tuned"}}, {{"name", "cloud-shared"}}});
  j["rows"][0] = {{"section", "fault"},
                  {"key", "ber_slowdown_pct"},
                  {"label", "Slowdown"},
                  {"unit", "%"},
                  {"better", "lower"},
                  {"values", {{"ib-ndr", 74.69}, {"roce-tuned", 77.37}, {"cloud-shared", -14.07}}},
                  {"notes", {{"cloud-shared", "faster than without the fault"}}}};
  const std::string html = RenderCompareReport(j);
  EXPECT_THAT(html, HasSubstr("<td class=\"num best\">74.69</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<td class=\"num best\" title=\"faster")));
  j["rows"][0]["values"]["ib-ndr"] = 1.0;
  j["rows"][0].erase("notes");
  EXPECT_THAT(RenderCompareReport(j), HasSubstr("<td class=\"num best\">-14.07</td>"));
}

// The incast chart of 5 December 2026 labelled its queue axis 0, 2, 5, 8,
// 10 MiB: ticks 2.5 apart printed without decimals. A tick label has the
// decimals of its step.
TEST(CompareReport, TickLabelsKeepTheDecimalsOfTheirStep) {
  json j = Minimal();
  j["series"]["busbw"]["ib-ndr"] = json::array(
      {{{"bytes", 8388608}, {"busbw_gbs", 6.0}, {"time_us", 1}},
       {{"bytes", 16777216}, {"busbw_gbs", 11.0}, {"time_us", 1}}});
  const std::string chart = Chart(RenderCompareReport(j), "busbw");
  ASSERT_FALSE(chart.empty());
  EXPECT_THAT(chart, HasSubstr(">2.5</text>"));
  EXPECT_THAT(chart, HasSubstr(">7.5</text>"));
  EXPECT_THAT(chart, HasSubstr(">10.0</text>"));
  EXPECT_THAT(chart, Not(HasSubstr(">8</text>")));
}

TEST(CompareReport, OperationsFactsStayOutOfTheMatrix) {
  json j = Minimal();
  j["rows"].push_back({{"section", "operations"},
                       {"key", "ops_skills"},
                       {"label", "Skills needed"},
                       {"unit", ""},
                       {"values", {{"ib-ndr", "InfiniBand fabric manager"}}},
                       {"better", ""}});
  j["operations"] = json::array({{{"label", "Management plane"},
                                  {"values", {{"ib-ndr", "subnet manager"}}},
                                  {"source", "UFM manual"}}});
  const std::string html = RenderCompareReport(j);
  const size_t matrix = html.find("<table class=\"matrix\">");
  const size_t facts = html.find("documented facts, not simulated");
  ASSERT_NE(matrix, std::string::npos);
  ASSERT_NE(facts, std::string::npos);
  const std::string matrix_html = html.substr(matrix, html.find("</table>", matrix) - matrix);
  EXPECT_THAT(matrix_html, Not(HasSubstr("Skills needed")));
  const std::string facts_html = html.substr(facts);
  EXPECT_THAT(facts_html, HasSubstr("<td>Management plane</td><td>subnet manager</td>"));
  EXPECT_THAT(facts_html, HasSubstr("<td>Skills needed</td><td>InfiniBand fabric manager</td>"));
  EXPECT_THAT(facts_html, HasSubstr("UFM manual"));
}

TEST(CompareReport, MissingSeriesSaysNoData) {
  const std::string html = RenderCompareReport(Minimal());
  for (const char* name : {"busbw", "latency_cdf", "iterations", "incast", "tco"}) {
    const std::string chart = Chart(html, name);
    ASSERT_FALSE(chart.empty()) << name;
    EXPECT_THAT(chart, HasSubstr("class=\"nodata\"")) << name;
    EXPECT_EQ(Count(chart, "class=\"mark"), 0u) << name;
  }
}

TEST(CompareReport, DegenerateSeriesStillDrawMarks) {
  // One size, equal iteration times, an idle queue, one latency sample, a zero cost item.
  json j = Minimal();
  j["series"]["busbw"] = {{"ib-ndr", json::array({{{"bytes", 8388608}, {"busbw_gbs", 300.0}}})}};
  j["series"]["latency_cdf"] = {{"ib-ndr", json::array({{{"p", 1.0}, {"us", 2.0}}})}};
  j["series"]["iterations"] = {{"ib-ndr", {{"bytes", 1024}, {"time_us", {5.0, 5.0, 5.0}}}}};
  j["series"]["incast_timeline"] = {
      {"ib-ndr", {{"t_us", {0, 1}}, {"queue_bytes", {0, 0}}, {"paused", json::array()}}}};
  j["series"]["tco"] = {{"ib-ndr", {{"switches", 100.0}, {"power", 0.0}}}};
  const std::string html = RenderCompareReport(j);
  for (const char* name : {"busbw", "latency_cdf", "iterations", "incast", "tco"}) {
    EXPECT_GE(Count(Chart(html, name), "class=\"mark"), 1u) << name;
    EXPECT_THAT(Chart(html, name), Not(HasSubstr("nan"))) << name;
    EXPECT_THAT(Chart(html, name), Not(HasSubstr("inf"))) << name;
  }
}

// The InputError message of rendering `j`, or "" if it renders.
std::string ErrorOf(const json& j) {
  try {
    RenderCompareReport(j, "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CompareReport, BadShapeNamesTheField) {
  json j = Minimal();
  j.erase("profiles");
  EXPECT_EQ(ErrorOf(j), "r.json: profiles: missing field");
  j = Minimal();
  j["rows"][0].erase("unit");
  EXPECT_EQ(ErrorOf(j), "r.json: rows[0].unit: missing field");
  j = Minimal();
  j["rows"][0]["values"]["ib-ndr"] = json::array();
  EXPECT_EQ(ErrorOf(j),
            "r.json: rows[0].values.ib-ndr: expected a number, a string or null, got array");
  j = Minimal();
  j["schema"] = "lossless.compare/2";
  EXPECT_THAT(ErrorOf(j), HasSubstr("r.json: schema: expected \"lossless.compare/1\""));
  j = Minimal();
  j["series"]["busbw"] = {{"ib-ndr", json::array({{{"bytes", 8388608}}})}};
  EXPECT_EQ(ErrorOf(j), "r.json: series.busbw.ib-ndr[0].busbw_gbs: missing field");
  j = Minimal();
  j["series"]["incast_timeline"] = {{"ib-ndr", {{"t_us", {0, 1}}, {"queue_bytes", {0}}}}};
  EXPECT_EQ(ErrorOf(j),
            "r.json: series.incast_timeline.ib-ndr.queue_bytes: expected 2 values "
            "(one per t_us), got 1");
  EXPECT_EQ(ErrorOf(json::array()), "r.json: expected a JSON object (lossless.compare/1 results)");
}

// The training step becomes one stacked bar per profile (compute, TP,
// exposed data-parallel communication), each part as long as its share of
// the step; a document without the series has no such figure, and a part
// below zero names its field.
TEST(CompareReport, TrainingStepIsAStackedBarPerProfile) {
  const std::string html = RenderCompareReport(Fixture());
  const std::string chart = Chart(html, "train-step");
  ASSERT_FALSE(chart.empty());
  // 4 profiles: compute and exposed communication each; cloud-shared also TP.
  EXPECT_EQ(Count(chart, "class=\"mark\""), 4u * 2 + 1);
  EXPECT_THAT(chart, HasSubstr("<title>exposed data-parallel communication: 82.600 ms</title>"));
  EXPECT_THAT(chart, HasSubstr(">671.9 ms (111.9 exposed)<"));
  // Widths follow the times: cloud-shared's exposed part is 82.6 / 4.1 times ib-ndr's.
  auto width_of = [&](const std::string& title) {
    const size_t t = chart.find(title);
    const size_t w = chart.rfind(" width=\"", t);  // not stroke-width
    return std::stod(chart.substr(w + 8));
  };
  EXPECT_NEAR(width_of("exposed data-parallel communication: 82.600 ms") /
                  width_of("exposed data-parallel communication: 4.100 ms"),
              82.6 / 4.1, 0.5);  // widths are printed to 0.1 px
  EXPECT_TRUE(Chart(RenderCompareReport(Minimal()), "train-step").empty());
  json j = Minimal();
  j["series"]["train_step"] = {
      {"ib-ndr", {{"compute_ms", 1.0}, {"tp_ms", -1.0}, {"exposed_dp_ms", 0.0}}}};
  EXPECT_EQ(ErrorOf(j), "r.json: series.train_step.ib-ndr.tp_ms: expected a time at or above 0");
}

// --full's scaling rows become a chart of busbw against nodes, one line per
// profile; without them there is no such chart (no empty figure).
TEST(CompareReport, ScalingRowsDrawOneLinePerProfile) {
  json j = Fixture();
  EXPECT_TRUE(Chart(RenderCompareReport(j), "scaling").empty());
  const json profiles = j["profiles"];
  for (int nodes : {2, 4, 8, 16}) {
    json values = json::object();
    for (size_t i = 0; i < profiles.size(); ++i)
      values[profiles[i]["name"].get<std::string>()] =
          390.0 - nodes - 10.0 * static_cast<double>(i);
    j["rows"].push_back(
        {{"section", "collective"},
         {"key", "scaling_busbw_" + std::to_string(nodes)},
         {"label", "all_reduce busbw, 1 GiB on " + std::to_string(nodes) + " nodes"},
         {"unit", "GB/s"},
         {"values", values},
         {"better", "higher"}});
  }
  const std::string chart = Chart(RenderCompareReport(j), "scaling");
  ASSERT_FALSE(chart.empty());
  EXPECT_EQ(Count(chart, "fill=\"none\" stroke="), profiles.size());  // one line each
  EXPECT_THAT(chart, HasSubstr(">16<"));                              // the node count as an x tick
  EXPECT_THAT(chart, Not(HasSubstr("class=\"nodata\"")));
  // The line rate and the checklist's 92 % mark, as on the busbw chart.
  EXPECT_THAT(chart, HasSubstr("line rate "));
  EXPECT_THAT(chart, HasSubstr("92 % of line rate"));
  // Node counts double: a log2 axis spaces 2, 4, 8 and 16 evenly (the first
  // full run, December 2026, drew them on a linear axis from 0: 73, 73, 146
  // and 292 px apart).
  const size_t at = chart.find("d=\"M");
  ASSERT_NE(at, std::string::npos);
  const std::string d = chart.substr(at + 3, chart.find('"', at + 3) - at - 3);  // "M.. L.."
  std::vector<double> xs;
  for (size_t k = 0; k < d.size(); ++k)
    if (d[k] == 'M' || d[k] == 'L') xs.push_back(std::stod(d.substr(k + 1)));
  ASSERT_EQ(xs.size(), 4U) << d;
  EXPECT_NEAR(xs[1] - xs[0], xs[3] - xs[2], 0.2) << d;
  EXPECT_NEAR(xs[2] - xs[1], xs[3] - xs[2], 0.2) << d;
}

// One scaling point (--full --nodes 2 or 3) sits inside the plot, not on its edge.
TEST(CompareReport, ALoneScalingPointIsInsideThePlot) {
  json j = Fixture();
  json values = json::object();
  for (const json& p : j["profiles"]) values[p["name"].get<std::string>()] = 390.0;
  j["rows"].push_back({{"section", "collective"},
                       {"key", "scaling_busbw_2"},
                       {"label", "all_reduce busbw, 1 GiB on 2 nodes"},
                       {"unit", "GB/s"},
                       {"values", values},
                       {"better", "higher"}});
  const std::string chart = Chart(RenderCompareReport(j), "scaling");
  const size_t at = chart.find("d=\"M");
  ASSERT_NE(at, std::string::npos);
  const double x = std::stod(chart.substr(at + 4));
  // The plot spans x 75 to 920 - 215 = 705: the point is in its middle.
  EXPECT_NEAR(x, 75 + (705 - 75) / 2.0, 1.0);
}

}  // namespace
}  // namespace lossless::report
