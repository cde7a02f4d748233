// Weights packed at compile time for the int8 GEMM (lower_graph's
// pack_int8_weights, which zynq_ps asks for): a QGemm's or QConv's W in the
// panel4x16 layout of eulernpu/kernels/int8_gemm_packed.hpp and its bias
// with the input zero point folded in. Depthwise convs (their own direct
// kernel) and weights that are not initializers stay as they are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "eulernpu/sdk/graph.hpp"

namespace eulernpu::kit {

struct PackedWeights {
  sdk::OwnedTensor w;       // int8, 1-D: the packed bytes (input 1)
  sdk::OwnedTensor offset;  // int32 [O]: bias − x_zp · Σ w (input 2)
  std::vector<int64_t> w_shape;
};

// The packed weights of node `index`, or nullopt where it does not pack.
// The node has passed its lowering check, so the accumulator bound holds
// and every offset fits int32.
std::optional<PackedWeights> pack_node_weights(const sdk::GraphView& graph, size_t index);

}  // namespace eulernpu::kit
