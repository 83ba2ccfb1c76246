#include "fabric/framing.hpp"

namespace lossless::fabric {

const char* LinkLayerName(LinkLayer l) {
  switch (l) {
    case LinkLayer::kInfiniBand:
      return "infiniband";
    case LinkLayer::kRoceV2:
      return "roce";
    case LinkLayer::kRaw:
      return "raw";
  }
  return "?";
}

Framing Framing::InfiniBand(int32_t mtu, bool grh) {
  constexpr int32_t kLrh = 8, kGrh = 40, kBth = 12, kIcrc = 4, kVcrc = 2;
  return Framing{LinkLayer::kInfiniBand, mtu, kLrh + (grh ? kGrh : 0) + kBth + kIcrc + kVcrc, 0};
}

Framing Framing::RoceV2(int32_t mtu, bool vlan_tag) {
  constexpr int32_t kEth = 14, kVlan = 4, kIpv4 = 20, kUdp = 8, kBth = 12, kIcrc = 4, kFcs = 4;
  constexpr int32_t kPreambleSfd = 8, kIfg = 12;
  return Framing{LinkLayer::kRoceV2, mtu,
                 kEth + (vlan_tag ? kVlan : 0) + kIpv4 + kUdp + kBth + kIcrc + kFcs,
                 kPreambleSfd + kIfg};
}

Framing Framing::Raw(int32_t mtu, int32_t overhead) {
  return Framing{LinkLayer::kRaw, mtu, overhead, 0};
}

bool IsRdmaMtu(int64_t mtu) {
  return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

}  // namespace lossless::fabric
