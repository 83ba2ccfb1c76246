#include "audit/optics/store.hpp"

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <sqlite3.h>

namespace lossless::audit::optics {
namespace {

constexpr int kApplicationId = 0x4c4f5054;  // "LOPT"
constexpr int kSchemaVersion = 2;           // 2: reading.port_state, reading.dom_supported

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS reading (
  id              INTEGER PRIMARY KEY,
  link            TEXT    NOT NULL,
  time_s          INTEGER NOT NULL,
  format          TEXT    NOT NULL,
  file            TEXT    NOT NULL,
  module_type     TEXT    NOT NULL,
  transceiver     TEXT    NOT NULL,
  copper          INTEGER NOT NULL,
  temperature_c   REAL,
  voltage_v       REAL,
  raw_ber         REAL,
  effective_ber   REAL,
  post_fec_errors INTEGER,
  counters_age_s  REAL,
  link_down_count INTEGER,
  speed           TEXT    NOT NULL,
  fec             TEXT    NOT NULL,
  troubleshooting TEXT    NOT NULL,
  lane_count      INTEGER NOT NULL,
  threshold_count INTEGER NOT NULL,
  port_state      TEXT    NOT NULL DEFAULT '',
  dom_supported   INTEGER,
  UNIQUE (link, time_s, format)
);
CREATE TABLE IF NOT EXISTS lane (
  reading_id  INTEGER NOT NULL REFERENCES reading(id) ON DELETE CASCADE,
  lane        INTEGER NOT NULL,
  tx_power_mw REAL,
  rx_power_mw REAL,
  bias_ma     REAL,
  rx_los      INTEGER,
  tx_los      INTEGER,
  tx_fault    INTEGER,
  tx_disabled INTEGER,
  raw_errors  INTEGER,
  PRIMARY KEY (reading_id, lane)
);
CREATE TABLE IF NOT EXISTS threshold (
  reading_id   INTEGER NOT NULL REFERENCES reading(id) ON DELETE CASCADE,
  quantity     TEXT    NOT NULL,
  high_alarm   REAL,
  low_alarm    REAL,
  high_warning REAL,
  low_warning  REAL,
  PRIMARY KEY (reading_id, quantity)
);
CREATE INDEX IF NOT EXISTS reading_by_link ON reading (link, time_s);
)sql";

// RAII prepared statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw std::runtime_error(fmt::format("sqlite: {}", sqlite3_errmsg(db)));
    }
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(int i, const std::string& v) {
    Check(sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    Check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Stmt& Bind(int i, const std::optional<double>& v) {
    Check(v ? sqlite3_bind_double(stmt_, i, *v) : sqlite3_bind_null(stmt_, i));
    return *this;
  }
  Stmt& Bind(int i, const std::optional<int64_t>& v) {
    Check(v ? sqlite3_bind_int64(stmt_, i, *v) : sqlite3_bind_null(stmt_, i));
    return *this;
  }
  Stmt& Bind(int i, const std::optional<bool>& v) {
    Check(v ? sqlite3_bind_int(stmt_, i, *v ? 1 : 0) : sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // True when a row is available.
  bool Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(fmt::format("sqlite: {}", sqlite3_errmsg(db_)));
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  }
  std::optional<double> OptDouble(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }
  std::optional<int64_t> OptInt(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int64(stmt_, col);
  }
  std::optional<bool> OptBool(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int(stmt_, col) != 0;
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK) throw std::runtime_error(fmt::format("sqlite: {}", sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// The first problem PRAGMA quick_check reports, or "ok". Every page is read.
std::string QuickCheck(sqlite3* db) {
  Stmt s(db, "PRAGMA quick_check(1)");
  return s.Step() ? s.Text(0) : std::string("no answer");
}

}  // namespace

Store::Store(const std::string& path, Mode mode) : path_(path) {
  const Location where{path, 0, "--db"};
  if (mode == Mode::kExisting && !std::filesystem::exists(path)) {
    throw InputError(where, "no optics database here (run 'lossless optics ingest' first)");
  }
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    throw InputError(where, "is a directory: expected an optics database file (SQLite)");
  }
  const int flags = SQLITE_OPEN_READWRITE | (mode == Mode::kCreate ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(where, fmt::format("cannot open the database: {}", msg));
  }
  sqlite3_busy_timeout(db_, 5000);
  try {
    int app_id = 0;
    int64_t tables = 0;
    {
      Stmt s(db_, "PRAGMA application_id");
      if (s.Step()) app_id = static_cast<int>(s.Int(0));
    }
    {
      Stmt s(db_, "SELECT count(*) FROM sqlite_master");
      if (s.Step()) tables = s.Int(0);
    }
    if (app_id != kApplicationId && (app_id != 0 || tables != 0)) {
      throw InputError(where,
                       "a SQLite database of another application, not a lossless optics database");
    }
    if (mode == Mode::kExisting && app_id == 0) {
      // status and quarantine only read: an empty file gets no schema.
      throw InputError(where,
                       "an empty file, not an optics database (run 'lossless optics ingest' "
                       "first); left unchanged");
    }
    // Before anything is written: a database whose pages were overwritten
    // would otherwise take new readings (SQLite only notices damage on the
    // pages a statement happens to touch) and fail later somewhere else.
    // quick_check reads every page, O(size of the database).
    if (app_id == kApplicationId) {
      const std::string check = QuickCheck(db_);
      if (check != "ok") {
        throw InputError(where, fmt::format("the optics database is corrupt (quick_check: {}); "
                                            "nothing was written to it: restore it from a "
                                            "backup or use a new --db",
                                            check));
      }
    }
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=FULL");
    Exec("PRAGMA foreign_keys=ON");
    if (app_id == 0) {
      Exec("BEGIN IMMEDIATE");
      Exec(kSchema);
      Exec(fmt::format("PRAGMA application_id={}", kApplicationId).c_str());
      Exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
      Exec("COMMIT");
    } else {
      int64_t version = 0;
      {
        Stmt s(db_, "PRAGMA user_version");
        if (s.Step()) version = s.Int(0);
      }
      if (version == 1) {
        // Version 1 lacks the port state and DOM support columns; readings stored by it keep
        // "not said" for both.
        Exec("BEGIN IMMEDIATE");
        Exec("ALTER TABLE reading ADD COLUMN port_state TEXT NOT NULL DEFAULT ''");
        Exec("ALTER TABLE reading ADD COLUMN dom_supported INTEGER");
        Exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
        Exec("COMMIT");
      } else if (version != kSchemaVersion) {
        throw InputError(
            where, fmt::format("optics database schema version {} (this build reads {})", version,
                               kSchemaVersion));
      }
    }
  } catch (const std::runtime_error& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    if (dynamic_cast<const InputError*>(&e)) throw;
    throw InputError(where, fmt::format("not a usable optics database ({})", e.what()));
  }
}

Store::~Store() {
  sqlite3_close(db_);
}

void Store::Exec(const char* sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error(fmt::format("sqlite: {}", msg));
  }
}

void Store::Row() {
  ++rows_in_txn_;
  if (row_hook_) row_hook_(rows_in_txn_);
}

int64_t Store::Insert(const std::string& file, const std::vector<Reading>& readings) {
  Exec("BEGIN IMMEDIATE");
  rows_in_txn_ = 0;
  try {
    Stmt del(db_, "DELETE FROM reading WHERE link = ?1 AND time_s = ?2 AND format = ?3");
    Stmt ins(
        db_,
        "INSERT INTO reading (link, time_s, format, file, module_type, transceiver, copper, "
        "temperature_c, voltage_v, raw_ber, effective_ber, post_fec_errors, counters_age_s, "
        "link_down_count, speed, fec, troubleshooting, lane_count, threshold_count, port_state, "
        "dom_supported) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
        "?16, ?17, ?18, ?19, ?20, ?21)");
    Stmt lane(db_,
              "INSERT INTO lane (reading_id, lane, tx_power_mw, rx_power_mw, bias_ma, rx_los, "
              "tx_los, tx_fault, tx_disabled, raw_errors) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
              "?9, ?10)");
    Stmt thr(db_,
             "INSERT INTO threshold (reading_id, quantity, high_alarm, low_alarm, high_warning, "
             "low_warning) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (const Reading& r : readings) {
      if (r.link.empty() || !r.time_s) {
        throw std::logic_error("Store::Insert: reading without link or time");
      }
      del.Reset();
      del.Bind(1, r.link).Bind(2, *r.time_s).Bind(3, r.format).Step();
      int64_t n_thr = 0;
      for (Quantity q : kAllQuantities) n_thr += r.thr(q).Any() ? 1 : 0;
      ins.Reset();
      ins.Bind(1, r.link).Bind(2, *r.time_s).Bind(3, r.format).Bind(4, file);
      ins.Bind(5, r.module_type).Bind(6, r.transceiver).Bind(7, int64_t{r.copper ? 1 : 0});
      ins.Bind(8, r.temperature_c).Bind(9, r.voltage_v).Bind(10, r.raw_ber);
      ins.Bind(11, r.effective_ber).Bind(12, r.post_fec_errors).Bind(13, r.counters_age_s);
      ins.Bind(14, r.link_down_count).Bind(15, r.speed).Bind(16, r.fec);
      ins.Bind(17, r.troubleshooting).Bind(18, static_cast<int64_t>(r.lanes.size()));
      ins.Bind(19, n_thr).Bind(20, r.port_state).Bind(21, r.dom_supported);
      ins.Step();
      const int64_t id = sqlite3_last_insert_rowid(db_);
      Row();
      for (const LaneReading& l : r.lanes) {
        lane.Reset();
        lane.Bind(1, id).Bind(2, int64_t{l.lane}).Bind(3, l.tx_power_mw).Bind(4, l.rx_power_mw);
        lane.Bind(5, l.bias_ma).Bind(6, l.rx_los).Bind(7, l.tx_los).Bind(8, l.tx_fault);
        lane.Bind(9, l.tx_disabled).Bind(10, l.raw_errors);
        lane.Step();
        Row();
      }
      for (Quantity q : kAllQuantities) {
        const Thresholds& t = r.thr(q);
        if (!t.Any()) continue;
        thr.Reset();
        thr.Bind(1, id).Bind(2, std::string(QuantityName(q))).Bind(3, t.high_alarm);
        thr.Bind(4, t.low_alarm).Bind(5, t.high_warning).Bind(6, t.low_warning);
        thr.Step();
        Row();
      }
    }
    Exec("COMMIT");
  } catch (const std::runtime_error& e) {
    char* err = nullptr;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, &err);
    sqlite3_free(err);
    Rethrow(e);
  } catch (...) {
    char* err = nullptr;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, &err);
    sqlite3_free(err);
    throw;
  }
  return rows_in_txn_;
}

