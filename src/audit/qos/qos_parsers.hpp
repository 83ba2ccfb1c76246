#pragma once
// Internal: one parser per format, dispatched by ParseQosText. Each takes the
// whole text (already checked to be non-empty text) and the file name for
// error locations.
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "audit/qos/qos_model.hpp"

namespace lossless::audit::qos::internal {

QosConfig ParseSonicJson(std::string_view text, const std::string& file);
QosConfig ParseSonicShow(std::string_view text, const std::string& file);
// A trimmed line that opens an `mmuconfig -l` table: "Pool: NAME", "Profile:
// NAME", or "Pool for namespace asic0: NAME" on a multi-ASIC switch.
bool IsBlockTitle(std::string_view t);
QosConfig ParseNvue(std::string_view text, const std::string& file);
// The `nv set` lines of NVUE text (qos_parse_nvue_set.cpp); ParseNvue calls it.
QosConfig ParseNvueSet(std::string_view text, const std::string& file);
QosConfig ParseOnyx(std::string_view text, const std::string& file);
QosConfig ParseEos(std::string_view text, const std::string& file);
QosConfig ParseNxos(std::string_view text, const std::string& file);
QosConfig ParseDellSonic(std::string_view text, const std::string& file);
QosConfig ParseJunos(std::string_view text, const std::string& file);
QosConfig ParseTrafficConf(std::string_view text, const std::string& file);

// Onyx JSON (qos_parse_onyx_json.cpp), reached through the JSON reader: true
// for `show interfaces ethernet X congestion-control | json-print` output.
bool LooksLikeOnyxJson(const nlohmann::json& root);
// Its ECN settings; the result's `formats` is {kOnyx}.
QosConfig ParseOnyxJson(const nlohmann::json& root, std::string_view text, const std::string& file);

// A switch configuration in which no QoS reader found anything
// (qos_parse.cpp): true when `text` has interface blocks of a switch
// (`interface Ethernet1/1`, `interface swp1`, `interface et-0/0/0`, ...) or a
// running-config header. `complete` is set when the text says it is a whole
// running-config (`! Command: show running-config`, `!Command: show
// running-config`, Junos `## Last commit:`).
bool LooksLikeSwitchConfig(std::string_view text, bool* complete);
// The QosConfig of such a text: a whole running-config states that no
// priority has PFC and no queue has ECN; an excerpt states nothing.
QosConfig ParseSwitchConfig(std::string_view text, const std::string& file);

}  // namespace lossless::audit::qos::internal
