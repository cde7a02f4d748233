// Lowering to the kit's artifact format (lowered_graph.hpp): the graph as
// the reference kernels run it (graph.json), its memory plan and schedule
// (plan.json), and its weights.
#pragma once

#include <optional>
#include <string>

#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::kit {

// Why the reference kernels cannot run node `index`, or nullopt.
std::optional<std::string> unsupported_reason(const sdk::GraphView& graph, size_t index);

// Throws "backend lowering missing for op X" (sdk/errors.hpp) for the first
// node unsupported_reason() refuses. `prefix` ("" or "dir/") places the
// files inside the artifact, so a backend can embed this lowering as its
// functional model beside its own files. `weights_file` (relative to the
// prefix, recorded in plan.json) names the weights after the backend.
// `pack_int8_weights`: QGemm's and QConv's weights in the layout of
// eulernpu/kernels/int8_gemm_packed.hpp, with the input zero point folded
// into the bias (weight_packing.hpp); the originals are left out unless
// another node or a graph output reads them.
// What lower_graph() writes, in memory: graph.json's and plan.json's text,
// the weights and the manifest summary. Throws as lower_graph() does. A
// backend that plans from the lowered graph without writing it (a query)
// parses the two texts with parse_lowered().
struct LoweredFiles {
  std::string graph_json, plan_json;
  std::vector<sdk::OwnedTensor> weights;
  nlohmann::ordered_json summary;
};
LoweredFiles build_lowering(const sdk::GraphView& graph,
                            const std::string& weights_file = kWeightsFile,
                            bool pack_int8_weights = false);

// Returns what it wrote, parsed back as the executor will read it, and the
// manifest summary it set (a backend that sets its own extends it).
struct Lowering {
  LoweredArtifact lowered;
  nlohmann::ordered_json summary;
};
Lowering lower_graph(const sdk::GraphView& graph, sdk::ArtifactWriter& out,
                     const std::string& prefix = "", const std::string& weights_file = kWeightsFile,
                     bool pack_int8_weights = false);

}  // namespace eulernpu::kit
