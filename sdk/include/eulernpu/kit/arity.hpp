// How many inputs and outputs a node of an op takes: what the kit checks in
// graph.json before any kernel indexes a node's operands (a node with fewer
// than its op's required inputs would make the kernel read past them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eulernpu::kit {

struct Arity {
  int min_inputs = 0, max_inputs = -1;    // -1: no upper bound
  int min_outputs = 1, max_outputs = -1;  // the first min_* are required
};

// The arity of `op_type` of `domain` ("" for ONNX) at that domain's
// `opset`: ONNX's schemas (sdk/kit/src/onnx_arity.inc, generated from
// libonnx), the ops newer than that libonnx, and ai.eulernpu's list
// (sdk/int8_ops.hpp). Null for an op none of them knows.
std::optional<Arity> arity_of(std::string_view domain, std::string_view op_type, int64_t opset);

// Why a node with these operand names does not fit its op's arity (a
// required operand missing or omitted), or nullopt. Only the minimums are
// checked: an optional operand a newer opset added is never refused.
std::optional<std::string> arity_problem(std::string_view domain, std::string_view op_type,
                                         int64_t opset, const std::vector<std::string>& inputs,
                                         const std::vector<std::string>& outputs);

}  // namespace eulernpu::kit
