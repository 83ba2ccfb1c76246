#pragma once
// transport.*: the RC transport's slice of the scenario parameter registry,
// kept beside the model it configures (as cc/dcqcn_params does for
// fabric.dcqcn.*): each parameter's name, type, default, bounds and help
// text, and how its value sets RcConfig. The scenario registry lists these
// after transport.kind and its reader calls SetRcParam for each, so a new
// transport parameter touches this file's table, its setter and RcConfig.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rdma/rc.hpp"
#include "units/units.hpp"

namespace lossless::rdma {

enum class RcParamType { kInt, kEnum, kTime };

struct RcParamInfo {
  const char* name;  // e.g. "timeout": the scenario field transport.timeout
  RcParamType type;
  const char* def;      // registry default, as scenario text
  const char* help;     // with the NCCL / verbs name where there is one
  const char* choices;  // kEnum: "a|b"; else ""
  double min = 0;       // kInt bounds
  double max = -1;
};

// Every transport.<name> field of RcConfig, in documentation order. The
// defaults are RcConfig's but for ack_every: scenarios, profiles and the
// CLI coalesce ACKs as a ConnectX NIC does (256 packets per ACK, and one for
// every message's last packet: docs/model/transport.md#ack-coalescing);
// RcConfig{} keeps one ACK per packet, the engine-level tests' setting.
const std::vector<RcParamInfo>& RcParamInfos();

// A value read from the scenario: kInt in `number`, kEnum in `choice`, kTime
// in `time`, as the info's type says.
struct RcParamValue {
  int64_t number = 0;
  std::string choice;
  units::Time time;
};

// Sets parameter `name` of `rc` to `v`. transport.ooo "auto" is on with
// per-packet routing (`per_packet_routing`: adaptive or spray) and off
// otherwise. Throws std::invalid_argument for a name the table lacks (a
// programmer error: the reader iterates the table).
void SetRcParam(RcConfig& rc, std::string_view name, const RcParamValue& v,
                bool per_packet_routing);

}  // namespace lossless::rdma
