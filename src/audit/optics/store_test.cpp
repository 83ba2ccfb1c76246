#include "audit/optics/store.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "audit/optics/ingest.hpp"
#include "audit/optics/test_util.hpp"

namespace lossless::audit::optics {
namespace {

using testing::ReadFixture;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lossless-optics-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "o.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<Reading> Parse(const std::string& fixture, int64_t at) {
    IngestOptions o;
    o.at = at;
    return ParseInput(ReadFixture(fixture), fixture, o);
  }

  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(StoreTest, RoundTripKeepsEveryField) {
  auto qsfp = Parse("qsfp28_los.txt", 100);
  auto mlx = Parse("mlxlink_healthy.txt", 200);
  mlx[0].link = qsfp[0].link;
  qsfp[0].dom_supported = true;
  ASSERT_EQ(mlx[0].port_state, "up");
  Store s(db_, Store::Mode::kCreate);
  EXPECT_EQ(s.Insert("a", qsfp), 1 + 4 + 5);  // reading + lanes + threshold sets
  s.Insert("b", mlx);
  auto h = s.History(qsfp[0].link);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], qsfp[0]);
  EXPECT_EQ(h[1], mlx[0]);
  EXPECT_EQ(s.Links(), std::vector<std::string>{"qsfp28_los"});
  EXPECT_EQ(s.IntegrityCheck(), "ok");
}

TEST_F(StoreTest, SchemaVersionOneIsUpgradedInPlace) {
  auto mlx = Parse("mlxlink_healthy.txt", 200);
  {
    Store s(db_, Store::Mode::kCreate);
    s.Insert("a", mlx);
  }
  {
    // Turn it back into a version-1 database: no port_state / dom_supported columns.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    for (const char* sql :
         {"ALTER TABLE reading DROP COLUMN port_state",
          "ALTER TABLE reading DROP COLUMN dom_supported", "PRAGMA user_version=1"}) {
      ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    }
    sqlite3_close(db);
  }
  Store s(db_, Store::Mode::kExisting);
  auto h = s.History(mlx[0].link);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].port_state, "");  // not said in version 1
  EXPECT_FALSE(h[0].dom_supported.has_value());
  EXPECT_EQ(h[0].lanes, mlx[0].lanes);
  s.Insert("b", Parse("mlxlink_healthy.txt", 300));
  EXPECT_EQ(s.History(mlx[0].link).back().port_state, "up");
  EXPECT_EQ(s.IntegrityCheck(), "ok");
}

TEST_F(StoreTest, SameLinkTimeFormatReplaces) {
  Store s(db_, Store::Mode::kCreate);
  auto r = Parse("qsfp28_healthy.txt", 100);
  s.Insert("a", r);
  r[0].temperature_c = 50.0;
  s.Insert("a", r);
  auto h = s.History(r[0].link);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_DOUBLE_EQ(*h[0].temperature_c, 50.0);
  EXPECT_EQ(s.ReadingCount(), 1);
}

TEST_F(StoreTest, RefusesForeignFiles) {
  { std::ofstream(dir_ / "text.db") << "hello, not a database at all, just some text\n"; }
  EXPECT_THROW(Store((dir_ / "text.db").string(), Store::Mode::kCreate), InputError);
  EXPECT_THROW(Store((dir_ / "missing.db").string(), Store::Mode::kExisting), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing.db"));
}

std::string FileBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Issue 16 item 12: an optics database with overwritten pages took new
// readings (exit 0) and failed later with "sqlite: database disk image is
// malformed", naming no file.
TEST_F(StoreTest, CorruptDatabaseIsRefusedWithItsPathAndNotWritten) {
  {
    Store s(db_, Store::Mode::kCreate);
    IngestOptions o;
    s.Insert("t", ParseInput(ReadFixture("telemetry_trend.csv"), "t.csv", o));
    s.Insert("q", Parse("qsfp28_healthy.txt", 100));
  }
  std::string bytes = FileBytes(db_);
  constexpr size_t kPage = 4096;  // SQLite's default page size
  ASSERT_GE(bytes.size(), 4 * kPage);
  // Overwrite the third page past its header: the schema and application id
  // on page 1 still read, the damage is in the data.
  std::fill(bytes.begin() + 2 * kPage + 100, bytes.begin() + 3 * kPage, '\x5a');
  { std::ofstream(db_, std::ios::binary | std::ios::trunc) << bytes; }
  for (auto mode : {Store::Mode::kCreate, Store::Mode::kExisting}) {
    try {
      Store s(db_, mode);
      ADD_FAILURE() << "a corrupt database was opened";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, db_);
      EXPECT_THAT(e.what(), ::testing::HasSubstr("corrupt"));
    }
  }
  EXPECT_EQ(FileBytes(db_), bytes);
  EXPECT_FALSE(std::filesystem::exists(db_ + "-wal") &&
               std::filesystem::file_size(db_ + "-wal") > 0);
}

