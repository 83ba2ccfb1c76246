#include "rdma/rc_params.hpp"

#include <stdexcept>

namespace lossless::rdma {

const std::vector<RcParamInfo>& RcParamInfos() {
  using T = RcParamType;
  static const std::vector<RcParamInfo> kInfos = {
      {"timeout", T::kInt, "20",
       "RC local ACK timeout exponent t: 4.096 us x 2^t (NCCL_IB_TIMEOUT, default 20 = 4.295 s); "
       "0 = no timeout.",
       "", 0, 31},
      {"retry_cnt", T::kInt, "7",
       "RC retries after an ACK timeout or a sequence-error NAK without progress before the QP "
       "fails and the run ends with exit 1 (NCCL_IB_RETRY_CNT, default 7).",
       "", 0, 7},
      {"go_back", T::kEnum, "n",
       "RC loss recovery: n (go-back-N from the lost PSN) or 0 (go-back-0: the whole message "
       "again, as old NICs did; livelocks under periodic loss).",
       "n|0"},
      {"ack_every", T::kInt, "256",
       "RC responder: one ACK per this many packets placed, and always for a message's last "
       "packet. Default 256 = 2^8: the ConnectX ACK request frequency (QP context "
       "log_ack_req_freq) NVIDIA's UCX sets (UCX_RC_MLX5_LOG_ACK_REQ_FREQ=8); 1 = one ACK per "
       "packet.",
       "", 1, 65536},
      {"ooo", T::kEnum, "auto",
       "RC out-of-order placement by PSN: on, off, or auto (on with adaptive or spray routing, "
       "whose packets arrive out of order; off with ecmp and dest-table).",
       "auto|on|off"},
      {"reorder_window", T::kTime, "16us",
       "RC with out-of-order placement: a gap in the PSNs older than this draws a NAK "
       "(placeholder default).",
       ""},
      {"qps_per_connection", T::kInt, "1",
       "Queue pairs per connection of the collective engines, each with its own entropy (UDP "
       "source port) so ECMP hashes them apart (NCCL_IB_QPS_PER_CONNECTION, default 1).",
       "", 1, 128},
      {"split_data_on_qps", T::kEnum, "0",
       "With several queue pairs per connection: 0 sends each message whole on the next queue "
       "pair in turn, 1 splits each message over all of them (NCCL_IB_SPLIT_DATA_ON_QPS, "
       "default 0).",
       "0|1"},
  };
  return kInfos;
}

void SetRcParam(RcConfig& rc, std::string_view name, const RcParamValue& v,
                bool per_packet_routing) {
  if (name == "timeout") {
    rc.timeout_exp = static_cast<int>(v.number);
  } else if (name == "retry_cnt") {
    rc.retry_cnt = static_cast<int>(v.number);
  } else if (name == "go_back") {
    rc.go_back_0 = v.choice == "0";
  } else if (name == "ack_every") {
    rc.ack_every = static_cast<int>(v.number);
  } else if (name == "ooo") {
    rc.ooo = v.choice == "on" || (v.choice == "auto" && per_packet_routing);
  } else if (name == "reorder_window") {
    rc.reorder_window = v.time;
  } else if (name == "qps_per_connection") {
    rc.qps_per_connection = static_cast<int>(v.number);
  } else if (name == "split_data_on_qps") {
    rc.split_data_on_qps = v.choice == "1";
  } else {
    throw std::invalid_argument("no transport parameter " + std::string(name));
  }
}

}  // namespace lossless::rdma
