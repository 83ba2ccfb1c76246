#include "audit/qos/qos_model.hpp"

#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "units/units.hpp"

namespace lossless::audit::qos {

namespace {
constexpr std::array<std::pair<QosFormat, std::string_view>, 10> kFormatNames{{
    {QosFormat::kSonicJson, "sonic-json"},
    {QosFormat::kSonicShow, "sonic-show"},
    {QosFormat::kNvue, "nvue"},
    {QosFormat::kOnyx, "onyx"},
    {QosFormat::kEos, "eos"},
    {QosFormat::kNxos, "nxos"},
    {QosFormat::kDellSonic, "dell-sonic"},
    {QosFormat::kJunos, "junos"},
    {QosFormat::kTrafficConf, "cumulus-traffic"},
    {QosFormat::kSwitchConfig, "switch-config"},
}};

std::string FormatAlpha(double a) {
  if (a >= 1) return fmt::format("{:g}", a);
  return fmt::format("1/{:g}", 1 / a);
}
}  // namespace

std::string_view QosFormatName(QosFormat f) {
  for (const auto& [fmt_value, name] : kFormatNames)
    if (fmt_value == f) return name;
  return "unknown";
}

std::optional<QosFormat> QosFormatFromName(std::string_view name) {
  for (const auto& [fmt_value, n] : kFormatNames)
    if (n == name) return fmt_value;
  return std::nullopt;
}

std::optional<int64_t> BufferAmount::ToBytes(int64_t cell_bytes) const {
  if (unit == Unit::kBytes) return value;
  if (cell_bytes <= 0) return std::nullopt;
  return value * cell_bytes;
}

std::string BufferAmount::ToString() const {
  if (unit == Unit::kCells) return fmt::format("{} cells", value);
  return units::FormatBytes(units::Bytes(value));
}

std::optional<int64_t> BufferLimit::ResolveBytes(int64_t cell_bytes) const {
  if (static_size) return static_size->ToBytes(cell_bytes);
  if (!alpha || !pool) return std::nullopt;
  std::optional<int64_t> p = pool->ToBytes(cell_bytes);
  if (!p) return std::nullopt;
  return static_cast<int64_t>(std::floor(*alpha * static_cast<double>(*p) / (1 + *alpha)));
}

std::string BufferLimit::Describe() const {
  if (static_size) return "static " + static_size->ToString();
  if (!alpha) return "not stated";
  std::string s = "dynamic threshold alpha " + FormatAlpha(*alpha);
  if (pool) {
    s += " of pool " + (pool_name.empty() ? std::string() : pool_name + " ") + pool->ToString();
  } else {
    s += " (pool size unknown)";
  }
  return s;
}

int QosConfig::QueueOf(int priority) const {
  auto it = priority_to_queue.find(priority);
  return it == priority_to_queue.end() ? priority : it->second;
}

}  // namespace lossless::audit::qos
