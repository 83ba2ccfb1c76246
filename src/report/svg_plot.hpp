#pragma once
// Internal to the compare report (compare_html.cpp, compare_charts.cpp; not
// API): number and size labels, and the SVG primitives the charts are drawn
// with: coordinates, per-profile styles and markers, ticks, the plot frame
// with its axes, a series' line, the "no data" text. Every string that
// reaches the SVG is HTML-escaped (HtmlEscape, compare_html.hpp); numbers are
// printed with fixed precision, so the same input gives the same bytes.
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace lossless::report::detail {

// A whole number with thousands separators: "1,234,567", "-12".
std::string Thousands(double v);
// A number with precision that falls with magnitude (`scale`, the largest
// magnitude of the numbers printed beside it; < 0: |v|): whole counts and
// money with thousands separators.
std::string NumberText(double v, const std::string& unit, double scale = -1);
// Bytes as nccl-tests sizes: 8M, 1G, 512K, 64.
std::string SizeLabel(double bytes);
// A coordinate in the SVG: one decimal.
std::string C(double v);
// Tick label of a linear axis whose ticks are `step` apart.
std::string TickText(double v, double step);

// Per profile: colour (Okabe-Ito, safe for colour blindness), dash pattern and
// marker shape, so profiles stay apart in greyscale print.
struct Style {
  const char* color;
  const char* dash;  // stroke-dasharray, "" = solid
  int marker;        // 0 circle, 1 square, 2 triangle, 3 diamond, 4 cross, 5 triangle down, 6 plus
};
// Profile i's style.
Style StyleOf(size_t i);
// A marker of shape `kind` centred on (x, y), radius r, with class
// `extra_class` ("" = none).
std::string Marker(int kind, double x, double y, double r, const char* color,
                   const std::string& extra_class = "mark");
// ` stroke-dasharray="..."` of a dashed style, "" for a solid one.
std::string DashAttr(const Style& s);
// `name` escaped, cut to `max` characters with an ellipsis when longer.
std::string ShortName(const std::string& name, size_t max = 17);

// A plot area inside an SVG and the mapping from data to it.
struct Plot {
  double x0, y0, w, h;        // pixel box
  double xlo, xhi, ylo, yhi;  // data range
  bool xlog = false;          // log scale (any base: only ratios matter)
  double X(double v) const {
    const double f = xlog ? (std::log(v) - std::log(xlo)) / (std::log(xhi) - std::log(xlo))
                          : (v - xlo) / (xhi - xlo);
    return x0 + f * w;
  }
  double Y(double v) const { return y0 + h - (v - ylo) / (yhi - ylo) * h; }
};

// Linear ticks: about `want` of them at 1, 2, 2.5 or 5 times a power of ten;
// `step_out` (when set) gets their spacing.
std::vector<double> NiceTicks(double lo, double hi, int want, double* step_out);
// Upper end of a linear axis that starts at 0 and shows `max` with room.
double NiceMax(double max);
// Opens <svg data-chart="`chart`"> of `width` x `height` px.
void Open(std::string& out, const char* chart, double width, double height,
          const std::string& label);
// "no data"-style text `what` centred on (x, y).
void NoData(std::string& out, double x, double y, const std::string& what);

using Ticks = std::vector<std::pair<double, std::string>>;  // position, label ("" = none)
// About `want` linear ticks over [lo, hi] with their labels.
Ticks LinearTicks(double lo, double hi, int want);
// Log ticks at 1, 2, 5 x 10^k inside [lo, hi].
Ticks LogTicks(double lo, double hi);
// Frame, grid, tick labels and axis titles of `p`: the x ticks as given,
// about `yticks_wanted` linear y ticks (none when 0), y labels as percent
// with `y_percent`.
void Axes(std::string& out, const Plot& p, const Ticks& xticks, const std::string& xtitle,
          const std::string& ytitle, int yticks_wanted = 5, bool y_percent = false);
// Polyline through `pts` (pixels) in profile i's style plus markers every
// `every` points; `step`: horizontal then vertical segments.
void Series(std::string& out, const std::vector<std::pair<double, double>>& pts, size_t i,
            size_t every, bool step = false);

}  // namespace lossless::report::detail
