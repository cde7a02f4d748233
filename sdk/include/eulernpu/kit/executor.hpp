// The executor: runs a lowered graph (lowered_graph.hpp) node by node in
// schedule order over one static arena, each node through its reference
// kernel unless the backend's hook computes it.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::kit {

// The per-node hook: runs one node in place of its reference kernel and
// returns true, or returns false to leave it to the kernel. A backend
// computes its own ops this way (npu_sim: the planned conv tiles; a vendor
// plugin: what its device runs). Called on the executing thread, once per
// node in schedule order; ctx's buffers are the node's, in the arena.
using NodeRunner = std::function<bool(const LoweredNode& node, const KernelContext& ctx)>;

// `prefix`: where lower_graph() put the files (see lowering.hpp).
void run_artifact(sdk::ArtifactReader& artifact, const sdk::Options& options,
                  std::span<const enp_tensor_t> inputs, sdk::OutputSink& out,
                  const std::string& prefix = "", const NodeRunner& runner = {});

}  // namespace eulernpu::kit
