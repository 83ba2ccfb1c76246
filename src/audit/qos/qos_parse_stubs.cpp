#include "audit/qos/qos_parsers.hpp"
#include "base/error.hpp"

namespace lossless::audit::qos_internal {
QosConfig ParseSonicShow(std::string_view, const std::string& file) {
  throw InputError({file, 1, "format"}, "sonic-show not supported yet");
}
QosConfig ParseNvue(std::string_view, const std::string& file) {
  throw InputError({file, 1, "format"}, "nvue not supported yet");
}
QosConfig ParseOnyx(std::string_view, const std::string& file) {
  throw InputError({file, 1, "format"}, "onyx not supported yet");
}
QosConfig ParseEos(std::string_view, const std::string& file) {
  throw InputError({file, 1, "format"}, "eos not supported yet");
}
QosConfig ParseNxos(std::string_view, const std::string& file) {
  throw InputError({file, 1, "format"}, "nxos not supported yet");
}
}  // namespace lossless::audit::qos_internal
