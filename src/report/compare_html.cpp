// The HTML report of `lossless compare` (compare_html.hpp): the page (its
// CSS, title and options, summary and caveats, profiles, the matrix with its
// footnotes, the charts of compare_charts.cpp as figures, the operations
// facts) and HtmlEscape. The document is read by compare_doc.cpp.
#include "report/compare_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "report/compare_charts.hpp"
#include "report/compare_doc.hpp"
#include "report/svg_plot.hpp"

namespace lossless::report {
namespace {

using nlohmann::json;
using detail::BusbwChart;
using detail::DashAttr;
using detail::Doc;
using detail::HasScaling;
using detail::HasTrainStep;
using detail::IncastChart;
using detail::IterationsChart;
using detail::LatencyChart;
using detail::Marker;
using detail::NumberText;
using detail::OpsFact;
using detail::Profile;
using detail::ReadDoc;
using detail::Reader;
using detail::ScalingChart;
using detail::SizeLabel;
using detail::Style;
using detail::StyleOf;
using detail::TcoChart;
using detail::Thousands;
using detail::TrainStepChart;
using detail::ValueText;

constexpr const char* kCss = R"(
body{font-family:"DejaVu Sans","Helvetica Neue",Arial,sans-serif;color:#1a1a1a;margin:0;background:#fff;line-height:1.45}
main{max-width:980px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:26px;margin:0 0 4px;overflow-wrap:anywhere}
h2{font-size:19px;margin:34px 0 8px;border-bottom:2px solid #1a1a1a;padding-bottom:3px}
h3{font-size:15px;margin:20px 0 6px}
.options{color:#444;font-size:14px;margin:0 0 6px}
nav{font-size:13.5px;margin:0 0 16px}
nav a{color:#0b4f8a}
@media print{nav{display:none}}
ul{margin:6px 0;padding-left:22px}
li{margin:3px 0}
.caveats li{color:#333}
table{border-collapse:collapse;width:100%;font-size:13.5px;margin:8px 0}
th,td{border-bottom:1px solid #ccc;padding:5px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
table.matrix td:first-child{min-width:9em}
thead th{border-bottom:2px solid #1a1a1a;background:#f2f2f2;overflow-wrap:anywhere}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.unit{color:#555;overflow-wrap:anywhere}
td.str{white-space:normal}
table.wide{font-size:12px}
table.wide th,table.wide td{padding:4px 4px;overflow-wrap:anywhere}
tr.section th{background:#e6e6e6;text-transform:uppercase;font-size:12px;letter-spacing:.05em}
td.best{font-weight:bold;background:#dbeedd;box-shadow:inset 3px 0 0 #1a6b2a}
td.null{color:#444;text-align:right}
th.num{text-align:right}
td.link,h1 span{white-space:nowrap}
table.profiles td:first-child{min-width:13em}
sup{font-size:10px;color:#555}
.footnotes{font-size:12.5px;color:#333}
.legend-key{font-size:12.5px;color:#444}
figure{margin:18px 0 26px}
figcaption{font-size:13px;color:#333;margin-top:4px}
svg{display:block;max-width:100%;height:auto;font-size:13px}
svg .grid{stroke:#e2e2e2;stroke-width:1}
svg .frame{fill:none;stroke:#555;stroke-width:1}
svg .axis{stroke:#555;stroke-width:1}
svg .tick{fill:#333;font-size:12px}
svg .axis-title{fill:#1a1a1a;font-size:13.5px;font-weight:bold}
svg .legend text{fill:#1a1a1a;font-size:13px}
svg .ref{stroke:#666;stroke-width:1.2;stroke-dasharray:2 4}
svg .ref-label{fill:#555;font-size:11.5px}
svg .lane{fill:#1a1a1a;font-size:13px}
svg .note{fill:#333;font-size:12px}
svg .total{fill:#1a1a1a;font-size:12.5px;font-weight:bold}
svg .panel-title{fill:#1a1a1a;font-size:13px;font-weight:bold}
svg .nodata,svg .nodata-inline{fill:#a00;font-size:14px;font-style:italic}
.facts{border:2px dashed #888;padding:4px 14px 10px;margin-top:34px}
.facts h2{border:none;margin-top:12px}
.src{color:#555;font-size:12px}
@media print{main{max-width:none;padding:0}figure,table{break-inside:avoid}}
)";

std::string OptionsLine(const Doc& d) {
  std::map<std::string, const json*> o(d.options.begin(), d.options.end());
  std::vector<std::string> parts;
  auto num = [&](const char* k) -> const json* {
    auto it = o.find(k);
    return it != o.end() && it->second->is_number() ? it->second : nullptr;
  };
  if (num("nodes") && num("gpus_per_node"))
    parts.push_back(fmt::format("{} nodes &#215; {} GPUs", ValueText(*num("nodes")),
                                ValueText(*num("gpus_per_node"))));
  for (const char* k : {"rate", "seed"}) {
    if (auto it = o.find(k); it != o.end())
      parts.push_back(fmt::format("{} {}", k, HtmlEscape(ValueText(*it->second))));
  }
  if (auto it = o.find("full"); it != o.end() && it->second->is_boolean())
    parts.emplace_back(it->second->get<bool>() ? "full sweep" : "default (reduced) sweep");
  if (auto it = o.find("sizes"); it != o.end() && it->second->is_array() && !it->second->empty()) {
    const json& a = *it->second;
    if (a.front().is_number() && a.back().is_number())
      parts.push_back(fmt::format("sizes {}&#8211;{} ({} sizes)",
                                  SizeLabel(a.front().get<double>()),
                                  SizeLabel(a.back().get<double>()), a.size()));
  }
  if (const json* g = num("tco_gpus"))
    parts.push_back(fmt::format("TCO at {} GPUs", Thousands(g->get<double>())));
  for (const auto& [k, v] : d.options) {
    static const std::set<std::string> kKnown = {"nodes", "gpus_per_node", "rate",    "seed",
                                                 "full",  "sizes",         "tco_gpus"};
    if (kKnown.count(k) == 0)
      parts.push_back(HtmlEscape(k) + " " +
                      HtmlEscape(v->is_string() ? v->get<std::string>() : v->dump()));
  }
  if (!d.version.empty()) parts.push_back("lossless " + HtmlEscape(d.version));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " &#183; " : "") + parts[i];
  return out;
}

const char* SectionTitle(const std::string& s) {
  static const std::map<std::string, const char*> kTitles = {
      {"latency", "Latency (idle fabric, small messages)"},
      {"collective", "All-reduce bus bandwidth"},
      {"jitter", "Iteration-time jitter"},
      {"incast", "Incast stress"},
      {"fault", "Fault cases"},
      {"training", "Training step"},
      {"tco", "Cost (TCO)"},
      {"scaling", "Scaling"},
  };
  auto it = kTitles.find(s);
  return it == kTitles.end() ? nullptr : it->second;
}

void Matrix(std::string& out, const Doc& d) {
  std::vector<std::string> footnotes;
  auto footnote = [&](const std::string& profile, const std::string& label,
                      const std::string& note) {
    footnotes.push_back("<b>" + HtmlEscape(label) + ", " + HtmlEscape(profile) + ":</b> " +
                        HtmlEscape(note));
    return footnotes.size();
  };
  // Many columns: a smaller type, so the table still fits the page.
  out += d.profiles.size() > 6 ? "<table class=\"matrix wide\">" : "<table class=\"matrix\">";
  out += "\n<thead><tr><th>metric</th><th>unit</th>";
  for (const auto& p : d.profiles) out += "<th class=\"num\">" + HtmlEscape(p.name) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  std::string section = "\x01";
  const size_t ncol = d.profiles.size() + 2;
  for (const auto& r : d.rows) {
    if (r.section == "operations") continue;  // documented facts: their own table
    if (r.section != section) {
      section = r.section;
      const char* t = SectionTitle(section);
      out += fmt::format("<tr class=\"section\"><th colspan=\"{}\">{}</th></tr>\n", ncol,
                         t ? t : HtmlEscape(section).c_str());
    }
    // The best numeric value, when the row says which way is better and not all are equal.
    // A value with a footnote is qualified ("not at plateau", "1 ACK timeout", "faster than
    // without the fault") and does not compete for best.
    bool have_best = false;
    double best = 0, worst = 0;
    int numeric = 0;
    for (size_t i = 0; i < r.values.size(); ++i) {
      const json* v = r.values[i];
      if (v == nullptr || !v->is_number() || !r.notes[i].empty()) continue;
      const double x = v->get<double>();
      if (numeric++ == 0) best = worst = x;
      if (r.better == "lower") {
        best = std::min(best, x);
        worst = std::max(worst, x);
      } else {
        best = std::max(best, x);
        worst = std::min(worst, x);
      }
    }
    have_best = (r.better == "lower" || r.better == "higher") && numeric >= 2 && best != worst;
    // One precision for the whole row, so its numbers line up.
    double scale = 0;
    for (const json* v : r.values)
      if (v != nullptr && v->is_number()) scale = std::max(scale, std::fabs(v->get<double>()));
    out += "<tr><td>" + HtmlEscape(r.label) + "</td><td class=\"unit\">" + HtmlEscape(r.unit) +
           "</td>";
    for (size_t i = 0; i < d.profiles.size(); ++i) {
      const json* v = r.values[i];
      const std::string& note = r.notes[i];
      std::string sup;
      // A case that did not finish (Ctrl-C, docs/compare-results.md): said once, above the table.
      if (note.starts_with("not run") && (v == nullptr || v->is_null())) {
        out += "<td class=\"null\" title=\"" + HtmlEscape(note) + "\">not run</td>";
        continue;
      }
      if (!note.empty())
        sup = fmt::format("<sup>[{}]</sup>", footnote(d.profiles[i].name, r.label, note));
      if (v == nullptr || v->is_null()) {
        out += fmt::format("<td class=\"null\"{}>&#8212;{}</td>",
                           note.empty() ? "" : " title=\"" + HtmlEscape(note) + "\"", sup);
        continue;
      }
      const bool is_best = have_best && v->is_number() && note.empty() && v->get<double>() == best;
      const std::string text = v->is_number_integer() ? Thousands(v->get<double>())
                               : v->is_number()       ? NumberText(v->get<double>(), r.unit, scale)
                                                      : HtmlEscape(ValueText(*v));
      out += fmt::format("<td class=\"num{}\"{}>{}{}</td>",
                         is_best ? " best" : (v->is_string() ? " str" : ""),
                         note.empty() ? "" : " title=\"" + HtmlEscape(note) + "\"", text, sup);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  out +=
      "<p class=\"legend-key\"><span style=\"font-weight:bold;background:#dbeedd;"
      "box-shadow:inset 3px 0 0 #1a6b2a;padding:0 6px\">bold, shaded</span> best value of "
      "the row (lower or higher, as the metric goes; a value with a footnote is not ranked); "
      "&#8212; not measured, with the reason in a footnote.</p>\n";
  if (!footnotes.empty()) {
    out += "<ol class=\"footnotes\">\n";
    for (const auto& f : footnotes) out += "<li>" + f + "</li>\n";
    out += "</ol>\n";
  }
}

void Operations(std::string& out, const Doc& d) {
  out +=
      "<section class=\"facts\" id=\"operations\">\n<h2>Operations &#8212; documented facts, not "
      "simulated</h2>\n"
      "<p>These rows come from vendor documentation and standards, not from the simulator; "
      "they are kept apart from the measured rows above.</p>\n";
  std::vector<OpsFact> facts = d.operations;
  for (const auto& r : d.rows) {
    if (r.section != "operations") continue;
    OpsFact f{r.label, "", {}};
    for (size_t i = 0; i < d.profiles.size(); ++i)
      f.values.push_back(
          r.values[i] == nullptr || r.values[i]->is_null() ? "" : ValueText(*r.values[i]));
    facts.push_back(std::move(f));
  }
  if (facts.empty()) {
    out += "<p class=\"nodata\">no data: the results hold no operations facts</p>\n</section>\n";
    return;
  }
  out += d.profiles.size() > 6 ? "<table class=\"ops wide\">" : "<table class=\"ops\">";
  out += "<thead><tr><th>topic</th>";
  for (const auto& p : d.profiles) out += "<th>" + HtmlEscape(p.name) + "</th>";
  out += "<th>source</th></tr></thead>\n<tbody>\n";
  for (const auto& f : facts) {
    out += "<tr><td>" + HtmlEscape(f.label) + "</td>";
    for (const auto& v : f.values)
      out += "<td>" + (v.empty() ? "&#8212;" : HtmlEscape(v)) + "</td>";
    out += "<td class=\"src\">" + HtmlEscape(f.source) + "</td></tr>\n";
  }
  out += "</tbody></table>\n</section>\n";
}

void Figure(std::string& out, const char* title, const std::string& caption,
            void (*chart)(std::string&, const Doc&, const Reader&), const Doc& d,
            const Reader& in) {
  out += fmt::format("<figure>\n<h3>{}</h3>\n", title);
  chart(out, d, in);
  out += "<figcaption>" + caption + "</figcaption>\n</figure>\n";
}

}  // namespace

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderCompareReport(const nlohmann::json& results, const std::string& source) {
  const Reader in(source);
  const Doc d = ReadDoc(results, in);
  std::string names, names_html;
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const char* sep = i ? (i + 1 == d.profiles.size() ? " and " : ", ") : "";
    names += sep + d.profiles[i].name;
    // A short name stays on one line; a long one may break anywhere.
    const std::string& n = d.profiles[i].name;
    names_html += sep + (n.size() <= 30 ? "<span>" + HtmlEscape(n) + "</span>" : HtmlEscape(n));
  }
  std::string out;
  out.reserve(size_t{256} * 1024);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>Fabric comparison: " + HtmlEscape(names) + "</title>\n";
  out += std::string("<style>") + kCss + "</style>\n</head>\n<body>\n<main>\n";
  out += "<h1>Fabric comparison: " + names_html + "</h1>\n";
  out += "<p class=\"options\">" + OptionsLine(d) + "</p>\n";
  out +=
      "<nav><a href=\"#summary\">Summary</a> &#183; <a href=\"#profiles\">Profiles</a> &#183; "
      "<a href=\"#matrix\">Matrix</a> &#183; <a href=\"#charts\">Charts</a> &#183; "
      "<a href=\"#operations\">Operations (documented facts)</a></nav>\n";

  out += "<h2 id=\"summary\">What the evidence says</h2>\n<ul class=\"summary\">\n";
  for (const auto& s : d.summary) out += "<li>" + HtmlEscape(s) + "</li>\n";
  if (d.summary.empty()) out += "<li>(no summary)</li>\n";
  out += "</ul>\n<h3>Caveats</h3>\n<ul class=\"caveats\">\n";
  for (const auto& s : d.caveats) out += "<li>" + HtmlEscape(s) + "</li>\n";
  if (d.caveats.empty()) out += "<li>(none given)</li>\n";
  out += "</ul>\n";

  out +=
      "<h2 id=\"profiles\">Profiles</h2>\n<table "
      "class=\"profiles\"><thead><tr><th>profile</th><th>link</th>"
      "<th>description</th><th>placeholders</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const Profile& p = d.profiles[i];
    const Style st = StyleOf(i);
    std::string ph;
    for (size_t k = 0; k < p.placeholders.size(); ++k) {
      if (k > 0) ph += ", ";
      ph += HtmlEscape(p.placeholders[k]);
    }
    std::string link = p.link_layer == "infiniband" ? "InfiniBand"
                       : p.link_layer == "roce"     ? "RoCE v2"
                                                    : HtmlEscape(p.link_layer);
    if (p.link_rate_gbps > 0)
      link += (link.empty() ? "" : ", ") + fmt::format("{:g} Gb/s", p.link_rate_gbps);
    out += fmt::format(
        "<tr><td><svg width=\"40\" height=\"12\" style=\"display:inline;vertical-align:middle\">"
        "<line x1=\"2\" y1=\"6\" x2=\"38\" y2=\"6\" stroke=\"{}\" stroke-width=\"2.5\"{}/>{}</svg> "
        "<b class=\"pname\">{}</b>{}</td><td class=\"link\">{}</td><td>{}</td><td>{}</td></tr>\n",
        st.color, DashAttr(st), Marker(st.marker, 20, 6, 4, st.color, ""), HtmlEscape(p.name),
        p.file.empty() ? "" : "<br><span class=\"src\">" + HtmlEscape(p.file) + "</span>", link,
        HtmlEscape(p.description), ph.empty() ? "none" : ph);
  }
  out += "</tbody></table>\n";

  out += "<h2 id=\"matrix\">Comparison matrix</h2>\n";
  Matrix(out, d);

  out += "<h2 id=\"charts\">Charts</h2>\n";
  Figure(out, "All-reduce bus bandwidth against message size",
         "Bus bandwidth as nccl-tests reports it, per message size; dotted lines: line rate and "
         "the checklist's 92 % mark.",
         BusbwChart, d, in);
  if (HasScaling(d))
    Figure(out, "All-reduce bus bandwidth against cluster size",
           "Bus bandwidth of the 1 GiB all-reduce at each node count (--full): how busbw holds up "
           "as the ring grows.",
           ScalingChart, d, in);
  Figure(out, "Small-message RDMA latency (CDF)",
         "Share of messages delivered within a latency: the whole distribution (top) and its tail "
         "from p90 up, stretched (bottom); the further right a curve ends, the worse its tail.",
         LatencyChart, d, in);
  Figure(out, "All-reduce iteration times",
         "One dot per iteration; box: 25th to 75th percentile, thick bar: median, whiskers: "
         "fastest to slowest.",
         IterationsChart, d, in);
  Figure(out, "Incast stress timeline",
         "Queue occupancy of the congested egress port; shaded: the intervals the port (or, on "
         "InfiniBand, its upstream) was paused or credit-starved.",
         IncastChart, d, in);
  if (HasTrainStep(d))
    Figure(out, "Training step time",
           "One training step per profile: compute, tensor-parallel all-reduces (on the compute "
           "stream) and the data-parallel communication not hidden behind compute; the bar's "
           "length is the step time.",
           TrainStepChart, d, in);
  Figure(out, "Cost per GPU per year",
         "Annual fabric cost per GPU split by item (capex amortized, power, operations).", TcoChart,
         d, in);

  Operations(out, d);
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace lossless::report