void Store::Rethrow(const std::runtime_error& e) const {
  if (dynamic_cast<const InputError*>(&e) != nullptr) throw;
  throw InputError({path_, 0, "--db"}, fmt::format("optics database: {}", e.what()));
}

std::vector<std::string> Store::Links() const try {
  Stmt s(db_, "SELECT DISTINCT link FROM reading ORDER BY link");
  std::vector<std::string> out;
  while (s.Step()) out.push_back(s.Text(0));
  return out;
} catch (const std::runtime_error& e) {
  Rethrow(e);
}

int64_t Store::ReadingCount() const try {
  Stmt s(db_, "SELECT count(*) FROM reading");
  return s.Step() ? s.Int(0) : 0;
} catch (const std::runtime_error& e) {
  Rethrow(e);
}

std::vector<Reading> Store::History(const std::string& link) const try {
  std::vector<Reading> out;
  std::vector<int64_t> ids;
  std::vector<std::pair<int64_t, int64_t>> expected;  // lanes, thresholds
  {
    Stmt s(
        db_,
        "SELECT id, link, time_s, format, module_type, transceiver, copper, temperature_c, "
        "voltage_v, raw_ber, effective_ber, post_fec_errors, counters_age_s, link_down_count, "
        "speed, fec, troubleshooting, lane_count, threshold_count, port_state, dom_supported FROM "
        "reading WHERE link = ?1 "
        "ORDER BY time_s, format");
    s.Bind(1, link);
    while (s.Step()) {
      Reading r;
      ids.push_back(s.Int(0));
      r.link = s.Text(1);
      r.time_s = s.Int(2);
      r.format = s.Text(3);
      r.module_type = s.Text(4);
      r.transceiver = s.Text(5);
      r.copper = s.Int(6) != 0;
      r.temperature_c = s.OptDouble(7);
      r.voltage_v = s.OptDouble(8);
      r.raw_ber = s.OptDouble(9);
      r.effective_ber = s.OptDouble(10);
      r.post_fec_errors = s.OptInt(11);
      r.counters_age_s = s.OptDouble(12);
      r.link_down_count = s.OptInt(13);
      r.speed = s.Text(14);
      r.fec = s.Text(15);
      r.troubleshooting = s.Text(16);
      expected.emplace_back(s.Int(17), s.Int(18));
      r.port_state = s.Text(19);
      r.dom_supported = s.OptBool(20);
      out.push_back(std::move(r));
    }
  }
  Stmt lanes(db_,
             "SELECT lane, tx_power_mw, rx_power_mw, bias_ma, rx_los, tx_los, tx_fault, "
             "tx_disabled, raw_errors FROM lane WHERE reading_id = ?1 ORDER BY lane");
  Stmt thr(db_,
           "SELECT quantity, high_alarm, low_alarm, high_warning, low_warning FROM threshold "
           "WHERE reading_id = ?1");
  for (size_t i = 0; i < out.size(); ++i) {
    Reading& r = out[i];
    lanes.Reset();
    lanes.Bind(1, ids[i]);
    while (lanes.Step()) {
      LaneReading& l = r.Lane(static_cast<int>(lanes.Int(0)));
      l.tx_power_mw = lanes.OptDouble(1);
      l.rx_power_mw = lanes.OptDouble(2);
      l.bias_ma = lanes.OptDouble(3);
      l.rx_los = lanes.OptBool(4);
      l.tx_los = lanes.OptBool(5);
      l.tx_fault = lanes.OptBool(6);
      l.tx_disabled = lanes.OptBool(7);
      l.raw_errors = lanes.OptInt(8);
    }
    int64_t n_thr = 0;
    thr.Reset();
    thr.Bind(1, ids[i]);
    while (thr.Step()) {
      const std::string q = thr.Text(0);
      for (Quantity k : kAllQuantities) {
        if (QuantityName(k) != q) continue;
        Thresholds& t = r.thr(k);
        t.high_alarm = thr.OptDouble(1);
        t.low_alarm = thr.OptDouble(2);
        t.high_warning = thr.OptDouble(3);
        t.low_warning = thr.OptDouble(4);
        ++n_thr;
      }
    }
    if (static_cast<int64_t>(r.lanes.size()) != expected[i].first || n_thr != expected[i].second) {
      throw std::runtime_error(
          fmt::format("reading of {} at {} is incomplete ({} of {} lanes, {} of {} "
                      "threshold sets)",
                      r.link, FormatTimestamp(*r.time_s), r.lanes.size(), expected[i].first, n_thr,
                      expected[i].second));
    }
  }
  return out;
} catch (const std::runtime_error& e) {
  Rethrow(e);
}

std::string Store::IntegrityCheck() const {
  Stmt s(db_, "PRAGMA integrity_check");
  std::string out;
  while (s.Step()) {
    if (!out.empty()) out += "; ";
    out += s.Text(0);
  }
  return out;
}

}  // namespace lossless::audit::optics
