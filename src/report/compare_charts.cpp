// The charts of the compare report (compare_charts.hpp): bus bandwidth,
// scaling, latency CDF, iteration times, incast timeline, TCO and the
// training step, drawn with the primitives of svg_plot.hpp.
#include "report/compare_charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "report/compare_html.hpp"
#include "report/svg_plot.hpp"

namespace lossless::report::detail {
namespace {

// Legend of the profiles in `shown` (indices), one per line from (x, y).
void ProfileLegend(std::string& out, const Doc& d, const std::vector<size_t>& shown, double x,
                   double y) {
  out += "<g class=\"legend\">\n";
  for (size_t k = 0; k < shown.size(); ++k) {
    const size_t i = shown[k];
    const Style s = StyleOf(i);
    const double yy = y + static_cast<double>(k) * 22;
    out += fmt::format("<g><title>{}</title>", HtmlEscape(d.profiles[i].name));
    out += fmt::format(
        R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2.5"{}/>)svg", C(x),
        C(yy), C(x + 34), C(yy), s.color, DashAttr(s));
    out += Marker(s.marker, x + 17, yy, 4.5, s.color, "");
    out += fmt::format(R"svg(<text x="{}" y="{}">{}</text></g>)svg"
                       "\n",
                       C(x + 42), C(yy + 4), ShortName(d.profiles[i].name));
  }
  out += "</g>\n";
}

constexpr double kW = 920;  // chart width (px)

// The series object `name` of the document, or nullptr when absent or null.
const json* SeriesOf(const Doc& d, const char* name, const Reader& in) {
  auto it = d.series->find(name);
  if (it == d.series->end() || it->is_null()) return nullptr;
  if (!it->is_object()) in.Fail(std::string("series.") + name, "expected an object per profile");
  return &*it;
}
const json* ProfileSeries(const json* s, const std::string& profile) {
  if (s == nullptr) return nullptr;
  auto it = s->find(profile);
  return it == s->end() || it->is_null() ? nullptr : &*it;
}

// Line rate references of a busbw chart: one per distinct rate among the
// shown profiles (their NICs of one node), each with the checklist's 92 % mark.
std::set<double> LineRates(const Doc& d, const std::vector<size_t>& shown) {
  std::set<double> rates;
  for (size_t i : shown)
    if (d.profiles[i].line_rate_gbs > 0)
      rates.insert(d.profiles[i].line_rate_gbs);
    else if (d.profiles[i].link_rate_gbps > 0)
      rates.insert(d.profiles[i].link_rate_gbps / 8);
  return rates;
}

void LineRateRefs(std::string& out, const Plot& p, const std::set<double>& rates) {
  for (double r : rates) {
    out += fmt::format(
        R"svg(<line class="ref" x1="{}" y1="{}" x2="{}" y2="{}"/><text class="ref-label" x="{}" y="{}">line rate {} GB/s</text>)svg"
        "\n",
        C(p.x0), C(p.Y(r)), C(p.x0 + p.w), C(p.Y(r)), C(p.x0 + 6), C(p.Y(r) - 5), TickText(r, 1));
    out += fmt::format(
        R"svg(<line class="ref" x1="{}" y1="{}" x2="{}" y2="{}"/><text class="ref-label" x="{}" y="{}">92 % of line rate</text>)svg"
        "\n",
        C(p.x0), C(p.Y(r * 0.92)), C(p.x0 + p.w), C(p.Y(r * 0.92)), C(p.x0 + 6),
        C(p.Y(r * 0.92) + 15));
  }
}

double Quantile(std::vector<double> v, double q) {  // v not empty; sorted copy, linear
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto k = static_cast<size_t>(pos);
  if (k + 1 >= v.size()) return v.back();
  return v[k] + (v[k + 1] - v[k]) * (pos - static_cast<double>(k));
}

std::string BytesUnitLabel(double max, double* scale) {
  if (max >= 1 << 20) {
    *scale = 1.0 / (1 << 20);
    return "MiB";
  }
  if (max >= 1 << 10) {
    *scale = 1.0 / (1 << 10);
    return "KiB";
  }
  *scale = 1;
  return "B";
}

// TCO items in the order the stack is drawn; others follow in name order.
constexpr const char* kTcoOrder[] = {"switches", "NICs", "optics", "cables", "power", "operations"};

struct Fill {
  const char* color;
  const char* pattern;  // "" = solid
};
constexpr Fill kFills[] = {
    {"#0072B2", ""},      {"#E69F00", "diag"},  {"#009E73", "dots"},  {"#CC79A7", "cross"},
    {"#56B4E9", "hline"}, {"#D55E00", "vline"}, {"#F0E442", "diag2"}, {"#999999", ""},
};

std::string PatternDef(size_t k) {
  const Fill& f = kFills[k % std::size(kFills)];
  const std::string id = fmt::format("tco-fill-{}", k);
  const std::string p(f.pattern);
  std::string inner = fmt::format(R"svg(<rect width="8" height="8" fill="{}"/>)svg", f.color);
  const char* ink = "#1a1a1a";
  if (p == "diag" || p == "diag2")
    return fmt::format(
        R"svg(<pattern id="{}" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate({})">{}<line x1="0" y1="0" x2="0" y2="8" stroke="{}" stroke-width="1.6"/></pattern>)svg",
        id, p == "diag" ? 45 : -45, inner, ink);
  if (p == "dots")
    return fmt::format(
        R"svg(<pattern id="{}" width="8" height="8" patternUnits="userSpaceOnUse">{}<circle cx="4" cy="4" r="1.6" fill="{}"/></pattern>)svg",
        id, inner, ink);
  if (p == "cross")
    return fmt::format(
        R"svg(<pattern id="{}" width="8" height="8" patternUnits="userSpaceOnUse">{}<path d="M0 0L8 8M8 0L0 8" stroke="{}" stroke-width="1"/></pattern>)svg",
        id, inner, ink);
  if (p == "hline" || p == "vline")
    return fmt::format(
        R"svg(<pattern id="{}" width="8" height="8" patternUnits="userSpaceOnUse">{}<line x1="0" y1="4" x2="8" y2="4" stroke="{}" stroke-width="1.4"{}/></pattern>)svg",
        id, inner, ink, p == "vline" ? R"svg( transform="rotate(90 4 4)")svg" : "");
  return fmt::format(
      R"svg(<pattern id="{}" width="8" height="8" patternUnits="userSpaceOnUse">{}</pattern>)svg",
      id, inner);
}

// One part of a stacked bar: its fill pattern, its length on the x axis and
// its tooltip (already escaped).
struct BarSegment {
  size_t pattern = 0;
  double value = 0;
  std::string title;
};

// One lane per profile on `p`: the profile's name, then its segments stacked
// left to right with `total(i, sum)` after the bar, or, for a profile without
// a bar (`bars[i]` empty), the inline note `missing(i)` (escaped HTML).
// Segments of length 0 are drawn (0.5 px wide) unless `skip_zero`.
void StackedBarLanes(std::string& out, const Doc& d, const Plot& p, double lane,
                     const std::vector<std::vector<BarSegment>>& bars, bool skip_zero,
                     const std::function<std::string(size_t)>& missing,
                     const std::function<std::string(size_t, double)>& total) {
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const double mid = p.y0 + lane * static_cast<double>(i) + lane / 2;
    out += fmt::format(
        R"svg(<g><title>{}</title><text class="lane" x="{}" y="{}" text-anchor="end">{}</text></g>)svg",
        HtmlEscape(d.profiles[i].name), C(p.x0 - 10), C(mid + 4),
        ShortName(d.profiles[i].name, 17));
    if (bars[i].empty()) {
      out += fmt::format(R"svg(<text class="nodata-inline" x="{}" y="{}">{}</text>)svg"
                         "\n",
                         C(p.x0 + 10), C(mid + 4), missing(i));
      continue;
    }
    double x = 0;
    for (const BarSegment& seg : bars[i]) {
      if (skip_zero && seg.value <= 0) continue;
      const double x1 = p.X(x), x2 = p.X(x + seg.value);
      out += fmt::format(
          R"svg(<rect class="mark" x="{}" y="{}" width="{}" height="{}" fill="url(#tco-fill-{})" stroke="#222" stroke-width="0.8"><title>{}</title></rect>)svg",
          C(x1), C(mid - 15), C(std::max(0.5, x2 - x1)), C(30), seg.pattern, seg.title);
      x += seg.value;
    }
    out += fmt::format(R"svg(<text class="total" x="{}" y="{}">{}</text>)svg"
                       "\n",
                       C(p.X(x) + 8), C(mid + 5), total(i, x));
  }
}

}  // namespace

