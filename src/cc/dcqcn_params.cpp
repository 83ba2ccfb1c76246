#include "cc/dcqcn_params.hpp"

#include <fmt/format.h>
#include <charconv>
#include <cmath>

#include "base/text.hpp"

namespace lossless::cc {

namespace {

using units::Bytes;
using units::Rate;
using units::Time;

constexpr Rate Mbps(int64_t m) {
  return Rate::Bps(m * 1'000'000);
}

int64_t ParseInt(std::string_view s, const Location& where) {
  s = text::Trim(s);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    throw InputError(where, Expected("an integer", std::string(s)));
  return v;
}

double ParseDecimal(std::string_view s, bool* ok) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  *ok = ec == std::errc() && end == s.data() + s.size() && !s.empty() && std::isfinite(v);
  return v;
}

// "0.25" or "1/256".
double ParseFraction(std::string_view s, const Location& where) {
  s = text::Trim(s);
  bool ok = false;
  double v = 0;
  if (auto slash = s.find('/'); slash != std::string_view::npos) {
    bool ok_num = false, ok_den = false;
    double num = ParseDecimal(text::Trim(s.substr(0, slash)), &ok_num);
    double den = ParseDecimal(text::Trim(s.substr(slash + 1)), &ok_den);
    ok = ok_num && ok_den && den != 0;
    v = ok ? num / den : 0;
  } else {
    v = ParseDecimal(s, &ok);
  }
  if (!ok) throw InputError(where, Expected("a number such as 0.5 or 1/256", std::string(s)));
  return v;
}

bool ParseBool(std::string_view s, const Location& where) {
  std::string t = text::ToLower(text::Trim(s));
  if (t == "true" || t == "1" || t == "yes" || t == "on") return true;
  if (t == "false" || t == "0" || t == "no" || t == "off") return false;
  throw InputError(where, Expected("true or false", std::string(s)));
}

std::string FormatFraction(double v) {
  return fmt::format("{}", v);
}

void Require(bool ok, const Location& where, std::string_view field, const std::string& what,
             const std::string& got) {
  if (!ok) throw InputError(where, fmt::format("{}: {}", field, Expected(what, got)));
}

}  // namespace

DcqcnParams DcqcnParams::Paper() {
  DcqcnParams p;
  p.variant = DcqcnVariant::kPaper;
  p.cnp_interval = Time::Us(50);        // DCQCN paper deployment, N = 50 us
  p.cnp_mode = CnpMode::kWindowed;      // paper: one CNP per window if marks arrived
  p.g = 1.0 / 256;                      // DCQCN paper (via SwCC), htsim
  p.alpha_period = Time::Us(55);        // htsim _cc_update_period, HPCC alpha_resume_interval
  p.initial_alpha = 1.0;                // DCQCN paper
  p.rate_reduce_period = Time::Zero();  // paper: every CNP cuts
  p.min_dec_factor = 0.5;               // derived: alpha <= 1 never cuts more than 50 %
  p.clamp_target_rate = true;           // paper: rt = rc on every cut
  p.clamp_target_rate_after_increase = true;
  p.rate_on_first_cnp = Rate();
  p.rate_increase_period = Time::Us(55);     // htsim (authors' ns-3 uses 50 us)
  p.byte_counter = Bytes(10'000'000);        // htsim _B = 10 MB
  p.fast_recovery_steps = 5;                 // htsim _F
  p.rate_ai = Mbps(40);                      // [unverified]; htsim uses line/20
  p.rate_hai = Mbps(400);                    // [unverified] placeholder; htsim uses line/10
  p.hyper_increase = HyperIncrease::kFixed;  // HPCC ns-3; QCN-style scaling [unverified]
  p.min_rate = Mbps(100);                    // HPCC ns-3 and htsim
  p.max_rate = Rate();
  return p;
}

