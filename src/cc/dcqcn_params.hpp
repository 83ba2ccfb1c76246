#pragma once
// DCQCN parameters (docs/model/dcqcn.md) with the two named presets and a
// by-name override registry, so scenario files, `--set` and the docs share one
// table of names, checks and help text.
//
// Units: times are units::Time (ps), rates units::Rate (bit/s), byte counts
// units::Bytes; g and alpha are plain fractions in [0, 1].
//
// Values marked unverified in docs/model/dcqcn.md stay parameters; the comment on each
// preset value says where it came from.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "units/units.hpp"

namespace lossless::cc {

// Which reaction-point state machine runs.
//   kPaper    — Zhu et al. SIGCOMM 2015 as in htsim / HPCC ns-3
//   (docs/model/dcqcn.md#reaction-point-paper):
//               every CNP cuts, alpha decays on a timer restarted by CNPs,
//               timer and byte-counter stages.
//   kFirmware — HPCC ns-3's "Mellanox version" (docs/model/dcqcn.md#reaction-point-firmware): CNPs
//   only set
//               bits; periodic alpha tick and rate-reduce monitor tick; one
//               timer stage counter; no byte counter.
enum class DcqcnVariant { kPaper, kFirmware };

// What the notification point does with a marked packet that arrives less
// than cnp_interval after the last CNP of its QP (docs/model/dcqcn.md#notification-point).
//   kWindowed — remember it; send one CNP when the interval ends (paper).
//   kSuppress — drop it (firmware behaviour [unverified]).
enum class CnpMode { kWindowed, kSuppress };

// Size of a hyper-increase step.
//   kFixed  — rt += R_HAI per event (HPCC ns-3, docs/model/dcqcn.md#reaction-point-paper).
//   kScaled — rt += i·R_HAI in the i-th hyper round (QCN style) [unverified].
enum class HyperIncrease { kFixed, kScaled };

struct DcqcnParams {
  DcqcnVariant variant = DcqcnVariant::kPaper;

  // Notification point.
  units::Time cnp_interval = units::Time::Us(50);  // N; MIN_TIME_BETWEEN_CNPS
  CnpMode cnp_mode = CnpMode::kWindowed;

  // Alpha.
  double g = 1.0 / 256;                            // EWMA gain, (0, 1]
  units::Time alpha_period = units::Time::Us(55);  // K; firmware: alpha tick
  double initial_alpha = 1.0;                      // alpha at init / first CNP

  // Rate decrease.
  units::Time rate_reduce_period = units::Time::Zero();  // firmware monitor period; paper: 0
  double min_dec_factor = 0.5;    // rate after a cut ≥ this × rate before (RPG_MIN_DEC_FAC/100)
  bool clamp_target_rate = true;  // rt = rc on every cut
  bool clamp_target_rate_after_increase = true;   // rt = rc on a cut after an increase event
  units::Rate rate_on_first_cnp = units::Rate();  // firmware: rc = rt = this on first CNP; 0 = off

  // Rate increase.
  units::Time rate_increase_period = units::Time::Us(55);  // T_INC / RPG_TIME_RESET
  units::Bytes byte_counter = units::Bytes(10'000'000);    // BC_BYTES; 0 = disabled
  int64_t fast_recovery_steps = 5;                         // F / RPG_THRESHOLD
  units::Rate rate_ai = units::Rate::Bps(40'000'000);      // R_AI
  units::Rate rate_hai = units::Rate::Bps(400'000'000);    // R_HAI
  HyperIncrease hyper_increase = HyperIncrease::kFixed;

  // Rate bounds.
  units::Rate min_rate = units::Rate::Bps(100'000'000);  // R_MIN / RPG_MIN_RATE
  units::Rate max_rate = units::Rate();                  // cap below line rate; 0 = line rate

  // docs/model/dcqcn.md#presets, paper preset: DCQCN paper / htsim / HPCC ns-3 defaults.
  static DcqcnParams Paper();
  // docs/model/dcqcn.md#presets, ConnectX firmware preset: one ConnectX-5 Ex mlxconfig
  // dump read through HPCC's firmware model.
  static DcqcnParams ConnectXFirmware();
  // "paper" or "connectx-firmware"; throws InputError(where, ...) otherwise.
  static DcqcnParams Preset(std::string_view name, const Location& where);

  // Overrides one parameter by its registry name (see DcqcnParamInfos()).
  // `value` uses the units syntax of units::Parse*: "55us", "40Mbps", "10MB";
  // fractions accept "0.0039" or "1/256"; booleans true/false; enums by name.
  // Throws InputError(where, ...) for an unknown name (with a suggestion) or a
  // value that fails its check; `where.field` should already name the field.
  // Checks that involve the line rate or several fields are in Validate().
  void Set(std::string_view name, std::string_view value, const Location& where);

  // Cross-field checks and the checks against the line rate:
  //   every per-field check of Set(); min_rate ≤ line rate; max_rate (when set)
  //   ≥ min_rate; firmware variant needs rate_reduce_period > 0 and no byte
  //   counter; alpha_period > 0 and rate_increase_period > 0.
  // Throws InputError(where, ...) naming the offending field in the message.
  void Validate(units::Rate line_rate, const Location& where) const;
};

enum class DcqcnParamType { kTime, kRate, kBytes, kInt, kFraction, kBool, kEnum };

struct DcqcnParamInfo {
  const char* name;  // e.g. "rate_ai"
  DcqcnParamType type;
  const char* choices;  // kEnum: "a|b"; else ""
  const char* help;     // one sentence, with the mlxconfig / paper name
};

// Every name Set() accepts, in documentation order.
const std::vector<DcqcnParamInfo>& DcqcnParamInfos();

// Text form of the current value of parameter `name` (as Set() would accept
// it); empty for an unknown name.
std::string DcqcnParamValue(const DcqcnParams& p, std::string_view name);

}  // namespace lossless::cc
