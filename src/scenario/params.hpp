#pragma once
// The one registry of scenario tunables (ns-3 style): every field has a dotted
// name, a type, a default, a check and help text. Validation, `--set`,
// `lossless params` and docs/scenarios.md all come from this table.
#include <string>
#include <vector>

namespace lossless::scenario {

enum class ParamType { kTime, kRate, kBytes, kInt, kDouble, kBool, kEnum, kString };

struct ParamInfo {
  const char* name;  // dotted path, e.g. "fabric.link_rate"
  ParamType type;
  const char* def;  // default as text ("" = no default: optional / derived)
  const char* help;
  const char* choices;  // for kEnum: "a|b|c"
  double min = 0;       // numeric bounds (kInt, kDouble); min > max = unbounded
  double max = -1;
};

// Every field, in documentation order; includes fabric.dcqcn.<name> for each
// DCQCN parameter (cc::DcqcnParamInfos()) and transport.<name> for each RC
// parameter (rdma::RcParamInfos()).
const std::vector<ParamInfo>& Params();
// The fields declared directly in params.cpp (Params() without the DCQCN and
// RC tables).
const std::vector<ParamInfo>& BaseParams();
const ParamInfo* FindParam(const std::string& name);

// Fabric presets: values that replace the registry defaults when
// fabric.preset names them (docs/model/presets.md).
struct PresetValue {
  const char* preset;
  const char* name;
  const char* value;
};
const std::vector<PresetValue>& PresetValues();
std::vector<std::string> PresetNames();

// "rate", "integer, 0..255", "choice (pfc|global)": the type and range that
// `lossless params` and the Markdown reference print.
std::string ParamTypeText(const ParamInfo& p);

// Markdown reference of every field (docs/scenarios.md is this text).
std::string ParamsMarkdown();

}  // namespace lossless::scenario
