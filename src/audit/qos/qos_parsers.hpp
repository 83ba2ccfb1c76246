#pragma once
// Internal: one parser per format, dispatched by ParseQosText. Each takes the
// whole text (already checked to be non-empty text) and the file name for
// error locations.
#include <string>
#include <string_view>

#include "audit/qos/qos_model.hpp"

namespace lossless::audit::qos::internal {

QosConfig ParseSonicJson(std::string_view text, const std::string& file);
QosConfig ParseSonicShow(std::string_view text, const std::string& file);
QosConfig ParseNvue(std::string_view text, const std::string& file);
// The `nv set` lines of NVUE text (qos_parse_nvue_set.cpp); ParseNvue calls it.
QosConfig ParseNvueSet(std::string_view text, const std::string& file);
QosConfig ParseOnyx(std::string_view text, const std::string& file);
QosConfig ParseEos(std::string_view text, const std::string& file);
QosConfig ParseNxos(std::string_view text, const std::string& file);
QosConfig ParseDellSonic(std::string_view text, const std::string& file);
QosConfig ParseJunos(std::string_view text, const std::string& file);
QosConfig ParseTrafficConf(std::string_view text, const std::string& file);

}  // namespace lossless::audit::qos::internal
