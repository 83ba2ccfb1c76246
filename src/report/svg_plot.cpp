// The SVG primitives of the compare report (svg_plot.hpp): number and size
// labels, styles and markers, ticks, the plot frame and axes, series lines.
#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>

#include "report/compare_html.hpp"

namespace lossless::report::detail {

std::string Thousands(double v) {
  const auto n = static_cast<int64_t>(std::llround(std::fabs(v)));
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 && n != 0 ? "-" : "") + out;
}

std::string NumberText(double v, const std::string& unit, double scale) {
  const double a = scale >= 0 ? scale : std::fabs(v);
  if (unit == "count" || unit == "USD" || unit == "USD/GPU/year" || a >= 1000) return Thousands(v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 0.01 || a == 0) return fmt::format("{:.2f}", v);
  return fmt::format("{:.2e}", v);
}

std::string SizeLabel(double bytes) {
  const char* suffix[] = {"", "K", "M", "G", "T"};
  int k = 0;
  while (bytes >= 1024 && k < 4) {
    bytes /= 1024;
    ++k;
  }
  return std::fabs(bytes - std::round(bytes)) < 1e-9 ? fmt::format("{:.0f}{}", bytes, suffix[k])
                                                     : fmt::format("{:.1f}{}", bytes, suffix[k]);
}

// A coordinate in the SVG: one decimal is far below a pixel.
std::string C(double v) {
  return fmt::format("{:.1f}", v);
}

// Tick label of a linear axis whose ticks are `step` apart, with as many
// decimals as the step has (a step of 2.5 labels 2.5 and 7.5, not 2 and 8).
std::string TickText(double v, double step) {
  auto whole = [](double x) {
    return std::fabs(x - std::round(x)) < 1e-6 * std::max(1.0, std::fabs(x));
  };
  if (step >= 1000 && whole(step)) return Thousands(v);
  if (step >= 1 && whole(step)) return fmt::format("{:.0f}", v);
  if (step >= 0.1 && whole(step * 10)) return fmt::format("{:.1f}", v);
  if (step >= 0.01 && whole(step * 100)) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                   "#E69F00", "#56B4E9", "#000000", "#999999"};
constexpr const char* kDashes[] = {"", "9 4", "3 3", "12 4 3 4", "6 3 1 3", "1 3"};
constexpr int kMarkers = 7;
// Dashes and markers cycle with different periods (6 and 7), so the first 42
// profiles differ in line and marker even in greyscale.
Style StyleOf(size_t i) {
  return {kColors[i % std::size(kColors)], kDashes[i % std::size(kDashes)],
          static_cast<int>(i % kMarkers)};
}

// A marker of shape `kind` centred on (x, y), radius r.
std::string Marker(int kind, double x, double y, double r, const char* color,
                   const std::string& extra_class) {
  const std::string cls = extra_class.empty() ? "" : fmt::format(" class=\"{}\"", extra_class);
  switch (kind) {
    case 1:
      return fmt::format(R"svg(<rect{} x="{}" y="{}" width="{}" height="{}" fill="{}"/>)svg", cls,
                         C(x - r * 0.9), C(y - r * 0.9), C(r * 1.8), C(r * 1.8), color);
    case 2:
      return fmt::format(R"svg(<path{} d="M{} {}L{} {}L{} {}Z" fill="{}"/>)svg", cls, C(x),
                         C(y - r * 1.2), C(x + r * 1.1), C(y + r * 0.8), C(x - r * 1.1),
                         C(y + r * 0.8), color);
    case 3:
      return fmt::format(R"svg(<path{} d="M{} {}L{} {}L{} {}L{} {}Z" fill="{}"/>)svg", cls, C(x),
                         C(y - r * 1.3), C(x + r), C(y), C(x), C(y + r * 1.3), C(x - r), C(y),
                         color);
    case 4:
      return fmt::format(
          R"svg(<path{} d="M{} {}L{} {}M{} {}L{} {}" stroke="{}" stroke-width="2.5" fill="none"/>)svg",
          cls, C(x - r), C(y - r), C(x + r), C(y + r), C(x - r), C(y + r), C(x + r), C(y - r),
          color);
    case 6:
      return fmt::format(
          R"svg(<path{} d="M{} {}H{}M{} {}V{}" stroke="{}" stroke-width="2.5" fill="none"/>)svg",
          cls, C(x - r * 1.2), C(y), C(x + r * 1.2), C(x), C(y - r * 1.2), C(y + r * 1.2), color);
    case 5:
      return fmt::format(R"svg(<path{} d="M{} {}L{} {}L{} {}Z" fill="{}"/>)svg", cls, C(x),
                         C(y + r * 1.2), C(x + r * 1.1), C(y - r * 0.8), C(x - r * 1.1),
                         C(y - r * 0.8), color);
    default:
      return fmt::format(R"svg(<circle{} cx="{}" cy="{}" r="{}" fill="{}"/>)svg", cls, C(x), C(y),
                         C(r), color);
  }
}

std::string DashAttr(const Style& s) {
  return *s.dash ? fmt::format(R"svg( stroke-dasharray="{}")svg", s.dash) : std::string();
}

