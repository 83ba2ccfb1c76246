#pragma once
// The queue pairs of one network connection of a collective engine
// (NCCL_IB_QPS_PER_CONNECTION; docs/model/collective-engine.md#queue-pairs):
// N RC queue pairs from one NIC to another, each a flow of its own (its own
// entropy: UDP source port on RoCE, flow on InfiniBand), so ECMP hashes them
// apart. With `split` off (NCCL_IB_SPLIT_DATA_ON_QPS=0, NCCL's default since
// 2.20) each message goes whole on the next QP in turn; on, each message is
// cut into one part per QP of ceil(ceil(size / N) / 128) x 128 bytes
// (NVIDIA/nccl src/transport/net_ib, ncclIbMultiSend), and QPs past the end
// of a short message get nothing. Either way a message is done, at each end,
// when all its parts are, in posting order (NCCL's proxy tests its requests
// in order). The ring, tree and point-to-point engines all use this.
//
// With one QP it adds nothing: the message goes on that QP (tag 0) and every
// completion is one whole message.
#include <cstdint>
#include <vector>

#include "fabric/network.hpp"

namespace lossless::collective {

class QpSet {
 public:
  QpSet() = default;
  // Opens `n` (1-128; std::invalid_argument otherwise) queue pairs from
  // network host `src` to `dst`.
  QpSet(fabric::Network& net, uint32_t src, uint32_t dst, int n, bool split);

  uint32_t first() const { return first_; }  // QP ids first() .. first() + size() - 1
  uint32_t size() const { return n_; }

  // Posts a message of `bytes` (> 0).
  void Post(fabric::Network& net, int64_t bytes);
  // A part done at the sender (`tag` as OnSendComplete gave it) / at the
  // receiver on queue pair `qp` (RC delivers in order per QP): how many whole
  // messages this completes, oldest first (0 or more).
  uint32_t SendDone(uint64_t tag);
  uint32_t RecvDone(uint32_t qp);

 private:
  // A part done: whole messages done, in order.
  static uint32_t PartDone(std::vector<uint32_t>& left, size_t& off, uint64_t& head, uint64_t seq);

  uint32_t first_ = 0, n_ = 0;
  bool split_ = false;
  uint32_t next_ = 0;  // the QP the next whole message goes on
  // Per message still being sent / received (from the oldest, sequence
  // *_head_ at index *_off_): its parts not yet done at that end.
  uint64_t send_head_ = 0, recv_head_ = 0;
  std::vector<uint32_t> send_left_, recv_left_;
  size_t send_off_ = 0, recv_off_ = 0;
  // Per QP: the sequence numbers of the messages it carries parts of, in order.
  std::vector<std::vector<uint64_t>> qp_msgs_;
  std::vector<size_t> qp_msgs_head_;
};

}  // namespace lossless::collective
