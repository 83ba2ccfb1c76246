#pragma once
// Rendering of `lossless audit topo`: a text table of the GPU/NIC pairs with
// the findings, the suggested NCCL_IB_HCA and the verdict, or one JSON
// document (devices of the matrix, pairs, unused NICs, findings, verdict).
#include <string>

#include <nlohmann/json.hpp>

#include "audit/topo/topo_rules.hpp"
#include "formats/topo_matrix.hpp"

namespace lossless::audit::topo {

// Ends with "verdict: <overall>\n".
std::string FormatTopoText(const TopoReport& report);
nlohmann::json TopoToJson(const formats::TopoMatrix& matrix, const TopoReport& report);

}  // namespace lossless::audit::topo
