#pragma once
// A pcapng file built in memory (the pcapng format, IETF draft
// draft-ietf-opsawg-pcapng): a section header, one interface description per
// captured port, then enhanced packet blocks, little-endian. Bounded: a
// packet that would take the file past `limit` bytes is not written but
// counted (cut()).
#include <cstdint>
#include <string>
#include <string_view>

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
    if (static_cast<int64_t>(buf_.size() + 44 + (caplen + 3) / 4 * 4) <= limit_) return true;
    ++cut_;
    return false;
  }
  const std::string& bytes() const { return buf_; }
  uint64_t packets() const { return packets_; }
  uint64_t cut() const { return cut_; }
  bool ps_resolution() const { return ps_; }

 private:
  std::string buf_;
  int64_t limit_;
  bool ps_;
  uint32_t interfaces_ = 0;
  uint64_t packets_ = 0;
  uint64_t cut_ = 0;
};

}  // namespace lossless::capture