TEST_F(StoreTest, ReadOnlyOpenOfAnEmptyFileWritesNothing) {
  { std::ofstream(db_, std::ios::binary | std::ios::trunc); }
  EXPECT_THROW(Store(db_, Store::Mode::kExisting), InputError);
  EXPECT_EQ(std::filesystem::file_size(db_), 0u);
  EXPECT_FALSE(std::filesystem::exists(db_ + "-wal"));
  // ingest (kCreate) may still start a database in an empty file.
  Store s(db_, Store::Mode::kCreate);
  EXPECT_EQ(s.ReadingCount(), 0);
}

TEST_F(StoreTest, FailedInsertRollsBack) {
  Store s(db_, Store::Mode::kCreate);
  auto r = Parse("qsfp28_healthy.txt", 100);
  s.SetRowHook([](int64_t rows) {
    if (rows == 3) throw std::runtime_error("boom");
  });
  EXPECT_THROW(s.Insert("a", r), std::runtime_error);
  EXPECT_EQ(s.ReadingCount(), 0);
}

// Kill-during-ingest: a child process dies (abort or SIGKILL) in the middle of
// the transaction; the parent reopens the database and must find the earlier
// file whole, nothing of the interrupted one, and a clean integrity check.
void KillDuringInsert(const std::string& db, const std::vector<Reading>& first,
                      const std::vector<Reading>& second, bool sigkill) {
  {
    Store s(db, Store::Mode::kCreate);
    s.Insert("first", first);
  }
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Store s(db, Store::Mode::kCreate);
    s.SetRowHook([sigkill](int64_t rows) {
      if (rows < 5) return;
      if (sigkill) ::kill(::getpid(), SIGKILL);
      std::abort();
    });
    s.Insert("second", second);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), sigkill ? SIGKILL : SIGABRT);

  Store s(db, Store::Mode::kExisting);
  EXPECT_EQ(s.IntegrityCheck(), "ok");
  EXPECT_EQ(s.ReadingCount(), static_cast<int64_t>(first.size()));
  auto h = s.History(first[0].link);
  ASSERT_EQ(h.size(), first.size());
  EXPECT_EQ(h[0], first[0]);
  EXPECT_TRUE(s.History(second[0].link).empty());
}

TEST_F(StoreTest, KillDuringIngestAbortLeavesNoPartialReading) {
  auto first = Parse("qsfp28_healthy.txt", 100);
  auto second = Parse("qsfpdd_healthy.txt", 200);
  KillDuringInsert(db_, first, second, /*sigkill=*/false);
}

TEST_F(StoreTest, KillDuringIngestSigkillLeavesNoPartialReading) {
  auto first = Parse("mlxlink_healthy.txt", 100);
  IngestOptions o;
  auto second = ParseInput(ReadFixture("telemetry_trend.csv"), "t.csv", o);
  KillDuringInsert(db_, first, second, /*sigkill=*/true);
}

}  // namespace
}  // namespace lossless::audit::optics
