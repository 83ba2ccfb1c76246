#pragma once
// A pcapng file (the pcapng format, IETF draft draft-ietf-opsawg-pcapng): a
// section header, one interface description per captured port, then
// enhanced packet blocks, little-endian. Held in memory, or with a sink
// streamed to it in pieces of about 1 MiB. Bounded: a packet that would take
// the file past `limit` bytes is not written but counted (cut()).
#include <cstdint>
#include <string>
#include <string_view>

#include "base/file.hpp"

namespace lossless::capture {

inline constexpr uint16_t kLinkEthernet = 1;  // LINKTYPE_ETHERNET
inline constexpr uint16_t kLinkErf = 197;     // LINKTYPE_ERF (Endace record format)

class PcapngWriter {
 public:
  // `limit`: largest file size in bytes (the header blocks always fit).
  // `ps_resolution`: timestamps in picoseconds (if_tsresol 12), else nanoseconds (9).
  PcapngWriter(int64_t limit, bool ps_resolution);
  // Adds an interface (before any packet); returns its id.
  uint32_t AddInterface(std::string_view name, std::string_view description, uint16_t linktype,
                        uint32_t snaplen);
  // Adds a packet of interface `iface` at `time_ps` (rounded down to the
  // resolution): `data` is what was captured, `orig_len` its length on the
  // wire. Outbound direction (epb_flags). False when the limit cut it.
  bool AddPacket(uint32_t iface, int64_t time_ps, std::string_view data, uint32_t orig_len);
  // Whether a packet of `caplen` captured bytes still fits; when it does
  // not, counts it as cut (the caller then skips encoding it).
  bool Fits(size_t caplen) {
    if (size() + 44 + static_cast<int64_t>((caplen + 3) / 4 * 4) <= limit_) return true;
    ++cut_;
    return false;
  }
  // Streams what is written from now on (and what was before) to `sink`.
  void set_sink(OutputStream* sink) {
    sink_ = sink;
    Flush();
  }
  // Hands the bytes held to the sink (nothing without one).
  void Flush();
  // The file so far (without a sink; with one, the part not yet flushed).
  const std::string& bytes() const { return buf_; }
  int64_t size() const { return flushed_ + static_cast<int64_t>(buf_.size()); }
  uint64_t packets() const { return packets_; }
  uint64_t cut() const { return cut_; }
  bool ps_resolution() const { return ps_; }

 private:
  std::string buf_;
  OutputStream* sink_ = nullptr;
  int64_t flushed_ = 0;
  int64_t limit_;
  bool ps_;
  uint32_t interfaces_ = 0;
  uint64_t packets_ = 0;
  uint64_t cut_ = 0;
};

}  // namespace lossless::capture
