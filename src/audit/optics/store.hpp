#pragma once
// SQLite store of transceiver readings (schema in docs/optics.md).
//
// One Insert() call = one SQLite transaction: the readings of one input file
// are stored whole or not at all, also when the process dies mid-insert (the
// database runs in WAL mode with synchronous=FULL; an interrupted transaction
// is rolled back when the database is next opened). A reading with the same
// (link, time, format) as a stored one replaces it, so re-ingesting a file is
// idempotent.
//
// Errors, all InputError(path, field "--db"): a path that is not a SQLite
// database, a SQLite database of some other application, a database that
// fails PRAGMA quick_check on open (checked before anything is written, so a
// corrupt file is never written into), an empty or missing file in
// Mode::kExisting (left as it was: no schema is created), and SQLite failures
// while working (the message names the path).
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit/optics/reading.hpp"

struct sqlite3;

namespace lossless::audit::optics {

class Store {
 public:
  enum class Mode {
    kCreate,    // create the file and schema when missing
    kExisting,  // the database must exist (status, quarantine)
  };
  Store(const std::string& path, Mode mode);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Stores `readings` (each with link and time set) from input `file` in one
  // transaction. Returns the number of rows written.
  int64_t Insert(const std::string& file, const std::vector<Reading>& readings);

  // All link names, sorted.
  std::vector<std::string> Links() const;
  // A link's readings sorted by time (then format); empty for an unknown link.
  std::vector<Reading> History(const std::string& link) const;
  int64_t ReadingCount() const;

  // Result of PRAGMA integrity_check ("ok" when healthy).
  std::string IntegrityCheck() const;

  // Test seam: called inside the transaction after every row written, with the
  // number of rows written so far in this Insert().
  void SetRowHook(std::function<void(int64_t)> hook) { row_hook_ = std::move(hook); }

 private:
  void Exec(const char* sql) const;
  void Row();
  // Throws `e` again as an InputError naming the database (an InputError as is).
  [[noreturn]] void Rethrow(const std::runtime_error& e) const;

  std::string path_;
  sqlite3* db_ = nullptr;
  std::function<void(int64_t)> row_hook_;
  int64_t rows_in_txn_ = 0;
};

}  // namespace lossless::audit::optics
