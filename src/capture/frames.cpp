#include "capture/frames.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <vector>

namespace lossless::capture {
namespace {

constexpr std::array<uint32_t, 256> MakeCrc32Table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrc32 = MakeCrc32Table();

void Put8(std::string& s, uint32_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
}
void Put16(std::string& s, uint32_t v) {
  Put8(s, v >> 8);
  Put8(s, v);
}
void Put24(std::string& s, uint32_t v) {
  Put8(s, v >> 16);
  Put16(s, v);
}
void Put32(std::string& s, uint32_t v) {
  Put16(s, v >> 16);
  Put16(s, v);
}
void PutMac(std::string& s, uint8_t kind, uint32_t index) {
  Put8(s, 0x02);  // locally administered, unicast
  Put8(s, 0x00);
  Put8(s, kind);
  Put24(s, index);
}

uint8_t Pad(uint32_t payload) {
  return static_cast<uint8_t>((4 - payload % 4) % 4);
}

// BTH (12 bytes) and the AETH when b.aeth.
void PutBth(std::string& s, const Bth& b) {
  Put8(s, b.opcode);
  Put8(s, static_cast<uint32_t>(Pad(b.payload)) << 4);  // SE 0, M 0, PadCnt, TVer 0
  Put16(s, 0xFFFF);                                     // default P_Key
  Put8(s, (b.fecn ? 0x80u : 0u) | (b.becn ? 0x40u : 0u));
  Put24(s, b.dest_qp & 0xFFFFFF);
  Put8(s, b.ack_req ? 0x80 : 0);
  Put24(s, b.psn & 0xFFFFFF);
}

// The AETH when b.aeth (counted in b.payload); returns the zero bytes that
// follow (the rest of the payload and the pad).
uint32_t PutAeth(std::string& s, const Bth& b) {
  uint32_t rest = b.payload;
  if (b.aeth && rest >= 4) {
    Put8(s, b.syndrome);
    Put24(s, 0);  // MSN: not modelled
    rest -= 4;
  }
  return rest + Pad(b.payload);
}

// One reflected CRC step over a zero byte is linear in the state, so n zero
// bytes are a fixed linear map: its columns (the images of the unit states)
// are computed once per length n and applied in `bits` XORs.
template <int bits, class Step>
uint32_t ZerosMap(uint32_t state, uint32_t n,
                  std::unordered_map<uint32_t, std::vector<uint32_t>>& cache, Step step) {
  auto it = cache.find(n);
  if (it == cache.end()) {
    std::vector<uint32_t> cols(bits);
    for (int i = 0; i < bits; ++i) {
      uint32_t v = uint32_t{1} << i;
      for (uint32_t k = 0; k < n; ++k) v = step(v);
      cols[static_cast<size_t>(i)] = v;
    }
    it = cache.emplace(n, std::move(cols)).first;
  }
  uint32_t out = 0;
  for (int i = 0; i < bits; ++i)
    if (state >> i & 1) out ^= it->second[static_cast<size_t>(i)];
  return out;
}

uint32_t Crc16Step(uint32_t crc, unsigned char c) {
  crc ^= c;
  for (int k = 0; k < 8; ++k)
    crc = (crc & 1) ? (crc >> 1) ^ 0xD008u : crc >> 1;  // 0x100B reflected
  return crc;
}
uint32_t Crc16Update(uint32_t crc, std::string_view bytes) {
  for (unsigned char c : bytes) crc = Crc16Step(crc, c);
  return crc;
}

uint32_t Crc32Zeros(uint32_t state, uint32_t n) {
  thread_local std::unordered_map<uint32_t, std::vector<uint32_t>> cache;
  return ZerosMap<32>(state, n, cache, [](uint32_t v) { return kCrc32[v & 0xFF] ^ (v >> 8); });
}
uint32_t Crc16Zeros(uint32_t state, uint32_t n) {
  thread_local std::unordered_map<uint32_t, std::vector<uint32_t>> cache;
  return ZerosMap<16>(state, n, cache, [](uint32_t v) { return Crc16Step(v, 0); });
}

// ICRC of a RoCE v2 packet whose bytes from the IPv4 header are `ip` followed by `zeros` zero
// bytes.
uint32_t RoceIcrcOf(std::string_view ip, uint32_t zeros) {
  // 64 one bits for the absent LRH, then the IPv4 header with TOS, TTL and
  // checksum as ones, the UDP header with its checksum as ones, the BTH with
  // its resv8a byte (FECN, BECN, reserved) as ones, and the rest as sent.
  std::string masked(ip);
  if (masked.size() < 20 + 8 + 12) return 0;
  masked[1] = masked[8] = masked[10] = masked[11] = '\xFF';
  masked[20 + 6] = masked[20 + 7] = '\xFF';
  masked[20 + 8 + 4] = '\xFF';
  uint32_t crc = Crc32Update(0xFFFFFFFFu, "\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF");
  return ~Crc32Zeros(Crc32Update(crc, masked), zeros);
}

// Appends head, `zeros` zero bytes and tail to `out`, cut at `snaplen`
// bytes in all (0 = whole); returns the whole length.
uint32_t Emit(std::string& out, std::string_view head, uint32_t zeros, std::string_view tail,
              uint32_t snaplen) {
  const uint32_t whole = static_cast<uint32_t>(head.size() + zeros + tail.size());
  uint32_t room = snaplen == 0 ? whole : std::min(whole, snaplen);
  const auto take = [&](uint32_t n) {
    n = std::min(n, room);
    room -= n;
    return n;
  };
  out.append(head.substr(0, take(static_cast<uint32_t>(head.size()))));
  out.append(take(zeros), '\0');
  out.append(tail.substr(0, take(static_cast<uint32_t>(tail.size()))));
  return whole;
}

void PutLe32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) Put8(s, v >> (8 * i));
}

}  // namespace