// `name` escaped, cut to `max` characters (UTF-8 aware) with an ellipsis
// when longer: labels in a chart have a fixed room (the full name is in the
// element's <title> tooltip).
std::string ShortName(const std::string& name, size_t max) {
  size_t chars = 0, cut = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if ((static_cast<unsigned char>(name[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (chars == max - 1) cut = i;
    if (++chars > max) return HtmlEscape(name.substr(0, cut)) + "&#8230;";
  }
  return HtmlEscape(name);
}

// Linear ticks: about `want` of them at 1, 2, 2.5 or 5 times a power of ten.
std::vector<double> NiceTicks(double lo, double hi, int want, double* step_out) {
  if (!(hi > lo)) hi = lo + 1;  // an empty range (all values equal) still gets an axis
  const double raw = (hi - lo) / std::max(1, want);
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  if (step_out) *step_out = step;
  return out;
}

double NiceMax(double max) {
  if (max <= 0) return 1;
  double step = 0;
  auto ticks = NiceTicks(0, max * 1.05, 5, &step);
  return std::max(ticks.back(), max * 1.05) <= ticks.back() ? ticks.back() : ticks.back() + step;
}

void Open(std::string& out, const char* chart, double width, double height,
          const std::string& label) {
  out += fmt::format(
      R"svg(<svg data-chart="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">)svg"
      "\n",
      chart, C(width), C(height), C(width), C(height), HtmlEscape(label));
}

void NoData(std::string& out, double x, double y, const std::string& what) {
  out += fmt::format(R"svg(<text class="nodata" x="{}" y="{}" text-anchor="middle">{}</text>)svg"
                     "\n",
                     C(x), C(y), HtmlEscape(what));
}

Ticks LinearTicks(double lo, double hi, int want) {
  double step = 0;
  Ticks out;
  for (double v : NiceTicks(lo, hi, want, &step)) out.emplace_back(v, TickText(v, step));
  return out;
}

Ticks LogTicks(double lo, double hi) {
  Ticks out;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= std::ceil(std::log10(hi)); ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10, e);
      if (v < lo * 0.999 || v > hi * 1.001) continue;
      out.emplace_back(v, v >= 1 ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v));
    }
  }
  return out;
}

// Frame, grid, tick labels and axis titles of `p`. x ticks are given with
// their labels; about `yticks_wanted` linear y ticks are computed here (none
// when 0: a chart of lanes labels its rows itself).
void Axes(std::string& out, const Plot& p, const Ticks& xticks, const std::string& xtitle,
          const std::string& ytitle, int yticks_wanted, bool y_percent) {
  out += "<g class=\"axes\">\n";
  double step = 0;
  const std::vector<double> yticks =
      yticks_wanted > 0 ? NiceTicks(p.ylo, p.yhi, yticks_wanted, &step) : std::vector<double>();
  for (double v : yticks) {
    const double y = p.Y(v);
    out += fmt::format(R"svg(<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/>)svg", C(p.x0),
                       C(y), C(p.x0 + p.w), C(y));
    const std::string label = y_percent ? fmt::format("{:.4g} %", v * 100) : TickText(v, step);
    out += fmt::format(R"svg(<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>)svg"
                       "\n",
                       C(p.x0 - 7), C(y + 4), label);
  }
  for (const auto& [v, label] : xticks) {
    const double x = p.X(v);
    out += fmt::format(R"svg(<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/>)svg", C(x),
                       C(p.y0), C(x), C(p.y0 + p.h));
    if (!label.empty())
      out += fmt::format(R"svg(<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>)svg"
                         "\n",
                         C(x), C(p.y0 + p.h + 17), label);
  }
  out += fmt::format(R"svg(<rect class="frame" x="{}" y="{}" width="{}" height="{}"/>)svg"
                     "\n",
                     C(p.x0), C(p.y0), C(p.w), C(p.h));
  if (!xtitle.empty())
    out +=
        fmt::format(R"svg(<text class="axis-title" x="{}" y="{}" text-anchor="middle">{}</text>)svg"
                    "\n",
                    C(p.x0 + p.w / 2), C(p.y0 + p.h + 40), HtmlEscape(xtitle));
  if (!ytitle.empty())
    out += fmt::format(
        R"svg(<text class="axis-title" transform="translate({} {}) rotate(-90)" text-anchor="middle">{}</text>)svg"
        "\n",
        C(p.x0 - 52), C(p.y0 + p.h / 2), HtmlEscape(ytitle));
  out += "</g>\n";
}

// Polyline through `pts` in profile i's style plus markers every `every` points.
void Series(std::string& out, const std::vector<std::pair<double, double>>& pts, size_t i,
            size_t every, bool step) {
  if (pts.empty()) return;
  const Style s = StyleOf(i);
  std::string d = fmt::format("M{} {}", C(pts[0].first), C(pts[0].second));
  for (size_t k = 1; k < pts.size(); ++k) {
    if (step) {
      d += fmt::format("H{}V{}", C(pts[k].first), C(pts[k].second));
    } else {
      d += fmt::format("L{} {}", C(pts[k].first), C(pts[k].second));
    }
  }
  out += fmt::format(
      R"svg(<path class="mark" d="{}" fill="none" stroke="{}" stroke-width="2.2"{} stroke-linejoin="round"/>)svg"
      "\n",
      d, s.color, DashAttr(s));
  for (size_t k = 0; k < pts.size(); k += std::max<size_t>(1, every))
    out += Marker(s.marker, pts[k].first, pts[k].second, 4.5, s.color);
  out += "\n";
}

}  // namespace lossless::report::detail
