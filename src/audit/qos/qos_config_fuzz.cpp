// libFuzzer target: any bytes through detection, every parser and the rules.
// Bad input must end in InputError, never a crash, hang or other exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "audit/qos/qos_parse.hpp"
#include "audit/qos/qos_report.hpp"
#include "audit/qos/qos_rules.hpp"
#include "base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  using lossless::audit::qos::QosFormat;
  const std::optional<QosFormat> formats[] = {
      std::nullopt,      QosFormat::kSonicJson,   QosFormat::kSonicShow,   QosFormat::kNvue,
      QosFormat::kOnyx,  QosFormat::kEos,         QosFormat::kNxos,        QosFormat::kDellSonic,
      QosFormat::kJunos, QosFormat::kTrafficConf, QosFormat::kSwitchConfig};
  for (const auto& f : formats) {
    try {
      lossless::audit::qos::QosConfig cfg = lossless::audit::qos::ParseQosText(text, "fuzz", f);
      lossless::audit::qos::QosAuditOptions opts;
      opts.cell_bytes = 208;
      lossless::audit::qos::QosAudit a = lossless::audit::qos::AuditQos(cfg, opts);
      (void)lossless::audit::qos::FormatQosAuditText(a);
      (void)lossless::audit::qos::QosAuditToJson(a).dump(-1, ' ', false,
                                                         nlohmann::json::error_handler_t::replace);
    } catch (const lossless::InputError&) {
    }
  }
  return 0;
}