uint32_t Crc32Update(uint32_t state, std::string_view bytes) {
  for (unsigned char c : bytes) state = kCrc32[(state ^ c) & 0xFF] ^ (state >> 8);
  return state;
}

uint32_t RoceIcrc(std::string_view ip) {
  return RoceIcrcOf(ip, 0);
}

uint16_t Ipv4Checksum(std::string_view h) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    sum += (static_cast<uint32_t>(static_cast<unsigned char>(h[i])) << 8) |
           static_cast<unsigned char>(h[i + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

uint16_t IbCrc16(std::string_view bytes) {
  return static_cast<uint16_t>(~Crc16Update(0xFFFF, bytes) & 0xFFFF);
}

uint32_t AppendRoce(std::string& out, const RoceAddr& a, const Bth& b, uint32_t snaplen) {
  std::string f;
  PutMac(f, 0, a.dst_host);
  PutMac(f, 0, a.src_host);
  Put16(f, 0x8100);                                       // 802.1Q
  Put16(f, static_cast<uint32_t>(a.priority & 7) << 13);  // PCP, DEI 0, VID 0 (priority tag)
  Put16(f, 0x0800);
  const size_t ip = f.size();
  const uint32_t transport = 12 + b.payload + Pad(b.payload) + 4;  // BTH .. ICRC
  Put8(f, 0x45);
  Put8(f, (static_cast<uint32_t>(a.priority & 7) << 5) | (a.ecn & 3u));  // DSCP 8 x prio, ECN
  Put16(f, 20 + 8 + transport);
  Put16(f, 0);       // identification
  Put16(f, 0x4000);  // DF
  Put8(f, a.ttl);
  Put8(f, 17);
  Put16(f, 0);
  Put32(f, (10u << 24) + a.src_host + 1);
  Put32(f, (10u << 24) + a.dst_host + 1);
  const uint16_t sum = Ipv4Checksum(std::string_view(f).substr(ip, 20));
  f[ip + 10] = static_cast<char>(sum >> 8);
  f[ip + 11] = static_cast<char>(sum & 0xFF);
  Put16(f, a.udp_src);
  Put16(f, 4791);
  Put16(f, 8 + transport);
  Put16(f, 0);
  PutBth(f, b);
  const uint32_t zeros = PutAeth(f, b);
  std::string tail;
  PutLe32(tail, RoceIcrcOf(std::string_view(f).substr(ip), zeros));
  const size_t len = f.size() + zeros + tail.size();
  if (len < 60) tail.append(60 - len, '\0');  // Ethernet minimum (not reached: 66 B at least)
  return Emit(out, f, zeros, tail, snaplen);
}

uint32_t AppendPfc(std::string& out, uint32_t port, uint8_t class_enable, uint16_t quanta) {
  const size_t begin = out.size();
  out.append("\x01\x80\xC2\x00\x00\x01", 6);
  PutMac(out, 1, port);
  Put16(out, 0x8808);
  Put16(out, 0x0101);
  Put16(out, class_enable);
  for (int c = 0; c < 8; ++c) Put16(out, (class_enable >> c & 1) ? quanta : 0);
  out.append(60 - (out.size() - begin), '\0');
  return 60;
}

uint32_t AppendIb(std::string& out, uint32_t src_host, uint32_t dst_host, uint8_t vl, const Bth& b,
                  uint32_t snaplen) {
  std::string f;
  const uint32_t words = (8 + 12 + b.payload + Pad(b.payload) + 4) / 4;  // LRH .. ICRC
  Put8(f, static_cast<uint32_t>(vl & 0xF) << 4);                         // VL, LVer 0
  Put8(f, (static_cast<uint32_t>(vl & 0xF) << 4) | 0x2);  // SL, LNH = IBA local (BTH)
  Put16(f, dst_host + 1);
  Put16(f, words & 0x7FF);
  Put16(f, src_host + 1);
  PutBth(f, b);
  const uint32_t zeros = PutAeth(f, b);
  // ICRC (IBA 7.8.1): the variant fields (LRH VL, BTH resv8a) as ones.
  std::string masked = f;
  masked[0] = static_cast<char>(masked[0] | 0xF0);
  masked[8 + 4] = '\xFF';
  std::string tail;
  PutLe32(tail, ~Crc32Zeros(Crc32Update(0xFFFFFFFFu, masked), zeros));
  const uint32_t vcrc = ~Crc16Update(Crc16Zeros(Crc16Update(0xFFFF, f), zeros), tail) & 0xFFFF;
  Put8(tail, vcrc);
  Put8(tail, vcrc >> 8);
  return Emit(out, f, zeros, tail, snaplen);
}

uint32_t AppendFcp(std::string& out, uint8_t vl, uint16_t fctbs, uint16_t fccl) {
  std::string f;
  Put16(f, fctbs & 0xFFF);  // Op 0 (normal flow control), FCTBS
  Put16(f, (static_cast<uint32_t>(vl & 0xF) << 12) | (fccl & 0xFFF));
  const uint16_t crc = IbCrc16(f);
  Put8(f, crc);
  Put8(f, crc >> 8);
  out += f;
  out.append(2, '\0');
  return 6;
}

}  // namespace lossless::capture
