#include "base/text.hpp"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace lossless::text {
namespace {

using Views = std::vector<std::string_view>;

TEST(TextTest, IsSpaceDefaultIsCLocaleWhitespace) {
  for (char c : {' ', '\t', '\n', '\v', '\f', '\r'}) EXPECT_TRUE(IsSpace(c)) << int(c);
  for (char c : {'a', '0', '\0', '_', '\x1b', '\xa0'}) EXPECT_FALSE(IsSpace(c)) << int(c);
}

TEST(TextTest, IsSpaceWithOwnSet) {
  EXPECT_FALSE(IsSpace('\n', kLineBlanks));
  EXPECT_TRUE(IsSpace('\r', kLineBlanks));
  EXPECT_TRUE(IsSpace('\t', " \t"));
  EXPECT_FALSE(IsSpace('\r', " \t"));
  EXPECT_FALSE(IsSpace(' ', ""));
}

TEST(TextTest, Trim) {
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\r\n\v\f"), "");
  EXPECT_EQ(Trim("abc"), "abc");
  EXPECT_EQ(Trim("  a b\t"), "a b");
  EXPECT_EQ(Trim("value\r"), "value");
  EXPECT_EQ(Trim("\ta\tb\t"), "a\tb");
}

TEST(TextTest, TrimWithOwnSetKeepsOtherBytes) {
  EXPECT_EQ(Trim(" x\f ", " \t\r"), "x\f");
  EXPECT_EQ(Trim("\nx\r", kLineBlanks), "\nx");
  EXPECT_EQ(Trim("x", ""), "x");
}

TEST(TextTest, TrimReturnsViewIntoArgument) {
  std::string_view s = "  ab  ";
  std::string_view t = Trim(s);
  EXPECT_EQ(t.data(), s.data() + 2);
  EXPECT_EQ(t.size(), 2u);
}

TEST(TextTest, SplitWhitespace) {
  EXPECT_EQ(SplitWhitespace(""), Views{});
  EXPECT_EQ(SplitWhitespace(" \t \r\n"), Views{});
  EXPECT_EQ(SplitWhitespace("one"), (Views{"one"}));
  EXPECT_EQ(SplitWhitespace("  a  bb\tccc\r\n"), (Views{"a", "bb", "ccc"}));
  EXPECT_EQ(SplitWhitespace("a\vb\fc"), (Views{"a", "b", "c"}));
}

TEST(TextTest, SplitWhitespaceWithOwnSet) {
  EXPECT_EQ(SplitWhitespace("a\rb c", " \t"), (Views{"a\rb", "c"}));
  EXPECT_EQ(SplitWhitespace("a\nb c", kLineBlanks), (Views{"a\nb", "c"}));
  EXPECT_EQ(SplitWhitespace("a b", ""), (Views{"a b"}));
}

TEST(TextTest, StartsWith) {
  EXPECT_TRUE(StartsWith("", ""));
  EXPECT_TRUE(StartsWith("abc", ""));
  EXPECT_TRUE(StartsWith("abc", "ab"));
  EXPECT_TRUE(StartsWith("abc", "abc"));
  EXPECT_FALSE(StartsWith("ab", "abc"));
  EXPECT_FALSE(StartsWith("", "a"));
  EXPECT_FALSE(StartsWith("Abc", "ab"));
}

TEST(TextTest, ToLower) {
  EXPECT_EQ(ToLower(""), "");
  EXPECT_EQ(ToLower("MiXeD 123 _-Z"), "mixed 123 _-z");
  EXPECT_EQ(ToLower("\xc3\x89"), "\xc3\x89");  // non-ASCII bytes unchanged
}

TEST(TextTest, StripAnsi) {
  EXPECT_EQ(StripAnsi(""), "");
  EXPECT_EQ(StripAnsi("plain"), "plain");
  EXPECT_EQ(StripAnsi("\x1b[1;31mred\x1b[0m"), "red");
  EXPECT_EQ(StripAnsi("a\x1b[mb"), "ab");
  EXPECT_EQ(StripAnsi("tail\x1b[12"), "tail\x1b[12");  // unterminated: kept
  EXPECT_EQ(StripAnsi("lone\x1b"), "lone\x1b");
}

TEST(Text, OneLineEscapesEveryControlCharacter) {
  EXPECT_EQ(OneLine("plain text: 42 B"), "plain text: 42 B");
  EXPECT_EQ(OneLine("unknown escape character: \n"), "unknown escape character: \\n");
  EXPECT_EQ(OneLine("a\rb\tc\x01"
                    "d\x7f\x1b"),
            "a\\rb\\tc\\x01d\\x7f\\x1b");
  EXPECT_EQ(OneLine(std::string_view("\0", 1)), "\\x00");
  EXPECT_EQ(OneLine("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 stays as it is
}

TEST(Text, ForTerminalKeepsLineFeedsAndEscapesTheRest) {
  EXPECT_EQ(ForTerminal("a\x1b[31mred\rb\n\tc\n"), "a\\x1b[31mred\\rb\n\\tc\n");
  EXPECT_EQ(ForTerminal("plain\n"), "plain\n");
  EXPECT_EQ(ForTerminal("\x7f"), "\\x7f");
}

}  // namespace
}  // namespace lossless::text
