// Text and CSV renderings of a lossless.compare/1 document's matrix.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compare/compare.hpp"

namespace lossless::compare {
namespace {

using nlohmann::json;

std::string Cell(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return fmt::format("{}", v.get<int64_t>());
  if (v.is_number()) {
    const double x = v.get<double>();
    const double a = std::abs(x);
    if (a >= 1e5) return fmt::format("{:.0f}", x);
    if (a >= 100) return fmt::format("{:.1f}", x);
    if (a >= 1) return fmt::format("{:.2f}", x);
    if (a == 0) return "0";
    return fmt::format("{:.4f}", x);
  }
  return v.dump();
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::vector<std::string> ProfileNames(const json& doc) {
  std::vector<std::string> names;
  for (const json& p : doc.at("profiles")) names.push_back(p.at("name").get<std::string>());
  return names;
}

const char* SectionTitle(const std::string& s) {
  if (s == "latency") return "Small-message latency (idle fabric)";
  if (s == "collective") return "All-reduce bus bandwidth";
  if (s == "jitter") return "Iteration-time jitter";
  if (s == "incast") return "Incast stress";
  if (s == "fault") return "Faults";
  if (s == "training") return "Training step";
  if (s == "tco") return "Total cost of ownership (fabric)";
  return "";
}

}  // namespace

std::string MatrixText(const json& doc) {
  const std::vector<std::string> names = ProfileNames(doc);
  size_t label_w = 10;
  for (const json& r : doc.at("rows")) {
    const std::string u = r.at("unit").get<std::string>();
    label_w = std::max(label_w, r.at("label").get<std::string>().size() + (u.empty() ? 0 : u.size() + 3));
  }
  label_w = std::min<size_t>(label_w, 72);
  std::vector<size_t> w;
  w.reserve(names.size());
  for (const std::string& n : names) w.push_back(std::max<size_t>(n.size(), 12));
  for (const json& r : doc.at("rows"))
    for (size_t i = 0; i < names.size(); ++i) {
      const json& v = r.at("values").contains(names[i]) ? r.at("values").at(names[i]) : json(nullptr);
      const std::string c = Cell(v);
      if (c.size() <= 40) w[i] = std::max(w[i], c.size());
    }
  const json& o = doc.at("options");
  std::string out = fmt::format(
      "lossless compare: {} profiles, all-reduce on {} nodes x {} GPUs, TCO for {} GPUs, {}, seed {}\n",
      names.size(), o.at("sweep_nodes").get<int64_t>(), o.at("gpus_per_node").get<int64_t>(),
      o.at("tco_gpus").get<int64_t>(), o.at("rate").get<std::string>(), o.at("seed").get<uint64_t>());
  if (doc.value("interrupted", false))
    out += "interrupted (Ctrl-C): the cases marked \"not run\" did not finish; no conclusion is drawn\n";
  std::string section;
  std::vector<std::string> footnotes;
  for (const json& r : doc.at("rows")) {
    const std::string s = r.at("section").get<std::string>();
    if (s != section) {
      section = s;
      out += fmt::format("\n{:<{}}", SectionTitle(s), label_w);
      for (size_t i = 0; i < names.size(); ++i) out += fmt::format("  {:>{}}", names[i], w[i]);
      out += "\n";
    }
    const std::string u = r.at("unit").get<std::string>();
    std::string label = r.at("label").get<std::string>() + (u.empty() ? "" : " (" + u + ")");
    if (label.size() > label_w) label = label.substr(0, label_w - 1) + "~";
    out += fmt::format("{:<{}}", label, label_w);
    for (size_t i = 0; i < names.size(); ++i) {
      const json& v = r.at("values").contains(names[i]) ? r.at("values").at(names[i]) : json(nullptr);
      std::string c = Cell(v);
      if (r.contains("notes") && r.at("notes").contains(names[i]) &&
          r.at("notes").at(names[i]).get<std::string>().starts_with(kNotRunNote)) {
        c = "not run";  // explained once, above the matrix
      } else if (r.contains("notes") && r.at("notes").contains(names[i])) {
        footnotes.push_back(fmt::format("{}, {}: {}", r.at("key").get<std::string>(), names[i],
                                        r.at("notes").at(names[i]).get<std::string>()));
        c += fmt::format(" [{}]", footnotes.size());
      }
      out += fmt::format("  {:>{}}", c, w[i]);
    }
    out += "\n";
  }
  if (!footnotes.empty()) {
    out += "\n";
    for (size_t i = 0; i < footnotes.size(); ++i) out += fmt::format("[{}] {}\n", i + 1, footnotes[i]);
  }
  out += "\nOperations (documented facts, not simulated)\n";
  for (const json& f : doc.at("operations")) {
    out += fmt::format("  {}:\n", f.at("label").get<std::string>());
    for (const std::string& n : names)
      if (f.at("values").contains(n))
        out += fmt::format("    {:<14} {}\n", n, f.at("values").at(n).get<std::string>());
  }
  out += "\nSummary\n";
  for (const json& s : doc.at("summary")) out += "  " + s.get<std::string>() + "\n";
  out += "\nCaveats\n";
  for (const json& s : doc.at("caveats")) out += "  " + s.get<std::string>() + "\n";
  return out;
}

std::string MatrixCsv(const json& doc) {
  const std::vector<std::string> names = ProfileNames(doc);
  std::string out = "section,key,label,unit,profile,value,note\n";
  for (const json& r : doc.at("rows")) {
    for (const std::string& n : names) {
      const json& v = r.at("values").contains(n) ? r.at("values").at(n) : json(nullptr);
      const std::string value = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
      const std::string note =
          r.contains("notes") && r.at("notes").contains(n) ? r.at("notes").at(n).get<std::string>() : "";
      out += fmt::format("{},{},{},{},{},{},{}\n", CsvField(r.at("section").get<std::string>()),
                         CsvField(r.at("key").get<std::string>()),
                         CsvField(r.at("label").get<std::string>()),
                         CsvField(r.at("unit").get<std::string>()), CsvField(n), CsvField(value),
                         CsvField(note));
    }
  }
  return out;
}

}  // namespace lossless::compare
