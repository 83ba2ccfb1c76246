#include "collective/protocol.hpp"

namespace lossless::collective {

WireProtocol WireOf(Protocol p, units::Rate gpu_rate) {
  WireProtocol w;
  w.protocol = p;
  w.gpu_rate = gpu_rate;
  switch (p) {
    case Protocol::kLL:
      w.line_bytes = 16;  // ncclLLFifoLine: data1, flag1, data2, flag2 (4 bytes each)
      w.line_payload = 8;
      break;
    case Protocol::kLL128:
      w.line_bytes = 128;  // NCCL_LL128_LINESIZE: 16 words of 8 bytes, one a flag
      w.line_payload = 120;
      break;
    case Protocol::kSimple:
      break;
  }
  return w;
}

}  // namespace lossless::collective
