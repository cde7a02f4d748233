// From the host's graph to acme_npu's Program: what query() reports and
// what lower() writes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "artifact_format.hpp"
#include "eulernpu/sdk/graph.hpp"

namespace acme_npu {

// Why node `index` cannot run on acme_npu, or nullopt if it can.
std::optional<std::string> unsupported_reason(const eulernpu::sdk::GraphView& graph, size_t index);

struct Lowered {
  Program program;
  std::vector<eulernpu::sdk::OwnedTensor> weights;  // for kWeightsFile
};

// Throws sdk::Error "backend lowering missing for op X" if any node is
// unsupported.
Lowered lower_graph(const eulernpu::sdk::GraphView& graph);

}  // namespace acme_npu
