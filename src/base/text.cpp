#include "base/text.hpp"

namespace lossless::text {

bool IsSpace(char c, std::string_view blanks) {
  return blanks.find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s, std::string_view blanks) {
  while (!s.empty() && IsSpace(s.front(), blanks)) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back(), blanks)) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitWhitespace(std::string_view s, std::string_view blanks) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i], blanks)) ++i;
    size_t j = i;
    while (j < s.size() && !IsSpace(s[j], blanks)) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string StripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';')) ++j;
      if (j < s.size()) {
        i = j;  // skip the final byte too
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

namespace {
std::string Escape(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 0x20 && c != 0x7f) || (keep_newlines && c == '\n')) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}
}  // namespace

std::string OneLine(std::string_view s) {
  return Escape(s, false);
}

std::string ForTerminal(std::string_view s) {
  return Escape(s, true);
}

}  // namespace lossless::text
