#include "capture/packet_capture.hpp"

#include "capture/frames.hpp"

namespace lossless::capture {

using fabric::Packet;
using fabric::PacketKind;

PacketCapture::PacketCapture(const fabric::Network& net, PcapOptions opt)
    : net_(net),
      opt_(std::move(opt)),
      ib_(net.config().framing.layer == fabric::LinkLayer::kInfiniBand),
      w_(opt_.limit, opt_.ps_resolution),
      iface_(net.num_ports(), -1) {
  for (size_t i = 0; i < opt_.ports.size(); ++i) {
    const uint32_t p = opt_.ports[i];
    const std::string desc = ib_ ? "lossless port " + std::to_string(p) + ", InfiniBand (ERF)"
                                 : "lossless port " + std::to_string(p) + ", RoCE v2";
    iface_[p] = static_cast<int32_t>(
        w_.AddInterface(opt_.names[i], desc, ib_ ? kLinkErf : kLinkEthernet,
                        opt_.snaplen == 0 ? 0 : opt_.snaplen + (ib_ ? 16 : 0)));
  }
}

Bth PacketCapture::DataBth(const Packet& p, bool at_source) {
  const auto& flows = net_.flows();
  Bth b;
  b.dest_qp = ResponderQpn(p.flow);
  b.psn = p.seq;
  b.payload = p.payload;
  b.fecn = (p.flags & fabric::kPacketFecn) != 0;
  bool first = p.seq == 0, last = false;
  if (p.flow < flows.size()) {
    const fabric::FlowSpec& spec = flows[p.flow].spec;
    if (spec.rc) {
      last = (p.flags & fabric::kPacketLast) != 0;
      if (msg_end_.size() <= p.flow) msg_end_.resize(p.flow + 1, -1);
      first = first || static_cast<int64_t>(p.seq) == msg_end_[p.flow] + 1;
      if (last && at_source) msg_end_[p.flow] = p.seq;
      b.ack_req = last;
    } else {
      const int64_t mtu =
          spec.max_payload > 0 ? spec.max_payload : net_.config().framing.mtu_payload;
      const int64_t packets = spec.bytes <= 0 ? 1 : (spec.bytes + mtu - 1) / mtu;
      last = static_cast<int64_t>(p.seq) + 1 >= packets;
    }
  }
  b.opcode = first && last ? kOpSendOnly
             : first       ? kOpSendFirst
             : last        ? kOpSendLast
                           : kOpSendMiddle;
  return b;
}

void PacketCapture::Record(uint32_t port, const Packet& p, int64_t start_ps) {
  const bool source = p.hops == 0 && p.kind == PacketKind::kData;
  if (port >= iface_.size() || iface_[port] < 0 || start_ps < opt_.from_ps ||
      start_ps >= opt_.until_ps) {
    if (source) DataBth(p, true);  // keeps the message ends seen at the source
    return;
  }
  // The frame's length, to skip encoding it once the file is full.
  const uint32_t pad = (4 - p.payload % 4) % 4;
  uint32_t whole = p.kind == PacketKind::kPause     ? 60
                   : p.kind == PacketKind::kControl ? 8
                   : ib_                            ? 8 + 12 + p.payload + pad + 4 + 2
                                                    : std::max(60u, 58 + p.payload + pad + 4);
  if (opt_.snaplen != 0) whole = std::min(whole, opt_.snaplen);
  if (!w_.Fits(whole + (ib_ ? 16 : 0))) {
    if (source) DataBth(p, true);
    return;
  }
  frame_.clear();
  uint32_t orig = 0;
  Bth b;
  switch (p.kind) {
    case PacketKind::kPause:
      orig = AppendPfc(frame_, port, static_cast<uint8_t>(p.entropy),
                       static_cast<uint16_t>(p.payload));
      break;
    case PacketKind::kControl:  // an InfiniBand flow-control packet: VL, FCTBS in seq, FCCL
      orig = AppendFcp(frame_, p.tclass, static_cast<uint16_t>(p.seq),
                       static_cast<uint16_t>(p.payload));
      break;
    case PacketKind::kData:
      b = DataBth(p, source);
      break;
    case PacketKind::kAck:
      b.opcode = kOpAck;
      b.dest_qp = RequesterQpn(p.flow);
      b.psn = p.seq;
      b.aeth = true;
      b.syndrome = (p.flags & fabric::kPacketNak) ? 0x60 : 0x1F;
      b.payload = p.payload;
      break;
    case PacketKind::kCnp:
      b.opcode = kOpCnp;
      b.dest_qp = RequesterQpn(p.flow);
      b.becn = true;  // as ConnectX adapters send them (tests/fixtures/real/capture)
      b.payload = p.payload;
      break;
  }
  if (p.kind != PacketKind::kPause && p.kind != PacketKind::kControl) {
    if (ib_) {
      orig = AppendIb(frame_, p.src, p.dst, p.tclass, b, opt_.snaplen);
    } else {
      RoceAddr a;
      a.src_host = p.src;
      a.dst_host = p.dst;
      a.priority = p.tclass;
      a.ecn = p.ecn;
      a.ttl = static_cast<uint8_t>(64 - std::min<int>(p.hops, 63));
      a.udp_src = p.entropy;
      orig = AppendRoce(frame_, a, b, opt_.snaplen);
    }
  }
  if (ib_) {
    // ERF record header (Endace ERF types reference): timestamp as 32.32
    // fixed-point seconds (little-endian), type, flags (varying length),
    // record length and wire length (big-endian).
    const bool link = p.kind == PacketKind::kControl;
    std::string rec;
    const uint64_t sec = static_cast<uint64_t>(start_ps / 1'000'000'000'000);
    const uint64_t frac_ps = static_cast<uint64_t>(start_ps % 1'000'000'000'000);
    const uint64_t ts = (sec << 32) | ((frac_ps << 20) / 244'140'625);  // x 2^32 / 10^12
    for (int i = 0; i < 8; ++i) rec.push_back(static_cast<char>(ts >> (8 * i)));
    rec.push_back(static_cast<char>(link ? 25 : 21));
    rec.push_back(0x04);
    const uint32_t rlen = static_cast<uint32_t>(16 + frame_.size());
    rec.push_back(static_cast<char>(rlen >> 8));
    rec.push_back(static_cast<char>(rlen & 0xFF));
    rec.push_back(0);
    rec.push_back(0);
    const uint32_t wlen = link ? 8 : orig;
    rec.push_back(static_cast<char>(wlen >> 8));
    rec.push_back(static_cast<char>(wlen & 0xFF));
    rec += frame_;
    w_.AddPacket(static_cast<uint32_t>(iface_[port]), start_ps, rec, 16 + wlen);
  } else {
    w_.AddPacket(static_cast<uint32_t>(iface_[port]), start_ps, frame_, orig);
  }
}

}  // namespace lossless::capture
