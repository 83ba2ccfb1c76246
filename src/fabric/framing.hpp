#pragma once
// Per-packet framing of each fabric: what a packet of P payload bytes costs
// on the wire. Sizes from docs/model/framing.md.
//
//   InfiniBand (inside one subnet): LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B
//     (+ GRH 40 when routed between subnets). No preamble or idles counted.
//   RoCE v2 (IPv4): Ethernet 14 (+4 with an 802.1Q tag) + IPv4 20 + UDP 8 +
//     BTH 12 + ICRC 4 + FCS 4 = 62 B frame; + 20 B preamble/SFD and
//     inter-frame gap on the link = 82 B of wire time per packet.
//   Raw: caller-chosen overhead (used by the LS-RING anchor: IP MTU 4000 + 2 B
//     point-to-point framing, UDP payload 3972 B, i.e. 30 B per packet).
#include <cstdint>
#include <string>

namespace lossless::fabric {

enum class LinkLayer : uint8_t { kInfiniBand, kRoceV2, kRaw };

const char* LinkLayerName(LinkLayer l);

struct Framing {
  LinkLayer layer = LinkLayer::kRoceV2;
  int32_t mtu_payload = 4096;   // largest payload per packet (path MTU), bytes
  int32_t frame_overhead = 62;  // header + trailer bytes inside the frame
  int32_t gap_overhead = 20;    // preamble + inter-frame gap: wire time only

  // Bytes of link time a packet of `payload` bytes occupies.
  int64_t WireBytes(int64_t payload) const { return payload + frame_overhead + gap_overhead; }
  // Bytes of the frame itself (what a switch buffers and credits count).
  int64_t FrameBytes(int64_t payload) const { return payload + frame_overhead; }
  // Number of packets a message of `bytes` needs (at least 1).
  int64_t Packets(int64_t bytes) const {
    return bytes <= 0 ? 1 : (bytes + mtu_payload - 1) / mtu_payload;
  }

  static Framing InfiniBand(int32_t mtu = 4096, bool grh = false);
  static Framing RoceV2(int32_t mtu = 4096, bool vlan_tag = false);
  static Framing Raw(int32_t mtu, int32_t overhead);
};

// True for the path MTUs IB and RoCE allow: 256, 512, 1024, 2048, 4096.
bool IsRdmaMtu(int64_t mtu);

}  // namespace lossless::fabric
