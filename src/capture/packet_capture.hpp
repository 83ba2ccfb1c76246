#pragma once
// outputs.pcap (docs/capture.md): the frames that the selected ports start
// to transmit, as pcapng with one interface per port. RoCE v2 and raw
// fabrics are written as Ethernet (RoCE v2 frames and PFC frames), InfiniBand
// fabrics as ERF records (LINKTYPE_ERF: type 21 for packets, type 25 for
// flow-control packets), because Debian 12's tshark does not read
// LINKTYPE_INFINIBAND. Fed by fabric::Network's transmit trace.
#include <cstdint>
#include <string>
#include <vector>

#include "capture/frames.hpp"
#include "capture/pcapng.hpp"
#include "fabric/network.hpp"

namespace lossless::capture {

struct PcapOptions {
  std::vector<uint32_t> ports;     // captured ports, in interface order
  std::vector<std::string> names;  // their names (if_name), same order
  int64_t from_ps = 0;             // frames starting in [from_ps, until_ps)
  int64_t until_ps = INT64_MAX;
  int64_t limit = int64_t{256} << 20;  // largest file, bytes
  uint32_t snaplen = 0;                // bytes kept per frame; 0 = whole frames
  bool ps_resolution = false;          // timestamps in ps instead of ns
};

// Queue-pair numbers in the BTH: flow f's requester is 0x100 + 2f, its
// responder 0x101 + 2f (mod 2^24).
inline uint32_t RequesterQpn(uint32_t flow) {
  return (0x100 + 2 * flow) & 0xFFFFFF;
}
inline uint32_t ResponderQpn(uint32_t flow) {
  return (0x101 + 2 * flow) & 0xFFFFFF;
}

class PacketCapture {
 public:
  PacketCapture(const fabric::Network& net, PcapOptions opt);
  // One frame port `port` starts to send at `start_ps` (Network::TxTrace).
  void Record(uint32_t port, const fabric::Packet& p, int64_t start_ps);
  const PcapngWriter& writer() const { return w_; }
  // Whether Record needs to see a frame port `port` starts: a captured port's
  // frames, and every RC data frame at its source (message boundaries).
  bool Needs(uint32_t port, const fabric::Packet& p) const {
    return (port < iface_.size() && iface_[port] >= 0) ||
           (p.hops == 0 && p.kind == fabric::PacketKind::kData);
  }
  // Streams the capture to `sink` from now on (Finish flushes the rest).
  void set_sink(OutputStream* sink) { w_.set_sink(sink); }
  void Finish() { w_.Flush(); }

 private:
  Bth DataBth(const fabric::Packet& p, bool at_source);

  const fabric::Network& net_;
  PcapOptions opt_;
  bool ib_;
  PcapngWriter w_;
  std::vector<int32_t> iface_;    // by port: interface id, -1 = not captured
  std::vector<int64_t> msg_end_;  // by flow: PSN of the last message end sent (-1 none)
  std::string frame_;             // scratch
};

}  // namespace lossless::capture