void BusbwChart(std::string& out, const Doc& d, const Reader& in) {
  const json* s = SeriesOf(d, "busbw", in);
  struct Pt {
    double bytes, gbs;
  };
  std::vector<std::vector<Pt>> data(d.profiles.size());
  std::vector<size_t> shown;
  double bmin = 0, bmax = 0, ymax = 0;
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const json* arr = ProfileSeries(s, d.profiles[i].name);
    if (arr == nullptr) continue;
    const std::string path = "series.busbw." + d.profiles[i].name;
    if (!arr->is_array()) in.Fail(path, "expected an array of {bytes, busbw_gbs}");
    for (size_t k = 0; k < arr->size(); ++k) {
      const json& e = (*arr)[k];
      const std::string ep = Reader::Index(path, k);
      const double bytes = in.Number(e, ep, "bytes");
      // GB/s, as nccl-tests, perf's JSON and the matrix.
      const double gbs = in.Number(e, ep, "busbw_gbs");
      if (bytes <= 0) in.Fail(ep + ".bytes", "expected a size above 0");
      data[i].push_back({bytes, gbs});
      bmin = bmin == 0 ? bytes : std::min(bmin, bytes);
      bmax = std::max(bmax, bytes);
      ymax = std::max(ymax, gbs);
    }
    if (!data[i].empty()) shown.push_back(i);
  }
  const double height = 430;
  Open(out, "busbw", kW, height, "All-reduce bus bandwidth against message size");
  Plot p{75, 20, kW - 75 - 215, height - 20 - 65, 0, 0, 0, 0, true};
  if (shown.empty()) {
    NoData(out, kW / 2, height / 2, "no data: the results hold no all-reduce sweep");
    out += "</svg>\n";
    return;
  }
  const std::set<double> rates = LineRates(d, shown);
  for (double r : rates) ymax = std::max(ymax, r);
  p.xlo = bmin / std::sqrt(2.0);
  p.xhi = bmax * std::sqrt(2.0);
  if (bmin == bmax) {
    p.xlo = bmin / 2;
    p.xhi = bmax * 2;
  }
  p.ylo = 0;
  p.yhi = NiceMax(ymax);
  Ticks xt;
  const double first = std::pow(2, std::ceil(std::log2(p.xlo)));
  size_t n = 0;
  for (double b = first; b <= p.xhi; b *= 2) ++n;
  const size_t skip = n > 12 ? 2 : 1;
  size_t k = 0;
  for (double b = first; b <= p.xhi; b *= 2, ++k)
    xt.emplace_back(b, k % skip == 0 ? SizeLabel(b) : "");
  Axes(out, p, xt, "message size (bytes, log2 scale)", "bus bandwidth (GB/s)");
  LineRateRefs(out, p, rates);
  for (size_t i : shown) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& pt : data[i]) pts.emplace_back(p.X(pt.bytes), p.Y(pt.gbs));
    Series(out, pts, i, 1);
  }
  ProfileLegend(out, d, shown, p.x0 + p.w + 22, p.y0 + 12);
  out += "</svg>\n";
}

