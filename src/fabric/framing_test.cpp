#include "fabric/framing.hpp"

#include <gtest/gtest.h>

#include "fabric/frame_time.hpp"
#include "units/units.hpp"

namespace lossless::fabric {
namespace {

// docs/model/framing.md: per-packet overhead of each fabric.
TEST(Framing, InfiniBandLocalIs26BytesAnd4122OnTheWire) {
  Framing ib = Framing::InfiniBand(4096);
  EXPECT_EQ(ib.FrameBytes(4096), 4122);
  EXPECT_EQ(ib.WireBytes(4096), 4122);  // no preamble or idles counted
  EXPECT_EQ(Framing::InfiniBand(4096, /*grh=*/true).WireBytes(4096), 4096 + 66);
  // 4122 B is 65 credits of 64 B (docs/model/framing.md#wire-efficiency).
  EXPECT_EQ((ib.FrameBytes(4096) + 63) / 64, 65);
}

TEST(Framing, RoceV2Is62ByteFramePlus20OnTheWire) {
  Framing roce = Framing::RoceV2(4096);
  EXPECT_EQ(roce.FrameBytes(4096), 4158);
  EXPECT_EQ(roce.WireBytes(4096), 4178);
  EXPECT_EQ(Framing::RoceV2(4096, /*vlan_tag=*/true).WireBytes(4096), 4182);
  // 400G: 4178 B take 83.56 ns of link time; IB's 4122 B take 82.44 ns.
  EXPECT_EQ(
      units::SerializationTime(units::Bytes(roce.WireBytes(4096)), units::Rate::Gbps(400)).ps(),
      83'560);
  EXPECT_EQ(units::SerializationTime(units::Bytes(Framing::InfiniBand().WireBytes(4096)),
                                     units::Rate::Gbps(400))
                .ps(),
            82'440);
}

TEST(Framing, WireEfficiencyTableOfFabricMd) {
  // payload / (payload + overhead) for 256 B: IB 90.78 %, RoCE 75.74 %
  // (docs/model/framing.md#wire-efficiency).
  auto eff = [](const Framing& f, int p) {
    return 100.0 * p / static_cast<double>(f.WireBytes(p));
  };
  EXPECT_NEAR(eff(Framing::InfiniBand(256), 256), 90.78, 0.005);
  EXPECT_NEAR(eff(Framing::RoceV2(256), 256), 75.74, 0.005);
  EXPECT_NEAR(eff(Framing::InfiniBand(4096), 4096), 99.37, 0.005);
  EXPECT_NEAR(eff(Framing::RoceV2(4096), 4096), 98.04, 0.005);
}

TEST(Framing, PacketCountsAndMtus) {
  Framing f = Framing::Raw(3972, 30);
  EXPECT_EQ(f.Packets(64 << 20), 16896);  // docs/model/ls-ring.md: M for 64 MiB
  EXPECT_EQ(f.Packets(16 << 20), 4224);
  EXPECT_EQ(f.Packets(1), 1);
  EXPECT_EQ(f.WireBytes(3972), 4002);
  EXPECT_TRUE(IsRdmaMtu(4096));
  EXPECT_FALSE(IsRdmaMtu(9000));
}

TEST(Framing, FrameTimeIsTheSerializationTimeToThePicosecond) {
  // The packet path's 64-bit division against the 128-bit one, on every
  // frame size up to 64 KiB and the odd and standard rates (whose quotients
  // are not whole picoseconds), and past the 64-bit range (the fallback).
  for (const int64_t bps :
       {int64_t{1}, int64_t{999'999'937}, int64_t{25'781'250'000}, int64_t{100'000'000'000},
        int64_t{400'000'000'000}, int64_t{800'000'000'000}, int64_t{1'600'000'000'000}}) {
    for (int64_t bytes = 0; bytes <= 65'536; bytes += bytes < 256 ? 1 : 61)
      ASSERT_EQ(FrameTimePs(bytes, bps),
                units::SerializationTime(units::Bytes(bytes), units::Rate::Bps(bps)).ps())
          << bytes << " B at " << bps << " b/s";
    for (const int64_t big : {int64_t{1'999'999}, int64_t{2'000'000}, int64_t{1} << 40})
      EXPECT_EQ(FrameTimePs(big, bps),
                units::SerializationTime(units::Bytes(big), units::Rate::Bps(bps)).ps());
  }
  EXPECT_EQ(FrameTimePs(4096, 400'000'000'000), 81'920);
}

}  // namespace
}  // namespace lossless::fabric
