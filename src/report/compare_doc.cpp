// The results document as the compare report reads it (compare_doc.hpp).
#include "report/compare_doc.hpp"

#include <set>

#include "report/svg_plot.hpp"

namespace lossless::report::detail {
namespace {

constexpr const char* kSchema = "lossless.compare/1";

}  // namespace

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

std::string ValueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return Thousands(v.get<double>());
  if (v.is_number()) return NumberText(v.get<double>(), "");
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

}  // namespace lossless::report::detail