// --full's scaling rows (scaling_busbw_<nodes>): busbw of the 1 GiB
// all-reduce against the node count, one line per profile, linear axes.
bool HasScaling(const Doc& d) {
  for (const Row& r : d.rows)
    if (r.key.rfind("scaling_busbw_", 0) == 0) return true;
  return false;
}

void ScalingChart(std::string& out, const Doc& d, const Reader& in) {
  std::vector<std::vector<std::pair<double, double>>> data(d.profiles.size());
  double nmin = 0, nmax = 0, ymax = 0;
  for (const Row& r : d.rows) {
    if (r.key.rfind("scaling_busbw_", 0) != 0) continue;
    const std::string tail = r.key.substr(14);
    const double nodes = std::strtod(tail.c_str(), nullptr);
    if (!(nodes > 0)) in.Fail("rows." + r.key, "expected scaling_busbw_<nodes>");
    for (size_t i = 0; i < d.profiles.size() && i < r.values.size(); ++i) {
      const json* v = r.values[i];
      if (v == nullptr || !v->is_number()) continue;
      data[i].emplace_back(nodes, v->get<double>());
      nmin = nmin == 0 ? nodes : std::min(nmin, nodes);
      nmax = std::max(nmax, nodes);
      ymax = std::max(ymax, v->get<double>());
    }
  }
  std::vector<size_t> shown;
  for (size_t i = 0; i < data.size(); ++i)
    if (!data[i].empty()) {
      std::sort(data[i].begin(), data[i].end());
      shown.push_back(i);
    }
  const double height = 400;
  Open(out, "scaling", kW, height, "All-reduce bus bandwidth against the number of nodes");
  Plot p{75, 20, kW - 75 - 215, height - 20 - 65, 0, 0, 0, 0, false};
  if (shown.empty()) {
    NoData(out, kW / 2, height / 2, "no data: every scaling run failed");
    out += "</svg>\n";
    return;
  }
  // The node counts double (2, 4, 8, 16): a log2 axis spaces them evenly (a
  // linear one from 0 crowded 2 and 4 against the axis and put a lone point
  // at the right edge). Line rate and the 92 % mark as on the busbw chart.
  const std::set<double> rates = LineRates(d, shown);
  for (double r : rates) ymax = std::max(ymax, r);
  p.xlog = true;
  p.xlo = nmin / std::sqrt(2.0);
  p.xhi = nmax * std::sqrt(2.0);
  p.ylo = 0;
  p.yhi = NiceMax(ymax);
  Ticks xt;
  std::set<double> nodes;
  for (size_t i : shown)
    for (const auto& pt : data[i]) nodes.insert(pt.first);
  for (double n : nodes) xt.emplace_back(n, TickText(n, 1));
  Axes(out, p, xt, "nodes (log2 scale)", "bus bandwidth (GB/s)");
  LineRateRefs(out, p, rates);
  for (size_t i : shown) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& pt : data[i]) pts.emplace_back(p.X(pt.first), p.Y(pt.second));
    Series(out, pts, i, 1);
  }
  ProfileLegend(out, d, shown, p.x0 + p.w + 22, p.y0 + 12);
  out += "</svg>\n";
}

