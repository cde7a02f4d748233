#include "weight_packing.hpp"

#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace {

// Packs `groups` consecutive rows × depth blocks of w, each with its own
// panels, and folds x_zero_point into the biases.
std::optional<PackedWeights> pack(const sdk::NodeView& node, const sdk::GraphView& graph,
                                  int64_t groups, int64_t rows, int64_t depth,
                                  int32_t x_zero_point) {
  const auto w = graph.initializer(node.input(1));
  if (!w || w->dtype() != ENP_DTYPE_INT8 || w->element_count() != groups * rows * depth) {
    return std::nullopt;
  }
  const int32_t* bias = nullptr;
  if (!node.input(2).empty()) {
    const auto b = graph.initializer(node.input(2));
    if (!b || b->dtype() != ENP_DTYPE_INT32 || b->element_count() != groups * rows) {
      return std::nullopt;
    }
    bias = b->as<int32_t>().data();
  }
  const int64_t block = kernels::packed_weight_bytes(rows, depth);
  const std::string name(node.name());
  PackedWeights p;
  p.w_shape = w->shape();
  p.w = {name + "::w_packed", ENP_DTYPE_INT8, {groups * block}, {}};
  p.w.bytes.resize(static_cast<size_t>(groups * block));
  p.offset = {name + "::w_offset", ENP_DTYPE_INT32, {groups * rows}, {}};
  p.offset.bytes.resize(static_cast<size_t>(groups * rows) * sizeof(int32_t));
  auto* packed = reinterpret_cast<int8_t*>(p.w.bytes.data());
  auto* offset = reinterpret_cast<int32_t*>(p.offset.bytes.data());
  const int8_t* wd = w->as<int8_t>().data();
  for (int64_t g = 0; g < groups; ++g) {
    if (!kernels::pack_qgemm_weights({rows, depth, 1}, wd + g * rows * depth,
                                     bias ? bias + g * rows : nullptr, x_zero_point,
                                     packed + g * block, offset + g * rows)) {
      // Not after the lowering check, which proved the bound under which
      // every offset fits; the node would keep its weights as they are.
      return std::nullopt;
    }
  }
  return p;
}

}  // namespace

std::optional<PackedWeights> pack_node_weights(const sdk::GraphView& graph, size_t index) {
  const sdk::NodeView node = graph.node(index);
  if (node.domain() != kEulerNpuDomain || node.input_count() < 5) return std::nullopt;
  const auto w = graph.value(node.input(1));
  if (!w) return std::nullopt;
  const std::vector<int64_t> ws = w->shape();
  if (node.op_type() == "QGemm") {
    if (ws.size() != 2) return std::nullopt;
    return pack(node, graph, 1, ws[0], ws[1],
                static_cast<int32_t>(node.attr_int("a_zero_point", 0)));
  }
  if (node.op_type() != "QConv" || ws.size() < 3) return std::nullopt;
  const auto x = graph.value(node.input(0));
  const int64_t group = node.attr_int("group", 1);
  if (!x || x->shape().size() != ws.size() || group <= 0 || ws[0] % group != 0) {
    return std::nullopt;
  }
  const int64_t channels = x->shape()[1];
  // Depthwise: one input and one output channel per group, run directly.
  if (group == channels && group == ws[0]) return std::nullopt;
  int64_t depth = ws[1];
  for (size_t i = 2; i < ws.size(); ++i) depth *= ws[i];
  return pack(node, graph, group, ws[0] / group, depth,
              static_cast<int32_t>(node.attr_int("x_zero_point", 0)));
}

}  // namespace eulernpu::kit
