#pragma once
// lossless sweep (docs/sweep.md): one scenario over the cross product of
// parameter values, each case a full run, one results table (CSV and JSON)
// with the varied parameters as columns. Cases are spread over the ranks of
// a parallel::Comm (mpirun, or the in-process loopback in tests) or over
// local worker processes (-j); case c goes to worker c mod W, and the table
// is assembled in case order, so its bytes do not depend on W.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parallel/comm.hpp"
#include "report/result.hpp"
#include "scenario/scenario.hpp"

namespace lossless::sweep {

// One --vary: a scenario field (any --set key) and its values in order.
struct Vary {
  std::string key;
  std::vector<std::string> values;
};

// Parses "key=v1,v2,...". InputError at "<--vary>" (field: the key) for a
// missing '=' or key, an empty list, an empty value ("a,,b") or a value
// given twice. Values are taken as text; the scenario loader parses them.
Vary ParseVary(const std::string& arg);

inline constexpr size_t kMaxCases = 10'000;

struct Plan {
  std::string file;               // scenario path as given (messages, relative paths)
  std::string text;               // its contents
  std::vector<std::string> sets;  // --set, applied to every case first
  std::vector<Vary> vary;         // the first varies slowest

  size_t Cases() const;  // product of the list lengths
  // Case c's value of each --vary, in --vary order.
  std::vector<std::string> Values(size_t c) const;
  // Case c's overrides: sets, then "key=value" per --vary.
  std::vector<std::string> CaseSets(size_t c) const;
};

// Case c's scenario, loaded and validated, with every per-run output off
// (outputs.json, series, pcap, trace: a sweep writes only its table).
// InputError as LoadScenarioText; an error in a varied field is reported
// at "<--vary>" naming the key.
scenario::Scenario LoadCase(const Plan& p, size_t c);

// Checks the plan before anything runs: at least one --vary, no key twice
// (nor in --set and --vary both), no key equal to a result column, at most
// kMaxCases cases, and every case passes what `lossless validate` checks
// (fields, topology, traffic, faults). InputError otherwise.
void CheckPlan(const Plan& p);

// What to know before reading the table (after CheckPlan passed): every
// scenario warning of the cases, once each, and an ECN threshold varied
// while no case has a congestion control that reacts to marks (fabric.cc
// none: the marks are counted and the flows run alike).
std::vector<std::string> PlanNotes(const Plan& p);

// The table's columns: "case", the --vary keys, then the headline results
// (docs/sweep.md#columns).
std::vector<std::string> Columns(const Plan& p);

// Case c's row (column -> value) from its run.
nlohmann::ordered_json CaseRow(const Plan& p, size_t c, const report::RunResult& r);

// What running one case gave: its row as JSON text, or that Ctrl-C stopped
// it (no row), or an error (one line, the case named).
struct CaseOutcome {
  size_t index = 0;
  enum class Kind { kRow, kInterrupted, kError } kind = Kind::kRow;
  std::string text;  // the row's JSON (kRow) or the error (kError)
};

// Where a running case is, for a progress line.
struct CaseStatus {
  size_t index = 0;
  int64_t now_ps = 0;
  int64_t stop_ps = 0;
};
struct Hooks {
  std::function<bool()> keep_going;                       // before each case; false = stop
  std::function<bool(const CaseStatus&)> between_slices;  // false = stop (interrupt)
  std::function<void(size_t index)> case_done;            // after each case this worker ran
};

// Runs case c. Never throws for a problem of the case: InputError and other
// exceptions become kError outcomes.
CaseOutcome RunCase(const Plan& p, size_t c, const Hooks& hooks = {});

// The cases worker w of n runs: c with c mod n == w, ascending.
std::vector<size_t> Share(size_t cases, int w, int n);

// The assembled table: one entry per case in case order, null for a case
// that did not run (interrupted).
struct Table {
  std::vector<nlohmann::ordered_json> rows;
  bool interrupted = false;
};

// SPMD: every rank of `comm` runs its share; the outcomes are gathered on
// rank 0, which returns the table (other ranks return an empty table).
// Every rank returns normally or every rank throws: an error in any case
// is thrown on every rank as InputError (the first failing case's, by case
// number), so no rank is left waiting in a collective.
Table RunOnComm(parallel::Comm& comm, const Plan& p, const Hooks& hooks = {});

// The same over `jobs` local worker processes (fork; jobs >= 2), in this
// process's place: the parent only collects. Each worker is in its own
// process group; when child_hooks.keep_going() turns false in the parent
// (Ctrl-C), the parent sends each worker one SIGINT, which the workers'
// inherited handler (base/progress.hpp's InterruptScope) turns into a stop
// at the next slice. `collected(done)` is called
// in the parent as rows arrive. Throws InputError for a failing case, and
// a runtime_error naming the worker if one ends abnormally.
Table RunForked(const Plan& p, int jobs, const Hooks& child_hooks,
                const std::function<void(size_t done)>& collected = {});

// Renderings. CSV: a header of Columns(p), one line per case that ran;
// numbers as in the JSON, null as an empty cell, text quoted when it holds
// a comma, a quote or a line break (RFC 4180). JSON: "lossless.sweep/1".
std::string TableCsv(const Plan& p, const Table& t);
nlohmann::ordered_json TableJson(const Plan& p, const Table& t);

}  // namespace lossless::sweep