void LatencyChart(std::string& out, const Doc& d, const Reader& in) {
  const json* s = SeriesOf(d, "latency_cdf", in);
  std::vector<std::vector<std::pair<double, double>>> data(d.profiles.size());  // (us, p)
  std::vector<size_t> shown;
  double lo = 0, hi = 0;
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const json* arr = ProfileSeries(s, d.profiles[i].name);
    if (arr == nullptr) continue;
    const std::string path = "series.latency_cdf." + d.profiles[i].name;
    if (!arr->is_array()) in.Fail(path, "expected an array of {p, us}");
    for (size_t k = 0; k < arr->size(); ++k) {
      const std::string ep = Reader::Index(path, k);
      const double pr = in.Number((*arr)[k], ep, "p");
      const double us = in.Number((*arr)[k], ep, "us");
      if (us <= 0) in.Fail(ep + ".us", "expected a latency above 0");
      data[i].emplace_back(us, std::clamp(pr, 0.0, 1.0));
      lo = lo == 0 ? us : std::min(lo, us);
      hi = std::max(hi, us);
    }
    if (!data[i].empty()) shown.push_back(i);
  }
  // Two panels on one latency axis: the whole distribution, and its tail
  // (p90 to p100) stretched, where fabrics differ most.
  const double full_h = 280, tail_h = 190, gap = 62;
  const double height = 20 + full_h + gap + tail_h + 60;
  Open(out, "latency_cdf", kW, height, "Small-message RDMA latency, cumulative distribution");
  if (shown.empty()) {
    NoData(out, kW / 2, height / 2, "no data: the results hold no latency samples");
    out += "</svg>\n";
    return;
  }
  // The axis starts at the 1-2-5 value below the fastest sample, so the
  // fastest curve has a labelled tick to its left (0.232 us sat on the frame
  // with 0.5 as the first label).
  double floor125 = lo / 1.1;
  {
    const double mag = std::pow(10, std::floor(std::log10(floor125)));
    for (double m : {5.0, 2.0, 1.0}) {
      if (m * mag <= floor125) {
        floor125 = m * mag;
        break;
      }
    }
  }
  Plot full{75, 20, kW - 75 - 215, full_h, floor125, hi * 1.1, 0, 1, true};
  Ticks xt = LogTicks(full.xlo, full.xhi);
  if (xt.size() < 3) {  // a narrow range: linear ticks read better
    full.xlog = false;
    full.xlo = lo - (hi - lo) * 0.05;
    full.xhi = hi + (hi - lo) * 0.05;
    if (full.xhi <= full.xlo) full.xhi = full.xlo + 1;
    xt = LinearTicks(full.xlo, full.xhi, 6);
  }
  const std::string xtitle = std::string("latency (us") + (full.xlog ? ", log scale)" : ")");
  Plot tail = full;
  tail.y0 = full.y0 + full.h + gap;
  tail.h = tail_h;
  tail.ylo = 0.9;
  Axes(out, full, xt, "", "fraction of messages at or below", 4, true);  // x title: below the tail
  out += fmt::format(R"svg(<text class="panel-title" x="{}" y="{}">tail: p90 to p100</text>)svg"
                     "\n",
                     C(tail.x0), C(tail.y0 - 8));
  Axes(out, tail, xt, xtitle, "fraction at or below", 4, true);
  auto ref = [&](const Plot& p, double q, const char* label) {
    out += fmt::format(
        R"svg(<line class="ref" x1="{}" y1="{}" x2="{}" y2="{}"/><text class="ref-label" x="{}" y="{}">{}</text>)svg"
        "\n",
        C(p.x0), C(p.Y(q)), C(p.x0 + p.w), C(p.Y(q)), C(p.x0 + p.w + 5), C(p.Y(q) + 4), label);
  };
  ref(full, 0.5, "p50");
  ref(tail, 0.99, "p99");
  ref(tail, 0.999, "p99.9");
  for (size_t i : shown) {
    std::vector<std::pair<double, double>> pts, tail_pts;
    for (const auto& [us, pr] : data[i]) {
      pts.emplace_back(full.X(us), full.Y(pr));
      // The tail starts where the curve crosses p90.
      if (pr >= tail.ylo) {
        if (tail_pts.empty()) tail_pts.emplace_back(tail.X(us), tail.Y(tail.ylo));
        tail_pts.emplace_back(tail.X(us), tail.Y(pr));
      }
    }
    Series(out, pts, i, std::max<size_t>(1, pts.size() / 8), true);
    Series(out, tail_pts, i, std::max<size_t>(1, tail_pts.size() / 5), true);
  }
  ProfileLegend(out, d, shown, full.x0 + full.w + 34, full.y0 + 40);
  out += "</svg>\n";
}

