#include "capture/frames.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "capture/pcapng.hpp"
#include "capture/trace_recorder.hpp"

namespace lossless::capture {
namespace {

uint8_t At(const std::string& s, size_t i) {
  return static_cast<uint8_t>(s[i]);
}
uint32_t Be16(const std::string& s, size_t i) {
  return (At(s, i) << 8) | At(s, i + 1);
}
uint32_t Le32(const std::string& s, size_t i) {
  return At(s, i) | (At(s, i + 1) << 8) | (At(s, i + 2) << 16) | (uint32_t{At(s, i + 3)} << 24);
}

// The bytes of a `tcpdump -xx`-style hex dump ("0x0000:  e41d 2dab ...").
std::string ReadHexcap(const std::string& path) {
  std::ifstream in(path);
  std::string line, out;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;)
      for (size_t i = 0; i + 1 < w.size(); i += 2)
        out.push_back(static_cast<char>(std::stoi(w.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST(Frames, Crc32HasTheIeeeCheckValue) {
  EXPECT_EQ(~Crc32Update(0xFFFFFFFFu, "123456789"), 0xCBF43926u);  // the CRC-32 check value
}

// A CNP a ConnectX-4 Lx sent (tests/fixtures/real/SOURCES.md): the IPv4
// checksum and the ICRC computed here equal the adapter's.
TEST(Frames, IcrcAndIpChecksumMatchAConnectX4LxCnp) {
  const std::string pkt = ReadHexcap(std::string(LOSSLESS_SOURCE_DIR) +
                                     "/tests/fixtures/real/capture/roce_cnp_connectx4lx.hexcap");
  ASSERT_EQ(pkt.size(), 74u);
  std::string header = pkt.substr(14, 20);
  EXPECT_EQ(Be16(header, 10), 0x9161u);
  header[10] = header[11] = 0;
  EXPECT_EQ(Ipv4Checksum(header), 0x9161u);
  EXPECT_EQ(RoceIcrc(std::string_view(pkt).substr(14, pkt.size() - 14 - 4)), Le32(pkt, 70));
  EXPECT_EQ(Le32(pkt, 70), 0x2a00fd82u);
}

TEST(Frames, RoceDataFrameHasTheHeadersOfItsPacket) {
  std::string f;
  RoceAddr a;
  a.src_host = 1;
  a.dst_host = 0x10203;
  a.priority = 3;
  a.ecn = 3;
  a.ttl = 63;
  a.udp_src = 0xC123;
  Bth b;
  b.opcode = kOpSendLast;
  b.dest_qp = 0x123456;
  b.psn = 0xABCDEF;
  b.ack_req = true;
  b.payload = 1025;  // 3 bytes of pad
  const uint32_t len = AppendRoce(f, a, b, 0);
  EXPECT_EQ(len, 14u + 4 + 20 + 8 + 12 + 1025 + 3 + 4);
  ASSERT_EQ(f.size(), len);
  EXPECT_EQ(Be16(f, 12), 0x8100u);
  EXPECT_EQ(Be16(f, 14), 3u << 13);  // PCP 3
  EXPECT_EQ(Be16(f, 16), 0x0800u);
  const size_t ip = 18;
  EXPECT_EQ(At(f, ip + 1), (24u << 2) | 3u);  // DSCP 24 (CS3), ECN CE
  EXPECT_EQ(Be16(f, ip + 2), len - 18);
  EXPECT_EQ(At(f, ip + 8), 63u);
  EXPECT_EQ(Ipv4Checksum(f.substr(ip, 20)), 0u);  // a correct header sums to all ones
  EXPECT_EQ(Be16(f, ip + 16 + 2), 0x0204u);       // 10.1.2.4: host 0x10203 + 1
  const size_t udp = ip + 20;
  EXPECT_EQ(Be16(f, udp), 0xC123u);
  EXPECT_EQ(Be16(f, udp + 2), 4791u);
  EXPECT_EQ(Be16(f, udp + 4), len - udp);
  const size_t bth = udp + 8;
  EXPECT_EQ(At(f, bth), kOpSendLast);
  EXPECT_EQ(At(f, bth + 1), 3u << 4);  // pad count
  EXPECT_EQ(Be16(f, bth + 2), 0xFFFFu);
  EXPECT_EQ((Be16(f, bth + 5) << 8) | At(f, bth + 7), 0x123456u);
  EXPECT_EQ(At(f, bth + 8), 0x80u);  // ack request
  EXPECT_EQ((Be16(f, bth + 9) << 8) | At(f, bth + 11), 0xABCDEFu);
  EXPECT_EQ(Le32(f, len - 4), RoceIcrc(std::string_view(f).substr(ip, len - 4 - ip)));
  std::string cut;
  EXPECT_EQ(AppendRoce(cut, a, b, 64), len);
  EXPECT_EQ(cut, f.substr(0, 64));
}

TEST(Frames, AckAndNakCarryAnAeth) {
  std::string f;
  Bth b;
  b.opcode = kOpAck;
  b.aeth = true;
  b.syndrome = 0x60;
  b.payload = 4;
  b.psn = 7;
  EXPECT_EQ(AppendRoce(f, RoceAddr{}, b, 0), 14u + 4 + 20 + 8 + 12 + 4 + 4);
  EXPECT_EQ(At(f, 18 + 28), kOpAck);
  EXPECT_EQ(At(f, 18 + 28 + 12), 0x60u);
}

TEST(Frames, PfcFrameIsMacControlWithEightTimes) {
  std::string f;
  EXPECT_EQ(AppendPfc(f, 0x10203, 0x28, 0xFFFF), 60u);
  ASSERT_EQ(f.size(), 60u);
  EXPECT_EQ(f.substr(0, 6), std::string("\x01\x80\xC2\x00\x00\x01", 6));
  EXPECT_EQ(f.substr(6, 6), std::string("\x02\x00\x01\x01\x02\x03", 6));
  EXPECT_EQ(Be16(f, 12), 0x8808u);
  EXPECT_EQ(Be16(f, 14), 0x0101u);
  EXPECT_EQ(Be16(f, 16), 0x28u);
  for (int c = 0; c < 8; ++c) EXPECT_EQ(Be16(f, 18 + 2 * c), (c == 3 || c == 5) ? 0xFFFFu : 0u);
  for (size_t i = 34; i < 60; ++i) EXPECT_EQ(At(f, i), 0u);
}

// A receiver checks a reflected CRC by running it over the packet and the
// CRC as received: sent least significant byte first, every good packet
// leaves the same residue. That makes the VCRC's byte order consistent with
// the reflected algorithm (IBA 7.8.2; the same parameters as Endace's DAG
// library: reflected 0x100B, seed 0xFFFF, complemented); no real InfiniBand
// packet or published VCRC vector was found to compare with (docs/capture.md).
TEST(Frames, InfiniBandVcrcLeavesOneResidueOverPacketAndCrc) {
  std::set<uint16_t> residues, swapped;
  for (uint32_t payload : {0u, 4u, 60u, 256u, 4096u}) {
    for (uint32_t psn : {0u, 7u, 0xABCDEu}) {
      std::string f;
      Bth b;
      b.payload = payload;
      b.psn = psn;
      const uint32_t len = AppendIb(f, psn & 0xFF, 3, 1, b, 0);
      ASSERT_EQ(f.size(), len);
      residues.insert(IbCrc16(f));
      std::string g = f;
      std::swap(g[len - 2], g[len - 1]);
      swapped.insert(IbCrc16(g));
    }
  }
  EXPECT_EQ(residues.size(), 1u);  // least significant byte first: one residue
  EXPECT_GT(swapped.size(), 1u);   // most significant byte first would not give one
}

TEST(Frames, InfiniBandPacketAndFlowControlPacket) {
  std::string f;
  Bth b;
  b.payload = 4096;
  b.psn = 5;
  b.fecn = true;
  const uint32_t len = AppendIb(f, 0, 9, 2, b, 0);
  EXPECT_EQ(len, 8u + 12 + 4096 + 4 + 2);
  EXPECT_EQ(At(f, 0), 0x20u);            // VL 2, LVer 0
  EXPECT_EQ(At(f, 1), 0x22u);            // SL 2, LNH 2 (BTH next)
  EXPECT_EQ(Be16(f, 2), 10u);            // DLID
  EXPECT_EQ(Be16(f, 4), (len - 2) / 4);  // PktLen in words, VCRC excluded
  EXPECT_EQ(Be16(f, 6), 1u);             // SLID
  EXPECT_EQ(At(f, 8 + 4), 0x80u);        // FECN
  EXPECT_EQ(IbCrc16(f.substr(0, len - 2)), At(f, len - 2) | (At(f, len - 1) << 8));
  std::string fcp;
  EXPECT_EQ(AppendFcp(fcp, 3, 0x123, 0xABC), 6u);
  ASSERT_EQ(fcp.size(), 8u);
  EXPECT_EQ(Be16(fcp, 0), 0x0123u);  // Op 0, FCTBS
  EXPECT_EQ(Be16(fcp, 2), 0x3ABCu);  // VL 3, FCCL
  EXPECT_EQ(At(fcp, 6) | At(fcp, 7), 0u);
}

TEST(Pcapng, BlocksAndTheLimit) {
  PcapngWriter w(4096, false);
  EXPECT_EQ(w.AddInterface("leaf0->host0", "d", kLinkEthernet, 0), 0u);
  const size_t headers = w.bytes().size();
  EXPECT_EQ(Le32(w.bytes(), 0), 0x0A0D0D0Au);
  EXPECT_EQ(Le32(w.bytes(), 8), 0x1A2B3C4Du);
  EXPECT_NE(w.bytes().find(std::string("\x09\x00\x01\x00\x09", 5)), std::string::npos);  // ns
  const std::string frame(61, 'x');
  ASSERT_TRUE(w.AddPacket(0, 1'234'567'890'123, frame, 1000));
  const std::string& s = w.bytes();
  EXPECT_EQ(Le32(s, headers), 6u);
  const uint32_t total = Le32(s, headers + 4);
  EXPECT_EQ(total, 12u + 20 + 64 + 12);
  EXPECT_EQ(Le32(s, headers + total - 4), total);
  const uint64_t ts = (uint64_t{Le32(s, headers + 12)} << 32) | Le32(s, headers + 16);
  EXPECT_EQ(ts, 1'234'567'890u);  // ns, rounded down
  EXPECT_EQ(Le32(s, headers + 20), 61u);
  EXPECT_EQ(Le32(s, headers + 24), 1000u);
  while (w.AddPacket(0, 0, frame, 61)) {
  }
  EXPECT_LE(static_cast<int64_t>(w.bytes().size()), 4096);
  EXPECT_EQ(w.cut(), 1u);
  EXPECT_FALSE(w.AddPacket(0, 0, frame, 61));
  EXPECT_EQ(w.cut(), 2u);
}

TEST(Trace, TimestampsAreMicrosecondsWithPicosecondDigits) {
  EXPECT_EQ(TraceTs(0), "0.000000");
  EXPECT_EQ(TraceTs(1), "0.000001");
  EXPECT_EQ(TraceTs(12'345'678'901), "12345.678901");
}

}  // namespace
}  // namespace lossless::capture
