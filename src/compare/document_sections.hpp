#pragma once
// Internal to document.cpp and document_rows.cpp (not API): the pieces the
// lossless.compare/1 document is built from. Sections holds what every
// section reads (the options, each column's measurements, the cluster's
// shape) and has one function per section of the document; RowBuilder
// collects the rows.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/document.hpp"

namespace lossless::compare::detail {

// `v` rounded to `digits` decimals; null when not finite.
nlohmann::json Num(double v, int digits);

// The rows of the document, in the order they are added.
struct RowBuilder {
  nlohmann::json rows = nlohmann::json::array();
  void Add(const std::string& section, const std::string& key, const std::string& label,
           const std::string& unit, const std::string& better, nlohmann::json values,
           nlohmann::json notes = nlohmann::json::object()) {
    nlohmann::json r;
    r["section"] = section;
    r["key"] = key;
    r["label"] = label;
    r["unit"] = unit;
    r["values"] = std::move(values);
    if (!notes.empty()) r["notes"] = std::move(notes);
    r["better"] = better;
    rows.push_back(std::move(r));
  }
};

// The highest out-of-place busbw (GB/s) of `r` on `ranks` ranks; `at_bytes`
// gets the size it was reached at (left as it was when every row is 0).
double PeakBusbw(const perf::PerfResult& r, int64_t ranks, int64_t* at_bytes);

// "7b" -> "7B", as the model's name is written.
// "Llama 2 7B", "TinyLlama 1.1B": the preset's source up to its citation.
std::string ModelLabel(const std::string& m);

// One document's sections, each built from the options and every column's
// measurements.
struct Sections {
  const Options& o;
  const std::vector<ProfileData>& data;
  int64_t g;      // GPUs per node
  int64_t nodes;  // nodes of the sweep and of the jitter and fault cases
  int64_t ranks;  // nodes x g
  int64_t gpus;   // the TCO cluster's: o.nodes x g

  // {column: f(its data)} over every column.
  template <typename F>
  nlohmann::json Each(F f) const {
    nlohmann::json v = nlohmann::json::object();
    for (const ProfileData& d : data) v[d.col.name] = f(d);
    return v;
  }
  // {column: text} for every InfiniBand column (`ib`) or every RoCE one.
  nlohmann::json NotesWhere(bool ib, const char* text) const {
    nlohmann::json n = nlohmann::json::object();
    for (const ProfileData& d : data)
      if (d.s.net.ib.enabled == ib) n[d.col.name] = text;
    return n;
  }
  nlohmann::json IbNotes(const char* text) const { return NotesWhere(true, text); }
  nlohmann::json RoceNotes(const char* text) const { return NotesWhere(false, text); }

  nlohmann::json OptionsJson() const;
  // Wall-clock seconds per profile and stage (--timing): varies run to run.
  nlohmann::json Timing() const;
  nlohmann::json Profiles() const;
  void LatencyRows(RowBuilder& rb) const;
  void CollectiveRows(RowBuilder& rb) const;
  void JitterRows(RowBuilder& rb) const;
  void IncastRows(RowBuilder& rb) const;
  void FaultRows(RowBuilder& rb) const;
  void TrainingRows(RowBuilder& rb) const;
  void TcoRows(RowBuilder& rb) const;
  nlohmann::json Series() const;
  // The summary sentences; `claim` gets where "30-50 % cheaper" holds (null
  // without an ib-ndr and a roce-tuned column with fabric costs).
  nlohmann::json Summary(nlohmann::json* claim) const;
  nlohmann::json Caveats() const;
};

}  // namespace lossless::compare::detail