void IterationsChart(std::string& out, const Doc& d, const Reader& in) {
  const json* s = SeriesOf(d, "iterations", in);
  std::vector<std::vector<double>> data(d.profiles.size());
  std::vector<size_t> shown;
  double lo = 0, hi = 0, bytes = 0;
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const json* obj = ProfileSeries(s, d.profiles[i].name);
    if (obj == nullptr) continue;
    const std::string path = "series.iterations." + d.profiles[i].name;
    if (obj->contains("bytes")) bytes = in.Number(*obj, path, "bytes");
    data[i] = in.Numbers(in.Array(*obj, path, "time_us"), path + ".time_us");
    if (data[i].empty()) continue;
    shown.push_back(i);
    const auto [mn, mx] = std::minmax_element(data[i].begin(), data[i].end());
    lo = shown.size() == 1 ? *mn : std::min(lo, *mn);
    hi = shown.size() == 1 ? *mx : std::max(hi, *mx);
  }
  const double lane = 62;
  const double height = shown.empty() ? 200 : 20 + lane * static_cast<double>(shown.size()) + 52;
  Open(out, "iterations", kW, height, "All-reduce iteration time distribution per profile");
  if (shown.empty()) {
    NoData(out, kW / 2, height / 2, "no data: the results hold no iteration times");
    out += "</svg>\n";
    return;
  }
  const bool ms = hi >= 2000;
  const double scale = ms ? 1e-3 : 1;
  const double span = std::max(hi - lo, hi * 0.01);
  Plot p{150,
         20,
         kW - 150 - 215,
         lane * static_cast<double>(shown.size()),
         (lo - span * 0.05) * scale,
         (hi + span * 0.05) * scale,
         0,
         static_cast<double>(shown.size())};
  Axes(out, p, LinearTicks(p.xlo, p.xhi, 7),
       std::string("iteration time (") + (ms ? "ms" : "us") + ")" +
           (bytes > 0 ? ", all-reduce of " + SizeLabel(bytes) + " bytes" : ""),
       "", 0);
  for (size_t k = 0; k < shown.size(); ++k) {
    const size_t i = shown[k];
    const Style st = StyleOf(i);
    const double top = p.y0 + lane * static_cast<double>(k);
    const double mid = top + lane / 2;
    if (k > 0)
      out += fmt::format(R"svg(<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/>)svg", C(p.x0),
                         C(top), C(p.x0 + p.w), C(top));
    out += fmt::format(R"svg(<g><title>{}</title>)svg", HtmlEscape(d.profiles[i].name));
    out += Marker(st.marker, p.x0 - 128, mid, 4.5, st.color, "");
    out += fmt::format(R"svg(<text class="lane" x="{}" y="{}">{}</text></g>)svg"
                       "\n",
                       C(p.x0 - 118), C(mid + 4), ShortName(d.profiles[i].name, 15));
    const std::vector<double>& v = data[i];
    const double q1 = Quantile(v, 0.25) * scale, q2 = Quantile(v, 0.5) * scale,
                 q3 = Quantile(v, 0.75) * scale;
    const double mn = *std::min_element(v.begin(), v.end()) * scale;
    const double mx = *std::max_element(v.begin(), v.end()) * scale;
    // Box (quartiles), whiskers (min..max), median.
    out += fmt::format(
        R"svg(<line class="mark" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333" stroke-width="1.5"/>)svg",
        C(p.X(mn)), C(mid), C(p.X(mx)), C(mid));
    out += fmt::format(
        R"svg(<rect class="mark" x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="0.18" stroke="{}" stroke-width="1.5"/>)svg",
        C(p.X(q1)), C(mid - 14), C(std::max(1.5, p.X(q3) - p.X(q1))), C(28), st.color, st.color);
    out += fmt::format(
        R"svg(<line class="mark" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#000" stroke-width="3"/>)svg"
        "\n",
        C(p.X(q2)), C(mid - 16), C(p.X(q2)), C(mid + 16));
    // Strip of every iteration, spread vertically by a fixed pattern.
    for (size_t n = 0; n < v.size(); ++n) {
      const double dy = (static_cast<double>((n * 7) % 11) - 5) * 2.4;
      out += Marker(st.marker, p.X(v[n] * scale), mid + dy, 2.6, st.color, "mark pt");
    }
    // Median and slowest only: the matrix holds the jitter figures, computed by compare.
    const char* unit = ms ? "ms" : "us";
    out += fmt::format(R"svg(<text class="note" x="{}" y="{}">median {:.2f} {}</text>)svg",
                       C(p.x0 + p.w + 10), C(mid - 3), q2, unit);
    out += fmt::format(R"svg(<text class="note" x="{}" y="{}">slowest {:.2f} {}</text>)svg"
                       "\n",
                       C(p.x0 + p.w + 10), C(mid + 13), mx, unit);
  }
  out += "</svg>\n";
}

