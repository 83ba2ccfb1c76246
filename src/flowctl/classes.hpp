#pragma once
// Traffic classes shared by the link-level models: eight per port (the PFC
// priorities of IEEE 802.1Qbb; InfiniBand data VLs 0-6 and VL15 on queue 7).
namespace lossless::flowctl {

inline constexpr int kMaxClasses = 8;

}  // namespace lossless::flowctl
