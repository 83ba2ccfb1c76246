#pragma once
// Parsers for switch RoCE QoS configurations. Pure: text in, QosConfig out;
// no file system access, no global state.
//
// The text may hold several blocks (show outputs, configuration fragments,
// JSON) separated by shell prompts, prose, Markdown fences and `...`
// elisions; each block's format is detected on its own and all blocks of one
// format are parsed together (qos_segment.hpp). Lines that no parser uses,
// and lines whose values cannot be read, are returned in QosConfig::skipped
// with their line number and reason; the rest is still read.
//
// InputError(Location{file, line, field}, ...) is thrown only for input that
// is not switch QoS text at all: empty or binary data, a file of another kind
// (line 1), JSON that cannot be read (the line where it breaks), or a forced
// format under which nothing is read. Lines may end in CRLF and carry
// trailing spaces.
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "audit/qos/qos_model.hpp"

namespace lossless::audit::qos {

// The format with the most evidence in the text (the one ParseQosText reports
// first). Throws InputError at line 1 when the text is empty, binary, or not
// recognisably a QoS configuration (e.g. an nvidia-smi topo matrix or an
// nccl-tests log).
QosFormat DetectQosFormat(std::string_view text, const std::string& file);

// Parse `in`; with `format`, every block is read as that format.
QosConfig ParseQosConfig(std::istream& in, const std::string& file,
                         std::optional<QosFormat> format = std::nullopt);
QosConfig ParseQosText(std::string_view text, const std::string& file,
                       std::optional<QosFormat> format = std::nullopt);

}  // namespace lossless::audit::qos