void IncastChart(std::string& out, const Doc& d, const Reader& in) {
  const json* s = SeriesOf(d, "incast_timeline", in);
  struct Panel {
    size_t profile;
    std::string port;
    std::vector<double> t, q;
    std::vector<std::pair<double, double>> paused;
    double tmax = 0;  // each panel spans its own run: incasts differ by orders of magnitude
  };
  std::vector<Panel> panels;
  double qmax = 0;
  bool any_ib = false, any_roce = false;
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    Panel pn{i, "", {}, {}, {}, 0};
    if (const json* o = ProfileSeries(s, d.profiles[i].name)) {
      const std::string path = "series.incast_timeline." + d.profiles[i].name;
      pn.port = Reader::OptString(*o, "port");
      pn.t = in.Numbers(in.Array(*o, path, "t_us"), path + ".t_us");
      pn.q = in.Numbers(in.Array(*o, path, "queue_bytes"), path + ".queue_bytes");
      if (pn.t.size() != pn.q.size())
        in.Fail(path + ".queue_bytes",
                fmt::format("expected {} values (one per t_us), got {}", pn.t.size(), pn.q.size()));
      if (o->contains("paused")) {
        const json& pa = in.Array(*o, path, "paused");
        for (size_t k = 0; k < pa.size(); ++k) {
          const auto iv = in.Numbers(pa[k], Reader::Index(path + ".paused", k));
          if (iv.size() != 2)
            in.Fail(Reader::Index(path + ".paused", k), "expected [start_us, end_us]");
          pn.paused.emplace_back(iv[0], iv[1]);
          pn.tmax = std::max(pn.tmax, iv[1]);
        }
      }
      for (double t : pn.t) pn.tmax = std::max(pn.tmax, t);
      for (double q : pn.q) qmax = std::max(qmax, q);
      (d.profiles[i].link_layer == "infiniband" ? any_ib : any_roce) = true;
    }
    panels.push_back(std::move(pn));
  }
  const bool none = std::all_of(panels.begin(), panels.end(),
                                [](const Panel& p) { return p.t.empty() && p.paused.empty(); });
  const size_t cols = 2;
  const size_t nrows = (panels.size() + cols - 1) / cols;
  const double ph = 220, top = 44;
  const double height = none ? 200 : top + ph * static_cast<double>(nrows) + 10;
  Open(out, "incast", kW, height, "Incast stress: queue occupancy and paused intervals");
  if (none) {
    NoData(out, kW / 2, height / 2, "no data: the results hold no incast timeline");
    out += "</svg>\n";
    return;
  }
  double qscale = 1;
  const std::string qunit = BytesUnitLabel(qmax, &qscale);
  // Legend row: shading and line.
  out += "<g class=\"legend\">";
  out += R"svg(<line x1="80" y1="18" x2="114" y2="18" stroke="#333" stroke-width="2.5"/>)svg";
  out +=
      R"svg(<text x="122" y="22">queue occupancy of the congested egress port (line style as in the other charts)</text>)svg";
  out +=
      R"svg(<rect x="80" y="29" width="34" height="12" fill="url(#paused-hatch)" stroke="#777"/>)svg";
  out += fmt::format(R"svg(<text x="122" y="39">{}</text></g>)svg"
                     "\n",
                     any_ib && any_roce ? "paused (PFC) or, on InfiniBand, credit-starved"
                     : any_ib           ? "credit-starved (InfiniBand)"
                                        : "paused (PFC)");
  out +=
      R"svg(<defs><pattern id="paused-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4c7a1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#8a5a2b" stroke-width="2"/></pattern></defs>)svg"
      "\n";
  const double pw = kW / cols;
  for (size_t k = 0; k < panels.size(); ++k) {
    const Panel& pn = panels[k];
    const double ox = static_cast<double>(k % cols) * pw;
    const size_t row = k / cols;
    const double oy = top + static_cast<double>(row) * ph;
    Plot p{ox + 80,
           oy + 26,
           pw - 80 - 20,
           ph - 26 - 58,
           0,
           pn.tmax > 0 ? pn.tmax : 1,
           0,
           NiceMax(qmax * qscale)};
    const std::string& name = d.profiles[pn.profile].name;
    const std::string title = name + (pn.port.empty() ? "" : " \xE2\x80\x94 " + pn.port);
    out += fmt::format(
        R"svg(<g><title>{}</title><text class="panel-title" x="{}" y="{}">{}</text></g>)svg"
        "\n",
        HtmlEscape(title), C(p.x0), C(oy + 16), ShortName(title, 44));
    if (pn.t.empty() && pn.paused.empty()) {
      out += fmt::format(R"svg(<rect class="frame" x="{}" y="{}" width="{}" height="{}"/>)svg",
                         C(p.x0), C(p.y0), C(p.w), C(p.h));
      NoData(out, p.x0 + p.w / 2, p.y0 + p.h / 2, "no data");
      continue;
    }
    Axes(out, p, LinearTicks(p.xlo, p.xhi, 5), "time (us)", "queue (" + qunit + ")", 4);
    for (const auto& [a, b] : pn.paused) {
      const double x1 = p.X(std::clamp(a, p.xlo, p.xhi)), x2 = p.X(std::clamp(b, p.xlo, p.xhi));
      out += fmt::format(
          R"svg(<rect class="mark paused" x="{}" y="{}" width="{}" height="{}" fill="url(#paused-hatch)" fill-opacity="0.75"><title>{} to {} us</title></rect>)svg",
          C(x1), C(p.y0), C(std::max(1.0, x2 - x1)), C(p.h), NumberText(a, ""), NumberText(b, ""));
    }
    out += "\n";
    std::vector<std::pair<double, double>> pts;
    for (size_t n = 0; n < pn.t.size(); ++n) pts.emplace_back(p.X(pn.t[n]), p.Y(pn.q[n] * qscale));
    Series(out, pts, pn.profile, std::max<size_t>(1, pts.size() / 6));
  }
  out += "</svg>\n";
}

void TcoChart(std::string& out, const Doc& d, const Reader& in) {
  const json* s = SeriesOf(d, "tco", in);
  std::vector<std::vector<std::pair<std::string, double>>> bars(d.profiles.size());
  std::vector<std::string> items;  // legend order
  double max_total = 0;
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const json* o = ProfileSeries(s, d.profiles[i].name);
    if (o == nullptr) continue;
    const std::string path = "series.tco." + d.profiles[i].name;
    if (!o->is_object()) in.Fail(path, "expected an object {item: USD per GPU per year}");
    std::vector<std::string> keys;
    for (const char* k : kTcoOrder)
      if (o->contains(k)) keys.emplace_back(k);
    for (const auto& [k, v] : o->items())
      if (std::find(std::begin(kTcoOrder), std::end(kTcoOrder), k) == std::end(kTcoOrder))
        keys.push_back(k);
    double total = 0;
    for (const auto& k : keys) {
      const double v = in.Number(*o, path, k.c_str());
      if (v < 0) in.Fail(Reader::Join(path, k), "expected a cost at or above 0");
      bars[i].emplace_back(k, v);
      total += v;
      if (std::find(items.begin(), items.end(), k) == items.end()) items.push_back(k);
    }
    max_total = std::max(max_total, total);
  }
  // Legend order: the canonical order first, as in the stack.
  std::stable_sort(items.begin(), items.end(), [](const std::string& a, const std::string& b) {
    auto rank = [](const std::string& x) {
      auto it = std::find(std::begin(kTcoOrder), std::end(kTcoOrder), x);
      return static_cast<size_t>(it - std::begin(kTcoOrder));
    };
    return rank(a) < rank(b);
  });
  // Legend entries left to right, wrapped into rows.
  std::vector<std::pair<double, double>> at;
  double lx = 150, ly = 18;
  for (const auto& item : items) {
    const double w = 34 + 8.0 * static_cast<double>(std::min<size_t>(item.size(), 24));
    if (lx + w > kW - 20) {
      lx = 150;
      ly += 20;
    }
    at.emplace_back(lx, ly);
    lx += w;
  }
  const double lane = 52;
  const double height = ly + 22 + lane * static_cast<double>(d.profiles.size()) + 52;
  Open(out, "tco", kW, height, "Fabric cost per GPU per year by item");
  if (max_total <= 0) {
    NoData(out, kW / 2, height / 2, "no data: the results hold no cost breakdown");
    out += "</svg>\n";
    return;
  }
  out += "<defs>";
  for (size_t k = 0; k < items.size(); ++k) out += PatternDef(k);
  out += "</defs>\n<g class=\"legend\">";
  for (size_t k = 0; k < items.size(); ++k) {
    const auto [lx, ly] = at[k];
    out += fmt::format(
        R"svg(<rect x="{}" y="{}" width="16" height="13" fill="url(#tco-fill-{})" stroke="#333"/><text x="{}" y="{}">{}</text>)svg",
        C(lx), C(ly - 10), k, C(lx + 22), C(ly + 1), ShortName(items[k], 24));
  }
  out += "</g>\n";
  Plot p{150,
         ly + 22,
         kW - 150 - 120,  // room for the total at the end of the longest bar
         lane * static_cast<double>(d.profiles.size()),
         0,
         NiceMax(max_total),
         0,
         1};
  Axes(out, p, LinearTicks(p.xlo, p.xhi, 6), "fabric cost (USD per GPU per year)", "", 0);
  // The per-GPU-year row's note says best why the bar is missing.
  auto tco_note = [&](size_t i) {
    for (const auto& r : d.rows)
      if (r.section == "tco" && r.unit == "USD/GPU/year" && !r.notes[i].empty()) return r.notes[i];
    for (const auto& r : d.rows)
      if (r.section == "tco" && !r.notes[i].empty()) return r.notes[i];
    return std::string("the results hold no cost breakdown for it");
  };
  std::vector<std::vector<BarSegment>> segments(d.profiles.size());
  for (size_t i = 0; i < d.profiles.size(); ++i)
    for (const auto& [item, v] : bars[i])
      segments[i].push_back(
          {static_cast<size_t>(std::find(items.begin(), items.end(), item) - items.begin()), v,
           fmt::format("{}: {} USD/GPU/year", HtmlEscape(item), Thousands(v))});
  StackedBarLanes(
      out, d, p, lane, segments, false,
      [&](size_t i) { return "no fabric-only figure: " + HtmlEscape(tco_note(i)); },
      [](size_t, double sum) { return Thousands(sum) + " USD"; });
  out += "</svg>\n";
}

// The training step split into compute, tensor-parallel all-reduces and the
// data-parallel communication not hidden behind compute (series.train_step:
// {profile: {compute_ms, tp_ms, exposed_dp_ms, step_ms}}), one stacked bar
// per profile.
bool HasTrainStep(const Doc& d) {
  auto it = d.series->find("train_step");
  return it != d.series->end() && it->is_object() && !it->empty();
}

void TrainStepChart(std::string& out, const Doc& d, const Reader& in) {
  const json* s = SeriesOf(d, "train_step", in);
  struct Part {
    const char* key;
    const char* label;
  };
  static constexpr Part kParts[] = {{"compute_ms", "compute"},
                                    {"tp_ms", "tensor-parallel all-reduces (NVLink)"},
                                    {"exposed_dp_ms", "exposed data-parallel communication"}};
  std::vector<std::vector<double>> bars(d.profiles.size());
  double max_total = 0;
  for (size_t i = 0; i < d.profiles.size(); ++i) {
    const json* o = ProfileSeries(s, d.profiles[i].name);
    if (o == nullptr) continue;
    const std::string path = "series.train_step." + d.profiles[i].name;
    double total = 0;
    for (const Part& part : kParts) {
      const double v = in.Number(*o, path, part.key);
      if (v < 0) in.Fail(Reader::Join(path, part.key), "expected a time at or above 0");
      bars[i].push_back(v);
      total += v;
    }
    max_total = std::max(max_total, total);
  }
  const double lane = 52, top = 46;
  const double height = top + lane * static_cast<double>(d.profiles.size()) + 52;
  Open(out, "train-step", kW, height, "Training step time: compute and exposed communication");
  if (max_total <= 0) {
    NoData(out, kW / 2, height / 2, "no data: the results hold no training step");
    out += "</svg>\n";
    return;
  }
  out += "<defs>";
  for (size_t k = 0; k < std::size(kParts); ++k) out += PatternDef(k);
  out += "</defs>\n<g class=\"legend\">";
  double lx = 150;
  for (size_t k = 0; k < std::size(kParts); ++k) {
    out += fmt::format(
        R"svg(<rect x="{}" y="8" width="16" height="13" fill="url(#tco-fill-{})" stroke="#333"/><text x="{}" y="19">{}</text>)svg",
        C(lx), k, C(lx + 22), HtmlEscape(kParts[k].label));
    lx += 34 + 7.2 * static_cast<double>(std::string(kParts[k].label).size());
  }
  out += "</g>\n";
  // Room after the longest bar for its "671.9 ms (82.6 exposed)".
  Plot p{150,
         top,
         kW - 150 - 200,
         lane * static_cast<double>(d.profiles.size()),
         0,
         NiceMax(max_total),
         0,
         1};
  Axes(out, p, LinearTicks(p.xlo, p.xhi, 6), "time per training step (ms)", "", 0);
  std::vector<std::vector<BarSegment>> segments(d.profiles.size());
  for (size_t i = 0; i < d.profiles.size(); ++i)
    for (size_t k = 0; k < bars[i].size(); ++k)
      segments[i].push_back(
          {k, bars[i][k], fmt::format("{}: {:.3f} ms", HtmlEscape(kParts[k].label), bars[i][k])});
  StackedBarLanes(
      out, d, p, lane, segments, true,
      [](size_t) { return std::string("no training step in the results"); },
      [&](size_t i, double sum) {
        return fmt::format("{:.1f} ms ({:.1f} exposed)", sum, bars[i][1] + bars[i][2]);
      });
  out += "</svg>\n";
}

}  // namespace lossless::report::detail
