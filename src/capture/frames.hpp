#pragma once
// Real header bytes for the frames the simulator sends (docs/capture.md):
// RoCE v2 over Ethernet (802.1Q tag, IPv4, UDP 4791, InfiniBand BTH, AETH,
// ICRC), 802.1Qbb PFC frames, and native InfiniBand packets (LRH, BTH, ICRC,
// VCRC) and flow-control packets. Engine-free: each encoder appends one frame
// to a byte string and returns its length on the wire (without Ethernet FCS,
// preamble or inter-frame gap); payload bytes are zeros.
#include <cstdint>
#include <string>
#include <string_view>

namespace lossless::capture {

// CRC-32 (IEEE 802.3, reflected 0xEDB88320) state update: start from
// 0xFFFFFFFF and complement the final state.
uint32_t Crc32Update(uint32_t state, std::string_view bytes);
// Ones'-complement checksum of an IPv4 header (RFC 791) whose checksum field is zero.
uint16_t Ipv4Checksum(std::string_view header);
// CRC-16 of InfiniBand's VCRC and LPCRC (IBA 1.4 section 7.8.2: polynomial
// 0x100B, seed 0xFFFF, bits reflected, result complemented).
uint16_t IbCrc16(std::string_view bytes);

// ICRC of a RoCE v2 packet over IPv4 (RoCE v2 annex A17.3.3): `ip` runs
// from the IPv4 header to the end of the payload and pad (the ICRC itself
// excluded). The value goes on the wire least significant byte first.
uint32_t RoceIcrc(std::string_view ip);

// BTH opcodes (IBA 1.4 table 38, RoCE v2 annex A17 for the CNP).
inline constexpr uint8_t kOpSendFirst = 0x00, kOpSendMiddle = 0x01, kOpSendLast = 0x02,
                         kOpSendOnly = 0x04, kOpAck = 0x11, kOpCnp = 0x81;

// What the BTH (and AETH) of one packet carries.
struct Bth {
  uint8_t opcode = kOpSendMiddle;
  uint32_t dest_qp = 0;  // 24 bits
  uint32_t psn = 0;      // 24 bits
  bool ack_req = false;
  bool fecn = false;  // InfiniBand congestion control bits
  bool becn = false;
  bool aeth = false;     // an AETH follows (ACK / NAK)
  uint8_t syndrome = 0;  // AETH syndrome: 0x1F = ACK (no credit count), 0x60 = NAK (PSN error)
  uint32_t payload = 0;  // bytes after the transport headers (the AETH counted in it)
};

// Addresses of one RoCE v2 packet.
struct RoceAddr {
  uint32_t src_host = 0,
           dst_host = 0;  // host ranks: MAC 02:00:00:xx:xx:xx, IP 10.0.0.0/8 + rank + 1
  uint8_t priority = 0;   // 802.1Q PCP; DSCP = 8 x priority (class selector)
  uint8_t ecn = 0;        // IPv4 ECN field
  uint8_t ttl = 64;
  uint16_t udp_src = 0;
};

// Appends a RoCE v2 frame (Ethernet + 802.1Q + IPv4 + UDP + BTH [+ AETH] +
// payload + pad + ICRC) to `out`, cut at `snaplen` bytes (0 = whole), and
// returns its whole length. The IPv4 header checksum and the ICRC are
// computed; the UDP checksum is zero (allowed for RoCE v2 over IPv4).
uint32_t AppendRoce(std::string& out, const RoceAddr& a, const Bth& b, uint32_t snaplen);

// Appends an 802.1Qbb PFC frame (MAC Control 0x8808, opcode 0x0101, the
// class-enable vector and eight pause times; `quanta` for every enabled
// class, 0 elsewhere) from port MAC 02:00:01:xx:xx:xx, padded to 60 bytes.
uint32_t AppendPfc(std::string& out, uint32_t port, uint8_t class_enable, uint16_t quanta);

// Appends an InfiniBand packet (LRH with VL = SL = `vl`, LID = host rank + 1,
// BTH [+ AETH], payload, pad, ICRC, VCRC).
uint32_t AppendIb(std::string& out, uint32_t src_host, uint32_t dst_host, uint8_t vl, const Bth& b,
                  uint32_t snaplen);

// Appends an InfiniBand flow-control packet (Op 0 = normal, FCTBS, VL, FCCL,
// LPCRC): 6 bytes, then 2 zero bytes of padding (the capture's 8-byte
// record; the length returned is 6).
uint32_t AppendFcp(std::string& out, uint8_t vl, uint16_t fctbs, uint16_t fccl);

}  // namespace lossless::capture
