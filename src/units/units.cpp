#include "units/units.hpp"

#include "base/text.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace lossless::units {
namespace {

__extension__ using I128 = __int128;

struct Unit {
  std::string_view name;
  I128 scale;  // base units per 1 of this unit
};

// A decimal number split into integer mantissa and power-of-ten exponent:
// value = mantissa · 10^-frac_digits.
struct Decimal {
  I128 mantissa = 0;
  int frac_digits = 0;
  bool negative = false;
};

bool ParseDecimal(std::string_view s, Decimal& out, std::string_view& rest) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    out.negative = s[i] == '-';
    ++i;
  }
  bool digits = false, dot = false;
  int ndigits = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      digits = true;
      // Absurdly long (leading zeros count: "0.000...1" grows 10^frac_digits).
      // 25 digits keep mantissa x the largest unit (TiB, 1.1e12) and
      // 10^frac_digits inside 128 bits.
      if (++ndigits > 25) return false;
      out.mantissa = out.mantissa * 10 + (c - '0');
      if (dot) ++out.frac_digits;
    } else if (c == '.' && !dot) {
      dot = true;
    } else if (c == '_' || c == '\'') {
      continue;  // digit separators: 1_000_000
    } else {
      break;
    }
  }
  if (!digits) return false;
  rest = s.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return true;
}

// Parse "<decimal><unit>" into an exact integer count of base units.
template <size_t N>
I128 ParseQuantity(std::string_view text, const Location& where, const Unit (&units)[N],
                   bool bare_ok, const char* what) {
  std::string_view s = text::Trim(text, " \t");
  Decimal d;
  std::string_view rest;
  if (!ParseDecimal(s, d, rest)) throw InputError(where, Expected(what, std::string(text)));
  const Unit* unit = nullptr;
  if (rest.empty()) {
    if (!bare_ok)
      throw InputError(where,
                       Expected(std::string(what) + " (a unit is required)", std::string(text)));
    static constexpr Unit kOne{"", 1};
    unit = &kOne;
  } else {
    for (const Unit& u : units)
      if (u.name == rest) unit = &u;
    if (unit == nullptr) throw InputError(where, Expected(what, std::string(text)));
  }
  if (d.negative)
    throw InputError(where, Expected(std::string(what) + " (not negative)", std::string(text)));
  I128 pow10 = 1;
  for (int k = 0; k < d.frac_digits; ++k) pow10 *= 10;
  I128 num = d.mantissa * unit->scale;
  if (num % pow10 != 0) {
    throw InputError(where, Expected(std::string(what) + " that is a whole number of base units",
                                     std::string(text)));
  }
  I128 v = num / pow10;
  if (v > INT64_MAX)
    throw InputError(where, Expected(std::string(what) + " within range", std::string(text)));
  return v;
}

constexpr I128 kPsPerS = 1000'000'000'000;

std::string TrimZeros(I128 whole, I128 frac, int digits) {
  std::string s = fmt::format("{}", static_cast<int64_t>(whole));
  if (frac == 0) return s;
  std::string f = fmt::format("{:0{}}", static_cast<int64_t>(frac), digits);
  while (!f.empty() && f.back() == '0') f.pop_back();
  return s + "." + f;
}

}  // namespace

Time SerializationTimeWide(Bytes bytes, Rate rate) {
  I128 num = I128(bytes.count()) * 8 * kPsPerS;
  I128 r = rate.bps();
  return Time::Ps(static_cast<int64_t>((num + r - 1) / r));
}

Bytes BytesInTime(Time t, Rate rate) {
  I128 bits = I128(t.ps()) * rate.bps() / kPsPerS;
  return Bytes(static_cast<int64_t>(bits / 8));
}

Time CableDelay(double metres) {
  return Time::Ps(std::llround(metres * 5000.0));
}

