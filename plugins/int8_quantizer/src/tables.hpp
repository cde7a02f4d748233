// The float64 functions behind the int8 table ops: what each unary ONNX op
// computes, with its attributes, so the quantizer can tabulate it over the
// 256 input codes (qmath::build_table).
#pragma once

#include <functional>
#include <optional>

#include "owned_graph.hpp"

namespace eulernpu::int8_quantizer {

// Clip's bounds: attributes before opset 11, constant inputs after (an
// omitted one is infinite); nullopt if a bound is not a float32 constant.
std::optional<std::pair<double, double>> clip_bounds(const Node& n, const OwnedGraph& g);

// The function of unary op `n`, or nullopt if it has no table form (not a
// unary elementwise op, or an attribute the table cannot honour).
std::optional<std::function<double(double)>> unary_function(const Node& n, const OwnedGraph& g);

}  // namespace eulernpu::int8_quantizer