DcqcnParams DcqcnParams::ConnectXFirmware() {
  DcqcnParams p;
  p.variant = DcqcnVariant::kFirmware;
  p.cnp_interval = Time::Us(2);        // MIN_TIME_BETWEEN_CNPS = 2 (ConnectX-5 Ex dump); Barre: 4
  p.cnp_mode = CnpMode::kSuppress;     // deferred or dropped inside the interval [unverified]
  p.g = 5.0 / 1024;                    // DCE_TCP_G = 1019, 10 fraction bits: g = (1024-1019)/1024 (NVIDIA, DCQCN CC Parameters)
  p.alpha_period = Time::Us(55);       // DCE_TCP_RTT = 1 us (NVIDIA); kept at HPCC's model / E5 value (docs/model/dcqcn.md#presets)
  p.initial_alpha = 1.0;               // INITIAL_ALPHA_VALUE = 1023/1024 ≈ 1; HPCC model sets 1
  p.rate_reduce_period = Time::Us(4);  // RATE_REDUCE_MONITOR_PERIOD = 4
  p.min_dec_factor = 0.5;              // RPG_MIN_DEC_FAC = 50 (%): largest cut per event (NVIDIA)
  p.clamp_target_rate = false;         // CLAMP_TGT_RATE = False
  p.clamp_target_rate_after_increase = true;  // CLAMP_TGT_RATE_AFTER_TIME_INC = True
  p.rate_on_first_cnp = Rate();               // RATE_TO_SET_ON_FIRST_CNP = 0 (off)
  p.rate_increase_period = Time::Us(300);     // RPG_TIME_RESET = 300
  p.byte_counter = Bytes(0);  // RPG_BYTE_RESET = 32767, unit [unverified]; not in HPCC's model
  p.fast_recovery_steps = 1;  // RPG_THRESHOLD = 1
  p.rate_ai = Mbps(5);        // RPG_AI_RATE = 5
  p.rate_hai = Mbps(50);      // RPG_HAI_RATE = 50
  p.hyper_increase = HyperIncrease::kFixed;
  p.min_rate = Mbps(1);  // RPG_MIN_RATE = 1
  p.max_rate = Rate();   // RPG_MAX_RATE = 0 (line rate)
  return p;
}

DcqcnParams DcqcnParams::Preset(std::string_view name, const Location& where) {
  if (name == "paper") return Paper();
  if (name == "connectx-firmware") return ConnectXFirmware();
  throw InputError(where,
                   Expected("a DCQCN preset: paper or connectx-firmware", std::string(name)));
}

const std::vector<DcqcnParamInfo>& DcqcnParamInfos() {
  using T = DcqcnParamType;
  static const std::vector<DcqcnParamInfo> kInfos = {
      {"variant", T::kEnum, "paper|firmware",
       "Reaction-point state machine: paper (docs/model/dcqcn.md#reaction-point-paper) or firmware "
       "(HPCC's ConnectX model, docs/model/dcqcn.md#reaction-point-firmware)."},
      {"cnp_interval", T::kTime, "",
       "Notification point: at most one CNP per QP per interval (N; MIN_TIME_BETWEEN_CNPS). >= 0."},
      {"cnp_mode", T::kEnum, "windowed|suppress",
       "Marked packet inside the interval: windowed = send one CNP when it ends, suppress = "
       "ignore."},
      {"g", T::kFraction, "", "Alpha EWMA gain, in (0, 1] (paper g; DCE_TCP_G)."},
      {"alpha_period", T::kTime, "",
       "Alpha update period K (paper: restarted by each CNP; firmware: periodic tick). > 0."},
      {"initial_alpha", T::kFraction, "",
       "Alpha at start (paper) or at the first CNP (firmware), in [0, 1] (INITIAL_ALPHA_VALUE)."},
      {"rate_reduce_period", T::kTime, "",
       "Firmware: at most one cut per period (RATE_REDUCE_MONITOR_PERIOD), > 0. Paper: must be 0 "
       "(every CNP cuts)."},
      {"min_dec_factor", T::kFraction, "",
       "A cut leaves at least this fraction of the rate, in (0, 1] (RPG_MIN_DEC_FAC / 100, "
       "NVIDIA: the largest cut per event)."},
      {"clamp_target_rate", T::kBool, "", "Set rt = rc on every cut (CLAMP_TGT_RATE)."},
      {"clamp_target_rate_after_increase", T::kBool, "",
       "Set rt = rc on a cut when an increase event happened since the last cut "
       "(CLAMP_TGT_RATE_AFTER_TIME_INC)."},
      {"rate_on_first_cnp", T::kRate, "",
       "Firmware: rc = rt = this rate on the first CNP of a QP; 0 = off "
       "(RATE_TO_SET_ON_FIRST_CNP)."},
      {"rate_increase_period", T::kTime, "", "Rate-increase timer (T_INC; RPG_TIME_RESET). > 0."},
      {"byte_counter", T::kBytes, "",
       "Paper: an increase event per this many bytes sent (BC_BYTES); 0 = disabled. Firmware: "
       "must be 0."},
      {"fast_recovery_steps", T::kInt, "",
       "Increase events before additive increase (F; RPG_THRESHOLD), 1..1000."},
      {"rate_ai", T::kRate, "", "Additive-increase step R_AI (RPG_AI_RATE). > 0."},
      {"rate_hai", T::kRate, "", "Hyper-increase step R_HAI (RPG_HAI_RATE). > 0."},
      {"hyper_increase", T::kEnum, "fixed|scaled",
       "Hyper step: fixed R_HAI per event, or i*R_HAI in the i-th hyper round (QCN style)."},
      {"min_rate", T::kRate, "", "Floor of the current rate (R_MIN; RPG_MIN_RATE). > 0, <= line."},
      {"max_rate", T::kRate, "",
       "Cap of the target rate below line rate; 0 = line rate (RPG_MAX_RATE)."},
  };
  return kInfos;
}

