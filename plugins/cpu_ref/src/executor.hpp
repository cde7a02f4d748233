// Runs a cpu_ref artifact: checks graph.json and plan.json against each
// other (an artifact is input like any other), then executes the schedule.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "eulernpu/sdk/backend.hpp"
#include "op_table.hpp"

namespace eulernpu::cpu_ref {

// Largest arena an artifact may ask for; a bigger one is a corrupt plan.
inline constexpr int64_t kMaxArenaBytes = int64_t{64} << 30;

// Runs one node (its graph.json entry) in place of cpu_ref's kernel and
// returns true, or returns false to leave it to the kernel. A backend that
// reuses this executor computes its own ops this way (npu_sim: the planned
// tiles). Called on the executing thread, once per node in schedule order.
using NodeRunner = std::function<bool(const nlohmann::json& node, const KernelContext& ctx)>;

// `prefix`: where lower_graph() put the files (see lowering.hpp).
void run_artifact(sdk::ArtifactReader& artifact, const sdk::Options& options,
                  std::span<const enp_tensor_t> inputs, sdk::OutputSink& out,
                  const std::string& prefix = "", const NodeRunner& runner = {});

}  // namespace eulernpu::cpu_ref
