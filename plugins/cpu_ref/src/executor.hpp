// Runs a cpu_ref artifact: checks graph.json and plan.json against each
// other (an artifact is input like any other), then executes the schedule.
#pragma once

#include <span>
#include <string>

#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::cpu_ref {

// Largest arena an artifact may ask for; a bigger one is a corrupt plan.
inline constexpr int64_t kMaxArenaBytes = int64_t{64} << 30;

// `prefix`: where lower_graph() put the files (see lowering.hpp).
void run_artifact(sdk::ArtifactReader& artifact, const sdk::Options& options,
                  std::span<const enp_tensor_t> inputs, sdk::OutputSink& out,
                  const std::string& prefix = "");

}  // namespace eulernpu::cpu_ref