void DcqcnParams::Set(std::string_view name, std::string_view value, const Location& where) {
  const std::string v(text::Trim(value));
  const std::string n(name);
  auto parse_time = [&] { return units::ParseTime(v, where); };
  auto parse_rate_or_zero = [&] {
    bool ok = false;
    if (ParseDecimal(v, &ok) == 0 && ok) return Rate();
    return units::ParseRate(v, where);
  };
  if (n == "variant") {
    if (v == "paper") {
      variant = DcqcnVariant::kPaper;
    } else if (v == "firmware") {
      variant = DcqcnVariant::kFirmware;
    } else {
      throw InputError(where, Expected("paper or firmware", v));
    }
  } else if (n == "cnp_interval") {
    cnp_interval = parse_time();
  } else if (n == "cnp_mode") {
    if (v == "windowed") {
      cnp_mode = CnpMode::kWindowed;
    } else if (v == "suppress") {
      cnp_mode = CnpMode::kSuppress;
    } else {
      throw InputError(where, Expected("windowed or suppress", v));
    }
  } else if (n == "g") {
    double x = ParseFraction(v, where);
    if (!(x > 0 && x <= 1)) throw InputError(where, Expected("g in (0, 1]", v));
    g = x;
  } else if (n == "alpha_period") {
    Time t = parse_time();
    if (t <= Time::Zero()) throw InputError(where, Expected("a period > 0", v));
    alpha_period = t;
  } else if (n == "initial_alpha") {
    double x = ParseFraction(v, where);
    if (!(x >= 0 && x <= 1)) throw InputError(where, Expected("alpha in [0, 1]", v));
    initial_alpha = x;
  } else if (n == "rate_reduce_period") {
    rate_reduce_period = parse_time();
  } else if (n == "min_dec_factor") {
    double x = ParseFraction(v, where);
    if (!(x > 0 && x <= 1)) throw InputError(where, Expected("a fraction in (0, 1]", v));
    min_dec_factor = x;
  } else if (n == "clamp_target_rate") {
    clamp_target_rate = ParseBool(v, where);
  } else if (n == "clamp_target_rate_after_increase") {
    clamp_target_rate_after_increase = ParseBool(v, where);
  } else if (n == "rate_on_first_cnp") {
    rate_on_first_cnp = parse_rate_or_zero();
  } else if (n == "rate_increase_period") {
    Time t = parse_time();
    if (t <= Time::Zero()) throw InputError(where, Expected("a period > 0", v));
    rate_increase_period = t;
  } else if (n == "byte_counter") {
    byte_counter = units::ParseBytes(v, where);
  } else if (n == "fast_recovery_steps") {
    int64_t x = ParseInt(v, where);
    if (x < 1 || x > 1000) throw InputError(where, Expected("an integer in 1..1000", v));
    fast_recovery_steps = x;
  } else if (n == "rate_ai") {
    rate_ai = units::ParseRate(v, where);
  } else if (n == "rate_hai") {
    rate_hai = units::ParseRate(v, where);
  } else if (n == "hyper_increase") {
    if (v == "fixed") {
      hyper_increase = HyperIncrease::kFixed;
    } else if (v == "scaled") {
      hyper_increase = HyperIncrease::kScaled;
    } else {
      throw InputError(where, Expected("fixed or scaled", v));
    }
  } else if (n == "min_rate") {
    min_rate = units::ParseRate(v, where);
  } else if (n == "max_rate") {
    max_rate = parse_rate_or_zero();
  } else {
    std::vector<std::string> names;
    for (const auto& info : DcqcnParamInfos()) names.emplace_back(info.name);
    const NearestName best = FindNearestName(n, names);
    std::string msg = fmt::format("unknown DCQCN parameter {}", QuoteForMessage(n));
    if (best.Close(3)) msg += fmt::format(" (did you mean {}?)", best.name);
    throw InputError(where, msg);
  }
}

