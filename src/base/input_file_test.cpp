#include "base/input_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless {
namespace {

class InputFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lossless_input_file_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

std::string ErrorOf(const std::string& path, size_t max = kMaxInputBytes) {
  try {
    ReadTextInput(path, "a scenario", max);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_F(InputFileTest, ReadsTextWhole) {
  const std::string text = "name: x\nseed: 2\n";
  EXPECT_EQ(ReadTextInput(Write("a.yaml", text), "a scenario"), text);
}

TEST_F(InputFileTest, StopsAtTheSizeLimit) {
  // 3 blocks of text against a limit of one block and a bit.
  const std::string path = Write("big.yaml", std::string(3 * kFirstBlockBytes, 'x'));
  EXPECT_EQ(ErrorOf(path, kFirstBlockBytes + 10),
            path + ": expected a scenario of at most 65546 B, got more (reading stopped there)");
  EXPECT_EQ(ReadTextInput(path, "a scenario", 3 * kFirstBlockBytes).size(), 3 * kFirstBlockBytes);
}

// /dev/zero never ends: the first block decides, so this returns at once.
TEST_F(InputFileTest, DevZeroIsBinaryAtTheFirstBlock) {
  EXPECT_EQ(ErrorOf("/dev/zero"), "/dev/zero:1: binary data (NUL byte): expected a scenario");
}

TEST_F(InputFileTest, NulNamesItsLine) {
  const std::string path = Write("nul.yaml", std::string("a: 1\nb: 2\nc\0d\n", 14));
  EXPECT_EQ(ErrorOf(path), path + ":3: binary data (NUL byte): expected a scenario");
}

TEST_F(InputFileTest, Utf16GetsAHint) {
  const std::string bom = Write("bom.yaml", std::string("\xff\xfen\0a\0m\0e\0", 10));
  EXPECT_NE(ErrorOf(bom).find(":1: UTF-16 text: expected UTF-8 or ASCII"), std::string::npos)
      << ErrorOf(bom);
  std::string le;
  for (char c : std::string("name: x\nseed: 2\n")) le += std::string{c, '\0'};
  EXPECT_NE(ErrorOf(Write("le.yaml", le)).find("UTF-16 text"), std::string::npos);
}

TEST_F(InputFileTest, DirectoryAndMissingFile) {
  EXPECT_EQ(ErrorOf(dir_.string()), dir_.string() + ": is a directory: expected a scenario");
  EXPECT_EQ(ErrorOf((dir_ / "none.yaml").string()),
            (dir_ / "none.yaml").string() + ": cannot open: No such file or directory");
}

// Issue 16, item 21: a command that reads its "-" input twice (a profile
// validated then sized; compare's --scenario once per profile) got an empty
// stream the second time ("expected a scenario, got an empty file").
TEST_F(InputFileTest, StandardInputIsReadOnceAndKept) {
  const std::string path = Write("in.yaml", "name: from-stdin\n");
  ASSERT_NE(std::freopen(path.c_str(), "rb", stdin), nullptr);
  EXPECT_EQ(ReadTextInput("-", "a profile"), "name: from-stdin\n");
  EXPECT_EQ(ReadTextInput("-", "a scenario"), "name: from-stdin\n");
  EXPECT_EQ(ErrorOf("-", 4), "-: expected a scenario of at most 4 B, got more");
}

TEST(FormatByteLimit, PicksTheLargestExactUnit) {
  EXPECT_EQ(FormatByteLimit(64u << 20), "64 MiB");
  EXPECT_EQ(FormatByteLimit(1024), "1 KiB");
  EXPECT_EQ(FormatByteLimit(1000), "1000 B");
}

}  // namespace
}  // namespace lossless
