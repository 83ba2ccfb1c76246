#include "sweep/sweep.hpp"

#include <poll.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): POSIX kill(), not in <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

#include "run/runner.hpp"
#include "workload/traffic.hpp"

namespace lossless::sweep {
namespace {

const Location kVaryAt{"<--vary>", 0, ""};

// The headline results of a run, after "case" and the varied keys.
constexpr const char* kResultColumns[] = {
    "result",
    "sim_time_ps",
    "flows",
    "flows_done",
    "flows_unfinished",
    "bytes_left",
    "fct_min_us",
    "fct_median_us",
    "fct_p99_us",
    "fct_max_us",
    "fct_mean_us",
    "max_packet_latency_us",
    "mean_link_utilization",
    "max_link_utilization",
    "drops",
    "lossless_drops",
    "ecn_marks",
    "cnps",
    "pause_frames",
    "max_paused_fraction",
    "fcp_frames",
    "max_credit_starved_fraction",
    "retransmitted_packets",
    "link_losses",
    "deadlocks",
    "qp_failure",
    "watchdog_actions",
    "packet_hops",
};

std::string Trim(std::string s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(s.begin());
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

double Us(units::Time t) {
  return static_cast<double>(t.ps()) / 1e6;
}

std::string CaseName(const Plan& p, size_t c) {
  std::string o = fmt::format("case {} (", c);
  const auto values = p.Values(c);
  for (size_t i = 0; i < p.vary.size(); ++i)
    o += fmt::format("{}{}={}", i ? ", " : "", p.vary[i].key, values[i]);
  return o + ")";
}

std::string SerializeOutcomes(const std::vector<CaseOutcome>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& o : v) a.push_back({o.index, static_cast<int>(o.kind), o.text});
  return a.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<CaseOutcome> ParseOutcomes(const std::string& bytes) {
  std::vector<CaseOutcome> v;
  for (const auto& e : nlohmann::json::parse(bytes)) {
    CaseOutcome o;
    o.index = e.at(0).get<size_t>();
    o.kind = static_cast<CaseOutcome::Kind>(e.at(1).get<int>());
    o.text = e.at(2).get<std::string>();
    v.push_back(std::move(o));
  }
  return v;
}

// Outcomes (any order) into the table; returns the first error by case
// number ("" when none).
std::string Assemble(const Plan& p, const std::vector<CaseOutcome>& all, Table& t) {
  t.rows.assign(p.Cases(), nullptr);
  size_t first_error = SIZE_MAX;
  std::string error;
  for (const auto& o : all) {
    if (o.index >= t.rows.size()) throw std::logic_error("sweep: a case number out of range");
    if (o.kind == CaseOutcome::Kind::kRow) {
      t.rows[o.index] = nlohmann::ordered_json::parse(o.text);
    } else if (o.kind == CaseOutcome::Kind::kError && o.index < first_error) {
      first_error = o.index;
      error = o.text;
    }
  }
  t.interrupted =
      std::any_of(t.rows.begin(), t.rows.end(), [](const auto& r) { return r.is_null(); });
  return error;
}

std::string CsvCell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

// write(2) all of `s`; false on an error.
bool WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Vary ParseVary(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || Trim(arg.substr(0, eq)).empty())
    throw InputError({"<--vary>", 0, ""}, Expected("key=value1,value2,...", arg));
  Vary v;
  v.key = Trim(arg.substr(0, eq));
  const std::string list = arg.substr(eq + 1);
  const Location at{"<--vary>", 0, v.key};
  if (Trim(list).empty()) throw InputError(at, "expected a list of values after '=', got none");
  size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    std::string value =
        Trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (value.empty()) {
      throw InputError(at, fmt::format("expected a value at position {} of the list, got an "
                                       "empty one",
                                       v.values.size() + 1));
    }
    if (std::find(v.values.begin(), v.values.end(), value) != v.values.end())
      throw InputError(at, fmt::format("value {} given twice", QuoteForMessage(value)));
    v.values.push_back(std::move(value));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return v;
}

size_t Plan::Cases() const {
  size_t n = 1;
  for (const auto& v : vary) {
    if (v.values.empty()) return 0;
    if (n > kMaxCases) return n;  // saturates above the limit; CheckPlan rejects it
    n *= v.values.size();
  }
  return n;
}

std::vector<std::string> Plan::Values(size_t c) const {
  std::vector<std::string> out(vary.size());
  for (size_t i = vary.size(); i-- > 0;) {
    const size_t n = vary[i].values.size();
    out[i] = vary[i].values[c % n];
    c /= n;
  }
  return out;
}

std::vector<std::string> Plan::CaseSets(size_t c) const {
  std::vector<std::string> out = sets;
  const auto values = Values(c);
  for (size_t i = 0; i < vary.size(); ++i) out.push_back(vary[i].key + "=" + values[i]);
  return out;
}

// An error about case c's scenario, reported at "<--vary>" when it names a
// varied key, else where it was with the case added.
[[noreturn]] void Relabel(const Plan& p, size_t c, const InputError& e) {
  for (const auto& v : p.vary) {
    if (e.where().file == "<--set>" && e.where().field == v.key)
      throw InputError({"<--vary>", 0, v.key}, e.message());
  }
  throw InputError(e.where(), fmt::format("{} (in sweep {})", e.message(), CaseName(p, c)));
}

scenario::Scenario LoadCase(const Plan& p, size_t c) {
  scenario::Scenario s;
  try {
    s = scenario::LoadScenarioText(p.text, p.file, p.CaseSets(c));
  } catch (const InputError& e) {
    Relabel(p, c, e);
  }
  // A sweep writes its table only: no per-case JSON, series, capture or timeline.
  s.json_out.clear();
  s.series.interval = units::Time::Zero();
  s.series.csv_out.clear();
  s.capture.pcap.clear();
  s.capture.trace.clear();
  return s;
}

void CheckPlan(const Plan& p) {
  if (p.vary.empty())
    throw InputError(kVaryAt, "expected at least one --vary key=value1,value2,...");
  for (size_t i = 0; i < p.vary.size(); ++i) {
    const std::string& key = p.vary[i].key;
    for (size_t j = 0; j < i; ++j)
      if (p.vary[j].key == key)
        throw InputError({"<--vary>", 0, key},
                         "expected each key in one --vary only, got it twice");
    for (const auto& set : p.sets)
      if (set.substr(0, set.find('=')) == key)
        throw InputError({"<--vary>", 0, key},
                         "expected a key given by --vary or by --set, not both");
    for (const char* col : kResultColumns)
      if (key == col || key == "case")
        throw InputError({"<--vary>", 0, key}, "expected a scenario field, got a result column");
  }
  const size_t n = p.Cases();
  if (n > kMaxCases) {
    throw InputError(kVaryAt, fmt::format("expected at most {} cases in one sweep, got more "
                                          "(the product of the --vary lists)",
                                          kMaxCases));
  }
  // What `lossless validate` checks, per case: fields, topology, traffic, faults.
  for (size_t c = 0; c < n; ++c) {
    const scenario::Scenario s = LoadCase(p, c);
    try {
      const topology::Topology t = scenario::BuildTopology(s);
      const auto flows = workload::ExpandTraffic(s, static_cast<uint32_t>(t.hosts.size()), &t);
      scenario::CheckFaults(s, t, flows.size());
    } catch (const InputError& e) {
      Relabel(p, c, e);
    }
  }
}

std::vector<std::string> PlanNotes(const Plan& p) {
  std::vector<std::string> notes;
  std::string ecn_key;
  for (const auto& v : p.vary)
    if (ecn_key.empty() && v.key.rfind("fabric.ecn.", 0) == 0) ecn_key = v.key;
  bool reacts = false;
  for (size_t c = 0; c < p.Cases(); ++c) {
    const scenario::Scenario s = LoadCase(p, c);
    reacts = reacts || s.net.dcqcn || s.net.ib_cc;
    for (const std::string& w : s.warnings)
      if (std::find(notes.begin(), notes.end(), w) == notes.end()) notes.push_back(w);
  }
  if (!ecn_key.empty() && !reacts) {
    notes.push_back(fmt::format(
        "{} is varied, but fabric.cc is none in every case: the marks are counted (ecn_marks) "
        "and nothing slows down for them, so the flows run alike (--set or --vary fabric.cc "
        "dcqcn-paper or dcqcn-firmware)",
        ecn_key));
  }
  return notes;
}

std::vector<std::string> Columns(const Plan& p) {
  std::vector<std::string> cols = {"case"};
  for (const auto& v : p.vary) cols.push_back(v.key);
  for (const char* c : kResultColumns) cols.emplace_back(c);
  return cols;
}

nlohmann::ordered_json CaseRow(const Plan& p, size_t c, const report::RunResult& r) {
  nlohmann::ordered_json row;
  row["case"] = c;
  const auto values = p.Values(c);
  for (size_t i = 0; i < p.vary.size(); ++i) row[p.vary[i].key] = values[i];
  row["result"] = r.stop_reason;
  row["sim_time_ps"] = r.sim_time.ps();
  row["flows"] = r.flows;
  row["flows_done"] = r.flows_done;
  row["flows_unfinished"] = r.flows_unfinished;
  row["bytes_left"] = r.bytes_left;
  const bool fct = r.flows_done > 0;  // no finished flow, no FCT: null (docs/errors.md)
  row["fct_min_us"] = fct ? nlohmann::ordered_json(Us(r.fct.min)) : nullptr;
  row["fct_median_us"] = fct ? nlohmann::ordered_json(Us(r.fct.median)) : nullptr;
  row["fct_p99_us"] = fct ? nlohmann::ordered_json(Us(r.fct.p99)) : nullptr;
  row["fct_max_us"] = fct ? nlohmann::ordered_json(Us(r.fct.max)) : nullptr;
  row["fct_mean_us"] = fct ? nlohmann::ordered_json(Us(r.fct.mean)) : nullptr;
  row["max_packet_latency_us"] = Us(r.max_packet_latency);
  row["mean_link_utilization"] = r.mean_link_utilization;
  row["max_link_utilization"] = r.max_link_utilization;
  row["drops"] = r.drops;
  row["lossless_drops"] = r.lossless_drops;
  row["ecn_marks"] = r.ecn_marks;
  row["cnps"] = r.cnps;
  row["pause_frames"] = r.pause_frames;
  row["max_paused_fraction"] = r.max_paused_fraction;
  row["fcp_frames"] = r.fcp_frames;
  row["max_credit_starved_fraction"] = r.max_credit_starved_fraction;
  row["retransmitted_packets"] = r.retx_packets;
  row["link_losses"] = r.link_losses;
  row["deadlocks"] = r.deadlock.enabled ? r.deadlock.count : 0;
  // The queue pair that ran out of retries, if one did (null otherwise).
  row["qp_failure"] =
      r.qp_failure.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.qp_failure);
  row["watchdog_actions"] = r.watchdog_actions;
  row["packet_hops"] = r.packet_hops;
  return row;
}

CaseOutcome RunCase(const Plan& p, size_t c, const Hooks& hooks) {
  CaseOutcome o;
  o.index = c;
  try {
    const scenario::Scenario s = LoadCase(p, c);
    run::RunHooks rh;
    if (hooks.between_slices) {
      rh.between_slices = [&](const run::RunStatus& st) {
        return hooks.between_slices(CaseStatus{c, st.now.ps(), st.stop_time.ps()});
      };
    }
    const report::RunResult r = run::RunScenario(s, rh);
    if (r.interrupted) {
      o.kind = CaseOutcome::Kind::kInterrupted;
      return o;
    }
    o.text = CaseRow(p, c, r).dump();
  } catch (const std::bad_alloc&) {
    o.kind = CaseOutcome::Kind::kError;
    o.text = fmt::format("{}: out of memory", CaseName(p, c));
  } catch (const std::exception& e) {
    o.kind = CaseOutcome::Kind::kError;
    o.text = fmt::format("{}: {}", CaseName(p, c), e.what());
  }
  return o;
}

std::vector<size_t> Share(size_t cases, int w, int n) {
  std::vector<size_t> out;
  for (size_t c = static_cast<size_t>(w); c < cases; c += static_cast<size_t>(n)) out.push_back(c);
  return out;
}

Table RunOnComm(parallel::Comm& comm, const Plan& p, const Hooks& hooks) {
  std::vector<CaseOutcome> mine;
  for (size_t c : Share(p.Cases(), comm.Rank(), comm.Size())) {
    if (hooks.keep_going && !hooks.keep_going()) break;
    mine.push_back(RunCase(p, c, hooks));
    if (hooks.case_done) hooks.case_done(c);
    if (mine.back().kind != CaseOutcome::Kind::kRow) break;
  }
  const std::vector<std::string> all = comm.Gather(SerializeOutcomes(mine));
  Table t;
  std::string error;
  if (comm.Rank() == 0) {
    std::vector<CaseOutcome> outcomes;
    for (const auto& bytes : all) {
      auto v = ParseOutcomes(bytes);
      outcomes.insert(outcomes.end(), std::make_move_iterator(v.begin()),
                      std::make_move_iterator(v.end()));
    }
    error = Assemble(p, outcomes, t);
  }
  // Every rank learns whether the sweep failed, so all end the same way.
  error = comm.Broadcast(error);
  if (!error.empty()) throw InputError(kVaryAt, error);
  return t;
}

Table RunForked(const Plan& p, int jobs, const Hooks& child_hooks,
                const std::function<void(size_t done)>& collected) {
  if (jobs < 2) throw std::logic_error("RunForked: at least 2 jobs");
  const size_t cases = p.Cases();
  jobs = static_cast<int>(std::min<size_t>(static_cast<size_t>(jobs), std::max<size_t>(cases, 1)));
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::string buf;
  };
  std::vector<Worker> workers(static_cast<size_t>(jobs));
  std::fflush(nullptr);  // nothing buffered is written twice
  for (int w = 0; w < jobs; ++w) {
    int fds[2];
    if (pipe(fds) != 0)
      throw std::runtime_error(
          fmt::format("sweep: cannot create a pipe: {}", std::strerror(errno)));
    const pid_t pid = fork();
    if (pid < 0) {
      throw std::runtime_error(
          fmt::format("sweep: cannot start worker {}: {}", w, std::strerror(errno)));
    }
    if (pid == 0) {
      // Its own process group: Ctrl-C on a terminal reaches the parent only,
      // which passes it on once (a second SIGINT would end a worker at once).
      setpgid(0, 0);
      close(fds[0]);
      for (int i = 0; i < w; ++i) close(workers[static_cast<size_t>(i)].fd);
      // Each outcome as one record: "<length>\n<outcomes JSON>".
      for (size_t c : Share(cases, w, jobs)) {
        if (child_hooks.keep_going && !child_hooks.keep_going()) break;
        const CaseOutcome o = RunCase(p, c, child_hooks);
        const std::string rec = SerializeOutcomes({o});
        if (!WriteAll(fds[1], fmt::format("{}\n", rec.size()) + rec)) _exit(3);
        if (o.kind != CaseOutcome::Kind::kRow) break;
      }
      close(fds[1]);
      _exit(0);
    }
    close(fds[1]);
    workers[static_cast<size_t>(w)].pid = pid;
    workers[static_cast<size_t>(w)].fd = fds[0];
  }
  std::vector<CaseOutcome> outcomes;
  size_t open = workers.size();
  std::string failure;
  bool stop_sent = false;
  while (open > 0) {
    if (!stop_sent && child_hooks.keep_going && !child_hooks.keep_going()) {
      for (const auto& wk : workers)
        if (wk.fd >= 0) kill(wk.pid, SIGINT);
      stop_sent = true;
    }
    std::vector<pollfd> pf;
    std::vector<size_t> which;
    for (size_t i = 0; i < workers.size(); ++i) {
      if (workers[i].fd < 0) continue;
      pf.push_back({workers[i].fd, POLLIN, 0});
      which.push_back(i);
    }
    // A timeout, to look at keep_going now and then.
    if (poll(pf.data(), pf.size(), 100) < 0) {
      if (errno == EINTR) continue;  // Ctrl-C: the workers stop at their next slice
      failure = fmt::format("sweep: poll: {}", std::strerror(errno));
      break;
    }
    for (size_t k = 0; k < pf.size(); ++k) {
      if (pf[k].revents == 0) continue;
      Worker& wk = workers[which[k]];
      char chunk[65536];
      const ssize_t n = read(wk.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        wk.buf.append(chunk, static_cast<size_t>(n));
        // Complete records: "<length>\n<bytes>".
        while (true) {
          const auto nl = wk.buf.find('\n');
          if (nl == std::string::npos) break;
          const size_t len = std::stoull(wk.buf.substr(0, nl));
          if (wk.buf.size() < nl + 1 + len) break;
          auto v = ParseOutcomes(wk.buf.substr(nl + 1, len));
          wk.buf.erase(0, nl + 1 + len);
          for (auto& o : v) outcomes.push_back(std::move(o));
          if (collected) collected(outcomes.size());
        }
        continue;
      }
      close(wk.fd);  // end of file (or a read error): the worker is done
      wk.fd = -1;
      --open;
    }
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    if (workers[i].fd >= 0) close(workers[i].fd);
    int status = 0;
    while (waitpid(workers[i].pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string how;
    if (WIFSIGNALED(status))
      how = fmt::format("was killed by signal {}", WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      how = fmt::format("ended with exit status {}", WEXITSTATUS(status));
    if (!how.empty() && failure.empty())
      failure = fmt::format("sweep: worker {} of {} {}", i, workers.size(), how);
  }
  if (!failure.empty()) throw std::runtime_error(failure);
  Table t;
  const std::string error = Assemble(p, outcomes, t);
  if (!error.empty()) throw InputError(kVaryAt, error);
  return t;
}

std::string TableCsv(const Plan& p, const Table& t) {
  const auto cols = Columns(p);
  std::string o;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (i > 0) o += ',';
    o += CsvCell(cols[i]);
  }
  o += "\n";
  for (const auto& row : t.rows) {
    if (row.is_null()) continue;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i > 0) o += ',';
      o += CsvCell(row.at(cols[i]));
    }
    o += "\n";
  }
  return o;
}

nlohmann::ordered_json TableJson(const Plan& p, const Table& t) {
  nlohmann::ordered_json j;
  j["schema"] = "lossless.sweep/1";
  j["scenario"] = p.file;
  j["sets"] = p.sets;
  nlohmann::ordered_json vary = nlohmann::ordered_json::array();
  for (const auto& v : p.vary) vary.push_back({{"key", v.key}, {"values", v.values}});
  j["vary"] = std::move(vary);
  j["cases"] = p.Cases();
  size_t done = 0;
  for (const auto& r : t.rows) done += r.is_null() ? 0 : 1;
  j["cases_done"] = done;
  j["interrupted"] = t.interrupted;
  j["columns"] = Columns(p);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : t.rows)
    if (!r.is_null()) rows.push_back(r);
  j["rows"] = std::move(rows);
  return j;
}

}  // namespace lossless::sweep