void DcqcnParams::Validate(Rate line_rate, const Location& where) const {
  const std::string line = units::FormatRate(line_rate);
  Require(line_rate > Rate(), where, "line_rate", "a rate > 0", line);
  Require(cnp_interval >= Time::Zero(), where, "cnp_interval", "a time >= 0",
          units::FormatTime(cnp_interval));
  Require(g > 0 && g <= 1, where, "g", "g in (0, 1]", FormatFraction(g));
  Require(alpha_period > Time::Zero(), where, "alpha_period", "a period > 0",
          units::FormatTime(alpha_period));
  Require(initial_alpha >= 0 && initial_alpha <= 1, where, "initial_alpha", "alpha in [0, 1]",
          FormatFraction(initial_alpha));
  Require(min_dec_factor > 0 && min_dec_factor <= 1, where, "min_dec_factor",
          "a fraction in (0, 1]", FormatFraction(min_dec_factor));
  Require(rate_increase_period > Time::Zero(), where, "rate_increase_period", "a period > 0",
          units::FormatTime(rate_increase_period));
  Require(byte_counter >= Bytes(0), where, "byte_counter", "a byte count >= 0",
          units::FormatBytes(byte_counter));
  Require(fast_recovery_steps >= 1 && fast_recovery_steps <= 1000, where, "fast_recovery_steps",
          "an integer in 1..1000", std::to_string(fast_recovery_steps));
  Require(rate_ai > Rate(), where, "rate_ai", "a rate > 0", units::FormatRate(rate_ai));
  Require(rate_hai > Rate(), where, "rate_hai", "a rate > 0", units::FormatRate(rate_hai));
  Require(min_rate > Rate(), where, "min_rate", "a rate > 0", units::FormatRate(min_rate));
  Require(min_rate <= line_rate, where, "min_rate", fmt::format("a rate <= the line rate {}", line),
          units::FormatRate(min_rate));
  Require(max_rate == Rate() || max_rate >= min_rate, where, "max_rate",
          "0 (line rate) or a rate >= min_rate", units::FormatRate(max_rate));
  Require(rate_on_first_cnp == Rate() || rate_on_first_cnp >= min_rate, where, "rate_on_first_cnp",
          "0 (off) or a rate >= min_rate", units::FormatRate(rate_on_first_cnp));
  if (variant == DcqcnVariant::kFirmware) {
    Require(rate_reduce_period > Time::Zero(), where, "rate_reduce_period",
            "a period > 0 for the firmware variant", units::FormatTime(rate_reduce_period));
    Require(byte_counter == Bytes(0), where, "byte_counter",
            "0 for the firmware variant (HPCC's firmware model has no byte counter)",
            units::FormatBytes(byte_counter));
  } else {
    Require(rate_reduce_period == Time::Zero(), where, "rate_reduce_period",
            "0 for the paper variant (every CNP cuts)", units::FormatTime(rate_reduce_period));
    Require(rate_on_first_cnp == Rate(), where, "rate_on_first_cnp", "0 for the paper variant",
            units::FormatRate(rate_on_first_cnp));
  }
}

std::string DcqcnParamValue(const DcqcnParams& p, std::string_view name) {
  auto rate0 = [](Rate r) { return r == Rate() ? std::string("0") : units::FormatRate(r); };
  auto b = [](bool x) { return std::string(x ? "true" : "false"); };
  if (name == "variant") return p.variant == DcqcnVariant::kPaper ? "paper" : "firmware";
  if (name == "cnp_interval") return units::FormatTime(p.cnp_interval);
  if (name == "cnp_mode") return p.cnp_mode == CnpMode::kWindowed ? "windowed" : "suppress";
  if (name == "g") return FormatFraction(p.g);
  if (name == "alpha_period") return units::FormatTime(p.alpha_period);
  if (name == "initial_alpha") return FormatFraction(p.initial_alpha);
  if (name == "rate_reduce_period") return units::FormatTime(p.rate_reduce_period);
  if (name == "min_dec_factor") return FormatFraction(p.min_dec_factor);
  if (name == "clamp_target_rate") return b(p.clamp_target_rate);
  if (name == "clamp_target_rate_after_increase") return b(p.clamp_target_rate_after_increase);
  if (name == "rate_on_first_cnp") return rate0(p.rate_on_first_cnp);
  if (name == "rate_increase_period") return units::FormatTime(p.rate_increase_period);
  if (name == "byte_counter") return units::FormatBytes(p.byte_counter);
  if (name == "fast_recovery_steps") return std::to_string(p.fast_recovery_steps);
  if (name == "rate_ai") return units::FormatRate(p.rate_ai);
  if (name == "rate_hai") return units::FormatRate(p.rate_hai);
  if (name == "hyper_increase")
    return p.hyper_increase == HyperIncrease::kFixed ? "fixed" : "scaled";
  if (name == "min_rate") return units::FormatRate(p.min_rate);
  if (name == "max_rate") return rate0(p.max_rate);
  return "";
}

}  // namespace lossless::cc
