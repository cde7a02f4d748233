// Runs a validated Program on the host CPU, standing in for the Acme NPU.
#pragma once

#include <span>
#include <vector>

#include "artifact_format.hpp"
#include "eulernpu/sdk/graph.hpp"

namespace acme_npu {

// Binds `weights` (from kWeightsFile) and `inputs` (from the user) to the
// program's tensors, checking each against its declaration, runs the nodes
// in plan order and returns the graph outputs in the model's order.
std::vector<eulernpu::sdk::OwnedTensor> execute(const Program& program,
                                                std::span<const enp_tensor_t> weights,
                                                std::span<const enp_tensor_t> inputs);

}  // namespace acme_npu
