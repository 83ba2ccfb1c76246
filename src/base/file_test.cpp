// WriteFileAtomically: the whole text or nothing, an old file kept on failure.
#include "base/file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace lossless {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class WriteFileAtomicallyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lossless-file-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  size_t Entries() const {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  fs::path dir_;
};

TEST_F(WriteFileAtomicallyTest, WritesAndReplacesWithReadableMode) {
  const std::string path = (dir_ / "out.html").string();
  WriteFileAtomically(path, "first", {path, 0, "-o"});
  EXPECT_EQ(Read(path), "first");
  WriteFileAtomically(path, std::string(100000, 'x'), {path, 0, "-o"});
  EXPECT_EQ(Read(path), std::string(100000, 'x'));
  EXPECT_EQ(Entries(), 1u);  // no temporary file left
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(WriteFileAtomicallyTest, FailureNamesThePathAndKeepsTheOldFile) {
  const std::string missing = (dir_ / "no" / "such" / "out.html").string();
  try {
    WriteFileAtomically(missing, "x", {missing, 0, "-o"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              missing + ": -o: cannot write the file: No such file or directory");
  }
  // A folder in the way: the rename fails, the temporary file goes.
  const fs::path folder = dir_ / "taken";
  fs::create_directories(folder / "inside");
  EXPECT_THROW(WriteFileAtomically(folder.string(), "x", {folder.string(), 0, ""}), InputError);
  EXPECT_TRUE(fs::is_directory(folder / "inside"));
  EXPECT_EQ(Entries(), 1u);
}

// A device is written in place, never replaced: renaming a temporary file
// over /dev/full (as root) replaced the device with a regular file.
TEST(WriteOutputTest, DevicesAreWrittenInPlaceAndWriteErrorsThrow) {
  WriteFileAtomically("/dev/null", "text", {"/dev/null", 0, "--json"});
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  try {
    WriteOutput("/dev/full", "text", {"/dev/full", 0, "--json"});
    ADD_FAILURE() << "no error writing /dev/full";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/dev/full: --json: cannot write the file: No space left on device");
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  EXPECT_NO_THROW(CheckOutputPath("/dev/null", {"/dev/null", 0, "-o"}));
  EXPECT_NO_THROW(CheckOutputPath("-", {"-", 0, "-o"}));
}

TEST_F(WriteFileAtomicallyTest, CheckOutputPathRefusesFoldersAndMissingFolders) {
  auto message = [](const std::string& path) {
    try {
      CheckOutputPath(path, {path, 0, "-o"});
    } catch (const InputError& e) {
      return std::string(e.message());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(dir_.string()), "cannot write the file: it is a folder");
  EXPECT_EQ(message((dir_ / "none" / "x.json").string()),
            "cannot write the file: No such file or directory");
  EXPECT_EQ(message((dir_ / "x.json").string()), "no error");
  EXPECT_EQ(Entries(), 0u);  // the check leaves nothing behind
}

// OutputStream: pieces go to a hidden temporary file, renamed over the
// path at Commit(); without Commit() nothing is left and an old file stays.
TEST_F(WriteFileAtomicallyTest, OutputStreamCommitsWholeOrLeavesTheOldFile) {
  const fs::path p = dir_ / "cap.pcapng";
  {
    OutputStream out(p.string(), Location{p.string(), 0, "outputs.pcap"});
    out.Write("abc");
    out.Write("def");
    EXPECT_FALSE(fs::exists(p));
    EXPECT_EQ(Entries(), 1u);  // the temporary file
    out.Commit();
  }
  EXPECT_EQ(Read(p), "abcdef");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  {
    OutputStream out(p.string(), Location{p.string(), 0, "outputs.pcap"});
    out.Write("partial");
  }
  EXPECT_EQ(Read(p), "abcdef");
  EXPECT_EQ(Entries(), 1u);
  EXPECT_THROW(OutputStream((dir_ / "no" / "x").string(), Location{"x", 0, "outputs.pcap"}),
               InputError);
}

}  // namespace
}  // namespace lossless
