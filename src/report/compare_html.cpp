#include "report/compare_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"

namespace lossless::report {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "lossless.compare/1";

// Reads fields of the results document; every failure names the field path.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void Fail(const std::string& path, const std::string& message) const {
    throw InputError({source_, 0, path}, message);
  }
  const json& Field(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) Fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) Fail(Join(path, key), "missing field");
    return *it;
  }
  const json& Object(const json& obj, const std::string& path, const char* key) const {
    const json& v = Field(obj, path, key);
    if (!v.is_object()) Fail(Join(path, key), "expected an object, got " + TypeOf(v));
    return v;
  }
  const json& Array(const json& obj, const std::string& path, const char* key) const {
    const json& v = Field(obj, path, key);
    if (!v.is_array()) Fail(Join(path, key), "expected an array, got " + TypeOf(v));
    return v;
  }
  std::string String(const json& obj, const std::string& path, const char* key) const {
    const json& v = Field(obj, path, key);
    if (!v.is_string()) Fail(Join(path, key), "expected a string, got " + TypeOf(v));
    return v.get<std::string>();
  }
  double Number(const json& obj, const std::string& path, const char* key) const {
    const json& v = Field(obj, path, key);
    if (!v.is_number()) Fail(Join(path, key), "expected a number, got " + TypeOf(v));
    return v.get<double>();
  }
  // An optional string member: "" when absent or not a string.
  static std::string OptString(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  std::vector<double> Numbers(const json& arr, const std::string& path) const {
    if (!arr.is_array()) Fail(path, "expected an array of numbers, got " + TypeOf(arr));
    std::vector<double> out;
    out.reserve(arr.size());
    for (size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_number()) Fail(Index(path, i), "expected a number, got " + TypeOf(arr[i]));
      out.push_back(arr[i].get<double>());
    }
    return out;
  }
  std::vector<std::string> Strings(const json& obj, const std::string& path,
                                   const char* key) const {
    const json& arr = Array(obj, path, key);
    std::vector<std::string> out;
    for (size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string())
        Fail(Index(Join(path, key), i), "expected a string, got " + TypeOf(arr[i]));
      out.push_back(arr[i].get<std::string>());
    }
    return out;
  }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string Index(const std::string& path, size_t i) {
    return fmt::format("{}[{}]", path, i);
  }
  static std::string TypeOf(const json& v) { return v.type_name(); }

 private:
  std::string source_;
};

struct Profile {
  std::string name, description, file, link_layer;
  double link_rate_gbps = 0;  // 0 = not given
  double line_rate_gbs = 0;   // the busbw line rate (one node's NICs), 0 = link rate / 8
  std::vector<std::string> placeholders;
};

struct Row {
  std::string section, key, label, unit, better;
  std::vector<const json*> values;  // per profile, in column order; nullptr = absent
  std::vector<std::string> notes;   // per profile; "" = none
};

struct OpsFact {
  std::string label, source;
  std::vector<std::string> values;  // per profile
};

struct Doc {
  std::string version;
  std::vector<std::pair<std::string, const json*>> options;
  std::vector<Profile> profiles;
  std::vector<Row> rows;
  const json* series = nullptr;
  std::vector<std::string> summary, caveats;
  std::vector<OpsFact> operations;
};

std::string ValueText(const json& v);

