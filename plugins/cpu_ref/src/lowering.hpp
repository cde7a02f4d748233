// Lowering for cpu_ref: the graph as cpu_ref runs it (graph.json), its
// memory plan and schedule (plan.json), and its weights.
#pragma once

#include <optional>
#include <string>

#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::cpu_ref {

inline constexpr const char* kWeightsFile = "weights/cpu_ref.npz";

// Why cpu_ref cannot lower node `index`, or nullopt.
std::optional<std::string> unsupported_reason(const sdk::GraphView& graph, size_t index);

// `prefix` ("" or "dir/") places the files inside the artifact, so another
// backend can embed cpu_ref's lowering as its functional model.
void lower_graph(const sdk::GraphView& graph, sdk::ArtifactWriter& out,
                 const std::string& prefix = "");

}  // namespace eulernpu::cpu_ref