Time ParseTime(std::string_view text, const Location& where) {
  static constexpr Unit kUnits[] = {
      {"ps", 1},     {"ns", 1000}, {"us", 1000'000}, {"\xC2\xB5s", 1000'000}, {"ms", 1000'000'000},
      {"s", kPsPerS}};
  return Time::Ps(
      static_cast<int64_t>(ParseQuantity(text, where, kUnits, false, "a time such as 1.5us")));
}

Bytes ParseBytes(std::string_view text, const Location& where) {
  static constexpr I128 kKi = 1024;
  static constexpr Unit kUnits[] = {{"B", 1},
                                    {"KB", 1000},
                                    {"MB", 1000'000},
                                    {"GB", 1000'000'000},
                                    {"TB", 1000'000'000'000},
                                    {"KiB", kKi},
                                    {"MiB", kKi * kKi},
                                    {"GiB", kKi * kKi * kKi},
                                    {"TiB", kKi * kKi * kKi * kKi},
                                    {"K", kKi},
                                    {"M", kKi * kKi},
                                    {"G", kKi * kKi * kKi},
                                    {"T", kKi * kKi * kKi * kKi}};
  return Bytes(
      static_cast<int64_t>(ParseQuantity(text, where, kUnits, true, "a size such as 9KiB")));
}

Rate ParseRate(std::string_view text, const Location& where) {
  static constexpr Unit kUnits[] = {{"bps", 1},
                                    {"b/s", 1},
                                    {"Kbps", 1000},
                                    {"Kb/s", 1000},
                                    {"K", 1000},
                                    {"Mbps", 1000'000},
                                    {"Mb/s", 1000'000},
                                    {"M", 1000'000},
                                    {"Gbps", 1000'000'000},
                                    {"Gb/s", 1000'000'000},
                                    {"G", 1000'000'000},
                                    {"Tbps", 1000'000'000'000},
                                    {"Tb/s", 1000'000'000'000},
                                    {"T", 1000'000'000'000},
                                    {"MB/s", 8'000'000},
                                    {"GB/s", 8'000'000'000}};
  I128 v = ParseQuantity(text, where, kUnits, true, "a rate such as 400Gbps");
  if (v <= 0) throw InputError(where, Expected("a rate above zero", std::string(text)));
  return Rate::Bps(static_cast<int64_t>(v));
}

std::string FormatTime(Time t) {
  I128 ps = t.ps();
  std::string sign = ps < 0 ? "-" : "";
  if (ps < 0) ps = -ps;
  struct U {
    const char* name;
    I128 scale;
    int digits;
  };
  static constexpr U kUnits[] = {
      {"s", kPsPerS, 12}, {"ms", 1000'000'000, 9}, {"us", 1000'000, 6}, {"ns", 1000, 3}};
  for (const U& u : kUnits) {
    if (ps >= u.scale) return sign + TrimZeros(ps / u.scale, ps % u.scale, u.digits) + u.name;
  }
  return sign + fmt::format("{}ps", static_cast<int64_t>(ps));
}

std::string FormatBytes(Bytes b) {
  int64_t v = b.count();
  struct U {
    const char* name;
    int64_t scale;
  };
  static constexpr U kUnits[] = {
      {"TiB", 1LL << 40}, {"GiB", 1LL << 30}, {"MiB", 1LL << 20}, {"KiB", 1LL << 10}};
  for (const U& u : kUnits) {
    if (v != 0 && v % u.scale == 0) return fmt::format("{}{}", v / u.scale, u.name);
  }
  return fmt::format("{}B", v);
}

std::string FormatRate(Rate r) {
  I128 v = r.bps();
  struct U {
    const char* name;
    I128 scale;
    int digits;
  };
  static constexpr U kUnits[] = {{"Tbps", 1000'000'000'000, 12},
                                 {"Gbps", 1000'000'000, 9},
                                 {"Mbps", 1000'000, 6},
                                 {"Kbps", 1000, 3}};
  for (const U& u : kUnits) {
    if (v >= u.scale) return TrimZeros(v / u.scale, v % u.scale, u.digits) + u.name;
  }
  return fmt::format("{}bps", static_cast<int64_t>(v));
}

}  // namespace lossless::units
