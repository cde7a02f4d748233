// A node's operands (dtype and shape) as lowering sees them in the graph and
// the kernel in its buffers, so that both validate with the same function:
// what lowers is what runs, and a corrupt artifact is rejected before any
// access.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {

struct Operand {
  int32_t dtype = ENP_DTYPE_UNDEFINED;
  std::vector<int64_t> shape;
  bool present() const { return dtype != ENP_DTYPE_UNDEFINED; }
};

// The node's inputs, or with `outputs` its outputs, as the graph types
// them; an omitted ("") or untyped one stays an absent Operand.
inline std::vector<Operand> graph_operands(const sdk::NodeView& node, const sdk::GraphView& g,
                                           bool outputs = false) {
  const size_t n = outputs ? node.output_count() : node.input_count();
  std::vector<Operand> out(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string_view name = outputs ? node.output(i) : node.input(i);
    if (name.empty()) continue;
    if (const auto v = g.value(name)) out[i] = {v->dtype(), v->shape()};
  }
  return out;
}

inline std::vector<Operand> buffer_operands(std::span<const Buffer> buffers) {
  std::vector<Operand> out;
  for (const Buffer& b : buffers) out.push_back({b.dtype, b.shape});
  return out;
}

// ops[i], or an absent Operand past the end (omitted trailing inputs).
inline Operand operand_at(const std::vector<Operand>& ops, size_t i) {
  return i < ops.size() ? ops[i] : Operand{};
}

// Whether the node asked for output `output` (optional outputs may be
// omitted).
inline bool wants(const KernelContext& ctx, size_t output) {
  return output < ctx.outputs.size() && ctx.outputs[output].dtype != ENP_DTYPE_UNDEFINED;
}

}  // namespace eulernpu::kit
