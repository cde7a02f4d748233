// What acme_npu lowers: its own float32 ops, checked against its shape rules
// (ops.hpp), and the int8 ops the backend kit runs. The artifact itself is
// the kit's (graph.json, plan.json, weights), written by kit::lower_graph().
#pragma once

#include <optional>
#include <string>

#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/sdk/graph.hpp"
#include "ops.hpp"

namespace acme_npu {

inline constexpr const char* kWeightsFile = "weights/acme_npu.npz";

// Why node `index` cannot run on acme_npu, or nullopt if it can.
std::optional<std::string> unsupported_reason(const eulernpu::sdk::GraphView& graph, size_t index);

// Throws sdk::Error "backend lowering missing for op X" for the first node
// acme_npu cannot lower.
void check_graph(const eulernpu::sdk::GraphView& graph);

// The attributes of one of acme_npu's ops as graph.json stores them; `rank`
// is the first input's, for Softmax's axis.
Attrs stored_attrs(const eulernpu::kit::LoweredNode& node, size_t rank);

}  // namespace acme_npu
