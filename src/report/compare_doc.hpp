#pragma once
// Internal to the compare report (not API): the lossless.compare/1 results
// document (docs/compare-results.md) as the report reads it. Reader reads
// fields and names the field path of every failure (InputError); ReadDoc
// checks the schema and the fields the page needs and gives the profiles,
// rows, series, summary, caveats and operations facts in column order.
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace lossless::report::detail {

using json = nlohmann::json;

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

// The document `j` read with `in` (InputError at the first field that is
// missing or of the wrong type, or a schema other than lossless.compare/1).
Doc ReadDoc(const json& j, const Reader& in);

// A value as the page prints it: strings as they are, numbers with
// thousands separators or a precision by magnitude, booleans yes/no.
std::string ValueText(const json& v);

}  // namespace lossless::report::detail
