#include "units/units.hpp"

#include <gtest/gtest.h>

namespace lossless::units {
namespace {

const Location kWhere{"test.yaml", 3, "link.rate"};

TEST(Units, ParseTimeExactDecimal) {
  EXPECT_EQ(ParseTime("1.5us", kWhere).ps(), 1'500'000);
  EXPECT_EQ(ParseTime("500ns", kWhere).ps(), 500'000);
  EXPECT_EQ(ParseTime("80.04ns", kWhere).ps(), 80'040);
  EXPECT_EQ(ParseTime("2ms", kWhere).ps(), 2'000'000'000);
  EXPECT_EQ(ParseTime("1s", kWhere).ps(), 1'000'000'000'000);
  EXPECT_EQ(ParseTime("7ps", kWhere).ps(), 7);
  EXPECT_EQ(ParseTime(" 0.000001s ", kWhere).ps(), 1'000'000);
}

TEST(Units, ParseTimeRejectsBadStrings) {
  for (const char* bad : {"", "us", "1.5", "1.5 parsecs", "-1us", "0.5ps", "1..5us", "abc", "1e3ns",
                          "99999999999999999999s"}) {
    EXPECT_THROW(ParseTime(bad, kWhere), InputError) << bad;
  }
}

// Found by topology_file_fuzz under UBSan: a run of leading zeros after the
// point overflowed 10^frac_digits in 128 bits; so could 30-digit mantissas
// times TiB. Both are one clear error now.
TEST(Units, AbsurdlyLongNumbersAreBadInputNotOverflow) {
  const std::string zeros = "0." + std::string(60, '0') + "1";
  EXPECT_THROW(ParseTime(zeros + "s", kWhere), InputError);
  EXPECT_THROW(ParseBytes(std::string(30, '9') + "TiB", kWhere), InputError);
  EXPECT_THROW(ParseRate(std::string(26, '1') + "Tbps", kWhere), InputError);
  EXPECT_EQ(ParseTime("0.000000000001s", kWhere).ps(), 1);  // 13 digits: fine
}

TEST(Units, ErrorNamesFileLineAndField) {
  try {
    ParseTime("fast", kWhere);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "test.yaml:3: link.rate: expected a time such as 1.5us, got \"fast\"");
  }
}

TEST(Units, ParseBytes) {
  EXPECT_EQ(ParseBytes("9KiB", kWhere).count(), 9216);
  EXPECT_EQ(ParseBytes("4096", kWhere).count(), 4096);
  EXPECT_EQ(ParseBytes("64MiB", kWhere).count(), 64 << 20);
  EXPECT_EQ(ParseBytes("1.5KB", kWhere).count(), 1500);
  EXPECT_EQ(ParseBytes("8M", kWhere).count(), 8 << 20);  // nccl-tests style
  EXPECT_EQ(ParseBytes("0", kWhere).count(), 0);
  for (const char* bad : {"-1", "1.5", "9kib", "12 apples", "KiB", "0.1B"}) {
    EXPECT_THROW(ParseBytes(bad, kWhere), InputError) << bad;
  }
}

TEST(Units, ParseRate) {
  EXPECT_EQ(ParseRate("400Gbps", kWhere).bps(), 400'000'000'000);
  EXPECT_EQ(ParseRate("400G", kWhere).bps(), 400'000'000'000);
  EXPECT_EQ(ParseRate("1.6Tbps", kWhere).bps(), 1'600'000'000'000);
  EXPECT_EQ(ParseRate("50GB/s", kWhere).bps(), 400'000'000'000);
  EXPECT_EQ(ParseRate("100Mb/s", kWhere).bps(), 100'000'000);
  for (const char* bad : {"0Gbps", "0", "-400Gbps", "fast", "400 gbit", "0.0000000001bps"}) {
    EXPECT_THROW(ParseRate(bad, kWhere), InputError) << bad;
  }
}

TEST(Units, SerializationTimeIsExact) {
  // docs/model/framing.md#time-per-byte: 1 byte at 800 Gb/s is 10 ps, 20 ps at 400G.
  EXPECT_EQ(SerializationTime(Bytes(1), Rate::Gbps(800)).ps(), 10);
  EXPECT_EQ(SerializationTime(Bytes(1), Rate::Gbps(400)).ps(), 20);
  // docs/model/ls-ring.md: a 4002-byte frame at 400G is 80.04 ns.
  EXPECT_EQ(SerializationTime(Bytes(4002), Rate::Gbps(400)).ps(), 80'040);
  // RoCE v2 4096-B payload occupies 4,178 B of wire time: 83.56 ns at 400G.
  EXPECT_EQ(SerializationTime(Bytes(4178), Rate::Gbps(400)).ps(), 83'560);
  // Rounding rule: ceil. 1 byte at 3 bit/s = 8/3 s -> rounds up.
  EXPECT_EQ(SerializationTime(Bytes(1), Rate::Bps(3)).ps(), 2'666'666'666'667);
  // IB FDR 54.5 Gb/s: 4122 B -> 605.0641... ns -> rounds up to 605065 ps.
  EXPECT_EQ(SerializationTime(Bytes(4122), Rate::Bps(54'500'000'000)).ps(), 605'065);
  EXPECT_EQ(SerializationTime(Bytes(0), Rate::Gbps(400)).ps(), 0);
}

// The inline 64-bit quotient and the 128-bit one agree on both sides of the
// fast path's bounds (bytes 2,000,000, rate 10^18 bit/s) and at odd rates.
TEST(Units, SerializationTimeFastPathEqualsWide) {
  const int64_t sizes[] = {0,         1,         63,        4096,      4178,
                           1'048'576, 1'999'999, 2'000'000, 2'000'001, 1'073'741'824};
  const int64_t rates[] = {1,
                           3,
                           54'500'000'000,
                           400'000'000'000,
                           1'600'000'000'000,
                           999'999'999'999'999'999,
                           1'000'000'000'000'000'000,
                           1'000'000'000'000'000'001,
                           INT64_MAX};
  for (int64_t b : sizes)
    for (int64_t r : rates) {
      if (r < 1'000'000 && b > 1'000'000) continue;  // beyond int64 picoseconds
      EXPECT_EQ(SerializationTime(Bytes(b), Rate::Bps(r)),
                SerializationTimeWide(Bytes(b), Rate::Bps(r)))
          << b << " B at " << r << " bit/s";
    }
  EXPECT_EQ(SerializationTime(Bytes(1'999'999), Rate::Bps(INT64_MAX)).ps(), 2);
}

TEST(Units, BytesInTimeAndCable) {
  EXPECT_EQ(BytesInTime(Time::Ns(1), Rate::Gbps(400)).count(), 50);
  EXPECT_EQ(CableDelay(100).ps(), 500'000);
  EXPECT_EQ(CableDelay(2.5).ps(), 12'500);
}

TEST(Units, FormatRoundTrips) {
  EXPECT_EQ(FormatTime(Time::Ns(1500)), "1.5us");
  EXPECT_EQ(FormatTime(Time::Ps(1'356'595'960)), "1.35659596ms");
  EXPECT_EQ(FormatTime(Time::Ps(7)), "7ps");
  EXPECT_EQ(FormatTime(Time::Ps(0)), "0ps");
  EXPECT_EQ(FormatBytes(Bytes::KiB(9)), "9KiB");
  EXPECT_EQ(FormatBytes(Bytes(1000)), "1000B");
  EXPECT_EQ(FormatRate(Rate::Gbps(400)), "400Gbps");
  EXPECT_EQ(FormatRate(Rate::Bps(54'500'000'000)), "54.5Gbps");
  for (const char* s : {"1.5us", "80.04ns", "3ms", "1.35659596ms"}) {
    EXPECT_EQ(FormatTime(ParseTime(s, kWhere)), s);
  }
}

}  // namespace
}  // namespace lossless::units
