#pragma once
// Parsers for switch RoCE QoS configurations. Pure: text in, QosConfig out;
// no file system access, no global state.
//
// Every parser throws lossless::InputError(Location{file, line, field}, ...)
// for input it cannot use: empty or binary data, a file of another kind
// (line 1), truncated JSON (the line where it ends), numbers or units it
// cannot read. Lines may end in CRLF and carry trailing spaces; comments are
// skipped (`#`, `!`, `##` depending on the format).
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "audit/qos/qos_model.hpp"

namespace lossless::audit {

// Guess the format from the text. Throws InputError at line 1 when the text is
// empty, binary, or not recognisably a QoS configuration (e.g. an nvidia-smi
// topo matrix or an nccl-tests log).
QosFormat DetectQosFormat(std::string_view text, const std::string& file);

// Parse `in` as `format`, or detect it when format is nullopt.
QosConfig ParseQosConfig(std::istream& in, const std::string& file,
                         std::optional<QosFormat> format = std::nullopt);
QosConfig ParseQosText(std::string_view text, const std::string& file,
                       std::optional<QosFormat> format = std::nullopt);

}  // namespace lossless::audit