Doc ReadDoc(const json& j, const Reader& in) {
  Doc d;
  if (!j.is_object()) in.Fail("", "expected a JSON object (lossless.compare/1 results)");
  const std::string schema = in.String(j, "", "schema");
  if (schema != kSchema) in.Fail("schema", Expected(std::string("\"") + kSchema + "\"", schema));
  d.version = Reader::OptString(j, "lossless_version");
  for (const auto& [k, v] : in.Object(j, "", "options").items()) d.options.emplace_back(k, &v);
  const json& profiles = in.Array(j, "", "profiles");
  if (profiles.empty()) in.Fail("profiles", "expected at least one profile");
  std::set<std::string> names;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const std::string path = Reader::Index("profiles", i);
    Profile p;
    p.name = in.String(profiles[i], path, "name");
    if (!names.insert(p.name).second) in.Fail(path + ".name", "duplicate profile name " + p.name);
    p.description = Reader::OptString(profiles[i], "description");
    p.file = Reader::OptString(profiles[i], "file");
    p.link_layer = Reader::OptString(profiles[i], "link_layer");
    if (auto it = profiles[i].find("link_rate_gbps"); it != profiles[i].end() && it->is_number())
      p.link_rate_gbps = it->get<double>();
    if (auto it = profiles[i].find("line_rate_gbs"); it != profiles[i].end() && it->is_number())
      p.line_rate_gbs = it->get<double>();
    if (profiles[i].contains("placeholders"))
      p.placeholders = in.Strings(profiles[i], path, "placeholders");
    d.profiles.push_back(std::move(p));
  }
  const json& rows = in.Array(j, "", "rows");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string path = Reader::Index("rows", i);
    Row r;
    r.section = in.String(rows[i], path, "section");
    r.key = in.String(rows[i], path, "key");
    r.label = in.String(rows[i], path, "label");
    r.unit = in.String(rows[i], path, "unit");
    r.better = Reader::OptString(rows[i], "better");
    const json& values = in.Object(rows[i], path, "values");
    const json* notes = nullptr;
    if (rows[i].contains("notes")) notes = &in.Object(rows[i], path, "notes");
    for (const auto& p : d.profiles) {
      auto it = values.find(p.name);
      if (it != values.end() && !(it->is_null() || it->is_number() || it->is_string()))
        in.Fail(path + ".values." + p.name,
                "expected a number, a string or null, got " + Reader::TypeOf(*it));
      r.values.push_back(it == values.end() ? nullptr : &*it);
      r.notes.push_back(notes != nullptr ? Reader::OptString(*notes, p.name.c_str()) : "");
    }
    d.rows.push_back(std::move(r));
  }
  d.series = &in.Object(j, "", "series");
  d.summary = in.Strings(j, "", "summary");
  d.caveats = in.Strings(j, "", "caveats");
  const json& ops = in.Array(j, "", "operations");
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string path = Reader::Index("operations", i);
    OpsFact f;
    f.label = in.String(ops[i], path, "label");
    f.source = Reader::OptString(ops[i], "source");
    const json& values = in.Object(ops[i], path, "values");
    for (const auto& p : d.profiles) {
      auto it = values.find(p.name);
      f.values.push_back(it == values.end() || it->is_null() ? "" : ValueText(*it));
    }
    d.operations.push_back(std::move(f));
  }
  return d;
}

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

// A number with precision that falls with magnitude (`scale`, the largest
// magnitude of the numbers printed beside it): whole counts and money with
// thousands separators.
std::string NumberText(double v, const std::string& unit, double scale = -1) {
  const double a = scale >= 0 ? scale : std::fabs(v);
  if (unit == "count" || unit == "USD" || unit == "USD/GPU/year" || a >= 1000) return Thousands(v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 0.01 || a == 0) return fmt::format("{:.2f}", v);
  return fmt::format("{:.2e}", v);
}

std::string ValueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return Thousands(v.get<double>());
  if (v.is_number()) return NumberText(v.get<double>(), "");
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

// Bytes as nccl-tests sizes: 8M, 1G, 512K, 64.
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

// Per profile: colour (Okabe-Ito, safe for colour blindness), dash pattern and
// marker shape, so profiles stay apart in greyscale print.
struct Style {
  const char* color;
  const char* dash;  // stroke-dasharray, "" = solid
  int marker;        // 0 circle, 1 square, 2 triangle, 3 diamond, 4 cross, 5 triangle down, 6 plus
};
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
                   const std::string& extra_class = "mark") {
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
std::string ShortName(const std::string& name, size_t max = 17) {
  size_t chars = 0, cut = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if ((static_cast<unsigned char>(name[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (chars == max - 1) cut = i;
    if (++chars > max) return HtmlEscape(name.substr(0, cut)) + "&#8230;";
  }
  return HtmlEscape(name);
}

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

// Upper end of a linear axis that starts at 0 and shows `max` with room.
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

using Ticks = std::vector<std::pair<double, std::string>>;  // position, label ("" = none)

// About `want` linear ticks over [lo, hi] with their labels.
Ticks LinearTicks(double lo, double hi, int want) {
  double step = 0;
  Ticks out;
  for (double v : NiceTicks(lo, hi, want, &step)) out.emplace_back(v, TickText(v, step));
  return out;
}

// Frame, grid, tick labels and axis titles of `p`. x ticks are given with
// their labels; about `yticks_wanted` linear y ticks are computed here (none
// when 0: a chart of lanes labels its rows itself).
void Axes(std::string& out, const Plot& p, const Ticks& xticks, const std::string& xtitle,
          const std::string& ytitle, int yticks_wanted = 5, bool y_percent = false) {
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

// Polyline through `pts` in profile i's style plus markers every `every` points.
void Series(std::string& out, const std::vector<std::pair<double, double>>& pts, size_t i,
            size_t every, bool step = false) {
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

// Log ticks at 1, 2, 5 x 10^k inside [lo, hi].
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

double Quantile(std::vector<double> v, double q) {  // v not empty; sorted copy, linear
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto k = static_cast<size_t>(pos);
  if (k + 1 >= v.size()) return v.back();
  return v[k] + (v[k + 1] - v[k]) * (pos - static_cast<double>(k));
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
