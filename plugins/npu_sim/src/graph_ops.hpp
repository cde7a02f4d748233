// From the int8 graph to what the NPU runs: which nodes npu_sim can lower
// and where each runs (an NPU core, or the host CPU for the float/int8
// boundary), and the planner's op list (planner.hpp's OpDesc).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eulernpu/sdk/graph.hpp"
#include "planner.hpp"

namespace eulernpu::npu_sim {

// The ops npu_sim declares to the host (capabilities): every ai.eulernpu op,
// the data-movement ONNX ops on int8, and QuantizeLinear/DequantizeLinear
// (graph boundary only).
const std::vector<enp_op_support_t>& op_declarations();

// Where a node runs. The NPU computes in int8 only, so the float/int8
// boundary stays on the host CPU: the head (from float graph inputs, float
// data movement then QuantizeLinear) and the tail (DequantizeLinear, then
// float data movement, to graph outputs).
enum class Unit { kNpu, kHostHead, kHostTail };
const char* unit_name(Unit unit);

// The unit of every node, by position in the graph's boundary (a node is
// kNpu unless it is part of the head or the tail).
std::vector<Unit> place_nodes(const sdk::GraphView& graph);

// Why npu_sim cannot lower node `index`, or nullopt. `units` is
// place_nodes(graph).
std::optional<std::string> unsupported_reason(const sdk::GraphView& graph, size_t index,
                                              const std::vector<Unit>& units);

struct NodeOps {
  std::string node, op_type;
  Unit unit = Unit::kNpu;
  int64_t op_index = -1;                   // into GraphOps::ops for kNpu
  nlohmann::ordered_json inputs, outputs;  // [{name, dtype, shape}]
};

struct GraphOps {
  std::vector<OpDesc> ops;     // the NPU's ops, in graph order: plan_graph's input
  std::vector<NodeOps> nodes;  // every node of the graph
};

// Requires every node to be supported (unsupported_reason).
GraphOps build_graph_ops(const sdk::GraphView& graph);

}  // namespace eulernpu::npu_sim
