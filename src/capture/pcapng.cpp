#include "capture/pcapng.hpp"

#include "lossless/version.hpp"

namespace lossless::capture {
namespace {

void Le16(std::string& s, uint32_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>((v >> 8) & 0xFF));
}
void Le32(std::string& s, uint32_t v) {
  Le16(s, v & 0xFFFF);
  Le16(s, v >> 16);
}
void Align4(std::string& s) {
  while (s.size() % 4 != 0) s.push_back('\0');
}
// An option: code, length, value padded to 32 bits.
void Option(std::string& s, uint16_t code, std::string_view value) {
  Le16(s, code);
  Le16(s, static_cast<uint32_t>(value.size()));
  s.append(value);
  Align4(s);
}
// Wraps a block body: type, total length, body, total length.
void Block(std::string& out, uint32_t type, const std::string& body) {
  const uint32_t total = static_cast<uint32_t>(12 + body.size());
  Le32(out, type);
  Le32(out, total);
  out += body;
  Le32(out, total);
}

}  // namespace

PcapngWriter::PcapngWriter(int64_t limit, bool ps_resolution) : limit_(limit), ps_(ps_resolution) {
  std::string shb;
  Le32(shb, 0x1A2B3C4D);  // byte-order magic
  Le16(shb, 1);
  Le16(shb, 0);
  Le32(shb, 0xFFFFFFFF);  // section length: not given
  Le32(shb, 0xFFFFFFFF);
  Option(shb, 4, std::string("lossless ") + kVersion);  // shb_userappl
  Option(shb, 0, {});
  Block(buf_, 0x0A0D0D0A, shb);
}

uint32_t PcapngWriter::AddInterface(std::string_view name, std::string_view description,
                                    uint16_t linktype, uint32_t snaplen) {
  std::string idb;
  Le16(idb, linktype);
  Le16(idb, 0);
  Le32(idb, snaplen);
  Option(idb, 2, name);         // if_name
  Option(idb, 3, description);  // if_description
  const char res = ps_ ? 12 : 9;
  Option(idb, 9, std::string_view(&res, 1));  // if_tsresol: 10^-res s
  Option(idb, 0, {});
  Block(buf_, 1, idb);
  return interfaces_++;
}

bool PcapngWriter::AddPacket(uint32_t iface, int64_t time_ps, std::string_view data,
                             uint32_t orig_len) {
  const size_t padded = (data.size() + 3) / 4 * 4;
  const int64_t size = static_cast<int64_t>(12 + 20 + padded + 12);
  if (this->size() + size > limit_) {
    ++cut_;
    return false;
  }
  const uint64_t ts = static_cast<uint64_t>(ps_ ? time_ps : time_ps / 1000);
  const uint32_t total = static_cast<uint32_t>(size);
  Le32(buf_, 6);  // enhanced packet block
  Le32(buf_, total);
  Le32(buf_, iface);
  Le32(buf_, static_cast<uint32_t>(ts >> 32));
  Le32(buf_, static_cast<uint32_t>(ts & 0xFFFFFFFF));
  Le32(buf_, static_cast<uint32_t>(data.size()));
  Le32(buf_, orig_len);
  buf_.append(data);
  Align4(buf_);
  Le16(buf_, 2);  // epb_flags: outbound
  Le16(buf_, 4);
  Le32(buf_, 2);
  Le32(buf_, 0);  // opt_endofopt
  Le32(buf_, total);
  ++packets_;
  if (sink_ != nullptr && buf_.size() >= (size_t{1} << 20)) Flush();
  return true;
}

void PcapngWriter::Flush() {
  if (sink_ == nullptr || buf_.empty()) return;
  sink_->Write(buf_);
  flushed_ += static_cast<int64_t>(buf_.size());
  buf_.clear();
}

}  // namespace lossless::capture
